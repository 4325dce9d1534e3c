"""``lp``: a deadline-aware LP allocation, re-solved at every event (a baseline).

After the cost-with-SLOs policy of Gavel (Narayanan et al., OSDI 2020, section 4): at
each decision, an LP over the jobs present chooses for each job ``j`` and configuration
``k`` the share ``x[j,k]`` of its time from now on, so that

- a job runs one configuration at a time: ``sum_k x[j,k] <= 1``;
- the GPUs of each type are not over-committed on average:
  ``sum_{j, k of type g} size_k x[j,k] <= GPUs of g`` (``size_k`` its GPUs, ``1/K_max``
  for a shared slot);
- each job progresses fast enough to finish its worst-case remaining epochs ``R_j`` by
  its due date, softly: ``sum_k x[j,k] / tau_jk + short_j >= R_j / T_j``, where
  ``T_j = max(D_j - now, R_j tau_j,min)``, ``D_j`` the due date (slotted: the last slot
  boundary at or before it, since a completion counts at the end of its slot); a job
  already too late for its due date is asked for its top speed;

at least cost over the window ``T_j``: energy ``rho_j pi P_k / 1000`` per hour on ``k``
(``rho_j``, the share of the remaining worst-case epochs expected to run, so the energy
is expected), and ``omega_j tau_j,min`` per hour for each epoch per hour short (the epochs
missing at the due date, each run late at top speed). Solved by HiGHS (``highspy``).

The LP's shares are realised on whole GPUs: in order of urgency (the share of its top
speed a job needs), each job takes, of the configurations the LP gives a share, the
cheapest per epoch that alone runs fast enough, else the fastest (the LP mixes them in
time; a job runs one until the next event: the share's size does not enter), then the
rest, cheapest in the worst case first; each the first that fits now, best fit, keeping
its GPUs if that is what it runs; a job that fits nowhere waits. Where the job pays a
relaunch overhead, a running job moves only to a configuration cheaper in the worst case
with the overhead paid than staying, and a placement avoids the GPUs of running jobs not
yet re-placed (``Holds``, as STS does; docs/model.md).

Where we differ from Gavel: Gavel's shares are realised over rounds by priorities and
its throughputs are measured; here the shares only pick each job's configuration, the
epoch times are the instance's, and there is no notion of rounds or of lease renewals.
"""

from __future__ import annotations

import math

import highspy
import numpy as np

from heuristic.core import highs_run
from heuristic.core.choice import ranked_configs, worst_case_cost
from heuristic.core.holds import Holds
from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.options import NoOptions
from heuristic.core.policy import Decision, JobStatus, SchedulerState
from instances import Config, Instance
from instances.distribution import reaches

SHARE_TOL = 1e-7  # shares below this are solver noise


class LpPolicy:
    name = "lp"

    Options = NoOptions

    def __init__(self, options: NoOptions | None = None, *, seed: int = 0) -> None:
        self.options = options if options is not None else NoOptions()
        self.seed = seed  # HiGHS's simplex is deterministic; kept for the registry

    def decide(self, state: SchedulerState) -> Decision:
        inst, now = state.instance, state.time
        jobs = [s for s in state.jobs if not reaches(s.progress, s.job.max_epochs)]
        if not jobs:
            return Decision({})
        configs = [inst.allowed_configs(s.job) for s in jobs]
        shares, needs, urgency = _solve(inst, now, jobs, configs)
        order = sorted(range(len(jobs)), key=lambda i: (-urgency[i], jobs[i].job.id))
        chosen = {jobs[i].job.id: (needs[i], configs[i], shares[i]) for i in order}
        assign = realise_shares(state, jobs, [jobs[i] for i in order], chosen)
        return Decision(assign)


# a job's speed needed (epochs an hour), its configurations and the LP's share of each
Chosen = tuple[float, tuple[Config, ...], np.ndarray]


def realise_shares(
    state: SchedulerState,
    jobs: list[JobStatus],
    order: list[JobStatus],
    chosen: dict[str, Chosen],
) -> dict[str, Allocation | None]:
    """The LP's shares realised on whole GPUs: every running job of ``jobs`` released,
    then the jobs of ``order`` placed in turn by :func:`place_shares` (a job absent from
    ``chosen`` waits), on GPUs no running job not yet re-placed holds where it can. The
    allocations that change."""
    inst, now, occ = state.instance, state.time, state.occupancy
    holds = Holds(occ, jobs) if inst.has_relaunch else None
    for s in jobs:
        if s.allocation is not None:
            occ.release(s.job.id)
    assign: dict[str, Allocation | None] = {}
    for s in order:
        if holds is not None:
            holds.drop(s.job.id)
        alloc = None
        if s.job.id in chosen:
            alloc = place_shares(inst, occ, s, now, *chosen[s.job.id], holds)
        if alloc is not None:
            occ.place(s.job, alloc)
            if holds is not None:
                holds.take(s.job, alloc)
        if alloc != s.allocation:
            assign[s.job.id] = alloc
    return assign


def _preference(inst: Instance, s: JobStatus, need: float, cfg: Config) -> tuple[float, ...]:
    """The LP mixes configurations in time; a job runs one until the next event. So of
    those the LP gives a share, first the cheapest per epoch that alone runs fast enough
    (``need`` epochs per hour), then the fastest of the others."""
    tau = inst.epoch_time(s.job, cfg)
    if 1.0 / tau >= need * (1 - 1e-9):
        return (0.0, inst.epoch_cost(s.job, cfg))
    return (1.0, tau)


def place_shares(
    inst: Instance,
    occ: Occupancy,
    s: JobStatus,
    now: float,
    need: float,
    configs: tuple[Config, ...],
    share: np.ndarray,
    holds: Holds | None = None,
) -> Allocation | None:
    """Best fit of the job's configurations in the LP's order of preference, on GPUs no
    running job holds where it can (``holds``)."""

    def find(cfg: Config) -> Allocation | None:
        alloc = holds.find(occ, s.job, cfg) if holds is not None else None
        return alloc if alloc is not None else occ.find(s.job, cfg)

    chosen = [configs[k] for k in range(len(configs)) if share[k] > SHARE_TOL]
    chosen.sort(key=lambda c: _preference(inst, s, need, c))
    rest = [c for c in ranked_configs(inst, s.job, s.remaining, now) if c not in chosen]
    current = s.allocation
    if current is not None and inst.relaunch(s.job) > 0 and occ.why_not(s.job, current) is None:
        # a move relaunches the job: it stays unless the LP's choice, overhead paid, is
        # cheaper in the worst case than running on where it is
        stay = worst_case_cost(
            inst, s.job, current.config, s.remaining, now, overhead=s.overhead_left
        )
        for cfg in (*chosen, *rest):
            if cfg == current.config:
                return current
            if worst_case_cost(inst, s.job, cfg, s.remaining, now) < stay:
                alloc = find(cfg)
                if alloc is not None:
                    return alloc
        return current
    for cfg in (*chosen, *rest):
        keep = s.allocation is not None and s.allocation.config == cfg
        if keep and occ.why_not(s.job, s.allocation) is None:  # type: ignore[arg-type]
            return s.allocation  # stays where it runs
        alloc = find(cfg)
        if alloc is not None:
            return alloc
    return None


def _solve(
    inst: Instance, now: float, jobs: list[JobStatus], configs: list[tuple[Config, ...]]
) -> tuple[list[np.ndarray], list[float], list[float]]:
    """The LP's shares per job and configuration, the speed each job needs to meet its
    due date (epochs per hour), and its urgency: the share of its top speed that is (the
    most urgent are placed first)."""
    cost: list[float] = []
    upper: list[float] = []
    rows: list[tuple[list[int], list[float], float, float]] = []
    first: list[int] = []
    needs: list[float] = []
    urgency: list[float] = []
    per_type: dict[str, tuple[list[int], list[float]]] = {}
    for s, cfgs in zip(jobs, configs, strict=True):
        job = s.job
        tau = np.array([inst.epoch_time(job, c) for c in cfgs])
        fastest = float(tau.min())
        window = max(_deadline(job.due, inst.slot) - now, s.remaining * fastest)
        need = s.remaining / window  # epochs per hour
        needs.append(need)
        urgency.append(need * fastest)
        dist = job.distribution
        rho = (dist.phi(job.max_epochs) - dist.phi(s.progress)) / s.remaining
        hourly = [rho * inst.energy_price * inst.power_w(c) / 1000.0 for c in cfgs]
        first.append(len(cost))
        cols = list(range(len(cost), len(cost) + len(cfgs)))
        cost += [window * h for h in hourly]
        upper += [1.0] * len(cfgs)
        short = len(cost)
        cost.append(window * inst.tardiness_weight(job.id) * fastest)
        upper.append(highspy.kHighsInf)
        rows.append((cols, [1.0] * len(cols), -highspy.kHighsInf, 1.0))
        rows.append(([*cols, short], [*(1.0 / tau), 1.0], need, highspy.kHighsInf))
        for col, c in zip(cols, cfgs, strict=True):
            size = 1.0 / inst.max_share if c.shared else float(c.gpus)
            cs, vs = per_type.setdefault(c.gpu_type, ([], []))
            cs.append(col)
            vs.append(size)
    for g, (cs, vs) in sorted(per_type.items()):
        gpus = float(inst.gpus_by_type.get(g, 0))
        if sum(vs) > gpus:  # a row that cannot bind is left out
            rows.append((cs, vs, -highspy.kHighsInf, gpus))
    values = _run(np.array(cost), np.array(upper), rows)
    shares = [values[f : f + len(c)] for f, c in zip(first, configs, strict=True)]
    return shares, needs, urgency


def _deadline(due: float, slot: float | None) -> float:
    """The latest completion that is on time: slotted, a completion counts at the end of
    its slot, so the last slot boundary at or before the due date."""
    return due if slot is None else math.floor(due / slot + 1e-9) * slot


def _run(
    cost: np.ndarray, upper: np.ndarray, rows: list[tuple[list[int], list[float], float, float]]
) -> np.ndarray:
    """Minimise ``cost x`` over ``0 <= x <= upper`` and the rows; the column values."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    n = len(cost)
    h.addVars(n, np.zeros(n), upper)
    # only the argmin is used: tiny costs (a tiny currency unit) scaled for HiGHS's
    # absolute tolerances, which chose a worse plan at an energy price of 2e-7
    cost = cost * highs_run.cost_scale(cost)
    h.changeColsCost(n, np.arange(n, dtype=np.int32), cost)
    for cols, vals, lo, hi in rows:
        h.addRow(lo, hi, len(cols), np.array(cols, dtype=np.int32), np.array(vals))
    highs_run.run(h)
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        # always feasible (the shortfalls absorb any need); a failure of the solver
        # falls back to no preference: every job takes its cheapest configuration
        return np.zeros(n)
    return np.asarray(h.getSolution().col_value, dtype=float)
