"""The profiles STS tries for a job at a decision, in the order it tries them
(:mod:`heuristic.sts.policy` places the first that fits): cheapest type first, the
ledger's fitting ones before the others, then the same types planned to finish
earlier."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from heuristic.core.policy import JobStatus
from heuristic.sts.hulls import HullTable, JobProfiles, TypeProfile
from heuristic.sts.ledger import Ledger
from instances import EpochDistribution, Instance

# with the ledger: how much of the time left a profile whose later steps collide with
# more urgent jobs' may plan to finish early, tried in order (1.0: as fast as it can)
EARLIER_FRACTIONS = (0.25, 0.5, 0.75, 1.0)


class Replayable:
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


def candidates(
    inst: Instance,
    status: JobStatus,
    now: float,
    types: tuple[str, ...],
    table: HullTable,
    earlier: float,
    ran: float = 0.0,
    ledger: Ledger | None = None,
) -> Iterable[TypeProfile]:
    """Profiles to try, in order. A waiting job: every GPU type in ``types``, cheapest
    first. A
    running job: the types whose profile is cheaper than on its own type (it may have
    started on a dear type because the cheap one was full), then its own type."""
    jp = JobProfiles(inst, status, now, types, table, earlier, ran, ledger)
    if status.allocation is None:
        return jp.in_order()
    own = jp.solve(status.allocation.config.gpu_type)
    cheaper = own.profile.objective * (1 - 1e-9)  # a tie never moves a job
    return [*jp.cheaper_than(cheaper, own.gpu_type), own]


def booked_first(
    inst: Instance,
    status: JobStatus,
    now: float,
    cands: Iterable[TypeProfile],
    ledger: Ledger,
    earlier: float,
    dist: EpochDistribution,
    table: HullTable,
    ran: float = 0.0,
    capped: bool = False,
) -> Iterator[TypeProfile]:
    """Profiles whose later steps fit beside the booked ones, then the same types
    planned to finish earlier (a quarter, a half, three quarters of the time left,
    or as fast as they can), then, with ``capped``, the same types without their
    large configurations (:meth:`HullTable.capped`), then the rest as STS orders them.
    Lazy: a profile that fits and is placed ends the search before dearer types are
    solved."""
    job = status.job
    deferred = []
    for p in cands:
        # a profile timed for cheap hours is not hurried for the ledger: its windows
        # are where every timed job wants to run, and hurrying runs it at dear hours
        if p.profile.runs or ledger.fits(job, p.profile, dist):
            yield p
        else:
            deferred.append(p)
    left = job.due - earlier - now
    if left > 0 and deferred:
        for f in EARLIER_FRACTIONS:
            jp = JobProfiles(inst, status, now, (), table, earlier + f * left, ran, ledger)
            for p in deferred:
                q = jp.solve(p.gpu_type)
                if ledger.fits(job, q.profile, dist):
                    yield q
    if capped and deferred:
        yield from _capped(inst, status, now, deferred, ledger, earlier, dist, table, ran)
    yield from deferred


def _capped(
    inst: Instance,
    status: JobStatus,
    now: float,
    deferred: list[TypeProfile],
    ledger: Ledger,
    earlier: float,
    dist: EpochDistribution,
    table: HullTable,
    ran: float,
) -> Iterator[TypeProfile]:
    """Where a profile's large steps collide with the booked ones and hurrying does
    not fit either, its type's profile without large configurations, if that fits: a
    job of a burst then runs steadily on a few GPUs (late, perhaps, by less) rather than
    bet on a large node every job of the burst has booked. Not for a job running a
    large configuration (it holds one already)."""
    small, large = table.capped(), table.large()
    if status.allocation is not None and large(status.allocation.config):
        return
    jp: JobProfiles | None = None
    for p in deferred:
        if not any(large(s.config) for s in p.profile.steps):
            continue  # it collides without a large step: capping changes nothing
        if not small.options(status.job, p.gpu_type):
            continue
        if jp is None:
            jp = JobProfiles(inst, status, now, (), small, earlier, ran, ledger)
        q = jp.solve(p.gpu_type)
        if ledger.fits(status.job, q.profile, dist):
            yield q
