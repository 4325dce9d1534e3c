"""Between plans and MILP variable values: a slotted plan as a MIP start (the relaunch
overhead's variables of :mod:`milp.overhead` included), and the MILP's solution as a
plan (with GPU ids) for the evaluator."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pyomo.environ as pyo

from instances import Config, GpuRef, Plan, PlanError, Segment
from milp.data import MilpData
from milp.idle import idle_values
from milp.overhead import in_progress, lost_fractions, start_charge, survival_before

ON = 0.5  # binaries read from a solution: above this is 1


def _slot_of(d: MilpData, t: float) -> int:
    return round(t / d.slot)


def start_values(m: pyo.ConcreteModel, d: MilpData, plan: Plan) -> None:
    """Set every (unfixed) variable of ``m`` to the values describing ``plan``, a
    slot-aligned plan of the same instance that ends within the horizon."""
    for var in m.component_data_objects(pyo.Var, descend_into=True):
        if not var.fixed:
            var.set_value(0)
    labels = _shared_labels(d, plan)
    for seg in sorted(plan, key=lambda s: (s.start, s.job)):
        jd = d.jobs[seg.job]
        k = jd.configs.index(seg.config)
        first, last = _slot_of(d, seg.start), _slot_of(d, seg.end)
        if last > d.slots:
            raise PlanError(
                f"the initial plan runs job {seg.job!r} until {seg.end:g} h, after the "
                f"horizon of {d.horizon:g} h",
                (),
            )
        if last > jd.last_slot + 1:  # only if the cutoff is below the plan's own cost
            raise PlanError(
                f"the initial plan runs job {seg.job!r} until {seg.end:g} h, after its last "
                f"slot under the model's cost cutoff ({(jd.last_slot + 1) * d.slot:g} h)",
                (),
            )
        for t in range(first, last):
            m.run[seg.job, k, t].set_value(1)
            if seg.config.shared:
                (ref,) = seg.gpus
                n, g = ref
                if g in d.outside.tenants.get((n, t), {}):  # beside tenants from outside the model
                    u = d.outside_label_of(n, g)
                    m.share[seg.job, n, u, t].set_value(1)
                    continue
                u = labels[n, t][ref]
                m.share[seg.job, n, u, t].set_value(1)
                m.shared_gpu[n, u, t].set_value(1)
            else:
                for n in dict.fromkeys(node for node, _ in seg.gpus):
                    m.place[seg.job, k, n, t].set_value(1)
    for j in d.jobs:
        _progress_values(m, d, j, _lost_values(m, d, j))
        _overhead_values(m, d, j)
    idle_values(m, d)


def _shared_labels(d: MilpData, plan: Plan) -> dict[tuple[str, int], dict[GpuRef, int]]:
    """Per (node, slot), the label of each GPU the plan uses in shared mode. Without
    relaunch overheads, labels are numbered from 0 in each slot (the model's label
    order); with them, a GPU keeps its label while it stays shared, so that a tenant
    that stays on its GPU is no relaunch to the model either."""
    uses: dict[tuple[str, int], list[GpuRef]] = defaultdict(list)
    for seg in sorted(plan, key=lambda s: (s.start, s.job)):
        if not seg.config.shared:
            continue
        (ref,) = seg.gpus
        n, g = ref
        for t in range(_slot_of(d, seg.start), _slot_of(d, seg.end)):
            if g not in d.outside.tenants.get((n, t), {}) and ref not in uses[n, t]:
                uses[n, t].append(ref)
    persistent = any(jd.relaunch > 0 for jd in d.jobs.values())
    out: dict[tuple[str, int], dict[GpuRef, int]] = {}
    for n in sorted({n for n, _ in uses}):
        before: dict[GpuRef, int] = {}
        for t in range(d.slots):
            now: dict[GpuRef, int] = {}
            refs = uses.get((n, t), [])
            if persistent:
                now = {r: before[r] for r in refs if r in before}
            for r in refs:
                if r not in now:
                    now[r] = min(set(range(len(refs) + len(now) + 1)) - set(now.values()))
            out[n, t] = now
            before = now
    return out


def _progress_values(m: pyo.ConcreteModel, d: MilpData, j: str, lost: dict[int, float]) -> None:
    """work, progress, done and late of job ``j`` from the slots in which it runs (less
    the share of each slot ``lost`` to relaunch overhead)."""
    jd = d.jobs[j]
    tol = 1e-9 * max(1.0, jd.job.max_epochs)
    remaining = list(jd.lengths)
    b = 0
    progress = 0.0
    for t in d.slot_range(j):
        running = [k for k in range(len(jd.configs)) if (m.run[j, k, t].value or 0) > ON]
        if running and b <= jd.last:
            (k,) = running
            capacity = jd.speed[k] * (1 - lost[t]) if t in lost else jd.speed[k]
            # (a block ending at the slot's end leaves a rounding residue of capacity, not
            # room for the next block: the model has no work variable for it there)
            while b <= jd.last and capacity > tol:
                w = remaining[b] if remaining[b] <= capacity + tol else capacity
                m.work[j, b, k, t].set_value(w)
                progress += w
                remaining[b] -= w
                capacity -= w
                if remaining[b] <= tol:
                    remaining[b] = 0.0
                    b += 1
        m.progress[j, t].set_value(progress)
        for bb in jd.blocks:
            if bb < b and not m.done[j, bb, t].fixed:
                m.done[j, bb, t].set_value(1)
    for bb in d.late_blocks(j):
        finished = [t for t in d.slot_range(j) if (m.done[j, bb, t].value or 0) > ON]
        end = (finished[0] + 1) * d.slot if finished else d.horizon + d.slot
        m.late[j, bb].set_value(max(0.0, end - jd.job.due))


def _lost_values(m: pyo.ConcreteModel, d: MilpData, j: str) -> dict[int, float]:
    """For a MIP start: set ``begin_*``, ``relaunched`` and ``lost`` of job ``j`` from
    its ``run``/``place``/``share`` values; returns the lost fraction per slot."""
    jd = d.jobs[j]
    if jd.relaunch <= 0:
        return {}
    lam = lost_fractions(jd)
    relaunched: dict[int, float] = {}
    for var, x in ((m.begin_place, m.place), (m.begin_share, m.share)):
        for idx in var:
            if idx[0] != j:
                continue
            before = (*idx[:-1], idx[-1] - 1)
            prev = (x[before].value or 0) > ON if before in x.index_set() else False
            new = 1.0 if (x[idx].value or 0) > ON and not prev else 0.0
            var[idx].set_value(new)
            relaunched[idx[-1]] = max(relaunched.get(idx[-1], 0.0), new)
    lost: dict[int, float] = {}
    ever = 0.0
    for t in d.slot_range(j):
        m.relaunched[j, t].set_value(relaunched.get(t, 0.0))
        runs = any((m.run[j, k, t].value or 0) > ON for k in range(len(jd.configs)))
        for k in range(len(jd.configs)):
            first = ever == 0.0 and (m.run[j, k, t].value or 0) > ON
            m.first_run[j, k, t].set_value(1.0 if first else 0.0)
        ever = 1.0 if runs else ever
        if not m.ever[j, t].fixed:
            m.ever[j, t].set_value(ever)
        hits = [lam[i] for i in range(len(lam)) if relaunched.get(t - i, 0.0) > ON]
        lost[t] = max(hits) if runs and hits else 0.0
        m.lost[j, t].set_value(lost[t])
    return lost


def _overhead_values(m: pyo.ConcreteModel, d: MilpData, j: str) -> None:
    """For a MIP start, once ``done`` is set: ``overhead_cost`` of job ``j``."""
    jd = d.jobs[j]
    if jd.relaunch <= 0:
        return
    lam = lost_fractions(jd)
    for t in d.slot_range(j):
        s = pyo.value(survival_before(m, jd, j, t))
        relaunched = (m.relaunched[j, t].value or 0) > ON
        best = 0.0  # the split relaunch charge, then the rows of earlier relaunches
        for k in range(len(jd.configs)):
            start = relaunched and (m.run[j, k, t].value or 0) > ON
            for b in jd.blocks:
                on = start and pyo.value(in_progress(m, jd, j, t, b)) > ON
                m.start_block[j, k, t, b].set_value(1.0 if on else 0.0)
                best += start_charge(jd, k, b, t) * on
        for k in range(len(jd.configs)):
            run = m.run[j, k, t].value or 0
            for i in range(len(lam)):
                if t - i >= jd.first_slot:
                    r = m.relaunched[j, t - i].value or 0
                    best = max(best, jd.power_cost(k, t) * lam[i] * (r + run + s - 2))
        m.overhead_cost[j, t].set_value(best)


def _chosen(m: pyo.ConcreteModel, d: MilpData, t: int) -> dict[str, tuple[Config, tuple[Any, ...]]]:
    """Per job running in slot t: its configuration and where (node ids, or one
    (node, shared label))."""
    out: dict[str, tuple[Config, tuple[Any, ...]]] = {}
    for j, jd in d.jobs.items():
        if t not in d.slot_range(j):
            continue
        for k, c in enumerate(jd.configs):
            if (m.run[j, k, t].value or 0) <= ON:
                continue
            where: tuple[Any, ...]
            if c.shared:
                where = tuple(
                    (n.id, u)
                    for n in d.hosts(c)
                    for u in d.labels(n.id, t)
                    if (j, n.id, u, t) in m.share_index and (m.share[j, n.id, u, t].value or 0) > ON
                )
            else:
                where = tuple(n.id for n in d.hosts(c) if (m.place[j, k, n.id, t].value or 0) > ON)
            out[j] = (c, where)
    return out


def solution_plan(m: pyo.ConcreteModel, d: MilpData) -> Plan:
    """The plan of the solution loaded in ``m``. GPU ids are assigned slot by slot; a job
    (or a shared label) that stays on its node keeps its GPUs."""
    inst = d.instance
    prev: dict[str, tuple[Config, tuple[Any, ...]]] = {}
    prev_gpus: dict[Any, tuple[int, ...]] = {}  # (job, node) or (node, label) -> ids
    pieces: list[tuple[int, str, Config, tuple[GpuRef, ...]]] = []
    for t in range(d.slots):
        cur = _chosen(m, d, t)
        # what needs GPUs on each node: (key, count), continuing keys first
        asks: dict[str, list[tuple[Any, int]]] = defaultdict(list)
        for j, (c, where) in cur.items():
            if c.shared:
                (n, u) = where[0]
                key: Any = (n, u)
                if key not in asks[n] and (key, 1) not in asks[n]:
                    asks[n].append((key, 1))
            else:
                per_node = c.gpus_per_node if c.nodes > 1 else c.gpus
                for n in where:
                    asks[n].append(((j, n), per_node))
        ids: dict[Any, tuple[int, ...]] = {}
        for n, wanted in asks.items():
            for key, _ in wanted:  # a GPU of outside tenants is that GPU
                outside = d.outside_label(n, key[1], t) if isinstance(key[1], int) else None
                if outside is not None:
                    ids[key] = (outside[0],)
            free = set(range(inst.node(n).num_gpus)) - d.outside.gpus.get((n, t), frozenset())
            for key, count in wanted:  # keep the previous slot's GPUs where possible
                old = prev_gpus.get(key)
                same = (
                    not isinstance(key[0], str)
                    or key[0] not in cur
                    or prev.get(key[0]) == cur.get(key[0])
                )
                if key in ids:
                    continue
                if old is not None and len(old) == count and set(old) <= free and same:
                    ids[key] = old
                    free -= set(old)
            for key, count in wanted:
                if key not in ids:
                    take = tuple(sorted(free)[:count])
                    ids[key] = take
                    free -= set(take)
        for j, (c, where) in cur.items():
            if c.shared:
                n, u = where[0]
                gpus: tuple[GpuRef, ...] = ((n, ids[n, u][0]),)
            else:
                gpus = tuple((n, g) for n in where for g in ids[j, n])
            pieces.append((t, j, c, gpus))
        prev, prev_gpus = cur, ids
    return _merge(d, pieces)


def _merge(d: MilpData, pieces: list[tuple[int, str, Config, tuple[GpuRef, ...]]]) -> Plan:
    """Consecutive slots of a job on the same configuration and GPUs form one segment."""
    segs: list[Segment] = []
    run: tuple[int, int, str, Config, tuple[GpuRef, ...]] | None = None
    for t, j, c, gpus in sorted(pieces, key=lambda p: (p[1], p[0])):
        if run is not None and (run[1], run[2], run[3], run[4]) == (t, j, c, gpus):
            run = (run[0], t + 1, j, c, gpus)
            continue
        if run is not None:
            segs.append(Segment(run[0] * d.slot, run[1] * d.slot, run[2], run[3], run[4]))
        run = (t, t + 1, j, c, gpus)
    if run is not None:
        segs.append(Segment(run[0] * d.slot, run[1] * d.slot, run[2], run[3], run[4]))
    return Plan.of(segs)
