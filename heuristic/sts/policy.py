"""STS: the stochastic heuristic on a cluster (docs/model.md, 'STS').

At each decision point, for every present job and GPU type, the optimal single-job
profile (:func:`heuristic.sts.profile.exact_profile`) of its remaining epochs, conditional on
the progress made, within the time left to its due date. Jobs are served by urgency
(least slack: time to the due date minus the worst-case time on the fastest
configuration); each job's *current* profile step goes on the cheapest GPU type that can
host it now, best-fit. A job that cannot be placed waits. The policy asks to be woken
when a running job reaches the end of its current step, so that it moves to the next,
faster one.

Choices (documented in docs/model.md): every present job is placed afresh at each
decision in urgency order, so a less urgent running job pauses rather than block an
urgent job's faster step; a running job moves to another GPU type only if its profile
there is cheaper; slotted, a step shorter than what is left of the coming slot is
skipped for the next, faster one; the profile uses worst-case tardiness, as the thesis.

The ledger (:mod:`heuristic.sts.ledger`, on by default): each decision books the chosen
profiles' later steps, most urgent job first. A less urgent job takes, in order, a
profile whose later steps fit beside the booked ones, then the same type's profile
planned to finish earlier (by a quarter, a half, three quarters of the time left, or as
fast as it can) if that fits, then STS's choice as above. Under overload every job wants
the few large nodes for its last step at once; booking shows the collision while a job
can still hurry. A running job none of whose profiles can place its step then takes
the cheapest placeable configuration still meeting its due date in the worst case,
rather than pause (re-planned at the next slot). ``sts-greedy`` is the thesis's version
without either.

With relaunch overheads, running jobs hold their GPUs (:class:`heuristic.core.holds.Holds`),
and a job whose chosen step fits only on held GPUs takes instead the first profile that
fits elsewhere and costs at most the overheads the displaced jobs would pay again
(docs/benchmarks.md measures it on the overloaded ``medium``); a job late whatever it
runs on never takes those of a running job that the displacement would make late, nor
of a late one unless it wins their exchange (:mod:`heuristic.sts.spare`).

:class:`StsTuning` adjusts these rules per job (an earliest start, the GPU types it may
use, a shift of its urgency, a finish planned before the due date);
:mod:`heuristic.sts.search` finds adjustments for a static instance. The default, no
adjustment, is STS as above.
"""

from __future__ import annotations

import bisect
import copy
import functools
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Self

from heuristic.core.holds import Holds
from heuristic.core.occupancy import Allocation
from heuristic.core.policy import Decision, JobStatus, SchedulerState
from heuristic.core.urgency import slack
from heuristic.sts.boots import Boots, Settled, replan, settle
from heuristic.sts.candidates import Replayable, booked_first, candidates
from heuristic.sts.contention import backfill, late_share, pull_forward, unstick, urgency_key
from heuristic.sts.decision import Round
from heuristic.sts.displace import displaced, relaunch_energy, restart_loss
from heuristic.sts.hulls import HullTable, JobProfiles, TypeProfile
from heuristic.sts.kept import Kept, KeptBookings, KeptSpans
from heuristic.sts.lastjob import relieve
from heuristic.sts.ledger import Ledger
from heuristic.sts.options import StsOptions, StsTuning
from heuristic.sts.profile import Profile, Step
from heuristic.sts.spare import spared, standing
from heuristic.sts.steps import grid, keep, place, rescue, step_now
from heuristic.sts.tail import SOJOURNS, Arrivals, arrival_rate, charges_tail
from heuristic.sts.timing import TimingRule
from instances import EpochDistribution, Instance, Job

# a profile chosen for a job, the step it runs now, when that step ends, and whether it
# is the profile's last
_Booked = tuple[TypeProfile, Step, float, bool]


class StsPolicy:
    """STS with its ledger of booked profiles (:mod:`heuristic.sts.ledger`), re-planning
    every present job at every event (registered as ``sts-full``; ``sts`` re-plans only
    the jobs an event concerns while capacity does not bind: :mod:`heuristic.sts.incremental`);
    with ``lookahead = False``, the thesis's greedy STS (registered as ``sts-greedy``).
    ``tuning`` (not an option: a search's per-job result) adjusts its rules per job."""

    name = "sts"
    Options = StsOptions

    def __init__(
        self, options: StsOptions | None = None, *, seed: int = 0, tuning: StsTuning | None = None
    ) -> None:
        self.options = options if options is not None else StsOptions()
        self.seed = seed  # STS is deterministic
        self.tuning = tuning if tuning is not None else StsTuning()
        self._table: HullTable | None = None
        self._plain: HullTable | None = None  # with the plain timing rule
        # the last decision's wake-up per job, and the jobs it kept running as they were
        # because no profile's step could be placed (they ask for no wake-up)
        self.asks: dict[str, float] = {}
        self.stuck: set[str] = set()
        # jobs moved to their last step early (``pull``): when they now plan to finish
        self._finish_by: dict[str, float] = {}
        self.contended = False  # the last decision's (``Round.contended``)
        # every present job where a caller decides for some of them only (the share of
        # jobs late is the cluster's, not the subset's: :mod:`heuristic.sts.incremental`)
        self.population: tuple[JobStatus, ...] = ()
        # profiles a caller keeps from earlier decisions (job, profile, its distribution,
        # when it was chosen), booked in the ledger before any job is placed
        self.kept: tuple[Kept, ...] = ()
        self.kept_bookings: KeptBookings | None = None  # as booked in the last ledger
        self._kept_memo: dict[str, KeptSpans] = {}
        # the last decision's booked profile per job, and its distribution
        self.chosen: dict[str, tuple[Profile, EpochDistribution]] = {}
        self.ledger: Ledger | None = None  # the last decision's
        # under a changing price: hours each job has run so far, and when it was last
        # seen (its allocation since then is the one it holds at the next decision)
        self._ran: dict[str, float] = {}
        self._seen: dict[str, float] = {}
        # every job seen in this run and its release (the arrival rate, where the last
        # job's hours alone are priced: :mod:`heuristic.sts.tail`)
        self._released: dict[str, float] = {}
        self._releases: list[float] = []  # their releases, in order
        # the jobs present at the last call and its time; the sojourns of the jobs
        # completed since, and how long at least those lasted that completed unseen
        self._live: set[str] = set()
        self._live_at = -math.inf
        self._sojourns: list[float] = []
        self._lasted: list[float] = []
        # what displacing each running job costs it, once per decision (its status, hence
        # its profiles, does not change within one)
        self._restart_loss: dict[tuple[str, bool], float] = {}
        self._clock = -math.inf  # the last decision's time

    def fork(self) -> Self:
        """A copy that decides on from here without changing this one: its memory of
        the run (pulled jobs, hours run, releases seen) is its own; the profile table,
        a cache of pure results, is shared."""
        twin = copy.copy(self)
        for name, value in vars(self).items():
            if isinstance(value, (dict, list, set)):
                setattr(twin, name, copy.copy(value))
        return twin

    def arrivals(self, now: float) -> Arrivals:
        """Jobs still to come as the rule for the last job sees them: the rate of
        releases over the last hours (:func:`heuristic.sts.tail.arrival_rate`) and, where
        it is neither 0 nor infinite, the sojourns of the jobs seen (jobs are counted
        only where that rule is on: else none arrive)."""
        rate = arrival_rate(self._releases, now)
        if not 0 < rate < math.inf:
            return Arrivals(rate)
        running = [now - self._released[j] for j in self._live]
        done, lasted = self._sojourns[-SOJOURNS:], self._lasted[-SOJOURNS:]
        return Arrivals.seen(rate, done, running + lasted)

    @property
    def sojourns(self) -> tuple[list[float], list[float]]:
        """The sojourns seen in this run: of the jobs seen to complete, and how long at
        least those lasted that completed while no call saw it (:meth:`observe`)."""
        return list(self._sojourns), list(self._lasted)

    def observe(self, state: SchedulerState) -> bool:
        """Count every job seen (its release) and every job gone since the last call
        (its sojourn), where the rule for the last job is on; returns whether it is.
        Called at every event, also where no decision is made: while jobs are present a
        job's completion is an event, so one gone since the last call completed now,
        unless the cluster emptied in between."""
        if not (self.options.idle_tail and charges_tail(state.instance)):
            return False
        present = set()
        for s in self.population or state.jobs:
            present.add(s.job.id)
            if s.job.id not in self._released:
                self._released[s.job.id] = s.job.release
                bisect.insort(self._releases, s.job.release)
        # in release order: the last SOJOURNS are kept, so a set's order (the process's
        # hash seed) would choose which of the jobs gone at one event stay
        gone = sorted(self._live - present, key=lambda j: (self._released[j], j))
        if gone and len(gone) == len(self._live):
            # the cluster emptied since the last call (while jobs are present every
            # completion is an event with a call): they completed somewhere between,
            # so each counts as lasting at least until the last call (censored)
            self._lasted += [self._live_at - self._released[j] for j in gone]
        else:
            self._sojourns += [state.time - self._released[j] for j in gone]
        self._live, self._live_at = present, state.time
        return True

    def decide(self, state: SchedulerState) -> Decision:
        rnd = self._start(state)
        self._restart_loss.clear()
        tail = self.observe(state)
        rnd.boots = Boots.of(state, self.options.power_states and self.options.plan_boots)
        # Every present job is placed afresh in urgency order: a running job holds its
        # GPUs only if nothing more urgent needs them (else it pauses, progress kept).
        for status in state.jobs:
            if status.allocation is not None:
                rnd.occ.release(status.job.id)
        rnd.work_share = self._work_share(rnd, self.population or state.jobs)
        order = sorted(state.jobs, key=lambda s: (self._urgency(rnd, s), s.job.id))
        for status in order:
            self._decide_job(rnd, status)
        if self.options.backfill:
            for status in order:
                self._backfill(rnd, status)
        if self.options.pull and rnd.ledger is not None and len(order) > 1:
            for status in order:
                self._pull(rnd, status)
        # (a partial decision, with a population, does not see every job's plan)
        if tail and not self.population and rnd.ledger is not None and not rnd.contended:

            def types_of(job: Job) -> tuple[str, ...]:
                return self._types(job, rnd.all_types)

            for job_id in relieve(
                rnd, state.jobs, types_of, self._ran, self._releases, self.arrivals
            ):
                self._finish_by.pop(job_id, None)  # it now plans to finish sooner
        if rnd.holds is not None and self.options.stay_put:
            self._stay_put(rnd, state.jobs)
        self.asks, self.stuck, self.chosen = rnd.asks, rnd.stuck, rnd.chosen
        self.ledger = rnd.ledger
        self.contended = rnd.contended or any(
            rnd.assign.get(s.job.id, s.allocation) is None and s.job.id not in rnd.waiting
            for s in state.jobs
        )
        wake = min(rnd.asks.values(), default=math.inf)
        return Decision(rnd.assign, wake_at=None if math.isinf(wake) else wake)

    @staticmethod
    def _stay_put(rnd: Round, jobs: Sequence[JobStatus]) -> None:
        """A running job given its own configuration on other GPUs goes back to its
        very GPUs where they are free once every job is placed: a job placed first may
        have taken them and been moved on by a later rule (backfill, the pull, another
        step), and the move would relaunch it for nothing (``stay_put``)."""
        for status in jobs:
            cur, new = status.allocation, rnd.assign.get(status.job.id)
            if cur is None or new is None or new == cur or new.config != cur.config:
                continue
            rnd.occ.release(status.job.id)
            if rnd.occ.keep(status.job, cur, new.config):
                rnd.assign[status.job.id] = cur
            else:
                rnd.occ.place(status.job, new)

    def _work_share(self, rnd: Round, jobs: Sequence[JobStatus]) -> float:
        """The order's weight of work: ``work_share``, times the share of present jobs
        that are late with ``scale_work``."""
        if not self.options.scale_work or self.options.urgency != "modified-slack":
            return self.options.work_share
        return self.options.work_share * late_share(rnd.inst, jobs, rnd.now, rnd.table.fastest)

    def _urgency(self, rnd: Round, status: JobStatus) -> tuple[int, float]:
        """Smallest first: the job's slack (shifted by the tuning), or its weighted
        modified slack (:func:`heuristic.sts.contention.urgency_key`)."""
        fastest = rnd.table.fastest(status.job)
        sl = slack(rnd.inst, status, rnd.now, fastest) + self.tuning.urgency.get(status.job.id, 0.0)
        if self.options.urgency == "slack":
            return (0, sl)
        return urgency_key(rnd.inst, status, sl, fastest, rnd.work_share)

    def _backfill(self, rnd: Round, status: JobStatus) -> None:
        """A job left waiting that is late whatever it runs on, or would be after a
        re-plan interval idle, takes free GPUs; so does a running job kept where it runs
        because nothing on time fitted."""
        job_id = status.job.id
        if job_id in rnd.stuck and self.options.unstick:
            self._unstick(rnd, status)
            return
        if rnd.assign.get(job_id, status.allocation) is not None:
            return
        if rnd.now < self.tuning.hold.get(job_id, 0.0) - 1e-9:
            return
        # a job with at most the re-plan interval of a backfilled job as slack would be
        # late whatever it runs on if it idled that long (from 2026-11-29: the week's
        # windows -1.7%, the day's -2.3%, docs/model.md 'Backfill'); one waiting for
        # cheap hours is not backfilled
        sl = slack(rnd.inst, status, rnd.now, rnd.table.fastest(status.job))
        ahead = rnd.replan_interval if self.options.backfill_ahead else 0.0
        if sl > 0 and (sl > ahead or job_id in rnd.waiting):
            return
        if job_id in rnd.late_waits:
            # late by its own plan, waiting out dear hours (a price spike: only
            # ``late_for_price`` plans a wait that is late): backfilled, it would run in
            # them (a review, 2026-12-05: planned 9.52, realised 38.37)
            return
        types = self._types(status.job, rnd.all_types)
        self._off_profile(rnd, status, backfill(rnd.inst, rnd.occ, status, rnd.now, types))

    def _unstick(self, rnd: Round, status: JobStatus) -> None:
        """A running job kept where it runs although late: the free configuration
        cheapest in the worst case, if cheaper than staying (re-planned next slot)."""
        types = self._types(status.job, rnd.all_types)
        alloc = unstick(rnd.inst, rnd.occ, status, rnd.now, types)
        if alloc is not None:
            rnd.stuck.discard(status.job.id)
        self._off_profile(rnd, status, alloc)

    @staticmethod
    def _off_profile(rnd: Round, status: JobStatus, alloc: Allocation | None) -> None:
        """A job placed off its profiles (backfilled or unstuck), if it was: capacity
        binds, and it is re-planned at the next slot."""
        if alloc is None:
            return
        rnd.contended = True
        if alloc == status.allocation:
            rnd.assign.pop(status.job.id, None)
        else:
            rnd.assign[status.job.id] = alloc
        rnd.ask_next_slot(status.job.id)

    def _pull(self, rnd: Round, status: JobStatus) -> None:
        """A running job whose last step's class is booked full runs that step now."""
        job_id = status.job.id
        booked = rnd.chosen.get(job_id)
        current = rnd.assign.get(job_id, status.allocation)
        if booked is None or current is None or len(booked[0].steps) < 2:
            return
        if booked[0].runs:  # timed for cheap hours: its last step now would run dear
            return
        assert rnd.ledger is not None
        needed = self.options.pull_needed
        moved = pull_forward(
            rnd.inst, rnd.occ, rnd.ledger, status, current, booked, rnd.now, needed
        )
        if moved is None:
            return
        rnd.contended = True
        rnd.assign[job_id], finish = moved
        # under a series the pull's planned finish would hold the job to dear hours
        # later: it runs the pulled step now and re-plans freely (the contended prices
        # family: 11.9% off the bill against 8.4%, fewer missed due dates than
        # price-blind STS; docs/prices.md)
        if self.options.pull_holds == "always" or rnd.table.tariff is None:
            self._finish_by[job_id] = finish
        rnd.asks.pop(job_id, None)  # it runs its last step: no switch to wake for

    def _begin(self, state: SchedulerState) -> HullTable:
        """The instance's profile table; a new run (another instance, or the same one
        from an earlier time) forgets the last (the table holds pure results and stays
        for the same instance; the memory of a run does not)."""
        inst, now = state.instance, state.time
        table = self._table
        if table is None or table.instance is not inst:
            table = self._table = self._new_table(inst, self.options.timing_rule)
            self._forget_run()
        elif now < self._clock:
            self._forget_run()
        self._clock = now
        if self.contended and table.rule != table.rule.plain():
            # where capacity bound at the last decision of this run (in sts-incremental,
            # also a partial decision at this event, set aside for a full one) the
            # timing options are set aside: under contention they cost more
            # (docs/prices.md)
            if self._plain is None or self._plain.instance is not inst:
                self._plain = self._new_table(inst, table.rule.plain())
            table = self._plain
        if not self.options.shared_slots:
            return table.unshared()
        return table

    def _new_table(self, inst: Instance, rule: TimingRule) -> HullTable:
        return HullTable(
            inst, timing=self.options.timing, mixed=self.options.mixed_types, rule=rule
        )

    def begin(self, instance: Instance) -> None:
        """A new run forgets the last (the profile table, pure results, stays)."""
        self._forget_run()
        self._clock = -math.inf

    def _forget_run(self) -> None:
        """Drop the memory of a run (pulled jobs, hours run, kept spans, releases, and
        whether capacity bound at its last decision)."""
        self.contended = False
        self._finish_by.clear()
        self._ran.clear()
        self._seen.clear()
        self._kept_memo.clear()
        self._released.clear()
        self._releases.clear()
        self._live, self._live_at = set(), -math.inf
        self._sojourns.clear()
        self._lasted.clear()

    def _start(self, state: SchedulerState) -> Round:
        inst, now = state.instance, state.time
        table = self._begin(state)
        if table.tariff is not None:
            self._count_runs(state)
        if self._finish_by:
            present = {s.job.id for s in state.jobs}
            self._finish_by = {j: t for j, t in self._finish_by.items() if j in present}
        ledger = None
        self.kept_bookings = None
        if self.options.lookahead and state.jobs:
            last_due = max(s.job.due for s in state.jobs)
            last_due = max([last_due, *(kept[0].due for kept in self.kept)])
            horizon = last_due - now + 24.0
            grid = inst.slot or 0.25
            o = self.options
            ledger = Ledger(
                inst, now, max(horizon, 1.0), grid, o.reserve, o.lead_hours, o.book_parts
            )
            if self.kept:  # all at once, each one's spans memoised while it is kept
                self.kept_bookings = KeptBookings(ledger, self.kept, self._kept_memo)
                self._kept_memo = self.kept_bookings.memo
                self.kept_bookings.book()
        if self.options.power_states:
            # best fit breaks its ties by the nodes' power states: set before the holds
            # copy the occupancy, so that every search of this decision sees them
            state.occupancy.power = state.power
        rnd = Round(
            inst,
            now,
            state.occupancy,
            table,
            tuple(g.name for g in inst.gpu_types),
            Holds(state.occupancy, state.jobs) if inst.has_relaunch else None,
            ledger,
        )
        if rnd.holds is not None and self.options.spare > 0:
            rnd.standing = standing(inst, state.jobs, now, table.fastest, self.options.spare)
        return rnd

    def _count_runs(self, state: SchedulerState) -> None:
        """Add the hours each job ran since it was last seen (timed profiles plan their
        run hours from the release: :func:`heuristic.sts.timing.timed`)."""
        now = state.time
        for s in state.jobs:
            seen = self._seen.get(s.job.id)
            if seen is not None and s.allocation is not None:
                self._ran[s.job.id] = self._ran.get(s.job.id, 0.0) + now - seen
            self._seen[s.job.id] = now

    def _decide_job(self, rnd: Round, status: JobStatus) -> None:
        """Place one job (the more urgent ones are placed already)."""
        job_id = status.job.id
        if rnd.holds is not None:
            rnd.holds.drop(job_id)
        held = self.tuning.hold.get(job_id, 0.0)
        if status.allocation is None and rnd.now < held - 1e-9:
            rnd.asks[job_id] = held
            return
        types = self._types(status.job, rnd.all_types)
        earlier = self.tuning.earlier.get(job_id, 0.0)
        if job_id in self._finish_by:  # pulled forward: it plans to finish by then
            earlier = max(earlier, status.job.due - self._finish_by[job_id])
        ran = self._ran.get(job_id, 0.0)
        # under a tariff, timed profiles run only where they fit beside the booked ones
        cands: Iterable[TypeProfile] = candidates(
            rnd.inst, status, rnd.now, types, rnd.table, earlier, ran, rnd.ledger
        )
        dist = None
        if rnd.ledger is not None:
            dist = status.job.distribution.conditional(status.progress)
            cands = booked_first(
                rnd.inst,
                status,
                rnd.now,
                cands,
                rnd.ledger,
                earlier,
                dist,
                rnd.table,
                ran,
                self.options.capped,
            )
        if rnd.holds is not None:
            cands = Replayable(cands)  # walked again where a placement displaces
        alloc, booked = self._first_fit(rnd, status, cands, types)
        if booked is not None and alloc is not None and rnd.holds is not None:
            alloc, booked = self._spare_displaced(rnd, status, cands, types, alloc, booked)
        if booked is not None and alloc is None:  # its profile waits for cheaper hours
            rnd.wait(job_id, booked[0].profile)
            rnd.asks[job_id] = grid(rnd.inst, rnd.now, booked[2])
            if rnd.ledger is not None and dist is not None:
                rnd.ledger.book(status.job, booked[0].profile, dist)
                rnd.chosen[job_id] = (booked[0].profile, dist)
        if booked is not None and alloc is not None:
            plan, step, step_end, last = booked
            if not last or alloc.config != step.config:
                # wake when this step's epochs are done (on the grid, not after)
                rnd.asks[job_id] = grid(rnd.inst, rnd.now, step_end)
            if rnd.ledger is not None and dist is not None:
                rnd.ledger.book(status.job, plan.profile, dist)
                rnd.chosen[job_id] = (plan.profile, dist)
        if alloc is None and status.allocation is not None and job_id not in rnd.waiting:
            alloc = self._not_placed(rnd, status, types)
        if rnd.holds is not None and alloc is not None:
            rnd.holds.take(status.job, alloc)
        if alloc != status.allocation:
            rnd.assign[job_id] = alloc

    def _first_fit(
        self,
        rnd: Round,
        status: JobStatus,
        cands: Iterable[TypeProfile],
        types: tuple[str, ...],
        limit: float = math.inf,
        displace: bool = True,
    ) -> tuple[Allocation | None, _Booked | None]:
        """The first candidate profile (costing at most ``limit``) whose current step
        can be placed now, and where; a profile that waits for cheaper hours needs no
        place now (``None``, with the time it starts as its step's end). A placement
        that waits for a boot is settled by :func:`heuristic.sts.boots.settle`: one whose
        wait costs the job is set aside while a later candidate costs less."""
        aside: Settled | None = None
        for plan in cands:
            cost = plan.profile.objective
            if cost > limit or (aside is not None and cost >= aside.cost):
                continue
            if plan.profile.wait > 0:
                return None, (plan, plan.profile.first, rnd.now + plan.profile.wait, False)
            step, step_end, last = step_now(rnd.inst, status.job, plan.profile, rnd.now)
            keep_off = None
            if rnd.standing is not None:  # asked only where the step would displace a job
                fastest = rnd.table.fastest(status.job)
                args = (rnd.inst, status, step.config, rnd.now, fastest, rnd.standing)
                keep_off = functools.partial(spared, *args)
            alloc = place(rnd.occ, status, step.config, types, rnd.holds, displace, keep_off)
            if alloc is None:
                continue
            booked = (plan, step, step_end, last)
            if rnd.boots is None or rnd.boots.wait(status, alloc) <= 0:
                return alloc, booked
            found = self._settle(rnd, status, (alloc, booked), types, displace)
            if found.final:
                if found.alloc is not None:
                    rnd.occ.place(status.job, found.alloc)
                return found.alloc, found.booked
            if found.cost <= limit and (aside is None or found.cost < aside.cost):
                aside = found
        if aside is None:
            return None, None
        assert aside.alloc is not None  # (only a placement is set aside)
        rnd.occ.place(status.job, aside.alloc)
        return aside.alloc, aside.booked

    def _settle(
        self,
        rnd: Round,
        status: JobStatus,
        found: tuple[Allocation, _Booked],
        types: tuple[str, ...],
        displace: bool,
    ) -> Settled:
        """:func:`heuristic.sts.boots.settle` with this job's re-planning."""
        assert rnd.boots is not None
        ran = self._ran.get(status.job.id, 0.0)

        def replanned(plan: TypeProfile, wait: float) -> TypeProfile:
            return replan(rnd.inst, status, rnd.now, rnd.table, plan, wait, ran, rnd.ledger)

        return settle(rnd.boots, rnd.occ, rnd.holds, status, found, types, displace, replanned)

    def _spare_displaced(
        self,
        rnd: Round,
        status: JobStatus,
        cands: Iterable[TypeProfile],
        types: tuple[str, ...],
        alloc: Allocation,
        booked: _Booked,
    ) -> tuple[Allocation, _Booked]:
        """A placement that displaces running jobs costs them their relaunch again
        (:mod:`heuristic.sts.displace`): a profile that leaves them be is taken if it
        costs no more than that (a job that keeps its GPUs displaces no one)."""
        assert rnd.holds is not None
        if alloc == status.allocation:
            return alloc, booked
        others = displaced(alloc, rnd.holds, status.job.id)
        if not others:
            return alloc, booked
        if self.options.displace_cost in ("profile", "wait"):
            # the restart's hours as well as its energy: a relaunch that costs no energy
            # (a zero price) may still make the job late; only one that takes no time
            # costs nothing. A loss of 0 still prefers a profile that displaces no one.
            if not any(rnd.inst.relaunch(j) > 0 for j in others):
                return alloc, booked
            lost = sum(self._displaced_loss(rnd, j) for j in others)
        else:
            lost = relaunch_energy(rnd.inst, rnd.holds, others)
            if lost <= 0:
                return alloc, booked
        rnd.occ.release(status.job.id)
        limit = booked[0].profile.objective + lost
        other, kept = self._first_fit(rnd, status, cands, types, limit, displace=False)
        if other is not None and kept is not None:
            return other, kept
        rnd.occ.place(status.job, alloc)
        return alloc, booked

    def _displaced_loss(self, rnd: Round, job_id: str) -> float:
        assert rnd.holds is not None  # (only running jobs are displaced)
        status = rnd.holds.status(job_id)
        # ``wait``: where decisions are slotted, a displaced job whose configuration fits
        # nowhere else now restarts at the next slot at the earliest (unslotted it may
        # restart at the next event: priced from now, as ``profile``; docs/model.md)
        slot = rnd.inst.slot
        later = None
        if self.options.displace_cost == "wait" and slot is not None:
            later = None if self._elsewhere(rnd, status) else rnd.now + slot
        waits = later is not None
        found = self._restart_loss.get((job_id, waits))
        if found is None:
            restart = self._cheapest(rnd, later) if waits else None
            found = restart_loss(status, self._cheapest(rnd), restart)
            self._restart_loss[job_id, waits] = found
        return found

    @staticmethod
    def _elsewhere(rnd: Round, status: JobStatus) -> bool:
        """Whether a running job's configuration fits now on GPUs no one else holds."""
        assert rnd.holds is not None and status.allocation is not None
        return rnd.holds.find(rnd.occ, status.job, status.allocation.config) is not None

    def _cheapest(self, rnd: Round, at: float | None = None) -> Callable[[JobStatus], float]:
        """The expected cost of a job's cheapest profile from its status, now or
        from ``at``."""
        start = rnd.now if at is None else at

        def cost(status: JobStatus) -> float:
            types = self._types(status.job, rnd.all_types)
            ran = self._ran.get(status.job.id, 0.0)
            jp = JobProfiles(rnd.inst, status, start, types, rnd.table, 0.0, ran)
            return next(iter(jp.in_order())).profile.objective

        return cost

    def _not_placed(
        self, rnd: Round, status: JobStatus, types: tuple[str, ...]
    ) -> Allocation | None:
        """A running job none of whose profiles' steps fits: with the look-ahead it runs
        on time if it can (the next slot re-plans); else it keeps its GPUs if they are
        still free (marked stuck), else it pauses (``None``)."""
        job_id = status.job.id
        alloc = None
        if self.options.lookahead:
            alloc = rescue(rnd.inst, rnd.occ, status, rnd.now, types)
            if alloc is not None:
                rnd.contended = True
                rnd.ask_next_slot(job_id)
                return alloc
        alloc = keep(rnd.occ, status)
        if alloc is not None:
            rnd.stuck.add(job_id)
        return alloc

    def _types(self, job: Job, all_types: tuple[str, ...]) -> tuple[str, ...]:
        allowed = self.tuning.types.get(job.id)
        return all_types if allowed is None else tuple(t for t in all_types if t in allowed)
