"""Nodes powered off when empty in the MILP (docs/model.md, 'Nodes powered off when
empty'; docs/milp.md, 'Idle power: a bound, not a price'): a linear lower bound on the
cluster's own energy, node by node, so that a solve still certifies a gap.

A node is powered at a time ``s < H`` when it is busy somewhere in ``[s − d, s + b]``
(``d`` the idle delay, ``b`` the boot), time 0 counting as busy, and a job is busy on
its node from its planned segment's start until it completes; a node quiet for ``d + b``
before a segment start boots, at ``e`` kWh. Its expected powered hours and boots are
products of the jobs' completion CDFs over windows of each node's plan, which no linear
model holds. What the model holds instead is ``node_on[n,t]`` in [0, 1], with ``Δ ·
node_on[n,t]`` at most node ``n``'s expected powered hours in slot ``t`` at the values
describing any plan, by rows each implied by one fact of the rule
(``F_j(t) = Σ_b P(N_j = e_b) done[j,b,t]``, ``x`` the job's ``place`` or ``share``):

- *jobs there all slot*: a job placed on ``n`` in slot ``t`` and not complete by its end
  is busy there the whole slot: ``node_on ≥ x − F_j(t)``, and where several may be
  there, ``1 − Π_j G_j`` (``G_j = F_j(t)`` for a job there, else 1) by a chain of
  products (:func:`_add_union`);
- *its epochs*: the job's epochs keep ``n`` busy for their expected hours (each epoch
  of block ``b`` runs with probability ``q_b``), also in the slot it completes in:
  ``node_on ≥ Σ_b q_b work[j,b,k,t] / speed_k + x − 1``;
- *the boot ahead*: a job placed on ``n`` in slot ``s`` and not complete when the slot
  starts is busy then, so ``n`` is powered over ``[start_s − b, start_s]`` (and
  ``H > start_s``): each slot ``t < s`` overlapping that window by ``o`` hours has
  ``node_on ≥ (o / Δ)(x[s] − F_j(s − 1))``;
- *the delay after work*: ``starts_busy[n,r]``, at most ``P(n busy when slot r
  starts)``; then ``n`` is on until ``d`` later unless ``H`` comes first, and
  ``P(A ∩ B) ≥ P(A) + P(B) − 1``: ``node_on ≥ (o / Δ)(starts_busy + powered[t] − 1)``;
- *from time 0*: every node is powered until ``min(d, H)``; a slot overlapping
  ``[0, d]`` by ``o`` hours has ``node_on ≥ (o / Δ) powered[t]``, ``powered[t]`` at
  most the slot's mean of ``P(H > s)`` as for nodes always on (:mod:`milp.idle`; with a
  delay past the horizon the bound is that of nodes always on);
- *boots*: ``boot[n,r] ≥ starts_busy[n,r] − Σ occupied`` over the slots within ``d + b``
  before ``r`` (no work planned there: the node is quiet), priced at the cheapest slot
  of the boot's hours.

Then ``idle_cost[t] ≥ π_t Δ Σ_n P_n node_on[n,t] + boots − credit_t`` and ``≥ 0``,
``P_n`` the node's base and idle power and ``credit_t`` the busy GPUs' idle kWh counted
from above as for nodes always on. What is left out (a weaker bound than always on) is
in docs/milp.md; the solve says how weak by the evaluator's cost of its plan."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pyomo.environ as pyo

from milp.constraints import _add
from milp.data import EPS, MilpData


def node_kw(d: MilpData) -> dict[str, float]:
    """Each node's base and idle power, kW, drawn while it is powered."""
    inst = d.instance
    return {
        n.id: (n.base_w + inst.gpu(n.gpu_type).idle_w * n.num_gpus) / 1000.0 for n in inst.nodes
    }


def completed_by(m: pyo.ConcreteModel, d: MilpData, j: str, t: int) -> Any:
    """``F_j(t) = Σ_b P(N_j = e_b) done[j,b,t]``: the probability that job ``j`` has
    completed by the end of slot ``t`` (0 before its first slot), linear in ``done``."""
    jd = d.jobs[j]
    if t < jd.first_slot:
        return 0.0
    t = min(t, jd.last_slot)
    return sum(p * m.done[j, b, t] for b, p in enumerate(jd.stop_probability) if p > 0)


def _placements(
    m: pyo.ConcreteModel, d: MilpData
) -> Iterator[tuple[str, tuple[int, ...], str, int, Any]]:
    """Every (job, the configurations it may run there, node, slot, binary) saying that
    the job runs on the node in the slot: one configuration for exclusive GPUs, the
    job's shared configurations of the node's GPU type for a shared label."""
    for j, k, n, t in m.place_index:
        yield j, (k,), n, t, m.place[j, k, n, t]
    shared: dict[tuple[str, str], tuple[int, ...]] = {}
    for j, n, u, t in m.share_index:
        if (j, n) not in shared:
            kind = d.instance.node(n).gpu_type
            configs = d.jobs[j].configs
            shared[j, n] = tuple(
                k for k, c in enumerate(configs) if c.shared and c.gpu_type == kind
            )
        yield j, shared[j, n], n, t, m.share[j, n, u, t]


def _overlap(start: float, end: float, lo: float, hi: float) -> float:
    return max(0.0, min(end, hi) - max(start, lo))


def on_terms(m: pyo.ConcreteModel, d: MilpData) -> Iterator[tuple[str, int, Any]]:
    """The lower limits of ``node_on[n,t]`` (the module's docstring), as (node, slot,
    expression)."""
    inst, slot = d.instance, d.slot
    assert inst.power_off is not None
    after, boot = inst.power_off.after_h, inst.power_off.boot_h
    for j, ks, n, t, x in _placements(m, d):
        jd = d.jobs[j]
        yield n, t, x - completed_by(m, d, j, t)
        hours = sum(
            jd.survival[b] * m.work[j, b, k, t] / jd.speed[k]
            for k in ks
            for b in jd.blocks
            if (j, b, k, t) in m.work_index
        )
        yield n, t, hours + x - 1
        start = t * slot
        for s in range(max(0, math.floor((start - boot) / slot)), t):
            o = _overlap(s * slot, (s + 1) * slot, start - boot, start)
            if o > 0:
                yield n, s, o / slot * (x - completed_by(m, d, j, t - 1))
    for t in m.powered_index:
        o = _overlap(t * slot, (t + 1) * slot, 0.0, after)
        for node in inst.nodes:
            if o > 0:
                yield node.id, t, o / slot * m.powered[t]
            # the delay after work: busy when slot r starts, on until d later while H
            # is not reached; P(both) >= P(busy) + P(H > end of t) - 1 (Fréchet)
            for r in _delayed_from(t, slot, after):
                late = _overlap(t * slot, (t + 1) * slot, r * slot, r * slot + after)
                yield node.id, t, late / slot * (m.starts_busy[node.id, r] + m.powered[t] - 1)


def _delayed_from(t: int, slot: float, after: float) -> range:
    """The slots ``r < t`` whose start the delay ``after`` reaches into slot ``t``, for a
    slot ``t`` not wholly within ``[0, after]`` (there every node is on anyway)."""
    if (t + 1) * slot <= after:
        return range(0)
    return range(max(0, math.ceil((t * slot - after) / slot - EPS)), t)


def _busy_terms(m: pyo.ConcreteModel, d: MilpData) -> Iterator[tuple[str, int, Any]]:
    """The lower limits of ``starts_busy[n,r]``, at most ``P(node n busy when slot r
    starts)``: a job placed there then and not complete before."""
    for j, _, n, r, x in _placements(m, d):
        yield n, r, x - completed_by(m, d, j, r - 1)


def _add_union(m: pyo.ConcreteModel, d: MilpData) -> Iterator[tuple[str, int, Any]]:
    """Per node and slot, ``1 − Π_j G_j`` with ``G_j = F_j(t)`` for a job on the node in
    the slot and 1 otherwise: the probability that some job there has not completed by
    the slot's end, so that the node is busy all slot (the jobs stop independently).
    Taken one job at a time as in :func:`milp.idle._all_done`: ``y_i ≤ y_(i−1)`` and
    ``y_i ≤ Σ_b P(N = e_b) c_(i,b) + 1 − on_j`` with ``c ≤ y_(i−1)`` and ``c ≤
    done[j,b,t]`` (``on_j`` the job's placements on the node there, at most one), so
    ``y`` is at most the product; yields ``(n, t, 1 − y_last)`` where two or more
    jobs may share the node in the slot (one is the row ``place − F_j(t)``)."""
    on: dict[tuple[str, int], dict[str, Any]] = {}
    for j, _, n, t, x in _placements(m, d):
        jobs = on.setdefault((n, t), {})
        jobs[j] = jobs[j] + x if j in jobs else x
    cidx: list[tuple[str, int, int, int]] = []
    yidx: list[tuple[str, int, int]] = []
    for (n, t), jobs in on.items():
        if len(jobs) < 2:
            continue
        for i, j in enumerate(jobs):
            yidx.append((n, t, i))
            probs = d.jobs[j].stop_probability
            cidx += [(n, t, i, b) for b, p in enumerate(probs) if p > 0]
    m.union_index = pyo.Set(initialize=yidx, dimen=3, ordered=True)
    m.union = pyo.Var(m.union_index, bounds=(0, 1))
    m.union_part_index = pyo.Set(initialize=cidx, dimen=4, ordered=True)
    m.union_part = pyo.Var(m.union_part_index, bounds=(0, 1))
    rows: list[tuple[Any, Any]] = []
    for (n, t), jobs in on.items():
        if len(jobs) < 2:
            continue
        prev: Any = 1.0
        for i, (j, x) in enumerate(jobs.items()):
            jd = d.jobs[j]
            tt = min(t, jd.last_slot)
            parts = []
            for b, p in enumerate(jd.stop_probability):
                if p > 0:
                    c = m.union_part[n, t, i, b]
                    rows.append(((n, t, i, b, "prev"), c <= prev))
                    rows.append(((n, t, i, b, "done"), c <= m.done[j, b, tt]))
                    parts.append(p * c)
            y = m.union[n, t, i]
            rows.append(((n, t, i, "prev"), y <= prev))
            rows.append(((n, t, i, "job"), y <= sum(parts) + 1 - x))
            prev = y
        yield n, t, 1 - prev
    _add(m, "union_bound", rows)


def _union_values(m: pyo.ConcreteModel, d: MilpData) -> None:
    """For a MIP start: the products of :func:`_add_union` at the plan's values."""
    by: dict[tuple[str, int], list[int]] = {}
    for n, t, i in m.union_index:
        by.setdefault((n, t), []).append(i)
    jobs_of: dict[tuple[str, int], list[str]] = {}
    placed: dict[tuple[str, str, int], float] = {}
    for j, _, n, t, e in _placements(m, d):
        placed[j, n, t] = placed.get((j, n, t), 0.0) + pyo.value(e)
        jobs = jobs_of.setdefault((n, t), [])
        if j not in jobs:
            jobs.append(j)
    for (n, t), idx in by.items():
        prev = 1.0
        for i, j in zip(sorted(idx), jobs_of[n, t], strict=True):
            jd = d.jobs[j]
            tt = min(t, jd.last_slot)
            x = placed[j, n, t]
            f = 0.0
            for b, p in enumerate(jd.stop_probability):
                if p > 0:
                    c = prev * round(m.done[j, b, tt].value or 0.0)
                    m.union_part[n, t, i, b].set_value(c)
                    f += p * c
            prev = min(prev, f + 1 - round(x))
            m.union[n, t, i].set_value(prev)


def _boot_window(r: int, slot: float, gap: float) -> range:
    """The slots before ``r`` whose work would keep the node on within ``d + b`` before
    slot ``r`` starts (one more at the far end: a wider window only lowers the bound)."""
    return range(max(0, math.floor((r * slot - gap) / slot) - 1), r)


def _add_boots(m: pyo.ConcreteModel, d: MilpData, prices: list[float]) -> dict[int, Any]:
    """``occupied[n,t]`` (the placements on ``n`` in slot ``t``) and ``boot[n,r]``: a
    node with no work planned within ``d + b`` before slot ``r`` boots when a job placed
    there then has not completed, ``boot ≥ starts_busy − Σ occupied`` over that window
    (time 0 keeps every node on before ``d + b``). Each boot's energy is priced at the
    cheapest slot of the boot's hours."""
    inst, slot = d.instance, d.slot
    assert inst.power_off is not None
    gap, hours = inst.power_off.gap, inst.power_off.boot_h
    # a variable, not an expression, so that each boot row holds the window's few
    # node-slots rather than every placement in them
    m.occupied = pyo.Var(m.node_on_index, domain=pyo.NonNegativeReals)
    on: dict[tuple[str, int], Any] = {key: 0.0 for key in m.node_on_index}
    for _, _, n, t, x in _placements(m, d):
        on[n, t] = on[n, t] + x
    rows: list[tuple[Any, Any]] = [((n, t), m.occupied[n, t] == e) for (n, t), e in on.items()]
    first = math.floor(gap / slot + EPS) + 1  # the first slot starting after d + b
    keys = [(n, r) for n, r in m.node_on_index if r >= first]
    m.boot_index = pyo.Set(initialize=keys, dimen=2, ordered=True)
    m.boot = pyo.Var(m.boot_index, domain=pyo.NonNegativeReals)
    for n, r in keys:
        window = sum(m.occupied[n, s] for s in _boot_window(r, slot, gap))
        rows.append(((n, r, "boot"), m.boot[n, r] >= m.starts_busy[n, r] - window))
    _add(m, "boot_bound", rows)
    kwh = inst.power_off.boot_kwh
    out: dict[int, Any] = {}
    for r in range(first, d.slots):
        during = range(max(0, math.floor((r * slot - hours) / slot + EPS)), r) if hours else [r]
        price = min(prices[s] for s in during) if during else prices[r]
        out[r] = kwh * price * sum(m.boot[n, r] for n in (node.id for node in inst.nodes))
    return out


def add_power_off(m: pyo.ConcreteModel, d: MilpData, prices: list[float]) -> dict[int, Any]:
    """``node_on`` and its rows, once ``powered`` is built, and the boots where they
    cost energy; the slots' priced draw, ``π_t Δ Σ_n P_n node_on[n,t]`` plus the
    boots'."""
    kw = node_kw(d)
    keys = [(n, t) for n in kw for t in range(d.slots)]
    m.node_on_index = pyo.Set(initialize=keys, dimen=2, ordered=True)
    m.node_on = pyo.Var(m.node_on_index, bounds=(0, 1))
    m.starts_busy = pyo.Var(m.node_on_index, bounds=(0, 1))
    union = list(_add_union(m, d))
    busy = enumerate(_busy_terms(m, d))
    rows: list[tuple[Any, Any]] = [
        ((n, r, "b", i), m.starts_busy[n, r] >= e) for i, (n, r, e) in busy
    ]
    rows += [((n, t, i), m.node_on[n, t] >= e) for i, (n, t, e) in enumerate(on_terms(m, d))]
    # several jobs on a node: busy all slot (and so when it starts) unless all complete
    for n, t, e in union:
        rows += [((n, t, "u"), m.node_on[n, t] >= e), ((n, t, "ub"), m.starts_busy[n, t] >= e)]
    _add(m, "node_on_bound", rows)
    assert d.instance.power_off is not None
    boots = _add_boots(m, d, prices) if d.instance.power_off.boot_kwh > 0 else {}
    return {
        t: prices[t] * d.slot * sum(kw[n] * m.node_on[n, t] for n in kw) + boots.get(t, 0.0)
        for t in range(d.slots)
    }


def power_off_values(m: pyo.ConcreteModel, d: MilpData) -> None:
    """For a MIP start, once ``powered`` is set: the least ``starts_busy``, ``node_on``
    and ``boot`` their rows allow, and ``occupied``."""
    _union_values(m, d)
    union: dict[tuple[str, int], float] = {}
    for n, t, i in m.union_index:
        union[n, t] = min(union.get((n, t), 1.0), m.union[n, t, i].value)
    for var, terms in ((m.starts_busy, _busy_terms), (m.node_on, on_terms)):
        low = {key: 1.0 - union.get(key, 1.0) for key in m.node_on_index}
        for n, t, e in terms(m, d):
            low[n, t] = max(low[n, t], pyo.value(e))
        for key, v in low.items():
            var[key].set_value(min(1.0, v))
    if not hasattr(m, "boot"):
        return
    for key in m.node_on_index:
        m.occupied[key].set_value(0.0)
    for _, _, n, t, x in _placements(m, d):
        m.occupied[n, t].set_value(m.occupied[n, t].value + pyo.value(x))
    assert d.instance.power_off is not None
    gap = d.instance.power_off.gap
    for n, r in m.boot_index:
        window = sum(m.occupied[n, s].value for s in _boot_window(r, d.slot, gap))
        m.boot[n, r].set_value(max(0.0, m.starts_busy[n, r].value - window))
