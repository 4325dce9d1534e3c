"""Each job's options per GPU type, reduced once per instance to their lower convex hull,
and a job's profiles at one decision, solved lazily per type cheapest first: the tables
STS reads at every decision (:mod:`heuristic.sts.policy`)."""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from operator import itemgetter

import numpy as np

from heuristic.core.policy import JobStatus
from heuristic.core.urgency import fastest_epoch_time
from heuristic.sts.chainset import ChainSet, chain_indices, chain_set, continuing_indices
from heuristic.sts.ledger import Ledger
from heuristic.sts.memo import kept
from heuristic.sts.profile import Option, Profile, exact_profile, lower_hull
from heuristic.sts.switching import Relaunch, relaunch_profile
from heuristic.sts.tariff import HORIZON_CELLS, Tariff
from heuristic.sts.timing import PLAIN, TimingRule, load, timed
from instances import Config, Instance, Job

# the name of the pseudo GPU type whose options are every type's (``mixed_types``): a
# profile over it may run a slow, cheap step on one type and its fast last steps on
# another; a real type of that name turns mixing off
MIXED = "*"


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
    configuration chains its profiles may use (:mod:`heuristic.sts.chainset`). With
    ``timing`` and a bill that changes with time, the instance's :class:`Tariff`
    (profiles then choose when they run; ``None`` otherwise). With ``mixed``, each job
    that may run on more than one type also has the options of all its types together
    under the pseudo type :data:`MIXED`."""

    def __init__(
        self,
        instance: Instance,
        *,
        timing: bool = True,
        mixed: bool = False,
        keep: Callable[[Config], bool] | None = None,
        rule: TimingRule = PLAIN,
        whole: bool = False,
    ) -> None:
        self.instance = instance
        # a job's shared slots left out on each type where it has whole GPUs too
        self.whole = whole
        self.rule = rule  # how profiles are timed under a tariff
        self.keep = keep  # the configurations the table holds (``None``: all allowed)
        self._capped: HullTable | None = None
        self._unshared: HullTable | None = None
        self._large: Callable[[Config], bool] | None = None
        self.tariff = Tariff.of(instance) if timing else None
        # (a real type named as the pseudo type turns mixing off)
        self.mixed = mixed and all(g.name != MIXED for g in instance.gpu_types)
        # timed profiles' speed profiles for budgets fixed from the release: a job that
        # waits for cheap hours asks for the same ones at every event
        self.speeds: dict[Hashable, Profile] = {}
        # a profile's expected power over its run, by job, progress and steps (timing)
        self.loads: dict[Hashable, np.ndarray] = {}
        # timed profiles, by everything a timing reads (JobProfiles.solve)
        self.timed: dict[Hashable, Profile] = {}
        # per job: its options by GPU type (in the order of its allowed configurations),
        # its fastest hours per epoch and its least cost per epoch, from one pass
        self._jobs: dict[str, tuple[dict[str, list[Option]], float, float]] = {}
        self._least: dict[str, dict[str, float]] = {}
        self._quick: dict[str, tuple[tuple[float, Config], ...]] = {}
        self._hulls: dict[tuple[str, str], list[Option]] = {}
        self._hourly: dict[str, dict[Config, float]] = {}
        self._chains: dict[tuple[str, str], list[tuple[int, ...]]] = {}
        self._sets: dict[tuple[str, str, Config | None], ChainSet] = {}
        self._rules: dict[str, TimingRule] = {}

    def _job(self, job: Job) -> tuple[dict[str, list[Option]], float, float]:
        found = self._jobs.get(job.id)
        if found is None:
            inst = self.instance
            by_type: dict[str, list[Option]] = {}
            for c in inst.allowed_configs(job):
                if self.keep is not None and not self.keep(c):
                    continue
                o = Option(c, inst.epoch_time(job, c), inst.epoch_cost(job, c))
                by_type.setdefault(c.gpu_type, []).append(o)
            if self.whole:
                for t, opts in by_type.items():
                    gpus = [o for o in opts if not o.config.shared]
                    by_type[t] = gpus or opts  # a type it may only share stays
            every = [o for opts in by_type.values() for o in opts]
            if self.mixed and len(by_type) > 1:
                by_type[MIXED] = list(every)
            # (a table that keeps only some configurations may hold none of a job's)
            fastest = min((o.time for o in every), default=math.inf)  # fastest_epoch_time's
            cheapest = min((o.cost for o in every), default=math.inf)
            found = self._jobs[job.id] = (by_type, fastest, cheapest)
        return found

    def rule_for(self, job: Job) -> TimingRule:
        """How ``job``'s profiles are timed: the table's rule, but :data:`PLAIN` where
        the job's window is shorter than the rule's ``loose`` times its fastest
        worst-case run (:class:`heuristic.sts.timing.TimingRule`). Such a job has little
        time to give to the cheap hours, and a catch-up it counts on needs the fast
        configurations that every urgent job wants (docs/prices.md)."""
        rule = self.rule
        if rule.loose <= 0:
            return rule
        found = self._rules.get(job.id)
        if found is None:
            inst = self.instance
            # the job's fastest allowed configuration, whatever the table keeps
            fastest = fastest_epoch_time(inst, job)
            worst = inst.relaunch(job) + job.distribution.max_epochs * fastest
            loose = job.due - job.release >= rule.loose * worst
            found = self._rules[job.id] = rule if loose else rule.plain()
        return found

    def capped(self) -> HullTable:
        """The same table without the large configurations (:func:`large_configs`):
        the profiles that leave the large nodes, and several nodes at once, to others
        (``capped``, :func:`heuristic.sts.candidates.booked_first`); built once."""
        if self._capped is None:
            large = self.large()
            self._capped = HullTable(
                self.instance,
                timing=self.tariff is not None,
                keep=lambda c: not large(c) and (self.keep is None or self.keep(c)),
                rule=self.rule,
                whole=self.whole,
            )
        return self._capped

    def unshared(self) -> HullTable:
        """The same table with each job's shared slots left out on every type where it
        may run on whole GPUs (STS with ``shared_slots`` off); built once."""
        if self._unshared is None:
            self._unshared = HullTable(
                self.instance,
                timing=self.tariff is not None,
                mixed=self.mixed,
                keep=self.keep,
                rule=self.rule,
                whole=True,
            )
        return self._unshared

    def large(self) -> Callable[[Config], bool]:
        """:func:`large_configs` of the instance, built once."""
        if self._large is None:
            self._large = large_configs(self.instance)
        return self._large

    def least_costs(self, job: Job) -> dict[str, float]:
        """The job's least cost per epoch on each GPU type it can use."""
        found = self._least.get(job.id)
        if found is None:
            by_type = self._job(job)[0]
            found = self._least[job.id] = {
                t: min(o.cost for o in opts) for t, opts in by_type.items()
            }
        return found

    def options(self, job: Job, gpu_type: str) -> list[Option]:
        """:func:`options` of the job on ``gpu_type``, computed once."""
        return self._job(job)[0].get(gpu_type, [])

    def hull(self, job: Job, gpu_type: str) -> list[Option]:
        key = (job.id, gpu_type)
        if key not in self._hulls:
            self._hulls[key] = lower_hull(self.options(job, gpu_type))
        return self._hulls[key]

    def cheapest_cost(self, job: Job) -> float:
        """The job's least cost per epoch, over every GPU type it can use."""
        return self._job(job)[2]

    def chains(self, job: Job, gpu_type: str) -> list[tuple[int, ...]]:
        """The chains the job's profiles on ``gpu_type`` may use, as indices into its
        :meth:`options` (:func:`heuristic.sts.chainset.chain_indices`)."""
        key = (job.id, gpu_type)
        if key not in self._chains:
            found = chain_indices(self.options(job, gpu_type))
            if gpu_type == MIXED:
                # every type's own chains too: the joint front and hull ignore what an
                # hour of overhead costs, and are capped, so they may miss one
                joint = dict.fromkeys(found)
                for t, at in self._offsets(job).items():
                    for c in self.chains(job, t):
                        joint.setdefault(tuple(at + k for k in c), None)
                found = list(joint)
            self._chains[key] = found
        return self._chains[key]

    def _continuing(
        self, job: Job, current: Config, found: list[tuple[int, ...]]
    ) -> list[tuple[int, ...]]:
        """The chains continuing on ``current`` that its own type's chain set adds (none
        of that type's chains holds it), among the :data:`MIXED` options; ``chain_set``
        adds them only where no joint chain holds it."""
        t = current.gpu_type
        opts = self.options(job, t)
        cur = next((k for k, o in enumerate(opts) if o.config == current), None)
        if cur is None or any(cur in c for c in self.chains(job, t)):
            return []
        at = self._offsets(job)[t]
        extra = (tuple(at + k for k in c) for c in continuing_indices(opts, cur))
        return [c for c in extra if c not in found]

    def _offsets(self, job: Job) -> dict[str, int]:
        """Where each type's options start among the job's :data:`MIXED` options (they
        are every type's, in order)."""
        out, at = {}, 0
        for t, opts in self._job(job)[0].items():
            if t != MIXED:
                out[t] = at
                at += len(opts)
        return out

    def chain_set(self, job: Job, gpu_type: str, relaunch: Relaunch) -> ChainSet:
        """The :class:`ChainSet` of the job's profiles on ``gpu_type`` while it runs
        ``relaunch.current``, built once."""
        key = (job.id, gpu_type, relaunch.current)
        if key not in self._sets:
            opts, found = self.options(job, gpu_type), self.chains(job, gpu_type)
            if gpu_type == MIXED and relaunch.current is not None:
                found = found + self._continuing(job, relaunch.current, found)
            self._sets[key] = chain_set(opts, relaunch.current, relaunch.hourly_cost, found)
        return self._sets[key]

    def hourly(self, job: Job) -> dict[Config, float]:
        """:func:`hourly_costs` of the job, computed once."""
        if job.id not in self._hourly:
            self._hourly[job.id] = hourly_costs(self.instance, job)
        return self._hourly[job.id]

    def slowest(self, job: Job) -> float:
        """Hours per epoch on the job's slowest allowed configuration."""
        return max(o.time for opts in self._job(job)[0].values() for o in opts)

    def fastest(self, job: Job) -> float:
        """Hours per epoch on the job's fastest allowed configuration."""
        return self._job(job)[1]

    def quick(self, job: Job) -> tuple[tuple[float, Config], ...]:
        """The job's allowed configurations and their hours per epoch, fastest first."""
        found = self._quick.get(job.id)
        if found is None:
            by_type = self._job(job)[0]
            every = {o.config: o.time for t, opts in by_type.items() if t != MIXED for o in opts}
            pairs = sorted(((h, c) for c, h in every.items()), key=itemgetter(0))
            found = self._quick[job.id] = tuple(pairs)
        return found


def large_configs(instance: Instance) -> Callable[[Config], bool]:
    """Whether a configuration is large: it runs on several nodes, or takes more than
    half of the largest node of its type, so one such step per node. A shared slot
    never is. The ledger's large classes (:class:`heuristic.sts.ledger.Ledger`) are the
    node sizes above half the largest, and it counts a step against those no larger
    than the step: for the configurations of 1, 2, 4 and 8 GPUs on nodes of 4 and 8
    the two agree; a step of 5-7 GPUs on a type whose large nodes hold 8 is large here
    and counted against no large class there."""
    # (a type may have no nodes: its configurations are allowed to no job)
    top = {t: max(n.num_gpus for n in ns) for t, ns in instance.nodes_by_type.items() if ns}

    def large(c: Config) -> bool:
        return not c.shared and (c.nodes > 1 or 2 * c.gpus > top.get(c.gpu_type, 0))

    return large


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
    profile already known; the order and the profiles are those of solving every type
    (with any bound below the profiles' costs). Under a tariff each profile is timed
    (:func:`heuristic.sts.timing.timed`; ``ran``: the hours the job has run since its
    release; ``ledger``: the profiles booked, beside which its configurations must fit) and the
    bounds are at the cheapest hour's bill.
    """

    def __init__(
        self,
        instance: Instance,
        status: JobStatus,
        now: float,
        types: tuple[str, ...],
        table: HullTable,
        earlier: float = 0.0,
        ran: float = 0.0,
        ledger: Ledger | None = None,
    ) -> None:
        self.table, self.instance, self.now, self.ran = table, instance, now, ran
        self.ledger = ledger
        self.current = status.allocation.config if status.allocation is not None else None
        self.progress, self.left = status.progress, status.overhead_left
        job = self.job = status.job
        self.dist = job.distribution.conditional(status.progress)
        self.budget = slot_budget(instance, job.due - earlier, now)
        self.omega = instance.tardiness_weight(job.id)
        self.rule = table.rule_for(job)
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
        least = table.least_costs(job)
        if table.mixed and MIXED in least and set(least) - {MIXED} <= set(types):
            # every type the job may use is asked for: the profile over all of them too
            types = (*types, MIXED)
        self.types = frozenset(types)
        self.bounds = sorted((least[t] * mean, t) for t in types if t in least)
        if table.tariff is not None and instance.energy_price > 0:
            # a profile runs within its budget, or, late, back to back from now on its
            # slowest hull option at worst
            hours = max(self.budget, self.dist.max_epochs * table.slowest(job))
            hours += instance.relaunch(job) + 1.0
            if self.rule.late and self._may_be_late(hours):
                # a late run may go as far as the late search reaches
                hours = max(hours, HORIZON_CELLS * table.tariff.cell)
            ratio = table.tariff.least(now, now + hours) / instance.energy_price
            self.bounds = [(b * ratio, t) for b, t in self.bounds]

    def _may_be_late(self, hours: float) -> bool:
        """Whether the late search (:meth:`heuristic.sts.timing._Late.search`) may open for a
        profile of the job within ``hours`` from now: some hour there bills an hour of
        its most powerful configuration above an hour late (the search's gate, at the
        least expected power it could read)."""
        tariff = self.table.tariff
        if tariff is None or self.omega <= 0:
            return False
        top = self.instance.top_power_w(self.job) / 1000.0
        end = self.now + max(hours, self.job.due - self.now) + tariff.cell
        return tariff.most(self.now, end) * top > self.omega

    def solve(self, gpu_type: str) -> TypeProfile:
        if self.table.tariff is None:
            # kept: the rollout's copies and their what-if runs ask for the same
            # profiles at the same state (on `medium`, 43% of the solves repeated)
            return TypeProfile(gpu_type, self._kept_speed(gpu_type, self.budget))
        quick = self._quick() if self.rule.recover else ()
        room = self._room_state(gpu_type, quick)
        # kept: the rollout's copies weigh the same jobs at the same event, each with
        # what-if runs from it (on a contended run under a day-ahead series 40% of the
        # timings repeated); the key holds everything timed reads, the ledger by the
        # digest of what its room answers for the types the profiles may use
        state = (self.job.id, gpu_type, self.progress, self.left, self.budget, self.now)
        key = (*state, self.current, self.ran, self.rule, quick, room)
        profile = kept(self.table.timed, key, lambda: self._timed(gpu_type, quick), 100_000)
        return TypeProfile(gpu_type, profile)

    def _timed(self, gpu_type: str, quick: tuple[tuple[float, Config], ...]) -> Profile:
        """The timed profile on ``gpu_type`` (:func:`heuristic.sts.timing.timed`)."""
        assert self.table.tariff is not None
        return timed(
            self.instance,
            self.job,
            self.dist,
            lambda budget: self._kept_speed(gpu_type, budget),
            self.budget,
            self.table.tariff,
            self.now,
            self.current,
            self.ran,
            None if self.ledger is None else self.ledger.room,
            self._kept_load,
            self.rule,
            quick,
        )

    def _room_state(self, gpu_type: str, quick: tuple[tuple[float, Config], ...]) -> bytes:
        """What the ledger's room answers depend on for a timing on ``gpu_type``: empty
        without a ledger, else its digest of the types whose configurations the timing
        asks about (the type's, or every type's for :data:`MIXED`, and the catch-up's
        ``quick``)."""
        ledger = self.ledger
        if ledger is None:
            return b""
        types = set(ledger.capacity) if gpu_type == MIXED else {gpu_type}
        types.update(c.gpu_type for _, c in quick)
        return ledger.state(types)

    def _quick(self) -> tuple[tuple[float, Config], ...]:
        """The job's configurations fastest first, of the types it may use here (all of
        them where no type is named: a profile re-solved for one type)."""
        quick = self.table.quick(self.job)
        if not self.types:
            return quick
        return tuple(p for p in quick if p[1].gpu_type in self.types)

    def _kept_load(self, profile: Profile) -> np.ndarray:
        """:func:`heuristic.sts.timing.load`, kept in the table for the job's progress
        (its distribution) and the profile's steps (at most 100,000 kept)."""

        def make() -> np.ndarray:
            rows = load(self.instance, self.job, profile, self.dist)
            rows.flags.writeable = False  # shared: read only
            return rows

        key = (self.job.id, self.progress, profile.steps)
        return kept(self.table.loads, key, make, 100_000)

    def _kept_speed(self, gpu_type: str, budget: float) -> Profile:
        """:meth:`_speed`, kept in the table for the job's progress and current
        configuration (at most 100,000 kept: then the table starts again)."""
        key = (self.job.id, gpu_type, self.progress, budget, self.current, self.left)
        return kept(self.table.speeds, key, lambda: self._speed(gpu_type, budget), 100_000)

    def _speed(self, gpu_type: str, budget: float) -> Profile:
        """The price-blind profile on ``gpu_type`` within ``budget`` hours."""
        if self.relaunch is not None:
            rl = self.relaunch
            chained = self.table.chain_set(self.job, gpu_type, rl)
            return relaunch_profile((), self.dist, budget, self.omega, rl, chained=chained)
        hull = self.table.hull(self.job, gpu_type)
        return exact_profile(hull, self.dist, budget, self.omega, on_hull=True)

    def in_order(self) -> Iterator[TypeProfile]:
        """Profiles cheapest first (ties by type name), each solved when first needed;
        with ``mixed_types`` and no price series, the profile over every type first."""
        pending = list(self.bounds)
        known: list[tuple[float, str, TypeProfile]] = []
        if self.table.mixed and self.table.tariff is None and any(t == MIXED for _, t in pending):
            # the profile over every type is tried first, and one type's profiles are
            # solved only if it is not placed: it costs no more than theirs (its
            # options and, with a relaunch overhead, its chains hold theirs; a test).
            # Not under a series, where a type's timed profile may cost less (tried
            # first there, the prices campaign's contended family cost 1.5% more:
            # docs/model.md)
            pending = [(b, t) for b, t in pending if t != MIXED]
            yield self.solve(MIXED)
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
