"""``sts``: STS that re-plans only the jobs an event concerns while capacity does not bind
(docs/model.md, 'STS re-planning only what an event concerns').

STS's full decision (:mod:`heuristic.sts.policy`, registered as ``sts-full``) re-plans
every present job at every event, yet a decision
changes few allocations: 3.1 of 298.7 present jobs on the 1,000 x 100 synthetic run,
0.54 of 21.4 on the Philly week's first day (docs/benchmarks.md). This policy keeps
the others as they run and re-plans, in STS's urgency order, only the *dirty* jobs:

- jobs waiting for GPUs (arrivals among them);
- running jobs whose wake-up has come (the end of their current step, a rescue's slot);
- running jobs that passed a stopping point since they were planned (their conditional
  distribution, hence their profile, changed);
- running jobs on a GPU type dearer per epoch than their cheapest (STS moves them as
  soon as a cheaper type frees up), and those STS kept where they were because no step
  of their profiles could be placed;
- jobs it has not planned yet.

The clean jobs keep their GPUs, so the dirty ones are placed around them. Where that
leaves a dirty job without GPUs (a waiting job that finds none, a running one that
would pause), the event is decided by plain STS over every job instead, so that an
urgent job may still take GPUs from less urgent ones. So is every event while capacity
binds (:mod:`heuristic.sts.contention`): when the last decision left a job waiting,
rescued, backfilled or pulled one forward; and every event with fewer than
``full_below`` (32) jobs present, where a full decision takes milliseconds.
STS's order and those rules weigh every job against every other, which an incremental
decision cannot (without them it cost 1.12 times STS on 100 contended real-data windows,
up to 1.83: docs/model.md). On a larger cluster contention comes and goes, so no
partial decision is made within ``calm_hours`` (2) of one that found it binding, a
partial decision books the clean jobs' earlier profiles in its ledger before placing
the dirty ones, and one after which a clean job's last step finds its class booked
full is not kept (docs/model.md measures each on 128 GPUs).

What differs from STS, by design: a clean job (on its cheapest type) does not move
until its own next wake-up; the ledger of an incremental decision books the clean
jobs' earlier profiles (shifted to now by whole bins) before the dirty jobs' new ones,
not all in urgency order; and a kept profile is STS's earlier plan, not a re-solve from the
current progress (the same plan mathematically while the job runs it, not in floating
point). docs/benchmarks.md measures the cost of these against STS.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from heuristic.core.options import hours, require
from heuristic.core.policy import Decision, JobStatus, SchedulerState
from heuristic.sts.kept import Kept
from heuristic.sts.options import StsOptions
from heuristic.sts.policy import StsPolicy
from instances.distribution import EpochDistribution, stop_tolerance

EPS = 1e-9
# below this many jobs present a full decision takes a few milliseconds: the partial one
# saves nothing worth deciding otherwise than STS. 32 and 64 give STS's figures on 100
# real-data windows of 30-70 jobs and the contended 32-GPU runs (16 does not: up to
# 1.28 x); 32 halves the Philly week's replay (22.6 s of CPU against 45.3 s)
FULL_BELOW = 32
CALM_HOURS = 2.0


@dataclass(frozen=True)
class IncrementalOptions(StsOptions):
    """STS's options, ``full_below`` (with fewer jobs present, every event is decided
    in full, as STS) and ``calm_hours`` (no partial decision within so many hours of a
    decision that found capacity binding)."""

    full_below: int = FULL_BELOW
    calm_hours: float = CALM_HOURS

    def ranges(self) -> None:
        super().ranges()
        require(self.full_below >= 0, "full_below", self.full_below, "must be at least 0")
        hours("calm_hours", self.calm_hours)


class IncrementalStsPolicy(StsPolicy):
    name = "sts"
    Options = IncrementalOptions

    def __init__(self, options: StsOptions | None = None, *, seed: int = 0) -> None:
        opts = options if options is not None else IncrementalOptions()
        super().__init__(opts, seed=seed)
        # STS's own options (no ``full_below``) take the default
        self.full_below = getattr(opts, "full_below", FULL_BELOW)
        self.calm_hours = getattr(opts, "calm_hours", CALM_HOURS)
        self._bound_at = -math.inf  # when a decision last found capacity binding
        self._due: dict[str, float] = {}  # job -> when its plan asked to be re-planned
        # job -> the end of its progress's block when planned, and that stop's tolerance:
        # past both, the job passed a stopping point (``block_of`` read once, not at
        # every event for every job)
        self._edge: dict[str, tuple[float, float]] = {}
        # jobs re-planned at every event, as STS would: those running on a GPU type
        # dearer per epoch than their cheapest (STS moves them as soon as a cheaper type
        # frees up), and those STS kept as they were because no step of theirs fit
        self._restless: set[str] = set()
        # job -> the profile its last planning booked, its distribution, and when
        self._booked: dict[str, Kept] = {}
        self.full_decisions = 0  # events decided by plain STS (for the benchmark)

    def _forget_run(self) -> None:
        super()._forget_run()
        self._due.clear()
        self._edge.clear()
        self._restless.clear()
        self._booked.clear()
        self._bound_at = -math.inf
        self.full_decisions = 0

    def decide(self, state: SchedulerState) -> Decision:
        self._begin(state)  # a new run forgets the last (StsPolicy's memory and this)
        self.observe(state)  # at every event: the completions the rule's sojourns count
        present = {s.job.id for s in state.jobs}
        for gone in [j for j in self._due if j not in present]:
            del self._due[gone], self._edge[gone]
            self._booked.pop(gone, None)
            self._restless.discard(gone)
        in_full = self._in_full(state)
        dirty = tuple(s for s in state.jobs if self._dirty(s, state.time))
        if not dirty and not in_full:
            return Decision({}, wake_at=self._wake())
        if len(dirty) < len(state.jobs) and not in_full:
            spare = state.occupancy.copy()  # plain STS's, should the dirty jobs not fit
            self.population = state.jobs  # the order's share of late jobs is everyone's
            # the clean jobs' later steps are booked as planned, so that the dirty ones
            # see the collisions a full decision would (and its contention)
            ids = {s.job.id for s in dirty}
            kept = tuple(b for j, b in self._booked.items() if j not in ids)
            self.kept = kept
            try:
                part = super().decide(replace(state, jobs=dirty, occupancy=spare))
            finally:
                self.population, self.kept = (), ()
            # a partial decision that finds capacity binding is not kept either, nor one
            # after which a kept job's last step is booked full (STS would pull it)
            binds = self.contended or self._kept_full()
            if not binds and all(self._runs(s, part) for s in dirty):
                self._remember(dirty, part, state.time)
                return Decision(part.assign, wake_at=self._wake())
        self.full_decisions += 1
        whole = super().decide(state)
        if self.contended:
            self._bound_at = state.time
        self._remember(state.jobs, whole, state.time)
        return Decision(whole.assign, wake_at=self._wake())

    def calm(self, time: float) -> bool:
        """Whether the cluster is calm at ``time``: capacity bound neither at the last
        decision nor at any decided in full within ``calm_hours`` before it (where
        :meth:`_in_full` lets a decision be partial, unless few jobs are present)."""
        return not self.contended and time >= self._bound_at + self.calm_hours - EPS

    def _in_full(self, state: SchedulerState) -> bool:
        """Decide in full: few jobs are present (``full_below``), or capacity bound at the
        last decision (``StsPolicy.contended``: a job left waiting, rescued, backfilled
        or pulled forward). STS's order and its rules for a contended cluster weigh
        every job against the others, which a partial decision cannot."""
        return len(state.jobs) < self.full_below or not self.calm(state.time)

    def _dirty(self, s: JobStatus, now: float) -> bool:
        job_id = s.job.id
        if s.allocation is None or job_id not in self._due or job_id in self._restless:
            return True
        if now >= self._due[job_id] - EPS:
            return True
        # ``block_of`` moves past block b exactly when progress - e_b > tol(e_b)
        stop, tol = self._edge[job_id]
        return s.progress - stop > tol

    def _kept_full(self) -> bool:
        """Whether a kept job of several steps (not timed: STS's pull rule) finds its
        last step's class booked full after the partial decision: STS would weigh
        pulling it forward."""
        booked = self.kept_bookings
        if booked is None or not self.options.pull:
            return False
        return booked.last_step_full()

    @staticmethod
    def _runs(s: JobStatus, decision: Decision) -> bool:
        """Whether the job has GPUs after ``decision`` (a tuning's hold aside)."""
        alloc = decision.assign.get(s.job.id, s.allocation)
        return alloc is not None

    def _remember(self, planned: tuple[JobStatus, ...], decision: Decision, now: float) -> None:
        """The planned jobs' wake-ups (STS's ``asks``), stopping blocks, booked profiles,
        and whether each runs on a type of its cheapest cost per epoch."""
        table = self._table
        assert table is not None  # set by StsPolicy.decide
        for s in planned:
            job = s.job
            self._due[job.id] = self.asks.get(job.id, math.inf)
            self._edge[job.id] = _edge(job.distribution, s.progress)
            chosen = self.chosen.get(job.id)
            if chosen is None:
                self._booked.pop(job.id, None)
            else:
                self._booked[job.id] = (job, *chosen, now)
            alloc = decision.assign.get(job.id, s.allocation)
            self._restless.discard(job.id)
            if job.id in self.stuck:
                self._restless.add(job.id)
            elif alloc is not None:
                own = table.hull(job, alloc.config.gpu_type)
                if not own or own[0].cost > table.cheapest_cost(job):
                    self._restless.add(job.id)

    def _wake(self) -> float | None:
        wake = min(self._due.values(), default=math.inf)
        return None if math.isinf(wake) else wake


def _edge(dist: EpochDistribution, progress: float) -> tuple[float, float]:
    """The stop ending the block of ``progress`` and its tolerance (the last block never
    ends: infinity)."""
    b = dist.block_of(progress)
    if b == len(dist.stops) - 1:
        return math.inf, 0.0
    return dist.stops[b], stop_tolerance(dist.stops[b])
