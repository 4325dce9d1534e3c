"""Idle power in the MILP (docs/model.md, 'Idle power'; docs/milp.md, 'Idle power: a
bound, not a price'), for nodes always on: a linear lower bound on the cluster's own
energy, so that a solve still certifies a gap; it is not the exact expected cost.

Always on, every node is powered from time 0 until ``H``, the last job's completion, and
the GPUs that jobs keep busy draw their configuration's power instead of their idle
power. Over one slot ``t`` (a price ``π_t`` per kWh, carbon in) the cluster's own
energy costs ``π_t (P ∫_slot P(H > s) ds − busy_t)``, with ``P`` the nodes' base and idle
power (kW) and ``busy_t`` the idle kWh the jobs' busy GPUs do not draw, expected.
``P(H > s) = 1 − Π_j P(C_j ≤ s)`` is a product over the jobs of functions of their
schedules: no linear model holds it exactly. What the model holds instead, per slot:

- ``powered[t] >= 1 − Σ_b P(N_j = e_b) · done[j,b,t]`` for every job ``j`` (that is
  ``P(C_j > end of slot t)``), and 1 before any job's first slot (no job has completed
  before it starts). Since ``H >= C_j`` for each ``j``, and ``P(H > s)`` only falls
  during the slot, ``slot · powered[t]`` is at most ``∫_slot P(H > s) ds``.
- ``idle_cost[t] >= π_t (P · slot · powered[t] − credit_t)`` and ``>= 0`` (a slot's own
  energy is never negative: a busy GPU sits on a powered node). ``credit_t`` is at least
  the idle kWh the busy GPUs do not draw: each epoch of block ``b`` on configuration
  ``k`` keeps ``busy_share(k)`` GPUs from idling for its epoch time with probability
  ``q_b`` (exactly as the evaluator counts it), and a slot's relaunch overhead, whose
  length is ``lost[j,t]`` of it, at most the dearest idle power of the job's
  configurations.

At the values describing any plan each row is thus at most that plan's own energy, so the
objective is at most the evaluator's cost of every plan and HiGHS's bound stays a bound
on the true optimum; the plan it returns is costed by the evaluator, and is called
optimal only when that cost meets the bound (:mod:`milp.solve`). Where nodes are powered
off when empty the powered hours differ, and :mod:`milp.power_off` bounds them
node by node, with ``powered`` where a node is on while the cluster is (the first
hours, and the delay after its work)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyomo.environ as pyo

from instances import Instance
from milp.constraints import _add
from milp.data import MilpData, slot_prices
from milp.power_off import add_power_off, completed_by, power_off_values


def base_kw(inst: Instance) -> float:
    """The nodes' base power alone, kW."""
    return sum(n.base_w for n in inst.nodes) / 1000.0


def base_per_gpu_w(inst: Instance) -> dict[str, float]:
    """Per GPU type, the least base power per GPU over its nodes (W): what each busy GPU
    surely makes its node draw where empty nodes power off (0 for a type no node has:
    it hosts nothing)."""
    return {
        t: min((n.base_w / n.num_gpus for n in nodes), default=0.0)
        for t, nodes in inst.nodes_by_type.items()
    }


def prices_of(d: MilpData) -> list[float]:
    prices = slot_prices(d.instance, d.slots, d.slot)
    return [d.instance.energy_price] * d.slots if prices is None else list(prices)


def idle_kw(d: MilpData, j: str) -> list[float]:
    """Per configuration of job ``j``: the idle kW its busy GPUs do not draw."""
    inst = d.instance
    return [inst.gpu(c.gpu_type).idle_w * inst.busy_share(c) / 1000.0 for c in d.jobs[j].configs]


def _epoch_hours(m: pyo.ConcreteModel, d: MilpData) -> Iterator[tuple[str, int, int, Any]]:
    """Per work variable: (job, configuration, slot, the hours its epochs run there,
    expected: each epoch of block ``b`` runs with probability ``q_b``)."""
    for j, b, k, t in m.work_index:
        jd = d.jobs[j]
        yield j, k, t, jd.survival[b] * d.slot / jd.speed[k] * m.work[j, b, k, t]


def _credit(m: pyo.ConcreteModel, d: MilpData, prices: list[float]) -> dict[int, Any]:
    """``credit_t`` per slot (the module's docstring)."""
    kw = {j: idle_kw(d, j) for j in d.jobs}
    out: dict[int, Any] = {t: 0.0 for t in range(d.slots)}
    for j, k, t, hours in _epoch_hours(m, d):
        out[t] = out[t] + kw[j][k] * prices[t] * hours
    if hasattr(m, "lost"):
        for j, t in m.relaunch_index:
            out[t] = out[t] + max(kw[j]) * d.slot * prices[t] * m.lost[j, t]
    return out


def _busy(m: pyo.ConcreteModel, d: MilpData) -> dict[tuple[str, int], Any]:
    """Per job and slot: the hours its epochs run there, expected; its relaunch overhead
    left out (a lower bound)."""
    out: dict[tuple[str, int], Any] = {}
    for j, _, t, hours in _epoch_hours(m, d):
        out[j, t] = out[j, t] + hours if (j, t) in out else hours
    return out


def _open(d: MilpData, t: int) -> list[str]:
    """The jobs that may still run in slot ``t``: every other one has completed by its
    end (from ``t`` on, only jobs released by then are asked)."""
    return [j for j, jd in d.jobs.items() if jd.first_slot <= t <= jd.last_slot]


def _all_done(m: pyo.ConcreteModel, d: MilpData, before: int) -> dict[int, Any]:
    """Per slot from ``before`` on: ``P(every job completed by its end)``, exactly at
    integer points. It is the product over the jobs of ``F_j = Σ_b P(N_j = e_b)
    done[j,b,t]``, taken one job at a time: ``y_i = Σ_b P(N = e_b) · chain[t,i,b]`` with
    ``chain <= y_(i-1)`` and ``chain <= done[j_i,b,t]``, so ``chain`` is at most the
    product of the previous factor and a binary, and equals it where the objective
    wants it as large as it may be (a larger product, fewer powered hours)."""
    idx = []
    per_slot: dict[int, list[tuple[int, str]]] = {}
    for t in range(before, d.slots):
        per_slot[t] = list(enumerate(_open(d, t)))
        for i, j in per_slot[t][1:]:
            idx += [(t, i, b) for b, p in enumerate(d.jobs[j].stop_probability) if p > 0]
    m.chain_index = pyo.Set(initialize=idx, dimen=3, ordered=True)
    m.chain = pyo.Var(m.chain_index, bounds=(0, 1))
    out: dict[int, Any] = {}
    rows: list[tuple[Any, Any]] = []
    for t, jobs in per_slot.items():
        y: Any = 1.0
        for i, j in jobs:
            probs = [(b, p) for b, p in enumerate(d.jobs[j].stop_probability) if p > 0]
            if i == 0:
                y = sum(p * m.done[j, b, t] for b, p in probs)
                continue
            for b, _ in probs:
                rows.append(((t, i, b, "prev"), m.chain[t, i, b] <= y))
                rows.append(((t, i, b, "done"), m.chain[t, i, b] <= m.done[j, b, t]))
            y = sum(p * m.chain[t, i, b] for b, p in probs)
        out[t] = y
    _add(m, "chain_bound", rows)
    return out


def add_powered(m: pyo.ConcreteModel, d: MilpData) -> None:
    """``powered[t]`` per slot, at most the slot's mean of ``P(H > s)`` at the values
    describing any plan, and its rows (the module's docstring)."""
    m.powered_index = pyo.Set(initialize=range(d.slots), ordered=True)
    m.powered = pyo.Var(m.powered_index, bounds=(0, 1))
    before = max(jd.first_slot for jd in d.jobs.values())
    for t in range(min(before, d.slots)):
        m.powered[t].fix(1.0)  # a job not yet started has not completed
    rows: list[tuple[Any, Any]] = []
    for j in d.jobs:
        for t in d.slot_range(j):
            rows.append(((j, t), m.powered[t] >= 1 - completed_by(m, d, j, t)))
    busy = _busy(m, d)
    rows += [((j, t, "busy"), d.slot * m.powered[t] >= hours) for (j, t), hours in busy.items()]
    all_done = _all_done(m, d, before)
    m.all_done_index = pyo.Set(initialize=sorted(all_done), ordered=True)
    m.all_done = pyo.Expression(m.all_done_index, rule=lambda m, t: all_done[t])
    rows += [((t, "all"), m.powered[t] >= 1 - m.all_done[t]) for t in all_done]
    _add(m, "powered_bound", rows)


def add_idle(m: pyo.ConcreteModel, d: MilpData) -> None:
    """``powered`` (or, with nodes powered off when empty, ``node_on``: milp.power_off),
    ``idle_cost`` and their rows where the instance charges idle power (nothing
    otherwise: the model is the model it was)."""
    if not d.instance.node_power:
        return
    prices = prices_of(d)
    m.idle_index = pyo.Set(initialize=range(d.slots), ordered=True)
    m.idle_cost = pyo.Var(m.idle_index, domain=pyo.NonNegativeReals)
    credit = _credit(m, d, prices)
    m.idle_credit = pyo.Expression(m.idle_index, rule=lambda m, t: credit[t])
    # powered off when empty, a node is on from time 0 until min(d, H), and for d after
    # its work while H is not reached: both need P(H > t) as nodes always on do
    add_powered(m, d)
    if d.instance.power_off is None:
        kw = d.instance.powered_kw
        draw = {t: prices[t] * kw * d.slot * m.powered[t] for t in range(d.slots)}
    else:
        draw = add_power_off(m, d, prices)
    m.idle_draw = pyo.Expression(m.idle_index, rule=lambda m, t: draw[t])
    rows = ((t, m.idle_cost[t] >= m.idle_draw[t] - m.idle_credit[t]) for t in m.idle_index)
    _add(m, "idle_energy", rows)


def idle_total(m: pyo.ConcreteModel) -> Any:
    """The objective's idle term (0 where the model has none)."""
    return sum(m.idle_cost[t] for t in m.idle_index) if hasattr(m, "idle_cost") else 0.0


def idle_values(m: pyo.ConcreteModel, d: MilpData) -> None:
    """For a MIP start, once ``done`` and ``lost`` are set: ``chain``, and the least
    ``powered`` (``node_on``) and ``idle_cost`` their rows allow."""
    if not hasattr(m, "idle_cost"):
        return
    low = {t: 0.0 for t in m.powered_index}
    for j, jd in d.jobs.items():
        for t in d.slot_range(j):
            low[t] = max(low[t], 1.0 - _finished(m, j, jd.stop_probability, t))
    for (_, t), hours in _busy(m, d).items():
        low[t] = max(low[t], pyo.value(hours) / d.slot)
    for t in m.all_done_index:
        low[t] = max(low[t], 1.0 - _chain_values(m, d, t))
    for t in m.powered_index:
        if not m.powered[t].fixed:
            m.powered[t].set_value(min(1.0, max(0.0, low[t])))
    if hasattr(m, "node_on"):
        power_off_values(m, d)
    for t in m.idle_index:
        own = pyo.value(m.idle_draw[t]) - pyo.value(m.idle_credit[t])
        m.idle_cost[t].set_value(max(0.0, own))


def _finished(m: pyo.ConcreteModel, j: str, probs: tuple[float, ...], t: int) -> float:
    """``P(C_j <= end of slot t)`` at the values set."""
    return sum(p * round(m.done[j, b, t].value or 0.0) for b, p in enumerate(probs))


def _chain_values(m: pyo.ConcreteModel, d: MilpData, t: int) -> float:
    """Sets ``chain`` of slot ``t`` to its products; returns the last, ``all_done[t]``."""
    product = 1.0
    for i, j in enumerate(_open(d, t)):
        probs = d.jobs[j].stop_probability
        if i > 0:
            for b, p in enumerate(probs):
                if p > 0:
                    m.chain[t, i, b].set_value(product * round(m.done[j, b, t].value or 0.0))
        product = _finished(m, j, probs, t) * (product if i > 0 else 1.0)
    return product
