"""A job's least cost were it alone on the cluster: a lower bound on what it costs in any
plan, energy and tardiness together.

The capacity relaxation (:meth:`milp.data.MilpData.separable_bound`) takes a job's least
energy and its least tardiness apart, each at its own configuration: the cheapest
configuration is often the slowest, so the sum is loose wherever a job cannot be on time
at its cheapest. Here the two are taken together in a small linear programme: how many
epochs of each block between stopping points run on each configuration (a plan may
switch within a block, so the epochs split), run back to back from the job's release;
each block's energy weighted by the probability it runs, each stopping point's
lateness by its tardiness weight. Relaunch overheads between configurations are left
out (they only add time and energy), so the figure bounds every plan, including plans
whose segments fill whole slots.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Sequence

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_array

from instances import Instance, Job, TardinessMode
from instances.distribution import stop_tolerance


def least_use(
    survival: Sequence[float], lengths: Sequence[float], per_epoch: float, overhead: float
) -> float:
    """A job's least expected use: every block's epochs, each with its survival
    probability, at the least ``per_epoch`` figure, plus its first start's ``overhead``
    (every plan starts it once). Shared by the energy floor of the cutoff
    (:meth:`milp.data.JobData.least_energy`), the horizon's reach
    (:func:`milp.data.least_kwh`) and :func:`least_alone` where a job is on time at its
    least energy, so that they cannot drift apart."""
    epochs = math.fsum(q * n for q, n in zip(survival, lengths, strict=True))
    return per_epoch * epochs + overhead


# HiGHS solves the programme to about 1e-9 relative; the figure is lowered by this share
# so that a tolerance can never lift it above the least
MARGIN = 1e-7


# per instance (by identity, while it lives): (job id, mode, price) -> its least alone
_made: dict[int, tuple[weakref.ref[Instance], dict[tuple[str, str, float], float | None]]] = {}


def least_alone(instance: Instance, job: Job, mode: TardinessMode, price: float) -> float | None:
    """No plan charges ``job`` less, energy (at ``price`` per kWh, the least anywhere in
    the bill) and tardiness (in ``mode``) together: every block of epochs split over
    the allowed configurations, back to back from its release after its first start's
    overhead, as if no other job held a GPU. Its least energy alone
    (:func:`least_use`) is never above it. ``None`` where HiGHS does not
    solve the programme.

    Made once per instance, job, mode and price: the horizon's reach, the cutoff's
    windows and the bounds of :class:`milp.data.MilpData` all read it, and a two-stage
    solve solved each job's programme four times (about 0.3 s a pass on 60 jobs)."""
    key = id(instance)
    held = _made.get(key)
    if held is None or held[0]() is not instance:
        # the entry goes with the instance, before its id can be reused
        held = (weakref.ref(instance, _forget(key)), {})
        _made[key] = held
    memo = held[1]
    at = (job.id, mode, price)
    if at not in memo:
        memo[at] = _least_alone(instance, job, mode, price)
    return memo[at]


def _forget(key: int) -> Callable[[weakref.ref[Instance]], None]:
    """What drops the entry of the instance of id ``key`` once it is gone."""

    def drop(_: weakref.ref[Instance]) -> None:
        _made.pop(key, None)

    return drop


def _least_alone(instance: Instance, job: Job, mode: TardinessMode, price: float) -> float | None:
    """:func:`least_alone`, solved."""
    dist = job.distribution
    configs = instance.allowed_configs(job)
    omega = instance.tardiness_weight(job.id)
    tau = np.array([instance.epoch_time(job, c) for c in configs])
    kwh = np.array([instance.epoch_energy(job, c) for c in configs])
    overhead = instance.relaunch(job)
    ready = job.release + overhead  # the first start's overhead comes first, in every plan
    first_kwh = overhead * min(instance.power_w(c) for c in configs) / 1000.0
    first = price * first_kwh
    # on time throughout at its least energy per epoch (the fastest configuration that
    # has it): that is the least, with no programme to solve (most jobs of a light load)
    least = min(kwh)
    fastest = min(t for t, e in zip(tau, kwh, strict=True) if e == least)
    if ready + fastest * dist.stops[-1] <= job.due:
        return price * least_use(dist.block_survival, dist.block_lengths, least, first_kwh)
    slowest, slot = float(tau.max()), instance.slot or 0.0
    blocks, k = len(dist.stops), len(configs)
    last = blocks - 1
    late = [
        omega * (p if mode == "expected" else float(b == last))
        for b, p in enumerate(dist.probabilities)
    ]
    # variables: the epochs x[b, c] of block b on configuration c, then per block the
    # hours T_b its epoch e_b is reached after ``ready`` and its lateness L_b
    x, hours, lateness = 0, blocks * k, blocks * k + blocks
    n = blocks * k + 2 * blocks
    cost = np.zeros(n)
    for b, q in enumerate(dist.block_survival):
        cost[x + b * k : x + (b + 1) * k] = price * q * kwh
        cost[lateness + b] = late[b]
    eq_rows, eq_cols, eq_vals, eq_rhs = [], [], [], []
    ub_rows, ub_cols, ub_vals, ub_rhs = [], [], [], []
    for b, length in enumerate(dist.block_lengths):
        # every epoch of the block runs on some configuration
        eq_rows += [2 * b] * k
        eq_cols += list(range(x + b * k, x + (b + 1) * k))
        eq_vals += [1.0] * k
        eq_rhs.append(length)
        # T_b = T_{b-1} + sum_c tau_c x[b, c]
        eq_rows += [2 * b + 1] * (k + 1 + (b > 0))
        eq_cols += [*range(x + b * k, x + (b + 1) * k), hours + b]
        eq_vals += [*tau, -1.0]
        if b > 0:
            eq_cols.append(hours + b - 1)
            eq_vals.append(1.0)
        eq_rhs.append(0.0)
        # L_b >= ready + T_b - due, less what the evaluator forgives: a stop within
        # STOP_TOL of its epochs is reached (at the slowest epoch), and slot_ceil
        # rounds 1e-9 of a slot down (an epoch of 1000 + 9e-7 h was on time by the
        # evaluator, 9e-7 h late here: a review's instance, 0.9 too high at a weight
        # of 1e6)
        forgiven = stop_tolerance(dist.stops[b]) * slowest + 1e-9 * slot
        ub_rows += [b, b]
        ub_cols += [hours + b, lateness + b]
        ub_vals += [1.0, -1.0]
        ub_rhs.append(job.due - ready + forgiven)
    res = linprog(
        cost,
        A_ub=coo_array((ub_vals, (ub_rows, ub_cols)), shape=(blocks, n)).tocsr(),
        b_ub=np.array(ub_rhs),
        A_eq=coo_array((eq_vals, (eq_rows, eq_cols)), shape=(2 * blocks, n)).tocsr(),
        b_eq=np.array(eq_rhs),
        bounds=(0, None),
        method="highs",
    )
    if res.status != 0:
        # the programme is feasible and bounded, but a tardiness weight of 1e20 beside
        # energy costs of 1e-2 leaves HiGHS's status unknown (a probe's instance): no
        # figure is claimed
        return None
    return first + float(res.fun) * (1 - MARGIN)
