"""STS: the stochastic heuristic on a cluster (MODEL.md section 4).

At each decision point, for every present job and GPU type, the optimal single-job
profile (:func:`heuristic.profile.exact_profile`) of its remaining epochs, conditional on
the progress made, within the time left to its due date. Jobs are served by urgency
(least slack: time to the due date minus the worst-case time on the fastest
configuration); each job's *current* profile step goes on the cheapest GPU type that can
host it now, best-fit. A job that cannot be placed waits; a running job whose next step
cannot be placed keeps what it has. The policy asks to be woken when a running job
reaches the end of its current step, so that it moves to the next, faster one.

Choices (documented in docs/model.md): a running job stays on its GPU type (it changes
configuration within the type, never migrates across types), which avoids thrashing
between types on every event; the profile uses worst-case tardiness, as the thesis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from heuristic.occupancy import Allocation, Occupancy
from heuristic.policy import Decision, JobStatus, SchedulerState
from heuristic.profile import Option, Profile, exact_profile
from instances import Config, Instance, Job


@dataclass(frozen=True)
class TypeProfile:
    """A job's profile on one GPU type."""

    gpu_type: str
    profile: Profile


def options(instance: Instance, job: Job, gpu_type: str) -> list[Option]:
    """The job's allowed configurations on ``gpu_type`` as (hours, cost) per epoch."""
    return [
        Option(c, instance.epoch_time(job, c), instance.epoch_cost(job, c))
        for c in instance.allowed_configs(job)
        if c.gpu_type == gpu_type
    ]


def profiles(
    instance: Instance, status: JobStatus, now: float, types: tuple[str, ...]
) -> list[TypeProfile]:
    """The job's optimal profile on each GPU type it can use, cheapest first."""
    job = status.job
    dist = job.distribution.conditional(status.progress)
    budget = job.due - now
    if instance.slot is not None:  # completions count at slot ends: plan to a slot end
        budget = math.floor(budget / instance.slot + 1e-9) * instance.slot
    omega = instance.tardiness_weight(job.id)
    out = []
    for t in types:
        opts = options(instance, job, t)
        if opts:
            out.append(TypeProfile(t, exact_profile(opts, dist, budget, omega)))
    out.sort(key=lambda p: (p.profile.objective, p.gpu_type))
    return out


def slack(instance: Instance, status: JobStatus, now: float) -> float:
    """Hours to the due date minus the worst-case time on the fastest configuration."""
    fastest = min(instance.epoch_time(status.job, c) for c in instance.allowed_configs(status.job))
    return status.job.due - now - status.remaining * fastest


class StsPolicy:
    name = "sts"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed  # STS is deterministic

    def decide(self, state: SchedulerState) -> Decision:
        inst, now, occ = state.instance, state.time, state.occupancy
        all_types = tuple(g.name for g in inst.gpu_types)
        assign: dict[str, Allocation | None] = {}
        wake = math.inf
        for status in sorted(state.jobs, key=lambda s: (slack(inst, s, now), s.job.id)):
            current = status.allocation
            types = (current.config.gpu_type,) if current is not None else all_types
            for plan in profiles(inst, status, now, types):
                step = plan.profile.first
                alloc = self._place(occ, status, step.config)
                if alloc is None:
                    continue
                if alloc != current:
                    assign[status.job.id] = alloc
                if len(plan.profile.steps) > 1 or alloc.config != step.config:
                    # wake when this step's epochs are done (on the grid, not after)
                    tau = inst.epoch_time(status.job, alloc.config)
                    wake = min(wake, self._grid(inst, now, now + step.epochs * tau))
                break
        return Decision(assign, wake_at=None if math.isinf(wake) else wake)

    @staticmethod
    def _grid(inst: Instance, now: float, t: float) -> float:
        """A switch time moved down to the slot grid (switching early keeps the worst
        case within budget), and at least one slot ahead."""
        if inst.slot is None:
            return t
        k = math.floor(t / inst.slot + 1e-9)
        return max(k * inst.slot, now + inst.slot)

    @staticmethod
    def _place(occ: Occupancy, status: JobStatus, cfg: Config) -> Allocation | None:
        """Where ``cfg`` goes now. A running job keeps its GPUs if the config is the same;
        if ``cfg`` does not fit, it takes the slowest placeable configuration of the type
        at least as fast as ``cfg`` (falling behind the profile would miss the due
        date), else keeps what it has. A waiting job that does not fit waits."""
        current = status.allocation
        if current is not None and current.config == cfg:
            return current
        if current is not None:
            occ.release(status.job.id)
        alloc = occ.find(status.job, cfg)
        if alloc is None and current is not None:
            inst = occ.instance
            tau = inst.epoch_time(status.job, cfg)
            faster = sorted(
                (inst.epoch_time(status.job, c), c)
                for c in inst.allowed_configs(status.job)
                if c.gpu_type == cfg.gpu_type
                and c != current.config
                and inst.epoch_time(status.job, c) <= tau
            )
            for _, c in reversed(faster):
                alloc = occ.find(status.job, c)
                if alloc is not None:
                    break
            else:
                alloc = current
        if alloc is not None:
            occ.place(status.job, alloc)
        return alloc
