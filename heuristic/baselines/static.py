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

from heuristic.core.choice import first_placement, requested_configs
from heuristic.core.occupancy import Allocation
from heuristic.core.options import NoOptions
from heuristic.core.policy import Decision, SchedulerState


class StaticPolicy:
    name = "static"

    Options = NoOptions

    def __init__(self, options: NoOptions | None = None, *, seed: int = 0) -> None:
        self.options = options if options is not None else NoOptions()
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
