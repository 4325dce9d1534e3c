"""Where a job's profile step goes now, and what STS does when none can go: the
placement rules of :class:`heuristic.sts.policy.StsPolicy`, one function each."""

from __future__ import annotations

import math
from collections.abc import Callable

from heuristic.core.choice import first_placement
from heuristic.core.holds import Holds
from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.policy import JobStatus
from heuristic.core.urgency import overhead_to_run
from heuristic.sts.hulls import cheapest_first, slot_budget
from heuristic.sts.profile import Profile, Step
from instances import Config, Instance, Job


def rescue(
    inst: Instance, occ: Occupancy, status: JobStatus, now: float, types: tuple[str, ...]
) -> Allocation | None:
    """No profile's step fits a running job: the cheapest placeable configuration
    that still meets its due date in the worst case (on the slot grid), if any. The
    profile's own fallback takes only configurations at least as fast as the step
    it planned, and a job with none pauses; a slower one may still be on time."""
    job = status.job
    budget = slot_budget(inst, job.due, now)

    def on_time(c: Config) -> bool:
        # a configuration other than the current one relaunches the job first
        lost = overhead_to_run(inst, status, c)
        return status.remaining * inst.epoch_time(job, c) + lost <= budget + 1e-9

    ok = cheapest_first(inst, job, lambda c: c.gpu_type in types and on_time(c))
    alloc = first_placement(occ, job, ok)
    if alloc is not None:
        occ.place(status.job, alloc)
    return alloc


def keep(occ: Occupancy, status: JobStatus) -> Allocation | None:
    """A running job none of whose profiles fits keeps its GPUs if they are still
    free, else it pauses."""
    current = status.allocation
    if current is not None and occ.why_not(status.job, current) is None:
        occ.place(status.job, current)
        return current
    return None


def step_now(inst: Instance, job: Job, profile: Profile, now: float) -> tuple[Step, float, bool]:
    """The profile step to run now, when its epochs are done, and whether it is the
    last. Slotted, a switch can only happen on the grid: a step that would end within
    the coming slot is skipped for the next, faster one (ahead of the plan, never
    behind it). A profile timed in windows (:mod:`heuristic.sts.timing`) also stops
    at its first window's end: the job is re-planned then."""
    if profile.runs:
        return _timed_step(inst, job, profile, now)
    t = now
    for k, step in enumerate(profile.steps):
        t += step.lost + step.epochs * inst.epoch_time(job, step.config)
        last = k == len(profile.steps) - 1
        if last or inst.slot is None or t >= now + inst.slot - 1e-9:
            return step, t, last
    raise AssertionError("a profile has at least one step")


def _timed_step(inst: Instance, job: Job, profile: Profile, now: float) -> tuple[Step, float, bool]:
    """:func:`step_now` for a profile with run windows (it starts at once)."""
    x = 0.0
    stop = profile.runs[0][1]
    for k, step in enumerate(profile.steps):
        x += step.lost + step.epochs * inst.epoch_time(job, step.config)
        end = profile.clock(x)
        if end > stop + 1e-9:  # the window closes first: re-planned then
            return step, now + stop, False
        last = k == len(profile.steps) - 1
        if last or inst.slot is None or end >= inst.slot - 1e-9:
            return step, now + end, last
    raise AssertionError("a profile has at least one step")


def grid(inst: Instance, now: float, t: float) -> float:
    """A switch time moved down to the slot grid (switching early keeps the worst
    case within budget), and at least one slot ahead."""
    if inst.slot is None:
        return t
    k = math.floor(t / inst.slot + 1e-9)
    return max(k * inst.slot, now + inst.slot)


def place(
    occ: Occupancy,
    status: JobStatus,
    cfg: Config,
    types: tuple[str, ...],
    holds: Holds | None = None,
    displace: bool = True,
    spared: Callable[[], frozenset[str]] | None = None,
) -> Allocation | None:
    """Where ``cfg`` goes now (``occ`` holds neither this job nor the less urgent
    ones). A running job keeps its GPUs if the config is the same and they are free.
    A running job whose ``cfg`` does not fit on its own type takes the cheapest
    placeable configuration, of any type, at least as fast (falling behind the
    profile would miss the due date); on another type it tries the next profile.
    ``None``: nothing placed. With ``displace=False``, only GPUs that no running job
    holds are used; otherwise any but those of the running jobs ``spared()`` names
    (asked only where the job would displace one)."""
    current = status.allocation
    if occ.keep(status.job, current, cfg):
        return current
    alloc = holds.find(occ, status.job, cfg) if holds is not None else None
    if alloc is None and not displace:
        return None
    if alloc is None:
        keep_off = spared() if spared is not None and holds is not None else frozenset()
        search = holds.sparing(occ, keep_off) if holds is not None and keep_off else occ
        alloc = search.find(status.job, cfg)
        if alloc is None and current is not None and cfg.gpu_type == current.config.gpu_type:
            inst = occ.instance
            tau = inst.epoch_time(status.job, cfg)
            faster = cheapest_first(
                inst,
                status.job,
                lambda c: inst.epoch_time(status.job, c) <= tau and c.gpu_type in types,
            )
            alloc = first_placement(search, status.job, faster)
    if alloc is not None:
        occ.place(status.job, alloc)
    return alloc
