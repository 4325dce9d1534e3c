"""Idle power on nodes always on, in the Lagrangian bound (:mod:`milp.lagrange`;
docs/milp.md, 'Idle power: a bound, not a price').

Always on, the cluster's cost is the jobs' energy plus its own: ``Σ_t π_t (P ∫_slot
P(H > s) ds − busy_t)`` (:mod:`milp.idle`), ``P`` the nodes' base and idle kW, ``H`` the
last completion, ``busy_t`` the idle kWh the busy GPUs do not draw. Regrouped, each
epoch a job runs on configuration ``k`` costs its energy *less* the idle energy its busy
GPUs would have drawn (the credit), and the cluster pays ``P`` for every powered hour.
Both parts split over the jobs, for a lower bound:

- **Net energy.** An epoch costs ``e_k − c_k``, ``c_k`` the idle kWh of the GPUs it keeps
  busy for its epoch time. Where every ``e_k − c_k >= 0`` the grid's charge of it is at
  most the true expected one (its expected epochs are never more than the true ones:
  :mod:`milp.lagrange`). Where some configuration draws less than its GPUs idle (never
  for a configuration at its GPUs' busy power; possible for a measured power), the
  credit is not taken and the nodes' own energy counts as nothing, as before.
- **Powered hours.** ``P(H > s) >= P(C_j > s)`` for every job ``j``, so for any weights
  ``w_jt >= 0`` with ``Σ_j w_jt <= 1``, ``P(H > end of slot t) >= Σ_j w_jt S_j(t)`` with
  ``S_j(t) = P(C_j > end of t)``, and ``P(H > s)`` only falls within the slot. Each job
  pays ``w_jt π_t P Δ S_j(t)`` per slot: the probability that it has not completed, a
  function of its progress (its blocks whose stop has not yet passed), which the grid
  under-counts (it runs ahead of the true progress). The weights are one job per slot,
  the job likeliest still to run in each job's cheapest schedule alone (any choice is
  valid). Where it is larger in those schedules, a slot takes instead the constant
  ``1 − Π_j F⁺_j(t)``, ``F⁺_j`` the job's completion by then were it run at top speed
  from its release (no plan completes it sooner: :func:`sooner`).

The compact model's ``>= 0`` on a slot's own energy is not kept: the bound is the sum of
the two parts, each at most its true value."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from milp.data import JobData, MilpData
from milp.idle import base_kw, base_per_gpu_w, idle_kw, prices_of

TOL = 1e-12


@dataclass(frozen=True)
class IdleCharge:
    """The parts of the idle energy that split over the jobs."""

    credit: np.ndarray  # (J, K): per epoch, money (one price) or kWh (per-slot prices)
    net: np.ndarray  # (J, K): an epoch's energy net of its credit, as a share of it
    price: np.ndarray  # (slots,): π_t Δ, a slot's cost per kW drawn all of it
    kw: float  # the nodes' base power and every GPU's idle power
    base_kw: float  # the nodes' base power alone


def idle_charge(d: MilpData, n_k: int) -> IdleCharge | None:
    """The credits and the powered slots' cost where nodes are always on and draw power,
    ``None`` where they do not (or power off when empty: their powered hours are not
    bounded here), or where a configuration's net energy would be negative."""
    inst = d.instance
    if not inst.node_power or inst.power_off is not None:
        return None
    credit = np.zeros((len(d.jobs), n_k))
    net = np.ones((len(d.jobs), n_k))
    for j, (job_id, jd) in enumerate(d.jobs.items()):
        for k, kw in enumerate(idle_kw(d, job_id)):
            credit[j, k] = _per_epoch(d, jd, k, kw)  # the GPUs kept busy for one epoch
            unit = epoch_unit(jd, k)
            if unit - credit[j, k] < -TOL * max(1.0, unit):
                return None
            net[j, k] = max(0.0, 1.0 - credit[j, k] / unit) if unit > 0 else 0.0
    price = np.asarray(prices_of(d)) * d.slot
    return IdleCharge(
        credit=credit, net=net, price=price, kw=inst.powered_kw, base_kw=base_kw(inst)
    )


def node_share(d: MilpData, n_k: int) -> np.ndarray | None:
    """Where empty nodes power off: per (job, configuration), the share of its nodes'
    base power an epoch on it pays, in :func:`epoch_unit`'s units; ``None`` where
    nodes are always on (:func:`idle_charge` counts them) or draw no base power.

    A node is on while any job runs on it, so it draws its base power ``B_n`` then; the
    jobs on it keep at most its ``G_n`` GPUs busy (a shared slot counts ``1/K_max`` of
    one), so charging each job ``B_n / G_n`` per GPU it keeps busy, while it runs,
    charges at most ``B_n`` while the node is on, on every scenario. The least
    ``B_n / G_n`` over the nodes of the configuration's type stands for the node the
    grid does not know. The idle GPUs, the delay before powering off and the boots are
    left out: each adds to the bill, so leaving it out keeps a lower bound."""
    inst = d.instance
    if inst.power_off is None or not inst.node_power:
        return None
    per_gpu = {t: w / 1000.0 for t, w in base_per_gpu_w(inst).items()}
    out = np.zeros((len(d.jobs), n_k))
    for j, jd in enumerate(d.jobs.values()):
        for k, c in enumerate(jd.configs):
            out[j, k] = _per_epoch(d, jd, k, per_gpu.get(c.gpu_type, 0.0) * inst.busy_share(c))
    return out if out.any() else None


def _per_epoch(d: MilpData, jd: JobData, k: int, kw: float) -> float:
    """``kw`` drawn for one epoch on configuration ``k``, in :func:`epoch_unit`'s units
    (money at the one energy price, else kWh priced per slot)."""
    kwh = kw * d.slot / jd.speed[k]
    return kwh * d.instance.energy_price if jd.slot_price is None else kwh


def epoch_unit(jd: JobData, k: int) -> float:
    """An epoch's energy on configuration ``k``: money at one price, else kWh (priced
    per slot)."""
    return jd.cost[k] if jd.slot_price is None else jd.energy[k]


def net_floor(jd: JobData, credit: np.ndarray) -> float:
    """A lower bound on the job's expected net energy (``e_k − c_k`` per epoch, every
    epoch with its survival, at the cheapest configuration and slot price); the first
    start's overhead left out (its own net energy is not negative)."""
    net = min(epoch_unit(jd, k) - credit[k] for k in range(len(jd.configs)))
    epochs = float(np.dot(jd.survival, jd.lengths))
    return max(0.0, net) * jd.cheapest_price * epochs


def alive(stop_probability: np.ndarray, marks: np.ndarray, states: int) -> np.ndarray:
    """``S(i)``: the probability that the job has not completed at grid state ``i``
    (0..states), the stops of the blocks the grid counts complete there (``marks``:
    the state at which each block is) taken out; 0 at the end."""
    i = np.arange(states + 1)
    return (marks[None, :] > i[:, None]).astype(float) @ stop_probability


def weights(path_alive: np.ndarray) -> np.ndarray:
    """One job per slot (``(J, slots)``, 0 or 1): the one likeliest still to run,
    ``path_alive[j, t]`` (1 before its first slot), the first such job on ties."""
    n_j, slots = path_alive.shape
    w = np.zeros((n_j, slots))
    if n_j:
        w[np.argmax(path_alive, axis=0), np.arange(slots)] = 1.0
    return w


def split_idle(
    a: Any, d: MilpData, idle: IdleCharge, own: np.ndarray, solve: Callable[[Any], Any]
) -> tuple[Any, np.ndarray, float]:
    """``a`` (the jobs' problems stacked by :mod:`milp.lagrange`; ``solve``: their
    cheapest paths at zero prices) with the nodes' own energy split over the jobs (the
    module's docstring), each job's floor, and a constant. In each slot the powered
    hours are either a constant, ``1 − Π_j F_j(t)`` with each job's completion by the
    slot's end at most as likely as at top speed from its release (:func:`sooner`), or
    carried by one job, the one likeliest still to run in its cheapest schedule alone,
    whichever is larger in those schedules. Of the two splits, every GPU's idle power
    with the credits or the nodes' base power alone, the one higher at zero prices is
    kept."""
    slots = len(idle.price)
    _, path = solve(a)  # the jobs' cheapest schedules alone, at zero prices
    n_j, n_i1 = a.alive.shape
    jobs = np.arange(n_j)
    state = np.zeros(n_j, dtype=np.int64)
    path_alive = np.ones((n_j, slots))
    for t in range(slots):
        k = path[:, t]
        on = k >= 0
        state[on] = np.minimum(state[on] + a.adv[jobs[on], k[on]], n_i1 - 1)
        started = a.first <= t
        path_alive[started, t] = a.alive[jobs[started], state[started]]
    w = weights(path_alive)
    sure = 1.0 - np.prod([sooner(jd, slots) for jd in d.jobs.values()], axis=0)
    fixed = sure >= path_alive.max(axis=0)
    w[:, fixed] = 0.0
    net = idle.net[:, :, None]
    with np.errstate(invalid="ignore"):  # inf * 0 where the net power is 0: replaced
        credited = replace(
            a,
            cost=np.where(np.isinf(a.cost), np.inf, a.cost * net),
            final_cost=np.where(np.isinf(a.final_cost), np.inf, a.final_cost * net),
        )
    floors = np.array(
        [
            net_floor(jd, idle.credit[j]) + d.least_tardiness(jd.job.id)
            for j, jd in enumerate(d.jobs.values())
        ]
    )
    best: tuple[float, Any, np.ndarray, float] | None = None
    for arrays, kw, floor in ((credited, idle.kw, floors), (a, idle.base_kw, own)):
        constant = float(np.sum((idle.price * kw * sure)[fixed]))
        arrays = replace(arrays, charge=w * idle.price[None, :] * kw)
        values, _ = solve(arrays)
        value = float(np.sum(np.maximum(values, floor))) + constant
        if best is None or value > best[0]:
            best = (value, arrays, floor, constant)
    assert best is not None
    return best[1], best[2], best[3]


def sooner(jd: JobData, slots: int) -> np.ndarray:
    """Per slot, at least the probability that the job has completed by the slot's
    end in any plan (it completes no sooner): its blocks' stops, each from the end of
    the slot it can first be done in (at top speed from its release)."""
    out = np.zeros(slots)
    for b, p in enumerate(jd.stop_probability):
        if p > 0:
            out[min(jd.earliest_finish_slot(b), slots) :] += p
    return np.minimum(out, 1.0)
