"""Constraint families of the time-indexed MILP (docs/milp.md), one function each.

Every function adds one indexed ``pyo.Constraint`` named after the family; users may
add their own constraints to the model the same way before solving.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import pyomo.environ as pyo

from milp.data import MilpData

# rows added to a family between two calls of a build's ``step`` (milp.solve's clock)
ROWS_PER_STEP = 2_000


def _add(
    m: pyo.ConcreteModel,
    name: str,
    rows: Iterable[tuple[Any, Any]],
    step: Callable[[str], None] | None = None,
) -> None:
    """An indexed constraint from (index, expression) rows (skipping trivial ones);
    ``step(stage)`` every :data:`ROWS_PER_STEP` rows, so that a time limit can stop a
    large family while Pyomo adds it (the relaunch families of the bundled `medium` on
    570 one-hour slots took 21 s each to add, past a 60-s limit by 5 s)."""
    rows = [(i, e) for i, e in rows if not isinstance(e, bool)]
    con = pyo.Constraint(pyo.Any)
    m.add_component(name, con)
    for n, (i, e) in enumerate(rows):
        if step is not None and n % ROWS_PER_STEP == 0:
            step(f"{name} (row {n:,} of {len(rows):,})")
        con[i] = e


def one_configuration_per_slot(m: pyo.ConcreteModel, d: MilpData) -> None:
    """A job runs at most one configuration per slot, and none once it is complete."""
    rows: list[tuple[Any, Any]] = []
    for j, jd in d.jobs.items():
        for t in d.slot_range(j):
            running = sum(m.run[j, k, t] for k in range(len(jd.configs)))
            if t > jd.first_slot:
                rows.append(((j, t), running <= 1 - m.done[j, jd.last, t - 1]))
            else:
                rows.append(((j, t), running <= 1))
    _add(m, "one_configuration_per_slot", rows)


def exclusive_placement(m: pyo.ConcreteModel, d: MilpData) -> None:
    """A running exclusive configuration sits on one node that can host it; a multi-node
    configuration on as many whole nodes as it spans."""
    rows: list[tuple[Any, Any]] = []
    for j, jd in d.jobs.items():
        for k, c in enumerate(jd.configs):
            if c.shared:
                continue
            nodes = d.hosts(c)
            for t in d.slot_range(j):
                placed = sum(m.place[j, k, n.id, t] for n in nodes)
                rows.append(((j, k, t), placed == c.nodes * m.run[j, k, t]))
    _add(m, "exclusive_placement", rows)


def shared_placement(m: pyo.ConcreteModel, d: MilpData) -> None:
    """A running shared configuration is a tenant of exactly one shared GPU of its type."""
    rows: list[tuple[Any, Any]] = []
    for j, jd in d.jobs.items():
        for k, c in enumerate(jd.configs):
            if not c.shared:
                continue
            for t in d.slot_range(j):
                tenancy = sum(
                    m.share[j, n.id, u, t]
                    for n in d.hosts(c)
                    for u in d.labels(n.id, t)
                    if (j, n.id, u, t) in m.share_index
                )
                rows.append(((j, k, t), tenancy == m.run[j, k, t]))
    _add(m, "shared_placement", rows)


def node_capacity(m: pyo.ConcreteModel, d: MilpData) -> None:
    """GPUs of exclusive configurations + GPUs in shared mode <= the node's GPUs (less
    those held by jobs outside the model); a node used by a multi-node configuration
    hosts nothing else (it counts as full)."""
    use: dict[tuple[str, int], list[Any]] = defaultdict(list)
    for j, k, n, t in m.place_index:
        c = d.jobs[j].configs[k]
        gpus = d.instance.node(n).num_gpus if c.nodes > 1 else c.gpus
        use[n, t].append(gpus * m.place[j, k, n, t])
    for n, u, t in m.label_index:
        use[n, t].append(m.shared_gpu[n, u, t])
    _add(
        m,
        "node_capacity",
        (((n, t), sum(terms) <= d.free_gpus(n, t)) for (n, t), terms in use.items()),
    )


def host_capacity(m: pyo.ConcreteModel, d: MilpData) -> None:
    """E3: the CPU cores and DRAM the node's jobs hold <= the node's (less what jobs
    outside the model hold), on nodes that state them. A tenant of a shared GPU holds
    those of its one shared configuration of the node's type. A node of a multi-node
    configuration holds nothing else, so it counts only that configuration's share.
    No row where no configuration states CPU or DRAM: such models are unchanged."""
    inst = d.instance
    cpu: dict[tuple[str, int], list[Any]] = defaultdict(list)
    dram: dict[tuple[str, int], list[Any]] = defaultdict(list)
    for j, k, n, t in m.place_index:
        c = d.jobs[j].configs[k]
        if c.cpus:
            cpu[n, t].append(c.cpus_per_node * m.place[j, k, n, t])
        if c.dram_gb:
            dram[n, t].append(c.dram_per_node * m.place[j, k, n, t])
    shared = {(j, c.gpu_type): c for j, jd in d.jobs.items() for c in jd.configs if c.shared}
    for j, n, u, t in m.share_index:
        c = shared[j, inst.node(n).gpu_type]
        if c.cpus:
            cpu[n, t].append(c.cpus * m.share[j, n, u, t])
        if c.dram_gb:
            dram[n, t].append(c.dram_gb * m.share[j, n, u, t])
    rows: list[tuple[Any, Any]] = []
    for which, terms_of in ((0, cpu), (1, dram)):
        for (n, t), terms in terms_of.items():
            cap = d.free_host(n, t)[which]
            if cap is not None:
                rows.append(((("cpu", "dram")[which], n, t), sum(terms) <= cap))
    _add(m, "host_capacity", rows)


def _tenants(m: pyo.ConcreteModel) -> dict[tuple[str, int, int], list[str]]:
    out: dict[tuple[str, int, int], list[str]] = defaultdict(list)
    for j, n, u, t in m.share_index:
        out[n, u, t].append(j)
    return out


def shared_memory(m: pyo.ConcreteModel, d: MilpData) -> None:
    """The tenants of a shared GPU fit in its memory, and only if it is in shared mode."""
    rows: list[tuple[Any, Any]] = []
    for (n, u, t), jobs in _tenants(m).items():
        cap = d.instance.gpu(d.instance.node(n).gpu_type).memory_gb
        used = sum(d.jobs[j].job.memory_gb * m.share[j, n, u, t] for j in jobs)
        outside = d.outside_label(n, u, t)
        if outside is None:
            rows.append(((n, u, t), used <= cap * m.shared_gpu[n, u, t]))
        else:  # a GPU of outside tenants: in shared mode anyway, their memory taken
            rows.append(((n, u, t), used <= cap - outside[2]))
    _add(m, "shared_memory", rows)


def shared_slots(m: pyo.ConcreteModel, d: MilpData) -> None:
    """A shared GPU hosts at most K_max tenants."""
    rows: list[tuple[Any, Any]] = []
    for (n, u, t), jobs in _tenants(m).items():
        tenancy = sum(m.share[j, n, u, t] for j in jobs)
        outside = d.outside_label(n, u, t)
        if outside is None:
            rows.append(((n, u, t), tenancy <= d.instance.max_share * m.shared_gpu[n, u, t]))
        else:
            rows.append(((n, u, t), tenancy <= d.instance.max_share - outside[1]))
    _add(m, "shared_slots", rows)


def shared_label_order(m: pyo.ConcreteModel, d: MilpData) -> None:
    """Symmetry breaking: shared labels of a node are used in order (label u+1 only if u).

    With relaunch overheads a label is a GPU, and a tenant that stays on its GPU while a
    lower label empties would have to change label, which the model counts as a
    relaunch the plan does not make. Labels are then ordered by their first use instead
    (label u+1 in slot t only if label u was used in some slot up to t): renumbering the
    GPUs by first use, the same in every slot, changes no relaunch, so every plan keeps
    an equal-cost copy that satisfies it."""
    if any(jd.relaunch > 0 for jd in d.jobs.values()):
        used: dict[tuple[str, int], list[Any]] = defaultdict(list)
        rows = []
        for n, u, t in m.label_index:
            used[n, u].append(m.shared_gpu[n, u, t])
            if u > 0:
                rows.append(((n, u, t), m.shared_gpu[n, u, t] <= sum(used[n, u - 1][: t + 1])))
        _add(m, "shared_label_order", rows)
        return
    rows = [
        ((n, u, t), m.shared_gpu[n, u + 1, t] <= m.shared_gpu[n, u, t])
        for n, u, t in m.label_index
        if u + 1 < d.shared_labels[n]
    ]
    _add(m, "shared_label_order", rows)


def _work(m: pyo.ConcreteModel, j: str, k: int, t: int, blocks: Iterable[int]) -> Any:
    return sum(m.work[j, b, k, t] for b in blocks if (j, b, k, t) in m.work_index)


def throughput(m: pyo.ConcreteModel, d: MilpData) -> None:
    """Epochs done in a slot on configuration k <= its epochs per slot, if it runs."""
    rows: list[tuple[Any, Any]] = []
    for j, k, t in m.run_index:
        jd = d.jobs[j]
        rows.append(((j, k, t), _work(m, j, k, t, jd.blocks) <= jd.speed[k] * m.run[j, k, t]))
    _add(m, "throughput", rows)


def full_speed(m: pyo.ConcreteModel, d: MilpData) -> None:
    """A running job works at full speed in every slot but the one in which it completes
    (as the evaluator reads a segment: it runs at its speed from start to end), less the
    share of the slot lost to relaunch overhead (:mod:`milp.overhead`)."""
    rows: list[tuple[Any, Any]] = []
    for j, k, t in m.run_index:
        jd = d.jobs[j]
        work = _work(m, j, k, t, jd.blocks)
        idle = m.done[j, jd.last, t]
        if jd.relaunch > 0:
            idle = idle + m.lost[j, t]
        rows.append(((j, k, t), work >= jd.speed[k] * (m.run[j, k, t] - idle)))
    _add(m, "full_speed", rows)


def block_work(m: pyo.ConcreteModel, d: MilpData) -> None:
    """Every block's epochs are done within the horizon (the plan runs to E_j)."""
    per: dict[tuple[str, int], list[Any]] = defaultdict(list)
    for j, b, k, t in m.work_index:
        per[j, b].append(m.work[j, b, k, t])
    _add(
        m,
        "block_work",
        (
            ((j, b), sum(per[j, b]) == d.jobs[j].lengths[b])
            for j, jd in d.jobs.items()
            for b in jd.blocks
        ),
    )


def block_order(m: pyo.ConcreteModel, d: MilpData) -> None:
    """Block b+1 progresses in slot t only if block b is complete by the end of slot t."""
    rows: list[tuple[Any, Any]] = []
    for j, jd in d.jobs.items():
        for b in jd.blocks:
            if b == jd.last:
                continue
            for t in d.slot_range(j):
                nxt = sum(_work(m, j, k, t, (b + 1,)) for k in range(len(jd.configs)))
                if isinstance(nxt, int):
                    continue
                rows.append(((j, b, t), nxt <= jd.top_speed * m.done[j, b, t]))
    _add(m, "block_order", rows)


def block_completion(m: pyo.ConcreteModel, d: MilpData) -> None:
    """``done[j,b,t]`` only if block b's epochs are all done by the end of slot t: no work
    on it in slot t+1 (and, ``done`` being monotone, in any later slot; with
    ``block_work`` all its epochs then lie in slots up to t)."""
    rows: list[tuple[Any, Any]] = []
    for j, b, t in m.done_index:
        jd = d.jobs[j]
        if t + 1 > jd.last_slot or m.done[j, b, t].fixed:
            continue
        after = sum(_work(m, j, k, t + 1, (b,)) for k in range(len(jd.configs)))
        if isinstance(after, int):
            continue
        rows.append(((j, b, t), after <= jd.top_speed * (1 - m.done[j, b, t])))
    _add(m, "block_completion", rows)


def progress_definition(m: pyo.ConcreteModel, d: MilpData) -> None:
    """``progress[j,t]``: epochs of job j done by the end of slot t, slot by slot."""
    per_slot: dict[tuple[str, int], list[Any]] = defaultdict(list)
    for j, b, k, t in m.work_index:
        per_slot[j, t].append(m.work[j, b, k, t])
    rows: list[tuple[Any, Any]] = []
    for j, t in m.progress_index:
        before = m.progress[j, t - 1] if t > d.jobs[j].first_slot else 0
        rows.append(((j, t), m.progress[j, t] == before + sum(per_slot.get((j, t), ()))))
    _add(m, "progress_definition", rows)


def cumulative_completion(m: pyo.ConcreteModel, d: MilpData) -> None:
    """``done[j,b,t]`` only if the epochs of blocks ``0..b`` are done by the end of slot
    ``t``. Implied, in integers, by ``block_completion``, ``block_order`` and
    ``block_work``; stated to tighten the LP relaxation, whose fractional ``done`` could
    otherwise run ahead of the work and understate lateness (it halved the cold solve
    of the hardest suite instance, docs/milp.md)."""
    rows = [
        ((j, b, t), d.jobs[j].cumulative(b) * m.done[j, b, t] <= m.progress[j, t])
        for j, b, t in m.done_index
        if not (m.done[j, b, t].fixed and m.done[j, b, t].value == 0)
    ]
    _add(m, "cumulative_completion", rows)


def completion_monotone(m: pyo.ConcreteModel, d: MilpData) -> None:
    """Once complete, a block stays complete."""
    rows = [
        ((j, b, t), m.done[j, b, t] <= m.done[j, b, t + 1])
        for j, b, t in m.done_index
        if t + 1 <= d.jobs[j].last_slot
    ]
    _add(m, "completion_monotone", rows)


def lateness(m: pyo.ConcreteModel, d: MilpData) -> None:
    """Block b completes at the end of the slot in which it is done:
    ``C_b = Delta * (L_j + 2 - sum_t done[j,b,t])`` hours, ``L_j`` the job's last slot
    (done from slot s to L_j: the end of slot s); ``late >= C_b - d_j``."""
    rows: list[tuple[Any, Any]] = []
    for j, jd in d.jobs.items():
        for b in d.late_blocks(j):
            slots_done = sum(m.done[j, b, t] for t in d.slot_range(j))
            completion = d.slot * (jd.last_slot + 2 - slots_done)
            rows.append(((j, b), m.late[j, b] >= completion - jd.job.due))
    _add(m, "lateness", rows)


CONSTRAINT_FAMILIES: tuple[Callable[[pyo.ConcreteModel, MilpData], None], ...] = (
    one_configuration_per_slot,
    exclusive_placement,
    shared_placement,
    node_capacity,
    host_capacity,
    shared_memory,
    shared_slots,
    shared_label_order,
    throughput,
    full_speed,
    block_work,
    block_order,
    block_completion,
    progress_definition,
    cumulative_completion,
    completion_monotone,
    lateness,
)
