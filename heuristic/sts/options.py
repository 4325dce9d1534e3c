"""STS's options and its per-job adjustments (:mod:`heuristic.sts.policy`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from heuristic.core.options import CheckedOptions, hours, require
from heuristic.sts.contention import WORK_SHARE
from heuristic.sts.spare import SPARE
from heuristic.sts.timing import FINE_FRACTIONS, FRACTIONS, TimingRule

# the ledger's safety margin for jobs not yet arrived: a quarter of each type's large
# nodes beyond three hours from now (docs/model.md measures 0, 0.25 and 0.34)
RESERVE = 0.25
LEAD_HOURS = 3.0
# the timing options apply to jobs whose window is at least this many times their
# fastest worst-case run (docs/prices.md: the thesis family's jobs hold 3.8-20 such
# runs, the contended family's 1.0-2.9, and the options pay on the first only)
LOOSE_WINDOW = 3.0


@dataclass(frozen=True)
class StsTuning:
    """Per-job adjustments of STS's rules. STS decides one event at a time: it starts a
    job with slack at once on whatever type is free, and it cannot hold GPUs back for a
    job's later steps. These adjustments let a search over the whole (static) instance
    correct that:

    - ``hold[j]``: job j is not started before this time (hours);
    - ``types[j]``: the GPU types job j may use (absent: every type), e.g. to wait for
      an efficient type rather than start on a dear one;
    - ``urgency[j]``: hours added to job j's slack where jobs are ordered by urgency;
    - ``earlier[j]``: hours before its due date by which job j's profiles plan to finish
      (faster steps sooner, leaving GPUs free for later jobs).
    """

    hold: Mapping[str, float] = field(default_factory=dict)
    types: Mapping[str, frozenset[str]] = field(default_factory=dict)
    urgency: Mapping[str, float] = field(default_factory=dict)
    earlier: Mapping[str, float] = field(default_factory=dict)

    def key(self) -> tuple[tuple[object, ...], ...]:
        """A hashable form, equal for equal tunings."""
        return (
            tuple(sorted((j, h) for j, h in self.hold.items() if h > 0)),
            tuple(sorted((j, tuple(sorted(t))) for j, t in self.types.items())),
            tuple(sorted((j, u) for j, u in self.urgency.items() if u != 0)),
            tuple(sorted((j, e) for j, e in self.earlier.items() if e > 0)),
        )


@dataclass(frozen=True)
class StsOptions(CheckedOptions):
    """STS's options. ``lookahead``: book the chosen profiles' later steps in the ledger
    and rescue running jobs (off: the thesis's greedy STS, ``sts-greedy``);
    ``reserve``: the share of each type's large nodes the ledger keeps for jobs not yet
    arrived, beyond ``lead_hours`` from now; ``book_parts``: the ledger books a step
    that the job may stop inside in parts, each with the chance that the job runs past
    its first epoch (off, the default: the whole step with its first epoch's;
    :class:`heuristic.sts.ledger.Ledger`; measured, not kept: docs/contended.md, 'The
    ledger booking what a job may run'). Where capacity binds
    (:mod:`heuristic.sts.contention`): ``urgency``, the order jobs are served in
    (``"modified-slack"``, with ``work_share`` hours of work per hour of slack, scaled
    by the share of present jobs already late with ``scale_work`` (off: measured, not
    kept, docs/model.md), or the thesis's least
    ``"slack"``); ``backfill``, late waiting jobs take free GPUs;
    ``backfill_ahead`` (with ``backfill``), so do waiting jobs with at most the
    re-plan interval of a backfilled job as slack (the slot, a quarter hour unslotted;
    off: only jobs late whatever they run on, as until 2026-11-29);
    ``unstick``, a running job that no step of its profiles and nothing on time fits
    moves to the free configuration cheapest in the worst case, if cheaper than staying;
    ``pull``, a job runs now a last step whose class the ledger has booked full;
    ``pull_needed`` (with ``pull``), only a job that no configuration cheaper per epoch
    than that step can finish on time (off: every such job, as until 2026-11-27);
    ``pull_holds``: where the pulled job's later decisions plan to finish by the
    pulled step's end (``"always"``, as until 2026-12-02), or only under a flat bill
    (``"flat"``): under a series it is free at its next decision to wait for cheap
    hours again (docs/prices.md, 'A pulled job that keeps its timing');
    ``spare``, a job late whatever it runs on does not displace a running job of at
    least its weight that is on time by less than this many of its relaunch overheads,
    nor a late one unless their exchange pays for both relaunches
    (:mod:`heuristic.sts.spare`; 0: off).
    ``stay_put``: a running job given its own configuration on other GPUs goes back to
    its very GPUs where they are free once every job is placed (a job placed first may
    have taken them, then been moved on by a later rule); off, it relaunches there, as
    until 2026-11-29. Without relaunch overheads it changes nothing.
    ``capped``: where a job's profile collides with the booked ones on a large
    configuration (several nodes, or more than half of its type's largest node) and no
    hurried profile fits, its type's profile without large configurations is tried
    before the colliding one (:mod:`heuristic.sts.candidates`); off, as until
    2026-11-29.
    ``displace_cost``: what a placement that displaces running jobs costs them, weighed
    against the placing job's dearer profiles that leave them be
    (:mod:`heuristic.sts.displace`): ``"profile"``, the rise of each one's cheapest
    profile when it restarts from a pause (its relaunch's energy and hours);
    ``"wait"`` (the default since 2026-11-27), the same, but where the instance is
    slotted a displaced job whose configuration fits nowhere else restarts at the next
    slot; or ``"relaunch"``, the relaunch's energy alone (until 2026-11-27).
    ``timing``: under a price (or priced carbon) that changes with time, each profile
    also chooses when it runs (:mod:`heuristic.sts.timing`); off, STS is blind to the
    series (it is still billed by it). A flat bill changes nothing either way.
    ``fine_shares``: the timing tries seven shorter speed budgets (shares of the job's
    window, 1.0-0.25 by 0.125) rather than four; ``margin_recovers``: the margin it
    keeps free before the budget (a tenth of the time left) less what the profile's
    last step would gain relaunched on the fastest of the job's configurations with
    room beside the profiles booked for that run, ending at the budget
    (:class:`heuristic.sts.timing.TimingRule`; docs/prices.md). Both change nothing
    without a series, and are set aside after a decision where capacity bound.
    ``loose_window``: they time only the jobs whose window (release to due date) holds
    at least this many of their fastest worst-case runs (the relaunch, then every epoch
    on the fastest configuration); 0: every job.
    ``late_for_price``: the timing also weighs runs that end after the due date, where
    an hour the job would run costs more than an hour late (a price spike;
    docs/prices.md, 'Late for a price spike'); off, a timed run ends by the due date.
    ``power_states``: where empty nodes are powered off, best fit prefers, among the
    nodes that fit a placement equally well, one already on (then one booting, then one
    off; heuristic/core/power.py); off, STS is blind to power states (its nodes still
    boot). Where nodes are always on it changes nothing either way. ``plan_boots`` (with
    ``power_states``): a job placed where its work waits for a boot plans that wait
    (:mod:`heuristic.sts.boots`); off, it plans as if its work started now.
    ``idle_tail``: where nodes are always on and draw power of their own, the job ending
    last hurries when the hours it alone keeps the cluster powered cost more than its
    speed (:mod:`heuristic.sts.tail`); without idle power, or with nodes powered off
    when empty, it changes nothing either way.
    ``mixed_types``: beside each GPU type's profile, a profile over every type the job
    may use at once (:data:`heuristic.sts.hulls.MIXED`), whose slow first steps may run
    on one type and its fast last steps on another (each change pays the relaunch, as
    any change of configuration does); off, every profile keeps to one type, as the
    thesis's STS (docs/model.md, 'Profiles over every GPU type').
    ``shared_slots``: the profiles may run steps on a shared slot of a GPU; off, they
    run on whole GPUs only (backfill and the other rules off the profiles may still
    place a job on a shared slot). ``sts`` with ``weigh_sharing`` weighs a copy with it
    flipped by what-if runs (:mod:`validation.rollout_choice`; docs/contended.md,
    'Shared slots weighed by rollout')."""

    lookahead: bool = True
    reserve: float = RESERVE
    lead_hours: float = LEAD_HOURS
    book_parts: bool = False
    urgency: Literal["modified-slack", "slack"] = "modified-slack"
    work_share: float = WORK_SHARE
    scale_work: bool = False
    backfill: bool = True
    backfill_ahead: bool = True
    unstick: bool = True
    pull: bool = True
    pull_needed: bool = True
    pull_holds: Literal["always", "flat"] = "flat"
    timing: bool = True
    fine_shares: bool = True
    margin_recovers: bool = True
    loose_window: float = LOOSE_WINDOW
    late_for_price: bool = True
    power_states: bool = True
    plan_boots: bool = True
    idle_tail: bool = True
    spare: float = SPARE
    stay_put: bool = True
    capped: bool = False
    displace_cost: Literal["wait", "profile", "relaunch"] = "wait"
    mixed_types: bool = False
    shared_slots: bool = True

    @property
    def timing_rule(self) -> TimingRule:
        """How the timing searches (:class:`heuristic.sts.timing.TimingRule`)."""
        if not (self.fine_shares or self.margin_recovers):
            return TimingRule(late=self.late_for_price)
        shares = FINE_FRACTIONS if self.fine_shares else FRACTIONS
        return TimingRule(shares, self.margin_recovers, self.loose_window, self.late_for_price)

    def ranges(self) -> None:
        require(0 <= self.reserve < 1, "reserve", self.reserve, "must be in [0, 1)")
        require(
            math.isfinite(self.spare) and self.spare >= 0,
            "spare",
            self.spare,
            "must be a finite number of relaunch overheads, at least 0",
        )
        require(
            math.isfinite(self.work_share) and self.work_share >= 0,
            "work_share",
            self.work_share,
            "must be a finite number, at least 0",
        )
        require(
            math.isfinite(self.loose_window) and self.loose_window >= 0,
            "loose_window",
            self.loose_window,
            "must be a finite number of the job's fastest worst-case runs, at least 0",
        )
        hours("lead_hours", self.lead_hours)
