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
tighter and slower (docs/milp.md). A job's priced optimum is also at least its own
capacity-relaxation bound (least energy plus least tardiness; prices only add), so each
job counts for the larger of the two.

The multipliers are the duals of a restricted master LP over the paths found so far
(column generation, Dantzig-Wolfe: its LP optimum is the Lagrangian dual's, and it needs
far fewer rounds than subgradient steps, which zigzag on time-indexed prices). Each
round's prices give a valid bound whatever they are; the best is kept.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import highspy
import numpy as np

from heuristic.core import highs_run
from instances import Config, Instance, TardinessMode
from milp.data import MilpData, MilpError, milp_data, require_slot

INF = np.inf
# bytes the per-round arrays may take: the DP's choices (slots x jobs x states, one byte
# each) and the stacked costs (jobs x configurations x states, five arrays of eight)
MAX_BYTES = 2_000_000_000
MIN_STATES = 8


@dataclass(frozen=True)
class LagrangeBound:
    value: float  # the best bound found, never below the capacity relaxation
    capacity_relaxation: float
    first: float  # the bound at zero prices: each job alone on this grid
    iterations: int
    seconds: float
    states: int


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


def _use(d: MilpData, cfg: Config) -> float:
    """GPUs of its type a configuration takes, at least (see the module's docstring)."""
    if cfg.shared:
        return 1.0 / d.instance.max_share
    if cfg.nodes > 1:
        return cfg.nodes * min(n.num_gpus for n in d.hosts(cfg))
    return float(cfg.gpus)


def _stack(d: MilpData, states: int) -> _Arrays:
    inst = d.instance
    types = sorted(inst.nodes_by_type)
    tindex = {t: i for i, t in enumerate(types)}
    jobs = list(d.jobs.values())
    n_j, n_k, n_i = len(jobs), max(len(jd.configs) for jd in jobs), states
    cost = np.full((n_j, n_k, n_i + 1), INF)
    src = np.zeros((n_j, n_k, n_i + 1), dtype=np.int64)
    late_w = np.zeros((n_j, n_k, n_i + 1))
    fcost = np.full((n_j, n_k, n_i), INF)
    fweight = np.zeros((n_j, n_k, n_i))
    fok = np.zeros((n_j, n_k, n_i), dtype=bool)
    gtype = np.zeros((n_j, n_k), dtype=np.int64)
    use = np.zeros((n_j, n_k))
    grid = np.arange(n_i + 1)
    for j, jd in enumerate(jobs):
        total = jd.job.max_epochs
        step = total / n_i
        cum = np.concatenate([[0.0], np.cumsum(jd.lengths)])
        big_q = np.concatenate([[0.0], np.cumsum(np.multiply(jd.survival, jd.lengths))])

        def q_of(x: np.ndarray, cum: np.ndarray = cum, big_q: np.ndarray = big_q) -> np.ndarray:
            """Expected epochs run among the first ``x``: the integral of the survival."""
            return np.interp(np.minimum(x, cum[-1]), cum, big_q)

        # the grid state at which each block counts as complete, and its weight
        marks = np.ceil(cum[1:] / step - 1e-9).astype(np.int64)
        weights = np.zeros(len(jd.lengths))
        for b in d.late_blocks(jd.job.id):
            weights[b] = d.late_weight(jd.job.id, b)
        for k, c in enumerate(jd.configs):
            adv = max(1, math.ceil(jd.speed[k] / step - 1e-9))
            density = jd.cost[k] * jd.speed[k] / (adv * step)  # per epoch of the grid
            gtype[j, k] = tindex[c.gpu_type]
            use[j, k] = _use(d, c)
            i = grid[:n_i]  # from state i
            to = np.minimum(i + adv, n_i)
            energy = density * (q_of(to * step) - q_of(i * step))
            crossed = (marks[None, :] > i[:, None]) & (marks[None, :] <= to[:, None])
            wsum = crossed.astype(float) @ weights
            inner = to < n_i
            cost[j, k, to[inner]] = energy[inner]
            src[j, k, to[inner]] = i[inner]
            late_w[j, k, to[inner]] = wsum[inner]
            fok[j, k] = ~inner
            fcost[j, k, ~inner] = energy[~inner]
            fweight[j, k, ~inner] = wsum[~inner]
    capacity = np.array([inst.gpus_by_type[t] for t in types], float)
    return _Arrays(
        cost,
        src,
        late_w,
        fcost,
        fweight,
        fok,
        gtype,
        use,
        np.array([jd.first_slot for jd in jobs]),
        np.array([jd.last_slot for jd in jobs]),
        np.array([jd.job.due for jd in jobs]),
        np.array([jd.omega for jd in jobs]),
        capacity,
    )


def _solve_jobs(a: _Arrays, lam: np.ndarray, slot: float) -> tuple[np.ndarray, np.ndarray]:
    """Each job's cheapest path at prices ``lam`` (types x slots): its cost, prices
    included, and its configuration per slot (-1: idle), (jobs, slots)."""
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
        live = (a.first <= t) & (t <= a.last)
        if not live.any():
            continue
        price = np.where(valid, lam[a.gpu_type, t] * a.use, INF)
        price[~live] = INF
        late = a.omega * np.maximum(0.0, (t + 1) * slot - a.due)
        step = (
            value[rows, a.src] + a.cost + price[:, :, None] + late[:, None, None] * a.late_weight
        )  # (J, K, I+1)
        best_k = np.argmin(step, axis=1)  # (J, I+1)
        best = np.take_along_axis(step, best_k[:, None, :], axis=1)[:, 0, :]
        to_end = (
            value[:, None, :n_i]
            + a.final_cost
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
            f"{MAX_BYTES / 1e9:g} GB even on a grid of {MIN_STATES} states: use the "
            "capacity relaxation (MilpData.separable_bound) or a longer slot"
        )
    return fit


class _Master:
    """The restricted master LP of the column generation: per job a convex combination
    of its paths found so far, within the capacity of every (type, slot); a slack per
    capacity row, at ``penalty`` per GPU-slot, keeps it feasible from the first round
    (and caps the prices at ``penalty``)."""

    def __init__(self, capacity: np.ndarray, slots: int, jobs: int, penalty: float) -> None:
        self.types, self.slots, self.jobs = len(capacity), slots, jobs
        self.cap_rows = self.types * slots
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        lower = np.concatenate([np.full(self.cap_rows, -highspy.kHighsInf), np.ones(jobs)])
        upper = np.concatenate([np.repeat(capacity, slots), np.ones(jobs)])
        none = np.zeros(0, dtype=np.int32)
        h.addRows(len(lower), lower, upper, 0, none, none, np.zeros(0))
        n = self.cap_rows
        h.addCols(
            n,
            np.full(n, penalty),
            np.zeros(n),
            np.full(n, highspy.kHighsInf),
            n,
            np.arange(n, dtype=np.int32),
            np.arange(n, dtype=np.int32),
            -np.ones(n),
        )
        self.h = h

    def add(self, costs: np.ndarray, held: np.ndarray, jobs: np.ndarray) -> None:
        """Columns: each listed job's path, of ``costs`` and ``held`` GPUs (jobs, types,
        slots)."""
        starts, index, value = [], [], []
        nnz = 0
        for j, per in zip(jobs, held, strict=True):
            rows = np.flatnonzero(per.ravel())
            starts.append(nnz)
            index += [rows, np.array([self.cap_rows + j])]
            value += [per.ravel()[rows], np.ones(1)]
            nnz += len(rows) + 1
        n = len(jobs)
        self.h.addCols(
            n,
            costs,
            np.zeros(n),
            np.full(n, highspy.kHighsInf),
            nnz,
            np.array(starts, dtype=np.int32),
            np.concatenate(index).astype(np.int32),
            np.concatenate(value),
        )

    def solve(self) -> tuple[float, np.ndarray, np.ndarray]:
        """The LP's value, the capacity prices (types x slots, >= 0) and the jobs' duals."""
        highs_run.run(self.h, 1)
        dual = np.asarray(self.h.getSolution().row_dual)
        lam = np.maximum(0.0, -dual[: self.cap_rows]).reshape(self.types, self.slots)
        return float(self.h.getInfo().objective_function_value), lam, dual[self.cap_rows :]


def lagrangian_bound(
    instance: Instance,
    slots: int,
    *,
    upper: float | None = None,
    tardiness: TardinessMode | None = None,
    states: int = 128,
    iterations: int = 100,
    time_limit: float | None = 60.0,
) -> LagrangeBound:
    """A lower bound on the optimum of the slotted MILP over ``slots`` slots.

    ``upper``: the cost of a known plan, which cuts each job's window (a plan at least as
    good lies within them). The prices come from a column generation: a master LP over
    the jobs' paths found so far gives them, each job's cheapest path at those prices
    joins the master, and each round's prices give a valid bound (so stopping early,
    after ``iterations`` rounds or ``time_limit`` seconds, is safe). It stops when no
    path can lower the master: the bound is then the Lagrangian dual's optimum."""
    t0 = time.perf_counter()
    slot = require_slot(instance)
    d = milp_data(instance, slots, tardiness, upper, check_size=False)
    floor = d.separable_bound()
    own = np.array([d.job_bound(j) for j in d.jobs])
    states = _fitting_states(d, slots, states)
    a = _stack(d, states)
    types = len(a.capacity)
    lam = np.zeros((types, slots))
    penalty = max(upper if upper is not None else 10 * floor, 1.0)
    master = _Master(a.capacity, slots, len(a.first), penalty)
    jobs = np.arange(len(a.first))
    best, first, done, mu = -INF, -INF, 0, None
    while done < iterations:
        if time_limit is not None and done > 0 and time.perf_counter() - t0 > time_limit:
            break
        values, path = _solve_jobs(a, lam, slot)
        held = _held(a, path, types)
        # a job's priced optimum is never below its own capacity-relaxation bound (the
        # prices only add), which the grid may miss on very slow configurations
        value = float(np.sum(np.maximum(values, own)) - np.sum(lam * a.capacity[:, None]))
        done += 1
        first = value if done == 1 else first
        best = max(best, value)
        costs = values - np.einsum("jts,ts->j", held, lam)  # the paths' own costs
        new = jobs if mu is None else np.flatnonzero(values - mu < -1e-9 * max(1.0, abs(best)))
        if len(new) == 0:
            break  # no path prices out: the master's value is the Lagrangian dual's
        master.add(costs[new], held[new], new)
        lp, lam, mu = master.solve()
        if lp - best <= 1e-7 * max(1.0, abs(lp)):
            break
    return LagrangeBound(
        value=max(best, floor),
        capacity_relaxation=floor,
        first=first,
        iterations=done,
        seconds=time.perf_counter() - t0,
        states=states,
    )
