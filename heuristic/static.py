"""`static`: what a plain cluster manager does (E0 of the seed-systems notes). Each job runs
on the size its user requested (:class:`instances.Requested`) for its whole life, never
paused or moved; jobs start in arrival order, and a job that does not fit lets later
ones start (work-conserving, no head-of-line blocking). It is the reference that
Optimus, Gandiva, Liquid and Synergy were measured against.

Among the configurations of the requested size (of the requested type, or of any type),
the first that fits now is taken, best-fit, in the order of the instance's GPU types:
a plain manager knows nothing of energy or speed. A job without a request asks for its
fewest GPUs of any type.
"""

from __future__ import annotations

from heuristic.choice import first_placement
from heuristic.occupancy import Allocation
from heuristic.policy import Decision, SchedulerState
from instances import Config, Instance, Job, Requested


def requested_configs(instance: Instance, job: Job) -> list[Config]:
    """The job's hostable configurations of its requested size, in GPU-type order. A job
    without a request asks for its fewest GPUs of any type (its shared slots if it has
    no exclusive configuration)."""
    allowed = instance.allowed_configs(job)
    req = job.requested
    if req is None:
        exclusive = [c.gpus for c in allowed if not c.shared]
        if not exclusive:
            return list(allowed)
        req = Requested(min(exclusive))
    order = {g.name: k for k, g in enumerate(instance.gpu_types)}
    return sorted((c for c in allowed if req.matches(c)), key=lambda c: (order[c.gpu_type], c))


class StaticPolicy:
    name = "static"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed  # deterministic; kept for the common factory signature

    def decide(self, state: SchedulerState) -> Decision:
        occ = state.occupancy
        assign: dict[str, Allocation | None] = {}
        waiting = sorted(
            (s for s in state.jobs if s.allocation is None),
            key=lambda s: (s.job.release, s.job.id),
        )
        for status in waiting:
            alloc = first_placement(occ, status.job, requested_configs(state.instance, status.job))
            if alloc is not None:
                occ.place(status.job, alloc)
                assign[status.job.id] = alloc
        return Decision(assign)
