"""The configuration chains a job's profiles may use on one GPU type when switches pay a
relaunch overhead (:func:`heuristic.sts.switching.relaunch_profile`), and what that
search reads of them.

A chain is a set of the job's options on the type, slowest first, that is its own lower
convex hull: every subset of the options' lower hull, and every one or two options of
their Pareto front (off the hull, a single configuration can beat a mix that needs a
switch). Chains depend on the job's options alone, so
:class:`heuristic.sts.hulls.HullTable` keeps them per job and type, and their
:class:`ChainSet` per configuration the job runs now: STS solves every present job's
profile at every decision (16,000 nodes x 4,000 jobs in the benchmark).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from heuristic.sts.profile import Option, front_hull, lower_hull, pareto_front
from instances import Config

# beyond this many hull configurations, the hull's subsets are not all tried: only the
# hull itself less one configuration at a time (real hulls have 1-5)
MAX_HULL_SUBSETS = 6
TOL = 1e-15  # pareto_front's relative tolerance on ties


def _regular(c: Sequence[Option]) -> bool:
    """Whether each option of ``c`` (slowest first) is strictly slower and cheaper than
    the next, by pareto_front's own tests: then ``c``, and any subset of it, is its own
    Pareto front (rounding is monotone, so options further apart pass the tests a
    fortiori)."""
    return all(
        fast.time < slow.time
        and slow.cost < fast.cost - TOL * max(1.0, abs(slow.cost))
        and abs(slow.time - fast.time) > TOL * max(1.0, slow.time)
        for slow, fast in itertools.pairwise(c)
    )


def _turns(c: Sequence[Option]) -> dict[tuple[int, int, int], bool]:
    """For every three options ``i < j < k`` of ``c`` (slowest first), whether
    front_hull keeps ``j`` between them: its turn, fastest first, is counter-clockwise."""
    return {
        (i, j, k): (b.time - a.time) * (o.cost - a.cost) - (b.cost - a.cost) * (o.time - a.time) > 0
        for (i, o), (j, b), (k, a) in itertools.combinations(enumerate(c), 3)
    }


def _own_hull(c: Sequence[Option]) -> bool:
    """``lower_hull(c) == list(c)`` for ``c`` slowest first, without sorting where ``c``
    is :func:`_regular` (else lower_hull decides)."""
    if not _regular(c):
        return lower_hull(c) == list(c)
    turns = _turns(c)
    return all(turns[k, k + 1, k + 2] for k in range(len(c) - 2))


@functools.cache
def _subsets(n: int) -> tuple[tuple[int, ...], ...]:
    """The subsets of ``n`` hull options tried, as sorted indices: all of them, or
    beyond MAX_HULL_SUBSETS the whole hull and the hull less one option at a time."""
    if n <= MAX_HULL_SUBSETS:
        return tuple(s for r in range(1, n + 1) for s in itertools.combinations(range(n), r))
    return (tuple(range(n)), *(tuple(k for k in range(n) if k != i) for i in range(n)))


@functools.lru_cache(maxsize=4096)
def _every_chain(
    on_hull: tuple[int, ...], on_front: tuple[int, ...]
) -> tuple[tuple[int, ...], ...]:
    """The chains where every subset of the hull and every pair of the front are their
    own hull (a regular hull whose turns are all kept, a regular front): they depend on
    which options the hull and the front hold, not on their figures, and jobs share
    them (4,000 jobs in the benchmark, a few shapes)."""
    found = dict.fromkeys(tuple(on_hull[k] for k in sub) for sub in _subsets(len(on_hull)))
    found.update(dict.fromkeys(itertools.combinations(on_front, 1)))
    found.update(dict.fromkeys(itertools.combinations(on_front, 2)))
    return tuple(found)


def chain_indices(options: Sequence[Option]) -> list[tuple[int, ...]]:
    """The chains, as indices into ``options`` (whose configurations are distinct), in
    the order they are tried: each set is kept if it is its own lower hull."""
    at = {id(o): k for k, o in enumerate(options)}
    front = pareto_front(options)
    hull = front_hull(front)
    on_hull = tuple(at[id(o)] for o in hull)
    turns = _turns(hull) if _regular(hull) else None
    regular = _regular(front)  # one option, or two of a regular front, are their own hull
    if regular and turns is not None and all(turns.values()):
        return list(_every_chain(on_hull, tuple(at[id(o)] for o in front)))
    found: dict[tuple[int, ...], None] = {}
    for sub in _subsets(len(hull)):
        if turns is None:
            keep = _own_hull([hull[k] for k in sub])
        else:  # a subset of a regular hull is its own hull where each turn is kept
            keep = all(turns[t] for t in zip(sub, sub[1:], sub[2:], strict=False))
        if keep:
            found.setdefault(tuple(on_hull[k] for k in sub), None)
    for r in (1, 2):
        for pair in itertools.combinations(front, r):
            if r == 1 or regular or _own_hull(pair):
                found.setdefault(tuple(at[id(o)] for o in pair), None)
    return list(found)


def chains(options: Sequence[Option]) -> list[list[Option]]:
    """The configuration sets a profile may use, each slowest first and convex (a set
    whose lower hull is smaller is covered by that hull)."""
    return [[options[k] for k in c] for c in chain_indices(options)]


def continuing(options: Sequence[Option], current: Config | None) -> list[list[Option]]:
    """Chains that start on the configuration the job runs now (for a job none of
    whose chains has it): continuing it is free, so even an option off the Pareto front
    may pay (alone, or before a faster and dearer one)."""
    cur = next((k for k, o in enumerate(options) if o.config == current), None)
    if current is None or cur is None:
        return []
    return [[options[k] for k in c] for c in continuing_indices(options, cur)]


def continuing_indices(options: Sequence[Option], cur: int) -> list[tuple[int, ...]]:
    """:func:`continuing` as indices into ``options``, ``cur`` the current one's."""
    now = options[cur]
    out: list[tuple[int, ...]] = [(cur,)]
    out += [(cur, k) for k, o in enumerate(options) if o.time < now.time and o.cost > now.cost]
    return out


@dataclass(frozen=True)
class ChainSet:
    """The chains a job's profiles on one GPU type search while it runs one
    configuration (or waits), as indices into its ``options`` (``index``), with what the
    search reads of each as arrays: its cheapest cost per epoch (``cost``), fastest
    hours per epoch (``time``), cheapest hour of overhead (``hourly``); whether it holds
    the current configuration (``held``) or starts on it (``starts``); its switches
    (``gaps``, options less one); its slowest option's hours per epoch (``slowest``);
    and the index of the chain of that option alone where that comes earlier
    (``alone``, else -1; ``single``: none does). For the compiled search
    (:mod:`heuristic.sts.chainsearch`): the options' hours and cost per epoch and the
    cost of an hour of overhead on each (``option_time``, ``option_cost``,
    ``option_overhead``), the chains' indices one after another (``flat``; chain ``i`` is
    ``flat[offsets[i]:offsets[i + 1]]``), and where the current configuration sits in
    each chain (``places``, -1 if not)."""

    options: tuple[Option, ...]
    index: tuple[tuple[int, ...], ...]
    cost: np.ndarray
    time: np.ndarray
    hourly: np.ndarray
    held: np.ndarray
    starts: np.ndarray
    gaps: np.ndarray
    slowest: np.ndarray
    alone: np.ndarray
    single: np.ndarray
    option_time: np.ndarray
    option_cost: np.ndarray
    option_overhead: np.ndarray
    flat: np.ndarray
    offsets: np.ndarray
    places: np.ndarray
    # per (hours, left) of overhead: each chain's first overhead, its cost at the
    # chain's cheapest hour, and all its overheads (a job's overhead left is 0 but
    # while it relaunches: the arrays are reused from one decision to the next)
    _paid: dict[tuple[float, float], tuple[np.ndarray, np.ndarray, np.ndarray]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def paid(self, hours: float, left: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each chain's first step's least overhead (hours), its cost at the chain's
        cheapest hour, and the overheads of all its steps (the first's, ``left`` if it
        continues the current configuration)."""
        found = self._paid.get((hours, left))
        if found is None:
            lost = np.where(self.held, min(hours, left), hours)
            ahead = np.where(self.starts, left, hours) + hours * self.gaps
            found = self._paid[hours, left] = (lost, lost * self.hourly, ahead)
        return found


@functools.lru_cache(maxsize=4096)
def _layout(index: tuple[tuple[int, ...], ...], n: int, cur: int) -> tuple[np.ndarray, ...]:
    """What a :class:`ChainSet` reads of its chains' layout alone (``n`` options, the
    current one ``cur``, -1 for none): which options each holds, its slowest option,
    its switches, whether it holds or starts on the current option, ``alone``, and
    ``flat``, ``offsets`` and ``places``. Jobs share layouts; the arrays are
    read-only."""
    sizes = np.array([len(c) for c in index])
    member = np.zeros((len(index), n), dtype=bool)
    flat = np.array([k for c in index for k in c], dtype=np.int64)
    member[np.repeat(np.arange(len(index)), sizes), flat] = True
    first = np.array([c[0] for c in index])
    single: dict[int, int] = {}
    for i, c in enumerate(index):
        if len(c) == 1:
            single.setdefault(c[0], i)
    alone = np.array([j if (j := single.get(c[0], i)) < i else -1 for i, c in enumerate(index)])
    held = member[:, cur] if cur >= 0 else np.zeros(len(index), dtype=bool)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    places = np.array([c.index(cur) if cur in c else -1 for c in index], dtype=np.int64)
    gaps = (sizes - 1).astype(float)
    out = (member, first, gaps, held, first == cur, alone, flat, offsets, places)
    for a in out:
        a.flags.writeable = False
    return out


def chain_set(
    options: Sequence[Option],
    current: Config | None,
    hourly_cost: Mapping[Config, float],
    found: Sequence[tuple[int, ...]] | None = None,
) -> ChainSet:
    """The chains to try: ``found`` (:func:`chain_indices`, computed if not given) and,
    if none holds the job's current configuration, the chains that continue on it."""
    idx = list(found if found is not None else chain_indices(options))
    cur = next((k for k, o in enumerate(options) if o.config == current), None)
    if cur is not None and not any(cur in c for c in idx):
        idx += continuing_indices(options, cur)
    index = tuple(idx)
    member, first, gaps, held, starts, alone, flat, offsets, places = _layout(
        index, len(options), -1 if cur is None else cur
    )
    times = np.array([o.time for o in options], dtype=float)
    costs = np.array([o.cost for o in options], dtype=float)
    overheads = np.array([hourly_cost[o.config] for o in options], dtype=float)

    def least(values: np.ndarray) -> np.ndarray:
        return np.where(member, values, np.inf).min(axis=1)

    return ChainSet(
        tuple(options),
        index,
        least(costs),
        least(times),
        least(overheads),
        held,
        starts,
        gaps,
        times[first],
        alone,
        alone < 0,
        times,
        costs,
        overheads,
        flat,
        offsets,
        places,
    )
