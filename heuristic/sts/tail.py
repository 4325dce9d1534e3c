"""STS and the power of an idle cluster: the hours the last job alone keeps it powered
(docs/model.md, 'STS and idle power').

Where nodes are always on and draw power of their own (idle GPUs, a base power), the
cluster is powered until its last job completes (``H``). A job's energy is then its
GPUs' busy power less the idle power they would draw anyway, and every hour it runs
after all the others have completed costs the cluster's own power, ``K`` kW: the
derivative of ``E[∫ P(H > t) π(t) dt]`` in that job is ``K π(t) P(C_j > t) G_j(t)``,
with ``G_j(t) = Π_{i≠j} P(C_i ≤ t)`` (jobs stop independently). STS's profile does not
see it, and on a cluster with one long job left (due in weeks) it ran that job on one
slow GPU for hundreds of hours while the whole cluster idled beside it.

After every job is placed, the job whose last possible completion is the latest is
offered faster profiles: its own profiles planned to finish by the others' last
possible completion, by the time the others have all completed with probability one
half, half-way between either and its own, and as fast as it can, on every GPU type
it may use. Each is costed as the evaluator would charge its difference to the
cluster: its expected energy less the idle power of its GPUs over the same hours, its
worst-case tardiness (STS's rule), and ``K`` over the hours it runs after the others
(``∫ K π(t) P(C_j > t) G_j(t) dt``, exact for the profiles and completion
distributions as planned, jobs not yet arrived not counted). The cheapest whose first
step fits on the GPUs left free is taken; then the job that now ends last is offered
the same, a few times at most. Jobs not yet arrived are unknown to the policy: where
more arrive, the hours bought may not be needed, so each hour alone counts with the
chance that none of the jobs to come is present then (:class:`Arrivals`, measured in
docs/model.md).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.stats import CensoredData, ecdf

from heuristic.core.occupancy import Allocation
from heuristic.core.policy import JobStatus
from heuristic.sts.hulls import JobProfiles
from heuristic.sts.profile import Profile
from heuristic.sts.tariff import Tariff
from instances import Config, EpochDistribution, Instance, Job

# how many times the job ending last is re-planned at one decision (each one a
# different job): two long jobs ending together need both to hurry
ROUNDS = 4
# the hours over which the arrival rate is counted (2, 6 and 24 measured on the
# contended, synthetic and calibrated families with idle power: docs/model.md)
WINDOW_H = 2.0
# the latest completions whose sojourns the rule counts (:class:`Arrivals`): the jobs
# arriving next are more like them, and each bend of the estimate is costed at every
# profile the rule weighs (the campaigns' runs complete fewer than this)
SOJOURNS = 500
# a job is offered faster profiles only where its hours alone cost more than this
# share of its plan's cost: the most a faster profile can save is those hours
WORTH = 0.005
# a faster profile is taken only if it saves more than this share of the job's cost
# (a tie never moves a job)
TOL = 1e-9

Blocks = list[tuple[float, float]]  # (completion time, probability), in time order
Bill = Callable[[np.ndarray], np.ndarray]  # interval edges (hours) -> price · hours
Done = tuple[np.ndarray, np.ndarray]  # G(t) as steps: :func:`all_done`


@dataclass(frozen=True)
class Arrivals:
    """Jobs still to come as the rule sees them: released at ``rate`` per hour (a
    Poisson stream), each keeping the cluster powered for its sojourn (release to
    completion), whose survival ``S(v)`` is a step function: ``survival[k]`` from
    ``knots[k]`` hours on (``knots[0] = 0``). None of them is present ``x`` hours from
    now with probability ``e^{-rate L(x)}``, ``L(x) = ∫_0^x S`` (the number present is
    Poisson, as in an M/G/∞ queue). With ``S = 1`` throughout (no sojourn known yet)
    each would run forever: ``e^{-rate x}``, the chance that none has arrived."""

    rate: float
    knots: tuple[float, ...] = (0.0,)
    survival: tuple[float, ...] = (1.0,)

    @classmethod
    def seen(cls, rate: float, done: list[float], running: list[float]) -> Arrivals:
        """The sojourns of the jobs seen so far: ``done`` those that completed,
        ``running`` how long the present ones have been in (right-censored); their
        Kaplan-Meier survival (``S = 1`` until one has completed)."""
        if not done:
            return cls(rate)
        sf = ecdf(CensoredData(uncensored=done, right=running)).sf
        knots = np.concatenate([[0.0], sf.quantiles])
        survival = np.concatenate([[1.0], sf.probabilities])
        if knots[1] <= 0.0:  # a sojourn of no time: S(0) is already below 1
            knots, survival = knots[1:], survival[1:]
        bends = np.concatenate([[True], survival[1:] != survival[:-1]])  # not censored ones
        return cls(rate, tuple(knots[bends].tolist()), tuple(survival[bends].tolist()))

    @cached_property
    def _exposure(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        knots, s = np.array(self.knots), np.array(self.survival)
        return knots, s, np.concatenate([[0.0], np.cumsum(s[:-1] * np.diff(knots))])

    def exponent(self, x: np.ndarray) -> np.ndarray:
        """``rate L(x)`` at ``x >= 0`` hours from now (piecewise linear, bending at
        ``knots``)."""
        knots, s, at_knots = self._exposure
        k = np.searchsorted(knots, x, side="right") - 1
        return self.rate * (at_knots[k] + s[k] * (x - knots[k]))


@dataclass(frozen=True)
class Planned:
    """A job's plan as the tail sees it: its completion distribution and, where it
    runs a profile, that profile and the distribution it was planned with."""

    blocks: Blocks
    profile: Profile | None = None
    dist: EpochDistribution | None = None

    @property
    def last(self) -> float:
        return self.blocks[-1][0]


def hours_to(inst: Instance, job: Job, profile: Profile, epochs: float) -> float:
    """Hours from now until the profile has run ``epochs`` of its epochs (worst case:
    each step's relaunch overhead included; on the clock of its windows if timed)."""
    t = 0.0
    for s in profile.steps:
        tau = inst.epoch_time(job, s.config)
        if epochs <= s.end + 1e-12:
            t += s.lost + max(0.0, epochs - s.start) * tau
            break
        t += s.lost + s.epochs * tau
    return profile.clock(t) if profile.runs else t


def profile_blocks(
    inst: Instance, job: Job, profile: Profile, dist: EpochDistribution, now: float
) -> Blocks:
    """When the job completes under ``profile`` (remaining epochs ``dist``), by block."""
    return [
        (now + hours_to(inst, job, profile, e), p)
        for e, p in zip(dist.stops, dist.probabilities, strict=True)
        if p > 0
    ]


def constant_blocks(
    inst: Instance, job: Job, cfg: Config, dist: EpochDistribution, now: float, lost: float
) -> Blocks:
    """When the job completes running ``cfg`` to the end after ``lost`` hours."""
    tau = inst.epoch_time(job, cfg)
    return [
        (now + lost + e * tau, p)
        for e, p in zip(dist.stops, dist.probabilities, strict=True)
        if p > 0
    ]


def all_done(others: list[Blocks], now: float) -> Done:
    """``G(t) = Π_i P(C_i ≤ t)`` over ``others`` as steps from ``now``: the times it
    may jump, and its value from each (1 throughout where there are no others)."""
    times = np.unique(np.array([now, *(t for blocks in others for t, _ in blocks)]))
    value = np.ones(len(times))
    for blocks in others:
        ts = np.array([t for t, _ in blocks])
        cdf = np.minimum(1.0, np.cumsum([p for _, p in blocks]))
        k = np.searchsorted(ts, times, side="right")
        value *= np.where(k > 0, cdf[np.maximum(k - 1, 0)], 0.0)
    return times, value


def alone_cost(
    blocks: Blocks, done: Done, kw: float, bill: Bill, arrivals: Arrivals | None = None
) -> float:
    """``∫ kw π(t) P(C > t) G(t) D(t) dt``: the cluster's own power over the hours the
    job still runs after every other job completed and while no new one is present
    (``D``: :class:`Arrivals`, from ``now``, the first of ``done``'s times; 1 without
    them); the discount is exact within each interval for a flat price, its mean over
    the interval times the interval's bill otherwise."""
    g_times, g = done
    if len(g_times) == 0 or blocks[-1][0] <= g_times[0]:
        return 0.0
    now = g_times[0]
    c_times = np.array([t for t, _ in blocks])
    survive = 1.0 - np.cumsum([p for _, p in blocks])
    discounted = arrivals is not None and arrivals.rate > 0
    bends = now + np.array(arrivals.knots) if arrivals is not None and discounted else []
    edges = np.unique(np.concatenate([g_times, c_times, bends]))
    edges = edges[(edges >= now) & (edges <= c_times[-1])]
    if len(edges) < 2:
        return 0.0
    mid = 0.5 * (edges[:-1] + edges[1:])
    gk = np.searchsorted(g_times, mid, side="right") - 1
    ck = np.searchsorted(c_times, mid, side="right")  # blocks completed before mid
    s = np.where(ck > 0, np.maximum(survive[np.maximum(ck - 1, 0)], 0.0), 1.0)
    weight = bill(edges) * s * g[gk]
    if arrivals is not None and discounted:
        # the mean of e^{-rate L} over each interval: L is linear within it
        x = arrivals.exponent(edges - now)
        d = x[1:] - x[:-1]  # none where no sojourn lasts that long (S = 0)
        tiny = d < 1e-12
        weight = weight * np.where(tiny, 1.0 - 0.5 * d, -np.expm1(-d) / np.where(tiny, 1.0, d))
        weight = weight * np.exp(-x[:-1])
    return kw * float(np.sum(weight))


def running_cost(
    completions: list[Blocks], now: float, kw: float, bill: Bill, arrivals: Arrivals | None = None
) -> float:
    """``∫ kw π(t) P(H > t) D(t) dt`` from ``now``, ``H`` the last of the jobs'
    completions (independent, each by its blocks): the cluster's own power while any of
    them runs and no new job is present (``D``: :class:`Arrivals`; at an infinite
    rate one arrives at once, and nothing is charged)."""
    if not completions or (arrivals is not None and math.isinf(arrivals.rate)):
        return 0.0
    times, g = all_done(completions, now)
    last = max(blocks[-1][0] for blocks in completions)
    # the hours alone of a job that runs to the last completion, beside "every job
    # done" in place of "every other job done": P(H > t) = 1 - G(t)
    return alone_cost([(last, 1.0)], (times, 1.0 - g), kw, bill, arrivals)


def idle_credit(
    inst: Instance, job: Job, profile: Profile, dist: EpochDistribution, now: float, bill: Bill
) -> float:
    """The idle power the profile's GPUs would draw anyway over the hours they run,
    as the evaluator subtracts it (each hour with the probability that it runs)."""
    weights: list[float] = []
    edges: list[float] = []  # each interval's two ends, billed in one call
    t = 0.0
    for s in profile.steps:
        tau = inst.epoch_time(job, s.config)
        kw = inst.gpu(s.config.gpu_type).idle_w * inst.busy_share(s.config) / 1000.0
        if kw > 0:
            pieces = [(t, t + s.lost, dist.beyond(s.start))] if s.lost > 0 else []
            pieces += dist.exposed(s.start, s.end, t + s.lost, tau)
        t += s.lost + s.epochs * tau
        if kw <= 0:
            continue
        for a, b, q in pieces:
            for lo, hi in profile.on_clock(a, b):
                weights.append(kw * q)
                edges += (now + lo, now + hi)
    if not weights:
        return 0.0
    # every other interval between the ends is an interval run (a bill is a difference
    # of its integral at two ends, so each is the float a call of its own gives)
    bills = bill(np.array(edges))[::2]
    out = 0.0
    for w, b in zip(weights, bills.tolist(), strict=True):
        out += w * b
    return out


def tail_cost(
    inst: Instance,
    job: Job,
    profile: Profile,
    dist: EpochDistribution,
    now: float,
    done: Done,
    bill: Bill,
    arrivals: Arrivals | None = None,
) -> float:
    """What the profile adds to the cluster's bill and tardiness: energy less its GPUs'
    idle power, worst-case tardiness, and the cluster's own power while it runs alone."""
    blocks = profile_blocks(inst, job, profile, dist, now)
    late = max(0.0, blocks[-1][0] - job.due)
    return (
        profile.energy_cost
        - idle_credit(inst, job, profile, dist, now, bill)
        + inst.tardiness_weight(job.id) * late
        + alone_cost(blocks, done, inst.powered_kw, bill, arrivals)
    )


def alone_at_all(planned: Planned, done: Done, kw: float, bill: Bill) -> bool:
    """Whether the job would run alone for hours that cost, were no job to arrive
    (``done``: the others' :func:`all_done`)."""
    if planned.profile is None:
        return False
    alone = alone_cost(planned.blocks, done, kw, bill)
    return alone > WORTH * planned.profile.objective


def targets(last: float, others_last: float, half: float, due: float, now: float) -> list[float]:
    """Budgets (hours of ``earlier`` before the due date) for profiles that finish by
    the others' last completion, by their median last completion, half-way from either
    to the job's own, and as fast as they can (``due - now``)."""
    finish = {others_last, half, 0.5 * (others_last + last), 0.5 * (half + last)}
    out = sorted({due - f for f in finish if now < f < last - 1e-9})
    return [*out, due - now] if due - now not in out else out


def median_done(done: Done) -> float:
    """The first time the others have all completed with probability one half."""
    times, g = done
    k = int(np.searchsorted(g, 0.5 - 1e-12))
    return float(times[min(k, len(times) - 1)])


def faster(
    inst: Instance,
    status: JobStatus,
    now: float,
    jp_of: Callable[[float], JobProfiles],
    planned: Planned,
    others: list[Blocks],
    bill: Bill,
    arrivals: Arrivals | None = None,
) -> tuple[list[tuple[float, Profile]], Done | None]:
    """Profiles of the job ending last that cost the cluster less than its plan,
    cheapest first (none where the plan is unknown or nothing saves), and the others'
    :func:`all_done` where it was needed."""
    if planned.profile is None or planned.dist is None:
        return [], None
    if max((b[-1][0] for b in others), default=now) >= planned.last - 1e-9:
        return [], None  # another job may end as late: hurrying this one saves nothing
    done = all_done(others, now)
    job, dist = status.job, planned.dist
    alone = alone_cost(planned.blocks, done, inst.powered_kw, bill, arrivals)
    if alone <= WORTH * planned.profile.objective:
        return [], done  # it would save at most its hours alone: too little to move for
    base = tail_cost(inst, job, planned.profile, dist, now, done, bill, arrivals)
    found: list[tuple[float, Profile]] = []
    others_last = float(done[0][-1])
    for earlier in targets(planned.last, others_last, median_done(done), job.due, now):
        jp = jp_of(earlier)
        for _, t in jp.bounds:  # the types it may use and has options on
            profile = jp.solve(t).profile
            cost = tail_cost(inst, job, profile, dist, now, done, bill, arrivals)
            if cost < base - TOL * max(1.0, abs(base)):
                found.append((cost, profile))
    found.sort(key=lambda cp: cp[0])
    return found, done


def arrival_rate(releases: list[float], now: float, window: float = WINDOW_H) -> float:
    """Jobs released per hour over the last ``window`` hours, ``releases`` in order: the
    policy's estimate of how soon a new job keeps the cluster powered anyway; infinite
    until a whole window has passed since the first release (at the start of a trace
    nothing says that no more jobs will come)."""
    if not releases:
        return 0.0
    if now - releases[0] < window:  # too soon to tell: as if jobs kept arriving
        return math.inf
    recent = len(releases) - bisect.bisect_right(releases, now - window)
    return recent / window


def rate_falls(releases: list[float], now: float, window: float = WINDOW_H) -> float:
    """When the oldest release counted by :func:`arrival_rate` at ``now`` leaves its
    window (the estimate falls then, if no job arrives before), or the first window
    ends."""
    if releases and now - releases[0] < window:
        return releases[0] + window
    k = bisect.bisect_right(releases, now - window)
    return releases[k] + window if k < len(releases) else now


def flat_bill(price: float) -> Bill:
    """A flat price's bill of each interval between ``edges``."""

    def bill(edges: np.ndarray) -> np.ndarray:
        return price * np.diff(edges)

    return bill


def bill_of(inst: Instance) -> Bill:
    """A kWh's bill over time as the evaluator charges the cluster's own power: the
    price series, plus the carbon price times the grid's intensity (flat or not)."""
    tariff = Tariff.of(inst)
    if tariff is not None:
        return tariff.cost
    per_kwh = inst.energy_price
    if inst.carbon is not None and inst.carbon.price > 0:
        per_kwh += inst.carbon.price_per_gram * (inst.carbon.intensity.constant or 0.0)
    return flat_bill(per_kwh)


def charges_tail(inst: Instance) -> bool:
    """Whether the cluster's own power is charged until its last job completes (nodes
    always on, drawing power of their own)."""
    return inst.power_off is None and inst.powered_kw > 0


def current_blocks(
    inst: Instance,
    status: JobStatus,
    alloc: Allocation | None,
    chosen: tuple[Profile, EpochDistribution] | None,
    now: float,
) -> Planned | None:
    """The job's completion as planned at this decision: by its profile where it runs
    that profile's step (or waits for cheaper hours), else running its allocation to
    the end; ``None`` for a job left waiting for GPUs."""
    job = status.job
    if chosen is not None:
        profile, dist = chosen
        if alloc is None or alloc.config == profile.first.config:
            return Planned(profile_blocks(inst, job, profile, dist, now), profile, dist)
    if alloc is None:
        return None
    dist = job.distribution.conditional(status.progress)
    lost = status.overhead_left if alloc == status.allocation else inst.relaunch(job)
    return Planned(constant_blocks(inst, job, alloc.config, dist, now, lost))


def latest(plans: dict[str, Planned]) -> str:
    """The job whose last possible completion is the latest (ties: the smallest id)."""
    return min(plans, key=lambda j: (-plans[j].last, j))
