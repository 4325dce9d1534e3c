"""A lower bound that scales: Lagrangian relaxation of the GPU capacity.

The GPUs of each type, summed over its nodes, bound what the jobs use in each slot: an
exclusive configuration uses its GPUs (a multi-node one, whole nodes of the smallest
size that can host it), a shared one ``1 / K_max`` of a GPU (at most ``K_max`` tenants
per shared GPU). These constraints, a relaxation of the node capacities, are priced by
multipliers ``lambda[type, slot] >= 0``; what is left splits into one problem per job: the
cheapest way to run that job alone, paying the prices of the GPUs it holds. For any
prices, the sum of the jobs' optima less ``sum lambda * capacity`` is at most the MILP
optimum (weak duality). Subgradient steps on the prices raise it.

Each job's problem is a shortest path over (slot, progress) states, solved exactly for a
relaxation of it: progress is counted on a grid of ``states`` steps of ``E / states``
epochs, and a slot on configuration ``k`` advances ``ceil(speed_k / step)`` steps, at
least the epochs it really does. Its energy is charged at the configuration's energy per
slot spread evenly over the steps it advances, with the survival probabilities of the
epochs those steps cover (never more than the true expected energy of that slot: the
survival is non-increasing and the grid runs ahead of the true progress), and a block is
complete once the grid passes it (never later than truly). So every real plan of the job
maps to a path of no greater cost, and the bound stays valid; a finer grid makes it
tighter and slower (docs/milp.md). A job's real cost is also at least its own floor
(:meth:`milp.data.MilpData.job_bound`, its least cost alone), so for a weight ``pi`` in
[0, 1] it is at least ``pi`` times its path's cost plus ``1 - pi`` times the floor: a
job's problem weighs its own cost by ``pi`` and adds the rest of its floor.

The multipliers and weights are the duals of a restricted master LP over the paths found
so far (column generation, Dantzig-Wolfe: its LP optimum is the Lagrangian dual's, and
it needs far fewer rounds than subgradient steps, which zigzag on time-indexed prices),
where each job counts for the larger of its floor and its paths' cost
(:class:`milp.master_lp.Master`). Each round's prices and weights give a valid bound
whatever they are; the best is kept.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from heuristic.core.result import SolutionStatus, Termination, relative_gap, summary_text
from instances import Config, Instance, TardinessMode
from milp.data import JobData, MilpData, milp_data
from milp.lagrange_idle import (
    IdleCharge,
    alive,
    epoch_unit,
    idle_charge,
    node_share,
    split_idle,
)
from milp.master_lp import Master
from milp.requirements import (
    MilpError,
    require_cost,
    require_count,
    require_slot,
    require_time_limit,
)

INF = np.inf
# a round's pass over the slots looks at the clock every this many slots: a round on a
# long horizon (a due date 100,000 h on, 400,000 slots) took a minute, and the time
# limit was looked at only between rounds
CLOCK_EVERY = 1024


class _TimeUp(Exception):
    """The time limit passed within a round: its paths are not all found, so the round
    gives no bound."""


# bytes the per-round arrays may take: the DP's choices (slots x jobs x states, one byte
# each) and the stacked costs (jobs x configurations x states, five arrays of eight)
MAX_BYTES = 2_000_000_000
MIN_STATES = 8
# the least weight on a job's own cost in the pricing (:func:`_rounds`)
PI_LEAST = 1e-4


@dataclass(frozen=True)
class LagrangeBound:
    """What :func:`lagrangian_bound` returns, in the one result vocabulary
    (:mod:`heuristic.core.result`). A bound only: it builds no plan, so ``objective``
    and ``gap`` are ``None`` and ``status`` is none (the ``upper`` a caller passes is
    its own plan's cost). ``termination`` is optimal when the column generation
    converged (the bound is the Lagrangian dual's optimum), else the time limit or the
    round limit that stopped it (other limit; also where no path priced out but a job's
    weight below :data:`PI_LEAST` may have hidden one: the bound is then within
    ``PI_LEAST`` of those jobs' floors of the dual's optimum)."""

    instance: str
    bound: float  # the best bound found, never below the capacity relaxation
    capacity_relaxation: float
    zero_prices: float  # the bound at zero prices: each job alone on this grid
    iterations: int  # rounds of the column generation
    states: int  # grid steps per job
    termination: Termination
    runtime: float  # seconds
    # the capacity prices of the best bound (GPU types in sorted order x slots): where
    # branch-and-price starts its own prices (milp.decomposition.warm)
    prices: np.ndarray | None = None

    @property
    def objective(self) -> float | None:
        return None  # a bound only

    @property
    def status(self) -> SolutionStatus:
        return SolutionStatus.NONE

    @property
    def gap(self) -> float | None:
        return relative_gap(self.objective, self.bound)

    def summary(self) -> str:
        title = f"Lagrangian bound of {self.instance!r}: {self.iterations} rounds"
        details = [
            ("capacity relaxation", f"{self.capacity_relaxation:.6g}"),
            ("at zero prices", f"{self.zero_prices:.6g}"),
            ("grid", f"{self.states} states per job"),
        ]
        return summary_text(title, self, details)


@dataclass(frozen=True)
class _Arrays:
    """The jobs' problems stacked: J jobs, K configurations (padded), I + 1 states."""

    cost: np.ndarray  # (J, K, I+1): energy of the step into state i' (inf: no such step)
    src: np.ndarray  # (J, K, I+1): the state it comes from
    late_weight: np.ndarray  # (J, K, I+1): tardiness weight of the blocks it completes
    final_cost: np.ndarray  # (J, K, I): energy of the step from state i to the end
    final_weight: np.ndarray  # (J, K, I)
    final_ok: np.ndarray  # (J, K, I): the step from i reaches the end
    gpu_type: np.ndarray  # (J, K): index of the configuration's GPU type
    use: np.ndarray  # (J, K): GPUs of that type it takes (0 for padding)
    first: np.ndarray  # (J,): first slot
    last: np.ndarray  # (J,): last slot
    due: np.ndarray  # (J,)
    omega: np.ndarray  # (J,)
    capacity: np.ndarray  # (types,)
    # the price of a kWh in each slot where prices change by the slot (costs above are
    # then kWh, priced per slot); None: the costs are money at the one energy price
    slot_price: np.ndarray | None = None
    # idle power on nodes always on (:mod:`milp.lagrange_idle`): grid steps a slot
    # advances (J, K), the probability of not having completed at each state (J, I+1)
    # and each job's charge per slot for it (J, slots), zero where not charged
    adv: np.ndarray | None = None
    alive: np.ndarray | None = None
    charge: np.ndarray | None = None


def _use(d: MilpData, cfg: Config) -> float:
    """GPUs of its type a configuration takes, at least (see the module's docstring)."""
    if cfg.shared:
        return 1.0 / d.instance.max_share
    if cfg.nodes > 1:
        return cfg.nodes * min(n.num_gpus for n in d.hosts(cfg))
    return float(cfg.gpus)


def _stack(
    d: MilpData,
    states: int,
    idle: IdleCharge | None = None,
    share: np.ndarray | None = None,
) -> _Arrays:
    """The jobs' problems on a grid of ``states`` steps each, stacked (configurations
    padded to the most any job has); with ``idle``, the steps a slot advances and the
    states' survival kept as well; with ``share``, each epoch's nodes' base power added
    to its energy (both :mod:`milp.lagrange_idle`)."""
    inst = d.instance
    types = sorted(inst.nodes_by_type)
    jobs = list(d.jobs.values())
    n_j, n_k, n_i = len(jobs), max(len(jd.configs) for jd in jobs), states
    a = _Arrays(
        cost=np.full((n_j, n_k, n_i + 1), INF),
        src=np.zeros((n_j, n_k, n_i + 1), dtype=np.int64),
        late_weight=np.zeros((n_j, n_k, n_i + 1)),
        final_cost=np.full((n_j, n_k, n_i), INF),
        final_weight=np.zeros((n_j, n_k, n_i)),
        final_ok=np.zeros((n_j, n_k, n_i), dtype=bool),
        gpu_type=np.zeros((n_j, n_k), dtype=np.int64),
        use=np.zeros((n_j, n_k)),
        first=np.array([jd.first_slot for jd in jobs]),
        last=np.array([jd.last_slot for jd in jobs]),
        due=np.array([jd.job.due for jd in jobs]),
        omega=np.array([jd.omega for jd in jobs]),
        capacity=np.array([inst.gpus_by_type[t] for t in types], float),
        slot_price=None if jobs[0].slot_price is None else np.asarray(jobs[0].slot_price),
        adv=None if idle is None else np.zeros((n_j, n_k), dtype=np.int64),
        alive=None if idle is None else np.zeros((n_j, n_i + 1)),
    )
    tindex = {t: i for i, t in enumerate(types)}
    for j, jd in enumerate(jobs):
        extra = None if share is None else share[j]
        _stack_job(a, d, j, jd, tindex, idle is not None, extra)
    return a


def _stack_job(
    a: _Arrays,
    d: MilpData,
    j: int,
    jd: JobData,
    tindex: dict[str, int],
    idle: bool,
    share: np.ndarray | None = None,
) -> None:
    """Job ``j``'s steps: from each grid state, on each configuration, the state one
    slot reaches, its energy and the tardiness weight of the blocks it completes (or the
    step to the end); with ``idle``, the steps' lengths and the states' survival; with
    ``share``, each configuration's epoch pays that much more."""
    n_i = a.final_cost.shape[2]
    step = jd.job.max_epochs / n_i
    cum = np.concatenate([[0.0], np.cumsum(jd.lengths)])
    big_q = np.concatenate([[0.0], np.cumsum(np.multiply(jd.survival, jd.lengths))])

    def q_of(x: np.ndarray) -> np.ndarray:
        """Expected epochs run among the first ``x``: the integral of the survival."""
        return np.interp(np.minimum(x, cum[-1]), cum, big_q)

    # the grid state at which each block counts as complete, and its weight
    marks = np.ceil(cum[1:] / step - 1e-9).astype(np.int64)
    weights = np.zeros(len(jd.lengths))
    for b in d.late_blocks(jd.job.id):
        weights[b] = d.late_weight(jd.job.id, b)
    i = np.arange(n_i)  # from state i
    if idle:
        assert a.alive is not None and a.adv is not None
        a.alive[j] = alive(np.asarray(jd.stop_probability), marks, n_i)
    for k, c in enumerate(jd.configs):
        adv = max(1, math.ceil(jd.speed[k] / step - 1e-9))
        unit = epoch_unit(jd, k) + (0.0 if share is None else share[k])  # money or kWh
        if idle:
            assert a.adv is not None
            a.adv[j, k] = adv
        density = unit * jd.speed[k] / (adv * step)  # per epoch of the grid
        a.gpu_type[j, k] = tindex[c.gpu_type]
        a.use[j, k] = _use(d, c)
        to = np.minimum(i + adv, n_i)
        energy = density * (q_of(to * step) - q_of(i * step))
        crossed = (marks[None, :] > i[:, None]) & (marks[None, :] <= to[:, None])
        wsum = crossed.astype(float) @ weights
        inner = to < n_i
        a.cost[j, k, to[inner]] = energy[inner]
        a.src[j, k, to[inner]] = i[inner]
        a.late_weight[j, k, to[inner]] = wsum[inner]
        a.final_ok[j, k] = ~inner
        a.final_cost[j, k, ~inner] = energy[~inner]
        a.final_weight[j, k, ~inner] = wsum[~inner]


def _solve_jobs(
    a: _Arrays, lam: np.ndarray, slot: float, deadline: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Each job's cheapest path at prices ``lam`` (types x slots): its cost, prices
    included, and its configuration per slot (-1: idle), (jobs, slots). Raises
    :class:`_TimeUp` once ``deadline`` (a ``time.perf_counter`` reading) has passed."""
    n_j, _, n_i1 = a.cost.shape
    n_i = n_i1 - 1
    slots = lam.shape[1]
    rows = np.arange(n_j)[:, None, None]
    value = np.full((n_j, n_i1), INF)
    value[:, 0] = 0.0
    choice = np.full((slots, n_j, n_i1), -1, dtype=np.int8)  # config into each state
    fsrc = np.zeros((slots, n_j), dtype=np.int64)  # the state a step to the end left
    valid = a.use > 0
    for t in range(slots):
        # never at the first slot: a round under CLOCK_EVERY slots runs whole, as before
        if deadline is not None and t and t % CLOCK_EVERY == 0 and time.perf_counter() > deadline:
            raise _TimeUp
        live = (a.first <= t) & (t <= a.last)
        if not live.any():
            continue
        price = np.where(valid, lam[a.gpu_type, t] * a.use, INF)
        price[~live] = INF
        late = a.omega * np.maximum(0.0, (t + 1) * slot - a.due)
        cost, final_cost = _priced(a, t)
        step = (
            value[rows, a.src] + cost + price[:, :, None] + late[:, None, None] * a.late_weight
        )  # (J, K, I+1)
        best_k = np.argmin(step, axis=1)  # (J, I+1)
        best = np.take_along_axis(step, best_k[:, None, :], axis=1)[:, 0, :]
        to_end = (
            value[:, None, :n_i]
            + final_cost
            + price[:, :, None]
            + late[:, None, None] * a.final_weight
        )
        to_end = np.where(a.final_ok, to_end, INF)
        flat = to_end.reshape(n_j, -1).argmin(axis=1)
        end_val = to_end.reshape(n_j, -1)[np.arange(n_j), flat]
        end_k, end_i = np.divmod(flat, n_i)
        best[:, n_i] = end_val
        best_k[:, n_i] = end_k
        better = best < value - 1e-15
        value = np.where(better, best, value)
        if a.charge is not None and a.alive is not None:
            # not yet completed at the slot's end, idle or not: the powered slot's share
            value = value + (a.charge[:, t] * live)[:, None] * a.alive
        choice[t] = np.where(better, best_k, -1).astype(np.int8)
        fsrc[t] = end_i
    # the path of each job, backwards from the end state: its configuration per slot
    path = np.full((n_j, slots), -1, dtype=np.int64)
    state = np.full(n_j, n_i)
    jobs = np.arange(n_j)
    for t in range(slots - 1, -1, -1):
        k = choice[t, jobs, state].astype(np.int64)
        on = k >= 0
        if on.any():
            j = jobs[on]
            path[j, t] = k[on]
            at_end = state[on] == n_i
            new = a.src[j, k[on], state[on]]
            new[at_end] = fsrc[t, j[at_end]]
            state[j] = new
    return value[:, n_i], path


def _priced(a: _Arrays, t: int) -> tuple[np.ndarray, np.ndarray]:
    """The steps' energy costs in slot ``t``: as stacked, or their kWh at the slot's
    price (an impossible step stays infinite, even at a price of 0)."""
    if a.slot_price is None:
        return a.cost, a.final_cost
    p = a.slot_price[t]
    with np.errstate(invalid="ignore"):  # inf * 0 where the price is 0: replaced
        return (
            np.where(np.isinf(a.cost), INF, a.cost * p),
            np.where(np.isinf(a.final_cost), INF, a.final_cost * p),
        )


def _held(a: _Arrays, path: np.ndarray, types: int) -> np.ndarray:
    """GPUs of each type held per slot (types x slots) by each job's path, per job:
    (jobs, types, slots)."""
    n_j, slots = path.shape
    out = np.zeros((n_j, types, slots))
    j, t = np.nonzero(path >= 0)
    k = path[j, t]
    out[j, a.gpu_type[j, k], t] = a.use[j, k]
    return out


def _fitting_states(d: MilpData, slots: int, states: int) -> int:
    """``states``, or fewer (a coarser grid, a weaker but valid bound) if the arrays
    would not fit in :data:`MAX_BYTES`; :class:`MilpError` if that is below
    :data:`MIN_STATES` (or below ``states``, when fewer were asked for)."""
    jobs = len(d.jobs)
    configs = max(len(jd.configs) for jd in d.jobs.values())
    per_state = jobs * (slots + 5 * 8 * configs)
    fit = min(states, MAX_BYTES // max(per_state, 1) - 1)
    if fit < min(states, MIN_STATES):
        raise MilpError(
            f"the Lagrangian bound of {jobs:,} jobs over {slots:,} slots would need over "
            f"{MAX_BYTES / 1e9:g} GB even on a grid of {MIN_STATES} states: give the "
            "instance a longer slot (its 'slot' field, or --slot where the instance is "
            "generated), or use the capacity relaxation (MilpData.separable_bound)"
        )
    return fit


def lagrangian_bound(
    instance: Instance,
    slots: int,
    *,
    upper: float | None = None,
    tardiness: TardinessMode | None = None,
    states: int = 128,
    iterations: int = 100,
    time_limit: float | None = 60.0,
    idle: bool = True,
) -> LagrangeBound:
    """A lower bound on the optimum of the slotted MILP over ``slots`` slots.

    ``upper``: the cost of a known plan, which cuts each job's window (a plan at least as
    good lies within them). The prices come from a column generation: a master LP over
    the jobs' paths found so far gives them, each job's cheapest path at those prices
    joins the master, and each round's prices give a valid bound (so stopping early,
    after ``iterations`` rounds or ``time_limit`` seconds, is safe; a round the limit
    cuts short gives none, and on a horizon of :data:`CLOCK_EVERY` slots or more the limit
    can cut the first round, leaving the capacity relaxation). It stops when no
    path can lower the master: the bound is then the Lagrangian dual's optimum. The
    nodes' own energy on nodes always on it bounds by parts that split over the jobs
    (:mod:`milp.lagrange_idle`); where nodes power off when empty it counts each
    node's base power while a job runs there, shared out by the GPUs the job keeps
    busy (:func:`milp.lagrange_idle.node_share`), and the rest (idle GPUs, the delay
    before powering off, boots) as nothing, a lower bound of it. ``idle = False``
    counts the nodes' own energy as nothing always (the bound before these, for
    comparison)."""
    t0 = time.perf_counter()
    slot = require_slot(instance)
    time_limit = require_time_limit(time_limit)  # NaN ran without a limit
    require_cost("upper", upper)
    require_count("states", states, 2)
    require_count("iterations", iterations, 1)
    d = milp_data(instance, slots, tardiness, upper, check_size=False, idle_bound=True)
    floor = d.separable_bound()
    own = np.array([d.job_bound(j) for j in d.jobs])
    states = _fitting_states(d, slots, states)
    n_k = max(len(jd.configs) for jd in d.jobs.values())
    charge = idle_charge(d, n_k) if idle else None
    share = node_share(d, n_k) if idle else None
    zero = np.zeros((len(instance.nodes_by_type), slots))
    a = _stack(d, states, charge, share)
    constant = 0.0
    deadline = None if time_limit is None else t0 + time_limit
    try:
        if charge is not None:
            a, own, constant = split_idle(
                a, d, charge, own, lambda x: _solve_jobs(x, zero, slot, deadline)
            )
    except _TimeUp:  # no round could start: the capacity relaxation stands
        run = _Run(-INF, zero, -INF, 0, Termination.TIME_LIMIT)
    else:
        penalty = max(upper if upper is not None else 10 * floor, 1.0)
        run = _rounds(a, own, slot, slots, penalty, iterations, deadline, constant)
    return LagrangeBound(
        instance=instance.name,
        bound=max(run.best, floor),
        capacity_relaxation=floor,
        zero_prices=run.first,
        iterations=run.done,
        states=states,
        termination=run.termination,
        runtime=time.perf_counter() - t0,
        prices=run.prices,
    )


@dataclass(frozen=True)
class _Run:
    """What :func:`_rounds` ends with: the best bound and its prices, the first bound (at
    zero prices), the rounds done and why it stopped (optimal: converged)."""

    best: float
    prices: np.ndarray
    first: float
    done: int
    termination: Termination


def _weighed(a: _Arrays, pi: np.ndarray) -> _Arrays:
    """The jobs' problems with each job's own cost (energy, tardiness, idle charge)
    weighed by its ``pi`` (:class:`milp.master_lp.Master`); an impossible step stays
    infinite."""
    w = pi[:, None, None]
    return replace(
        a,
        cost=np.where(np.isinf(a.cost), INF, a.cost * w),
        final_cost=np.where(np.isinf(a.final_cost), INF, a.final_cost * w),
        omega=a.omega * pi,
        charge=None if a.charge is None else a.charge * pi[:, None],
    )


def _rounds(
    a: _Arrays,
    own: np.ndarray,
    slot: float,
    slots: int,
    penalty: float,
    iterations: int,
    deadline: float | None,
    constant: float = 0.0,
) -> _Run:
    """The column generation over ``slots`` slots of ``slot`` hours. ``constant``: what
    every plan pays besides the jobs' paths (the powered slots charged whatever the
    plan: :func:`milp.lagrange_idle.split_idle`).

    With capacity prices ``lam`` and weights ``pi`` in [0, 1] (the master's duals), a
    job's real schedule costs at least ``pi * c + (1 - pi) * own`` for the cost ``c`` of
    its path on the grid (it costs at least each), so the sum over the jobs of the least
    ``pi * c + lam * use`` over their paths, plus ``(1 - pi) * own``, less ``lam`` times
    the capacity, bounds the optimum whatever the prices and weights."""
    types = len(a.capacity)
    lam = np.zeros((types, slots))
    pi = np.ones(len(a.first))
    master = Master(a.capacity, slots, own, penalty)
    jobs = np.arange(len(a.first))
    best, first, done, mu, lp = -INF, -INF, 0, None, INF
    best_lam = lam
    while done < iterations:
        if deadline is not None and done > 0 and time.perf_counter() > deadline:
            return _Run(best, best_lam, first, done, Termination.TIME_LIMIT)
        # a weight near 0 is kept at PI_LEAST: the path's own cost is read back from the
        # weighed value by dividing by it (any weight in [0, 1] gives a valid bound)
        weight = np.maximum(pi, PI_LEAST)
        try:
            values, path = _solve_jobs(
                a if mu is None else _weighed(a, weight), lam, slot, deadline
            )
        except _TimeUp:  # the round's paths are not all found: the rounds done stand
            return _Run(best, best_lam, first, done, Termination.TIME_LIMIT)
        held = _held(a, path, types)
        priced = np.sum(lam * a.capacity[:, None])
        # a job's priced optimum is never below its own floor (the prices only add),
        # which the grid may miss on very slow configurations
        value = float(np.sum(np.maximum(values + (1.0 - weight) * own, own)) - priced) + constant
        done += 1
        first = value if done == 1 else first
        if value > best:
            best, best_lam = value, lam
        costs = (values - np.einsum("jts,ts->j", held, lam)) / weight  # the paths' own costs
        new = jobs if mu is None else np.flatnonzero(values - mu < -1e-9 * max(1.0, abs(best)))
        if len(new) == 0:
            # no path prices out: the master's value is the Lagrangian dual's, unless a
            # weight held at PI_LEAST hid a path pricing out at the master's own weight
            # (a review found one on a tiny instance, 1.3e-7 below the master's value:
            # at most PI_LEAST of those jobs' floors)
            converged = lp - best <= 1e-7 * max(1.0, abs(lp)) or bool(np.all(pi >= PI_LEAST))
            why = Termination.OPTIMAL if converged else Termination.OTHER_LIMIT
            return _Run(best, best_lam, first, done, why)
        master.add(costs[new], held[new], new)
        lp, lam, mu, pi = master.solve()
        lp += constant
        # converged when the master's value meets the best bound: with the floors in the
        # master (each job's z), no bound is above its value. Without them the floors
        # lifted the bound above the master's value at once and the rounds stopped there
        # (on the overloaded 20-job real-data window 14.13 after 5 rounds, where 38
        # rounds to the master's own optimum gave 14.82, 2026-12-06)
        if lp - best <= 1e-7 * max(1.0, abs(lp)):
            return _Run(best, best_lam, first, done, Termination.OPTIMAL)
    return _Run(best, best_lam, first, done, Termination.OTHER_LIMIT)  # the rounds ran out
