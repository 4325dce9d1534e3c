"""Plans from columns: the restricted master as an integer program (HiGHS), and one
column per job assembled into a plan with GPU ids.

GPU ids are given slot by slot, node by node: a job that stays on a node with its
configuration, and a shared label that stays in shared mode, keep the GPUs of the slot
before; the rest take the lowest free ones. The master's rows guarantee that they fit
(a node's exclusive GPUs plus its shared labels in use are at most its GPUs). So every
job runs its column's schedule, and its cost in the plan is the column's, or less: a
tenant that changes label may land on the GPU it left, which the evaluator then counts
as no relaunch.
"""

from __future__ import annotations

import math
from collections import defaultdict

import highspy
import numpy as np

from heuristic.core import highs_run
from instances import GpuRef, Plan, Segment
from milp.decomposition.columns import Column
from milp.decomposition.master import Master
from milp.decomposition.space import Space

INF = highspy.kHighsInf


def integer_master(
    master: Master, start: list[Column] | None, time_limit: float | None, gap: float = 1e-6
) -> tuple[list[Column] | None, float, float]:
    """The master's integer program over the columns it holds (artificial columns left
    out; ``y`` binary): the chosen column per job (``None``: none found in time), its
    value and HiGHS's dual bound (valid for these columns only, not for the problem)."""
    s = master.store
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("mip_rel_gap", gap)
    if time_limit is not None:
        h.setOptionValue("time_limit", max(0.01, float(time_limit)))
    rows = master.n_jobs + len(master.row_key)
    lower = np.concatenate([np.ones(master.n_jobs), np.full(len(master.row_key), -INF)])
    upper = np.concatenate(
        [np.ones(master.n_jobs), [master.space.resources[r].capacity for r, _ in master.row_key]]
    )
    none = np.zeros(0, dtype=np.int32)
    h.addRows(rows, lower, upper, 0, none, none, np.zeros(0))
    keep = [i for i, kind in enumerate(s.kind) if kind != "artificial"]
    for i in keep:
        h.addCol(s.cost[i], 0.0, 1.0, len(s.rows[i]), s.rows[i].astype(np.int32), s.coefs[i])
    h.changeColsIntegrality(
        len(keep), np.arange(len(keep), dtype=np.int32), np.ones(len(keep), dtype=np.uint8)
    )
    if start is not None:
        h.setSolution(_start_vector(master, keep, start))
    highs_run.run(h, 1)
    info = h.getInfo()
    if info.primal_solution_status != 2:  # no feasible point
        return None, math.inf, float(info.mip_dual_bound)
    x = np.asarray(h.getSolution().col_value)
    position = {model: i for i, model in enumerate(keep)}
    chosen = [
        c for c, m in zip(master.columns, master.col_index, strict=True) if x[position[m]] > 0.5
    ]
    return chosen, float(info.objective_function_value), float(info.mip_dual_bound)


def _start_vector(master: Master, keep: list[int], start: list[Column]) -> highspy.HighsSolution:
    """A MIP start: the given columns at 1 and the shared labels they use in shared mode."""
    on = {(c.job, c.start, c.choices) for c in start}
    value = np.zeros(len(master.store.cost))
    for col, m in zip(master.columns, master.col_index, strict=True):
        if (col.job, col.start, col.choices) in on:
            value[m] = 1.0
            for r in master.store.rows[m][1:]:
                res, t = master.row_key[r - master.n_jobs]
                label = master.space.resources[res].label
                if label >= 0:
                    node = master.space.resources[res].node
                    value[master.y_of[master.label_of[node, label], t]] = 1.0
    sol = highspy.HighsSolution()
    sol.col_value = list(value[keep])
    return sol


def assemble(space: Space, columns: list[Column]) -> Plan:
    """The plan running each job's column (see the module's docstring for GPU ids)."""
    by_slot: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for col in columns:
        for t, c in col.slots():
            by_slot[t].append((col.job, c))
    held: dict[tuple, tuple[int, ...]] = {}  # (job, node, choice) or (node, label) -> ids
    labels: dict[int, tuple[str, int]] = {}  # each tenant's label in the slot before
    pieces: list[tuple[int, int, int, tuple[GpuRef, ...]]] = []
    for t in range(min(by_slot, default=0), max(by_slot, default=-1) + 1):
        ids = _slot_ids(space, by_slot[t], held, labels)
        labels = {}
        for j, c in by_slot[t]:
            ch = space.jobs[j].choices[c]
            gpus: tuple[GpuRef, ...]
            if ch.label >= 0:
                gpus = ((ch.nodes[0], ids[ch.nodes[0], ch.label][0]),)
                labels[j] = (ch.nodes[0], ch.label)
            else:
                gpus = tuple((n, g) for n in ch.nodes for g in ids[j, n, c])
            pieces.append((t, j, c, gpus))
        held = ids
    return _merge(space, pieces)


def _slot_ids(
    space: Space,
    running: list[tuple[int, int]],
    held: dict[tuple, tuple[int, ...]],
    labels: dict[int, tuple[str, int]],
) -> dict[tuple, tuple[int, ...]]:
    """GPU ids of one slot's (job, choice) pairs, node by node. A tenant that changes
    label avoids the GPU it leaves, so that the evaluator sees the relaunch its column
    pays (it may still get it when no other GPU is free: its cost is then lower)."""
    asks: dict[str, list[tuple[tuple, int]]] = defaultdict(list)
    avoid: dict[tuple, set[int]] = defaultdict(set)
    for j, c in running:
        ch = space.jobs[j].choices[c]
        cfg = space.jobs[j].jd.configs[ch.k]
        if cfg.shared:
            key = (ch.nodes[0], ch.label)
            if (key, 1) not in asks[ch.nodes[0]]:
                asks[ch.nodes[0]].append((key, 1))
            before = labels.get(j)
            if before is not None and before != key and before[0] == key[0]:
                avoid[key] |= set(held.get(before, ()))
        else:
            for n in ch.nodes:
                asks[n].append(((j, n, c), cfg.gpus_per_node if cfg.nodes > 1 else cfg.gpus))
    ids: dict[tuple, tuple[int, ...]] = {}
    for n, wanted in asks.items():
        ids.update(_give(space.instance.node(n).num_gpus, wanted, held, avoid))
    return ids


def _give(
    gpus: int, wanted: list[tuple[tuple, int]], held: dict, avoid: dict[tuple, set[int]]
) -> dict:
    """GPU ids on one node: what asked in the slot before keeps its GPUs, the rest take
    the lowest free ones, those it should avoid last."""
    free = set(range(gpus))
    out = {}
    for key, count in wanted:
        old = held.get(key)
        if old is not None and len(old) == count and set(old) <= free:
            out[key] = old
            free -= set(old)
    for key, count in wanted:
        if key not in out:
            order = sorted(free, key=lambda g: (g in avoid.get(key, ()), g))
            out[key] = tuple(sorted(order[:count]))
            free -= set(out[key])
    return out


def _merge(space: Space, pieces: list[tuple[int, int, int, tuple[GpuRef, ...]]]) -> Plan:
    """Consecutive slots of a job on one choice and the same GPUs form one segment."""
    slot = space.d.slot
    segs: list[Segment] = []
    run: list | None = None
    for t, j, c, gpus in sorted(pieces, key=lambda p: (p[1], p[0])):
        if run is not None and (run[1], run[2], run[3], run[4]) == (t, j, c, gpus):
            run[1] = t + 1
            continue
        if run is not None:
            segs.append(_segment(space, slot, run))
        run = [t, t + 1, j, c, gpus]
    if run is not None:
        segs.append(_segment(space, slot, run))
    return Plan.of(segs)


def _segment(space: Space, slot: float, run: list) -> Segment:
    first, end, j, c, gpus = run
    js = space.jobs[j]
    cfg = js.jd.configs[js.choices[c].k]
    return Segment(first * slot, end * slot, js.id, cfg, gpus)
