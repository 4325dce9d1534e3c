"""Nodes powered off when empty in the MILP (docs/model.md, 'Nodes powered off when
empty'; docs/milp.md, 'Idle power: a bound, not a price'): a linear lower bound on the
cluster's own energy, node by node, so that a solve still certifies a gap.

A node is powered at a time ``s < H`` when it is busy somewhere in ``[s − d, s + b]``
(``d`` the idle delay, ``b`` the boot), time 0 counting as busy, and a job is busy on
its node from its segment's start until it completes. Its expected powered hours are
products of the jobs' completion CDFs over windows of each node's plan, which no linear
model holds. What the model holds instead is ``node_on[n,t]`` in [0, 1], with ``Δ ·
node_on[n,t]`` at most node ``n``'s expected powered hours in slot ``t`` at the values
describing any plan, by four rows, each implied by one fact of the rule:

- *a job there all slot*: job ``j`` placed on ``n`` in slot ``t`` and not complete by
  its end (probability ``1 − F_j(t)``, ``F_j(t) = Σ_b P(N_j = e_b) done[j,b,t]``) is
  busy there the whole slot: ``node_on ≥ place − F_j(t)``;
- *its epochs*: the same job's epochs keep ``n`` busy for their expected hours (each
  epoch of block ``b`` runs with probability ``q_b``), also in the slot it completes
  in: ``node_on ≥ Σ_b q_b work[j,b,k,t] / speed_k + place − 1``;
- *the boot ahead*: a job placed on ``n`` in slot ``s`` and not complete when the slot
  starts is busy then, so ``n`` is powered over ``[start_s − b, start_s]`` (and
  ``H > start_s``): each slot ``t < s`` overlapping that window by ``o`` hours has
  ``node_on ≥ (o / Δ)(place[s] − F_j(s − 1))``;
- *from time 0*: every node is powered until ``min(d, H)``; a slot overlapping
  ``[0, d]`` by ``o`` hours has ``node_on ≥ (o / Δ) powered[t]``, ``powered[t]`` at
  most ``P(H > end of slot t)`` as for nodes always on (:mod:`milp.idle`; with a delay
  past the horizon the bound is that of nodes always on).

Then ``idle_cost[t] ≥ π_t (Σ_n P_n Δ node_on[n,t] − credit_t)`` and ``≥ 0``, ``P_n`` the
node's base and idle power and ``credit_t`` the busy GPUs' idle kWh counted from above
as for nodes always on (:mod:`milp.idle`). Boots are left out (at least nothing), as
are the spells of at most ``d + b`` that keep a node on between its jobs' work and the
delay after its last work: the bound is weak where those are much of the bill, and the
solve says how weak by the evaluator's cost of its plan against it."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pyomo.environ as pyo

from milp.constraints import _add
from milp.data import MilpData


def node_kw(d: MilpData) -> dict[str, float]:
    """Each node's base and idle power, kW, drawn while it is powered."""
    inst = d.instance
    return {
        n.id: (n.base_w + inst.gpu(n.gpu_type).idle_w * n.num_gpus) / 1000.0 for n in inst.nodes
    }


def _finished(m: pyo.ConcreteModel, d: MilpData, j: str, t: int) -> Any:
    """``F_j(t)``: the probability that job ``j`` has completed by the end of slot ``t``
    (0 before its first slot)."""
    jd = d.jobs[j]
    if t < jd.first_slot:
        return 0.0
    t = min(t, jd.last_slot)
    return sum(p * m.done[j, b, t] for b, p in enumerate(jd.stop_probability) if p > 0)


def _placements(m: pyo.ConcreteModel) -> Iterator[tuple[str, int | None, str, int, Any]]:
    """Every (job, configuration or ``None`` for a shared label, node, slot, binary)
    saying that the job runs on the node in the slot."""
    for j, k, n, t in m.place_index:
        yield j, k, n, t, m.place[j, k, n, t]
    for j, n, u, t in m.share_index:
        yield j, None, n, t, m.share[j, n, u, t]


def _overlap(start: float, end: float, lo: float, hi: float) -> float:
    return max(0.0, min(end, hi) - max(start, lo))


def on_terms(m: pyo.ConcreteModel, d: MilpData) -> Iterator[tuple[str, int, Any]]:
    """The lower limits of ``node_on[n,t]`` (the module's docstring), as (node, slot,
    expression)."""
    inst, slot = d.instance, d.slot
    assert inst.power_off is not None
    after, boot = inst.power_off.after_h, inst.power_off.boot_h
    for j, k, n, t, x in _placements(m):
        jd = d.jobs[j]
        yield n, t, x - _finished(m, d, j, t)
        if k is not None:
            hours = sum(
                jd.survival[b] * m.work[j, b, k, t] / jd.speed[k]
                for b in jd.blocks
                if (j, b, k, t) in m.work_index
            )
            yield n, t, hours + x - 1
        start = t * slot
        for s in range(max(0, math.floor((start - boot) / slot)), t):
            o = _overlap(s * slot, (s + 1) * slot, start - boot, start)
            if o > 0:
                yield n, s, o / slot * (x - _finished(m, d, j, t - 1))
    for t in m.powered_index:
        o = _overlap(t * slot, (t + 1) * slot, 0.0, after)
        for node in inst.nodes:
            yield node.id, t, o / slot * m.powered[t]


def add_power_off(m: pyo.ConcreteModel, d: MilpData, prices: list[float]) -> dict[int, Any]:
    """``node_on`` and its rows; the slots' priced draw of the powered nodes, ``π_t Δ
    Σ_n P_n node_on[n,t]``."""
    kw = node_kw(d)
    m.node_on_index = pyo.Set(
        initialize=[(n, t) for n in kw for t in range(d.slots)], dimen=2, ordered=True
    )
    m.node_on = pyo.Var(m.node_on_index, bounds=(0, 1))
    rows = [((n, t, i), m.node_on[n, t] >= e) for i, (n, t, e) in enumerate(on_terms(m, d))]
    _add(m, "node_on_bound", rows)
    return {
        t: prices[t] * d.slot * sum(kw[n] * m.node_on[n, t] for n in kw) for t in range(d.slots)
    }


def power_off_values(m: pyo.ConcreteModel, d: MilpData) -> None:
    """For a MIP start, once ``powered`` is set: the least ``node_on`` its rows allow."""
    low = {key: 0.0 for key in m.node_on_index}
    for n, t, e in on_terms(m, d):
        low[n, t] = max(low[n, t], pyo.value(e))
    for key, v in low.items():
        m.node_on[key].set_value(min(1.0, v))
