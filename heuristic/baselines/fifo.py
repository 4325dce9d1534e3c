"""FIFO: jobs start in arrival order, each on the cheapest configuration that meets its due
date in the worst case (among those that fit now), fixed for its whole run, best-fit node.

Strict head-of-line order: while the oldest waiting job cannot be placed, no later job
starts (that is what distinguishes FIFO from a backfilling policy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from heuristic.core.choice import first_placement, ranked_configs
from heuristic.core.occupancy import Allocation
from heuristic.core.options import CheckedOptions
from heuristic.core.policy import Decision, JobStatus, SchedulerState


@dataclass(frozen=True)
class FixedConfigOptions(CheckedOptions):
    """How a fixed-configuration baseline ranks a job's configurations
    (:data:`heuristic.core.choice.RULES`): the least worst-case cost (energy plus
    tardiness), or the fastest (``edf-fastest``)."""

    rule: Literal["cheapest", "fastest"] = "cheapest"


class FifoPolicy:
    name = "fifo"
    Options = FixedConfigOptions
    blocking = True  # head-of-line blocking

    def __init__(self, options: FixedConfigOptions | None = None, *, seed: int = 0) -> None:
        self.options = options if options is not None else FixedConfigOptions()
        self.rule = self.options.rule
        self.seed = seed  # FIFO is deterministic; kept for the common factory signature

    def order(self, waiting: list[JobStatus]) -> list[JobStatus]:
        return sorted(waiting, key=lambda s: (s.job.release, s.job.id))

    def decide(self, state: SchedulerState) -> Decision:
        occ = state.occupancy
        assign: dict[str, Allocation | None] = {}
        waiting = [s for s in state.jobs if s.allocation is None]
        for status in self.order(waiting):
            ranked = ranked_configs(
                state.instance, status.job, status.remaining, state.time, self.rule
            )
            alloc = first_placement(occ, status.job, ranked)
            if alloc is None:
                if self.blocking:
                    break
                continue
            occ.place(status.job, alloc)
            assign[status.job.id] = alloc
        return Decision(assign)
