"""STS: the stochastic heuristic on a cluster (MODEL.md section 4).

At each decision point, for every present job and GPU type, the optimal single-job
profile (:func:`heuristic.profile.exact_profile`) of its remaining epochs, conditional on
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

The ledger (:mod:`heuristic.ledger`, on by default): each decision books the chosen
profiles' later steps, most urgent job first. A less urgent job takes, in order, a
profile whose later steps fit beside the booked ones, then the same type's profile
planned to finish earlier (by a quarter, a half, three quarters of the time left, or as
fast as it can) if that fits, then STS's choice as above. Under overload every job wants
the few large nodes for its last step at once; booking shows the collision while a job
can still hurry. A running job none of whose profiles can place its step then takes
the cheapest placeable configuration still meeting its due date in the worst case,
rather than pause (re-planned at the next slot). ``sts-greedy`` is the thesis's version
without either.

With relaunch overheads, running jobs hold their GPUs (:class:`heuristic.holds.Holds`),
and a job whose chosen step fits only on held GPUs takes instead the first profile that
fits elsewhere and costs at most the overheads the displaced jobs would pay again
(docs/benchmarks.md measures it on the overloaded ``medium``).

:class:`StsTuning` adjusts these rules per job (an earliest start, the GPU types it may
use, a shift of its urgency, a finish planned before the due date);
:mod:`heuristic.sts_search` finds adjustments for a static instance. The default, no
adjustment, is STS as above.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from heuristic.choice import first_placement
from heuristic.holds import Holds
from heuristic.ledger import Ledger
from heuristic.occupancy import Allocation, Occupancy
from heuristic.policy import Decision, JobStatus, SchedulerState
from heuristic.profile import Option, Profile, Step, exact_profile, lower_hull
from heuristic.relaunch import ChainStats, Relaunch, chain_stats, chains, relaunch_profile
from instances import Config, EpochDistribution, Instance, Job

# with the ledger: how much of the time left a profile whose later steps collide with
# more urgent jobs' may plan to finish early, tried in order (1.0: as fast as it can)
EARLIER_FRACTIONS = (0.25, 0.5, 0.75, 1.0)
# the ledger's safety margin for jobs not yet arrived: a quarter of each type's large
# nodes beyond three hours from now (docs/model.md measures 0, 0.25 and 0.34)
RESERVE = 0.25
LEAD_HOURS = 3.0


def slot_budget(instance: Instance, finish: float, now: float) -> float:
    """Hours from ``now`` to ``finish``; slotted, down to a slot end (completions count
    at slot ends, so a plan must end at one)."""
    budget = finish - now
    if instance.slot is not None:
        budget = math.floor(budget / instance.slot + 1e-9) * instance.slot
    return budget


def cheapest_first(instance: Instance, job: Job, keep: Callable[[Config], bool]) -> list[Config]:
    """The job's allowed configurations that ``keep`` accepts, cheapest per epoch first."""
    return sorted(
        (c for c in instance.allowed_configs(job) if keep(c)),
        key=lambda c: (instance.epoch_cost(job, c), c),
    )


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


class HullTable:
    """Each job's options per GPU type, reduced to their lower convex hull, computed
    once per instance (and each job's fastest epoch time): they never change, and STS
    asks for them at every decision. Where the job pays a relaunch overhead, also the
    configuration chains its profiles may use (:func:`heuristic.relaunch.chains`)."""

    def __init__(self, instance: Instance) -> None:
        self.instance = instance
        self._hulls: dict[tuple[str, str], list[Option]] = {}
        self._hourly: dict[str, dict[Config, float]] = {}
        self._chains: dict[
            tuple[str, str], tuple[list[Option], list[list[Option]], list[ChainStats]]
        ] = {}
        self._fastest: dict[str, float] = {}
        self._cheapest: dict[str, float] = {}

    def hull(self, job: Job, gpu_type: str) -> list[Option]:
        key = (job.id, gpu_type)
        if key not in self._hulls:
            self._hulls[key] = lower_hull(options(self.instance, job, gpu_type))
        return self._hulls[key]

    def cheapest_cost(self, job: Job) -> float:
        """The job's least cost per epoch, over every GPU type it can use."""
        if job.id not in self._cheapest:
            inst = self.instance
            self._cheapest[job.id] = min(inst.epoch_cost(job, c) for c in inst.allowed_configs(job))
        return self._cheapest[job.id]

    def chains(
        self, job: Job, gpu_type: str
    ) -> tuple[list[Option], list[list[Option]], list[ChainStats]]:
        """The job's options on ``gpu_type``, the chains its profiles may use, and what
        their floors need."""
        key = (job.id, gpu_type)
        if key not in self._chains:
            opts = options(self.instance, job, gpu_type)
            found = chains(opts)
            hourly = self.hourly(job)
            self._chains[key] = (opts, found, [chain_stats(c, hourly) for c in found])
        return self._chains[key]

    def hourly(self, job: Job) -> dict[Config, float]:
        """:func:`hourly_costs` of the job, computed once."""
        if job.id not in self._hourly:
            self._hourly[job.id] = hourly_costs(self.instance, job)
        return self._hourly[job.id]

    def fastest(self, job: Job) -> float:
        """Hours per epoch on the job's fastest allowed configuration."""
        if job.id not in self._fastest:
            inst = self.instance
            self._fastest[job.id] = min(inst.epoch_time(job, c) for c in inst.allowed_configs(job))
        return self._fastest[job.id]


def hourly_costs(instance: Instance, job: Job) -> dict[Config, float]:
    """The energy cost of an hour on each of the job's configurations (what an hour of
    relaunch overhead costs there)."""
    return {
        c: instance.energy_price * instance.power_w(c) / 1000.0
        for c in instance.allowed_configs(job)
    }


class JobProfiles:
    """One job's profiles at one decision, solved lazily per GPU type.

    A type's profile costs at least its *bound*: the expected remaining epochs at the
    type's cheapest cost per epoch. A type is solved only when its bound could beat a
    profile already known; the order and the profiles are those of solving every type.
    """

    def __init__(
        self,
        instance: Instance,
        status: JobStatus,
        now: float,
        types: tuple[str, ...],
        table: HullTable,
        earlier: float = 0.0,
    ) -> None:
        self.table = table
        job = self.job = status.job
        self.dist = job.distribution.conditional(status.progress)
        self.budget = slot_budget(instance, job.due - earlier, now)
        self.omega = instance.tardiness_weight(job.id)
        self.relaunch: Relaunch | None = None
        if instance.relaunch(job) > 0 or status.overhead_left > 0:
            current = status.allocation
            self.relaunch = Relaunch(
                instance.relaunch(job),
                table.hourly(job),
                current.config if current is not None else None,
                status.overhead_left,
            )
        mean = self.dist.mean()
        self.bounds = sorted(
            (hull[0].cost * mean, t) for t in types if (hull := self.table.hull(job, t))
        )

    def solve(self, gpu_type: str) -> TypeProfile:
        hull = self.table.hull(self.job, gpu_type)
        if self.relaunch is not None:
            opts, chained, stats = self.table.chains(self.job, gpu_type)
            return TypeProfile(
                gpu_type,
                relaunch_profile(
                    opts, self.dist, self.budget, self.omega, self.relaunch, chained, stats
                ),
            )
        return TypeProfile(
            gpu_type, exact_profile(hull, self.dist, self.budget, self.omega, on_hull=True)
        )

    def in_order(self) -> Iterator[TypeProfile]:
        """Profiles cheapest first (ties by type name), each solved when first needed."""
        pending = list(self.bounds)
        known: list[tuple[float, str, TypeProfile]] = []
        while pending or known:
            while pending and (not known or known[0][0] >= pending[0][0]):
                p = self.solve(pending.pop(0)[1])
                heapq.heappush(known, (p.profile.objective, p.gpu_type, p))
            yield heapq.heappop(known)[2]

    def cheaper_than(self, limit: float, skip: str) -> list[TypeProfile]:
        """The profiles, other than on ``skip``, that cost less than ``limit``."""
        found = [self.solve(t) for b, t in self.bounds if t != skip and b < limit]
        return sorted(
            (p for p in found if p.profile.objective < limit),
            key=lambda p: (p.profile.objective, p.gpu_type),
        )


def slack(
    instance: Instance, status: JobStatus, now: float, table: HullTable | None = None
) -> float:
    """Hours to the due date minus the worst-case time on the fastest configuration."""
    table = table if table is not None and table.instance is instance else HullTable(instance)
    return status.job.due - now - status.remaining * table.fastest(status.job)


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


class _Replayable:
    """An iterable that can be walked again, still computing its items lazily (the
    candidates solve their profiles on demand)."""

    def __init__(self, items: Iterable[TypeProfile]) -> None:
        self._seen: list[TypeProfile] = []
        self._rest = iter(items)

    def __iter__(self) -> Iterator[TypeProfile]:
        yield from self._seen
        for item in self._rest:
            self._seen.append(item)
            yield item


class StsPolicy:
    """STS with its ledger of booked profiles (:mod:`heuristic.ledger`); with
    ``lookahead=False``, the thesis's greedy STS (registered as ``sts-greedy``)."""

    name = "sts"

    def __init__(
        self,
        seed: int = 0,
        tuning: StsTuning | None = None,
        lookahead: bool = True,
        reserve: float = RESERVE,
        lead: float = LEAD_HOURS,
    ) -> None:
        self.seed = seed  # STS is deterministic
        self.tuning = tuning if tuning is not None else StsTuning()
        self.lookahead = lookahead
        self.reserve, self.lead = reserve, lead
        self._table: HullTable | None = None
        # the last decision's wake-up per job, and the jobs it kept running as they were
        # because no profile's step could be placed (they ask for no wake-up)
        self.asks: dict[str, float] = {}
        self.stuck: set[str] = set()

    def decide(self, state: SchedulerState) -> Decision:
        inst, now, occ = state.instance, state.time, state.occupancy
        if self._table is None or self._table.instance is not inst:
            self._table = HullTable(inst)
        all_types = tuple(g.name for g in inst.gpu_types)
        assign: dict[str, Allocation | None] = {}
        # when each job asks to be woken (its step's end, its hold, the next slot)
        asks: dict[str, float] = {}
        stuck: set[str] = set()  # running jobs kept where they are: no profile's step fit
        # Every present job is placed afresh in urgency order: a running job holds its
        # GPUs only if nothing more urgent needs them (else it pauses, progress kept).
        holds = Holds(occ, state.jobs) if inst.has_relaunch else None
        for status in state.jobs:
            if status.allocation is not None:
                occ.release(status.job.id)
        table = self._table
        tune = self.tuning
        ledger = None
        if self.lookahead and state.jobs:
            horizon = max(s.job.due for s in state.jobs) - now + 24.0
            grid = inst.slot or 0.25
            ledger = Ledger(inst, now, max(horizon, 1.0), grid, self.reserve, self.lead)
        for status in sorted(
            state.jobs,
            key=lambda s: (slack(inst, s, now, table) + tune.urgency.get(s.job.id, 0.0), s.job.id),
        ):
            alloc = None
            if holds is not None:
                holds.drop(status.job.id)
            held = tune.hold.get(status.job.id, 0.0)
            if status.allocation is None and now < held - 1e-9:
                asks[status.job.id] = held
                continue
            types = self._types(status.job, all_types)
            earlier = tune.earlier.get(status.job.id, 0.0)
            cands: Iterable[TypeProfile] = self._candidates(
                inst, status, now, types, self._table, earlier
            )
            if ledger is not None:
                dist = status.job.distribution.conditional(status.progress)
                cands = self._booked_first(inst, status, now, cands, ledger, earlier, dist, table)
            if holds is not None:
                cands = _Replayable(cands)  # walked again where a placement displaces
            booked = None
            for plan in cands:
                step, step_end, last = self._step_now(inst, status.job, plan.profile, now)
                alloc = self._place(occ, status, step.config, types, holds)
                if alloc is not None:
                    booked = (plan, step, step_end, last)
                    break
            if booked is not None and holds is not None and alloc is not None:
                # a placement that displaces running jobs wastes their overheads: a
                # profile that leaves them be is taken if it costs no more than that
                # (a job that keeps its GPUs displaces no one)
                kept = alloc == status.allocation
                waste = 0.0 if kept else self._waste(inst, alloc, holds, status.job.id)
                if waste > 0:
                    limit = booked[0].profile.objective + waste
                    occ.release(status.job.id)
                    for plan in cands:
                        if plan.profile.objective > limit:
                            continue
                        step, step_end, last = self._step_now(inst, status.job, plan.profile, now)
                        other = self._place(occ, status, step.config, types, holds, False)
                        if other is not None:
                            alloc, booked = other, (plan, step, step_end, last)
                            break
                    else:
                        occ.place(status.job, alloc)
            if booked is not None and alloc is not None:
                plan, step, step_end, last = booked
                if not last or alloc.config != step.config:
                    # wake when this step's epochs are done (on the grid, not after)
                    asks[status.job.id] = self._grid(inst, now, step_end)
                if ledger is not None:
                    ledger.book(status.job, plan.profile, dist)
            if alloc is None and status.allocation is not None and self.lookahead:
                # no profile's step fits: rather than pause, run on time if it can; the
                # next slot re-plans
                alloc = self._rescue(inst, occ, status, now, types)
                if alloc is not None:
                    rescue = self._grid(inst, now, now + (inst.slot or 0.25))
                    asks[status.job.id] = min(asks.get(status.job.id, math.inf), rescue)
            if alloc is None and status.allocation is not None:
                alloc = self._keep(occ, status)
                if alloc is not None:
                    stuck.add(status.job.id)
            if holds is not None and alloc is not None:
                holds.take(status.job, alloc)
            if alloc != status.allocation:
                assign[status.job.id] = alloc
        self.asks, self.stuck = asks, stuck
        wake = min(asks.values(), default=math.inf)
        return Decision(assign, wake_at=None if math.isinf(wake) else wake)

    @staticmethod
    def _booked_first(
        inst: Instance,
        status: JobStatus,
        now: float,
        cands: Iterable[TypeProfile],
        ledger: Ledger,
        earlier: float,
        dist: EpochDistribution,
        table: HullTable,
    ) -> Iterator[TypeProfile]:
        """Profiles whose later steps fit beside the booked ones, then the same types
        planned to finish earlier (a quarter, a half, three quarters of the time left,
        or as fast as they can), then the rest as STS orders them. Lazy: a profile that
        fits and is placed ends the search before dearer types are solved."""
        job = status.job
        deferred = []
        for p in cands:
            if ledger.fits(job, p.profile, dist):
                yield p
            else:
                deferred.append(p)
        left = job.due - earlier - now
        if left > 0 and deferred:
            for f in EARLIER_FRACTIONS:
                jp = JobProfiles(inst, status, now, (), table, earlier + f * left)
                for p in deferred:
                    q = jp.solve(p.gpu_type)
                    if ledger.fits(job, q.profile, dist):
                        yield q
        yield from deferred

    def _types(self, job: Job, all_types: tuple[str, ...]) -> tuple[str, ...]:
        allowed = self.tuning.types.get(job.id)
        return all_types if allowed is None else tuple(t for t in all_types if t in allowed)

    @staticmethod
    def _rescue(
        inst: Instance, occ: Occupancy, status: JobStatus, now: float, types: tuple[str, ...]
    ) -> Allocation | None:
        """No profile's step fits a running job: the cheapest placeable configuration
        that still meets its due date in the worst case (on the slot grid), if any. The
        profile's own fallback takes only configurations at least as fast as the step
        it planned, and a job with none pauses; a slower one may still be on time."""
        job = status.job
        budget = slot_budget(inst, job.due, now)
        current = status.allocation

        def on_time(c: Config) -> bool:
            # a configuration other than the current one relaunches the job first
            lost = status.overhead_left if current and c == current.config else inst.relaunch(job)
            return status.remaining * inst.epoch_time(job, c) + lost <= budget + 1e-9

        ok = cheapest_first(inst, job, lambda c: c.gpu_type in types and on_time(c))
        alloc = first_placement(occ, job, ok)
        if alloc is not None:
            occ.place(status.job, alloc)
        return alloc

    @staticmethod
    def _waste(inst: Instance, alloc: Allocation, holds: Holds, job_id: str) -> float:
        """The energy cost of the overheads that ``alloc`` makes running jobs pay again:
        those whose GPUs (whole nodes, multi-node) it takes."""
        taken = set(alloc.gpus)
        nodes = {n for n, _ in alloc.gpus}
        total = 0.0
        for other, old in holds.pending.items():
            if other == job_id or old is None:
                continue
            hit = bool(taken & set(old.gpus))
            if (alloc.config.nodes > 1 or old.config.nodes > 1) and nodes & {
                n for n, _ in old.gpus
            }:
                hit = True
            if old.config.shared and alloc.config.shared:
                hit = False
            if hit:
                kw = inst.power_w(old.config) / 1000.0
                total += inst.energy_price * kw * inst.relaunch(other)
        return total

    @staticmethod
    def _keep(occ: Occupancy, status: JobStatus) -> Allocation | None:
        """A running job none of whose profiles fits keeps its GPUs if they are still
        free, else it pauses."""
        current = status.allocation
        if current is not None and occ.why_not(status.job, current) is None:
            occ.place(status.job, current)
            return current
        return None

    @staticmethod
    def _candidates(
        inst: Instance,
        status: JobStatus,
        now: float,
        types: tuple[str, ...],
        table: HullTable,
        earlier: float,
    ) -> Iterable[TypeProfile]:
        """Profiles to try, in order. A waiting job: every GPU type in ``types``, cheapest
        first. A
        running job: the types whose profile is cheaper than on its own type (it may have
        started on a dear type because the cheap one was full), then its own type."""
        jp = JobProfiles(inst, status, now, types, table, earlier)
        if status.allocation is None:
            return jp.in_order()
        own = jp.solve(status.allocation.config.gpu_type)
        cheaper = own.profile.objective * (1 - 1e-9)  # a tie never moves a job
        return [*jp.cheaper_than(cheaper, own.gpu_type), own]

    @staticmethod
    def _step_now(
        inst: Instance, job: Job, profile: Profile, now: float
    ) -> tuple[Step, float, bool]:
        """The profile step to run now, when its epochs are done, and whether it is the
        last. Slotted, a switch can only happen on the grid: a step that would end within
        the coming slot is skipped for the next, faster one (ahead of the plan, never
        behind it)."""
        t = now
        for k, step in enumerate(profile.steps):
            t += step.lost + step.epochs * inst.epoch_time(job, step.config)
            last = k == len(profile.steps) - 1
            if last or inst.slot is None or t >= now + inst.slot - 1e-9:
                return step, t, last
        raise AssertionError("a profile has at least one step")

    @staticmethod
    def _grid(inst: Instance, now: float, t: float) -> float:
        """A switch time moved down to the slot grid (switching early keeps the worst
        case within budget), and at least one slot ahead."""
        if inst.slot is None:
            return t
        k = math.floor(t / inst.slot + 1e-9)
        return max(k * inst.slot, now + inst.slot)

    @staticmethod
    def _place(
        occ: Occupancy,
        status: JobStatus,
        cfg: Config,
        types: tuple[str, ...],
        holds: Holds | None = None,
        displace: bool = True,
    ) -> Allocation | None:
        """Where ``cfg`` goes now (``occ`` holds neither this job nor the less urgent
        ones). A running job keeps its GPUs if the config is the same and they are free.
        A running job whose ``cfg`` does not fit on its own type takes the cheapest
        placeable configuration, of any type, at least as fast (falling behind the
        profile would miss the due date); on another type it tries the next profile.
        ``None``: nothing placed. With ``displace=False``, only GPUs that no running job
        holds are used."""
        current = status.allocation
        if occ.keep(status.job, current, cfg):
            return current
        alloc = holds.find(occ, status.job, cfg) if holds is not None else None
        if alloc is None and not displace:
            return None
        if alloc is None:
            alloc = occ.find(status.job, cfg)
        if alloc is None and current is not None and cfg.gpu_type == current.config.gpu_type:
            inst = occ.instance
            tau = inst.epoch_time(status.job, cfg)
            faster = cheapest_first(
                inst,
                status.job,
                lambda c: inst.epoch_time(status.job, c) <= tau and c.gpu_type in types,
            )
            alloc = first_placement(occ, status.job, faster)
        if alloc is not None:
            occ.place(status.job, alloc)
        return alloc


class GreedyStsPolicy(StsPolicy):
    """The thesis's STS as first built: each job on the cheapest profile whose current
    step fits now, with no look at its later steps."""

    name = "sts-greedy"

    def __init__(self, seed: int = 0, tuning: StsTuning | None = None) -> None:
        super().__init__(seed, tuning, lookahead=False)
