"""One STS decision's working state (:mod:`heuristic.sts.policy`): what the jobs placed so
far have taken, booked and asked, shared by the rules that act after every job is
placed (:mod:`heuristic.sts.lastjob`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from heuristic.core.holds import Holds
from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.sts.boots import Boots
from heuristic.sts.hulls import HullTable
from heuristic.sts.ledger import Ledger
from heuristic.sts.profile import Profile
from heuristic.sts.spare import Standing
from heuristic.sts.steps import grid
from instances import EpochDistribution, Instance


@dataclass
class Round:
    """One decision's working state: what the jobs placed so far have taken and asked."""

    inst: Instance
    now: float
    occ: Occupancy
    table: HullTable
    all_types: tuple[str, ...]
    holds: Holds | None
    ledger: Ledger | None
    assign: dict[str, Allocation | None] = field(default_factory=dict)
    # when each job asks to be woken (its step's end, its hold, the next slot)
    asks: dict[str, float] = field(default_factory=dict)
    stuck: set[str] = field(default_factory=set)  # kept where they are: no step fit
    # each booked job's profile and the distribution it was booked with
    chosen: dict[str, tuple[Profile, EpochDistribution]] = field(default_factory=dict)
    # capacity bound at this decision: a job was rescued, backfilled, pulled forward or
    # left waiting
    contended: bool = False
    # hours of remaining work per hour of slack in the order (``StsOptions.work_share``,
    # scaled by the share of jobs late with ``scale_work``)
    work_share: float = 0.0
    # jobs that wait for cheaper hours by their profile's choice (not for capacity)
    waiting: set[str] = field(default_factory=set)
    # of those, the ones whose profile is late by its own plan (``late_for_price``)
    late_waits: set[str] = field(default_factory=set)
    # where nodes may be off and STS plans their boots (:mod:`heuristic.sts.boots`)
    boots: Boots | None = None
    # the running jobs a late job may spare (:mod:`heuristic.sts.spare`; None: no rule)
    standing: Standing | None = None

    @property
    def replan_interval(self) -> float:
        """Hours until a job re-planned at the next slot is decided again: the slot, a
        quarter hour unslotted."""
        return self.inst.slot or 0.25

    def wait(self, job_id: str, profile: Profile) -> None:
        """``job_id`` waits for cheaper hours by ``profile``'s choice."""
        self.waiting.add(job_id)
        if profile.tardiness_cost > 0:
            self.late_waits.add(job_id)
        else:
            self.late_waits.discard(job_id)

    def ask_next_slot(self, job_id: str) -> None:
        """Wake ``job_id`` at the next slot (a quarter hour unslotted) to re-plan it."""
        next_slot = grid(self.inst, self.now, self.now + self.replan_interval)
        self.asks[job_id] = min(self.asks.get(job_id, math.inf), next_slot)
