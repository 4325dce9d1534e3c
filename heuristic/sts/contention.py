"""STS's rules for a cluster where capacity binds (docs/model.md, 'STS under contention').

The single-job profile plans each job slow and cheap first and fast at the end, as if
the fast configurations will be free then; least slack first serves the jobs. On an
idle cluster that is the thesis's STS. Where capacity binds, three of its choices lose
to a plain LP allocation (docs/contended.md has the verified examples):

- **Order.** Least slack first serves the most hopeless job first: a job already late
  by hours, with hours of work left, takes the GPUs of several jobs that could still be
  on time, and they become late in turn (the domino effect of deadline orders under
  overload). Jobs are ordered instead by the weighted modified slack
  ``(max(slack, 0) + WORK_SHARE * work) / omega``: least slack first while jobs can be
  on time, shortest work first among those that cannot (Smith's rule, which minimises
  weighted lateness once every job is late), weighted by the tardiness weight. It
  follows the modified due date rule (Baker and Bertrand 1982; weighted by Kanet and Li
  2004), with slack in place of the due date. With ``scale_work`` the weight of work is
  scaled by the share of present jobs already late (:func:`late_share`); measured and not
  kept as the default (docs/model.md).
- **Idle GPUs beside late jobs.** A job whose profile's step fits nowhere waits, even
  when a smaller configuration is free and the job is late anyway. Such a job
  (``slack <= 0``, or at most the re-plan interval of a backfilled job, after which
  it would be late whatever it runs on) takes the cheapest configuration that fits now,
  counting its tardiness, on the GPUs left free (a backfill), and is re-planned at the
  next slot.
- **The bottleneck idle early.** When the ledger has a job's last step's class booked
  to its true capacity while that step would run (every 8-GPU node of a type, say),
  the job's slow start leaves that configuration idle now and overbooked later, for it
  or for the jobs still to come, which the ledger cannot see. If it fits now, the job
  runs it at once, and plans from then on to finish when that run would. Counting only
  the other jobs' bookings cost 8% more on the contended real-data windows
  (docs/contended.md). A job alone on the cluster is never moved: the single-job
  profile is the thesis's. With ``pull_needed`` (the default since 2026-11-27) a job
  that can still finish on time, in the worst case, on a configuration that costs less
  per epoch than that last step is not pulled (:func:`needs_last_step`): the class
  being booked full later is no reason for it to run its dearest step now.

On a cluster where nothing waits and nothing is booked full, only the order differs
from the thesis's STS (docs/contended.md states what it moves on the light campaigns).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from heuristic.core.choice import first_placement, ranked_configs, worst_case_cost
from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.policy import JobStatus
from heuristic.core.urgency import overhead_to_run, slack
from heuristic.sts.ledger import Ledger
from heuristic.sts.profile import Profile
from instances import Config, EpochDistribution, Instance, Job, slot_ceil

Fastest = Callable[[Job], float]  # a job's hours per epoch on its fastest configuration

# hours of remaining worst-case work counted per hour of slack in the order: measured
# 0.1, 0.25, 0.5 and 1 on real-data windows, the contended 32-GPU runs and the light
# families (docs/model.md, 'STS under contention'); 0.25 is the best on the windows and
# within 2.2% of 0.1 on the contended runs, where 0.1 costs up to 1.22 x on a window
WORK_SHARE = 0.25


def late_share(inst: Instance, jobs: Sequence[JobStatus], now: float, fastest: Fastest) -> float:
    """The share of present jobs that are late whatever they run on (slack <= 0): the
    weight of work in the order is ``work_share`` times this. Work in the order keeps
    hopeless jobs from taking the GPUs of jobs that can still be on time; where few jobs
    are late there is no such domino to stop, and counting work only pushes long jobs
    back until they are late too (docs/model.md, 'STS under contention')."""
    if not jobs:
        return 0.0
    late = sum(slack(inst, s, now, fastest(s.job)) <= 0 for s in jobs)
    return late / len(jobs)


def held_share(inst: Instance, jobs: Sequence[JobStatus]) -> float:
    """The share of the cluster's GPUs that ``jobs`` hold (a shared slot holds
    ``1 / K_max`` of its GPU), as a decision starts."""
    held = sum(inst.busy_share(s.allocation.config) for s in jobs if s.allocation is not None)
    return held / max(sum(inst.gpus_by_type.values()), 1)


def urgency_key(
    inst: Instance, status: JobStatus, slack: float, fastest: float, work_share: float
) -> tuple[int, float]:
    """The weighted modified slack: ``(max(slack, 0) + work_share * work) / omega``,
    ``work`` the remaining worst-case hours on the fastest configuration (smallest
    first). Jobs whose lateness costs nothing (``omega = 0``) come after the others, in
    the same order unweighted."""
    key = max(slack, 0.0) + work_share * status.remaining * fastest
    omega = inst.tardiness_weight(status.job.id)
    return (0, key / omega) if omega > 0 else (1, key)


def backfill(
    inst: Instance, occ: Occupancy, status: JobStatus, now: float, types: tuple[str, ...]
) -> Allocation | None:
    """A late job left waiting: the cheapest configuration in the worst case (energy and
    tardiness if it runs there to the end) that fits on the GPUs left free, placed."""
    ranked = [
        c for c in ranked_configs(inst, status.job, status.remaining, now) if c.gpu_type in types
    ]
    alloc = first_placement(occ, status.job, ranked)
    if alloc is not None:
        occ.place(status.job, alloc)
    return alloc


def needs_last_step(inst: Instance, status: JobStatus, last: Config, now: float) -> bool:
    """Whether no configuration of the job that the cluster hosts (any GPU type, free now
    or not) and that costs less energy per epoch than ``last`` runs its remaining epochs
    from now to its due date in the worst case (going on where it runs pays only the
    overhead it has left; any other configuration a relaunch, as everywhere in STS:
    :func:`heuristic.core.urgency.overhead_to_run`). A configuration the cluster cannot
    host (two P100 nodes where it has one) finishes nothing."""
    job = status.job
    per_epoch = inst.power_w(last) * inst.epoch_time(job, last)
    for c in inst.allowed_configs(job):
        hours = job.epoch_times[c]
        if c == last or inst.power_w(c) * hours >= per_epoch:
            continue
        # the overhead is counted from where the job runs, not from where this decision
        # may have moved it (a move pays the relaunch, whichever configuration it takes)
        lost = overhead_to_run(inst, status, c)
        if now + lost + status.remaining * hours <= job.due:
            return False
    return True


def pull_forward(
    inst: Instance,
    occ: Occupancy,
    ledger: Ledger,
    status: JobStatus,
    current: Allocation,
    booked: tuple[Profile, EpochDistribution],
    now: float,
    needed: bool = True,
) -> tuple[Allocation, float] | None:
    """The job's last (fastest) profile step, placed now on free GPUs, if the ledger has
    that step's class booked to its true capacity while the step would run (and, with
    ``needed``, no configuration cheaper per epoch finishes the job on time); with when
    the job would finish running it from now on (its new planned finish). ``None``: the
    job stays."""
    profile, dist = booked
    last = profile.steps[-1].config
    if last == current.config or not ledger.last_step_full(status.job, profile, dist):
        return None
    if needed and not needs_last_step(inst, status, last, now):
        return None
    occ.release(status.job.id)
    alloc = occ.find(status.job, last)
    if alloc is None:
        occ.place(status.job, current)
        return None
    occ.place(status.job, alloc)
    finish = now + inst.relaunch(status.job) + status.remaining * inst.epoch_time(status.job, last)
    # a slotted completion counts at the slot's end: a finish inside a slot planned as is
    # would read as late against itself (the budget is cut down to a slot end), and the
    # job would leave the step it was pulled to for a faster one
    return alloc, slot_ceil(finish, inst.slot)


def unstick(
    inst: Instance, occ: Occupancy, status: JobStatus, now: float, types: tuple[str, ...]
) -> Allocation | None:
    """A running job kept where it runs because no step of its profiles fit and no
    configuration on the free GPUs meets its due date: the configuration cheapest in the
    worst case (energy and tardiness if it runs there to the end; staying pays no
    relaunch) on the GPUs left free and its own. ``None``: it stays."""
    current = status.allocation
    assert current is not None
    job, left = status.job, status.remaining
    stay = worst_case_cost(inst, job, current.config, left, now, overhead=status.overhead_left)
    occ.release(job.id)
    # ranked cheapest first, so the ones cheaper than staying are a prefix
    cheaper = (
        c
        for c in ranked_configs(inst, job, left, now)
        if c.gpu_type in types and worst_case_cost(inst, job, c, left, now) < stay * (1 - 1e-9)
    )
    alloc = first_placement(occ, job, cheaper)
    occ.place(job, current if alloc is None else alloc)
    return alloc
