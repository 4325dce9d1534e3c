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
- **Powered hours.** With the jobs' stops independent, ``P(H > t) = 1 − Π_j x_j``,
  ``x_j = P(C_j <= end of slot t)``, and no plan completes a job sooner than at top
  speed from its release, ``x_j <= F⁺_j(t)`` (:func:`sooner`). So for any job ``i``,
  ``P(H > t) >= 1 − x_i q_i = (1 − q_i) + q_i S_i(t)``, ``q_i = Π_{j≠i} F⁺_j(t)`` and
  ``S_i(t) = P(C_i > end of t)``, and ``P(H > s)`` only falls within the slot: a
  constant, and job ``i`` paying ``q_i π_t P Δ S_i(t)``, the probability that it has
  not completed, a function of its progress (its blocks whose stop has not yet
  passed), which the grid under-counts (it runs ahead of the true progress). This is at
  least ``S_i(t)`` (one job's share) and at least ``1 − Π_j F⁺_j(t)`` (the hours surely
  powered). Each slot takes the job that makes it largest in the jobs' cheapest
  schedules alone, or the constant ``1 − Π_j F⁺_j(t)`` alone where that is larger
  there (any choice is valid: :func:`powered_shares`). A job's floor adds its charge
  at its least survival, ``1 − F⁺_j(t)``.

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


def split_idle(
    a: Any, d: MilpData, idle: IdleCharge, own: np.ndarray, solve: Callable[[Any], Any]
) -> tuple[Any, np.ndarray, float]:
    """``a`` (the jobs' problems stacked by :mod:`milp.lagrange`; ``solve``: their
    cheapest paths at zero prices) with the nodes' own energy split over the jobs (the
    module's docstring), each job's floor, and a constant. In each slot the powered
    hours are split by :func:`powered_shares` on the jobs' cheapest schedules alone.
    Of the two splits, every GPU's idle power with the credits or the nodes' base power
    alone, the one higher at zero prices is kept."""
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
    done = np.array([sooner(jd, slots) for jd in d.jobs.values()]).reshape(n_j, slots)
    share, carried = powered_shares(done, path_alive, a.first, a.last)
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
        constant = float(np.sum(idle.price * kw * share))
        charge = carried * idle.price[None, :] * kw
        arrays = replace(arrays, charge=charge)
        # every plan pays at least the charge at its least survival, 1 - done
        floor = floor + np.sum(charge * (1.0 - done), axis=1)
        values, _ = solve(arrays)
        value = float(np.sum(np.maximum(values, floor))) + constant
        if best is None or value > best[0]:
            best = (value, arrays, floor, constant)
    assert best is not None
    return best[1], best[2], best[3]


def powered_shares(
    done: np.ndarray, path_alive: np.ndarray, first: np.ndarray, last: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per slot, the share of its powered hours charged as a constant, and per job and
    slot, the weight on the job's survival (at most one job per slot): with
    ``x_j = P(C_j <= end of t) <= done_j`` and the jobs' stops independent,
    ``P(H > end of t) = 1 − Π_j x_j >= 1 − x_i Π_{j≠i} done_j = (1 − q_i) + q_i S_i``
    for any job ``i`` (``q_i = Π_{j≠i} done_j``, ``S_i = 1 − x_i``), which is at least
    ``S_i`` and at least ``1 − Π_j done_j``. Each slot takes the job ``i`` (within its
    window, where its path pays the charge) that makes it largest in the jobs' cheapest
    schedules alone (``path_alive``), or the constant ``1 − Π_j done_j`` alone where
    that is larger there (the grid may run ahead of the true survival)."""
    n_j, slots = done.shape
    before = np.ones_like(done)
    after = np.ones_like(done)
    if n_j > 1:
        before[1:] = np.cumprod(done[:-1], axis=0)
        after[:-1] = np.cumprod(done[::-1], axis=0)[::-1][1:]
    q = before * after  # Π_{j≠i} done_j
    t = np.arange(slots)
    live = (first[:, None] <= t[None, :]) & (t[None, :] <= last[:, None])
    value = np.where(live, 1.0 - q * (1.0 - path_alive), -np.inf)
    sure = 1.0 - np.prod(done, axis=0)
    carried = np.zeros((n_j, slots))
    if n_j == 0:
        return sure, carried
    i = np.argmax(value, axis=0)
    take = value[i, t] > sure
    carried[i[take], t[take]] = q[i[take], t[take]]
    share = np.where(take, 1.0 - q[i, t], sure)
    return share, carried


def sooner(jd: JobData, slots: int) -> np.ndarray:
    """Per slot, at least the probability that the job has completed by the slot's
    end in any plan (it completes no sooner): its blocks' stops, each from the end of
    the slot it can first be done in (at top speed from its release)."""
    out = np.zeros(slots)
    for b, p in enumerate(jd.stop_probability):
        if p > 0:
            out[min(jd.earliest_finish_slot(b), slots) :] += p
    return np.minimum(out, 1.0)
