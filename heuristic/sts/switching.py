"""Single-job profiles that pay for their switches (docs/model.md, E1).

With a relaunch overhead ``δ`` every step of a profile that is not the continuation of
what the job runs now costs ``δ`` hours without progress, at its configuration's power,
paid only if the job is still running when the step begins (``P(N > a)`` at its start
``a``). The LP of :mod:`heuristic.sts.profile` then gains fixed charges and is no longer a
knapsack. :func:`relaunch_profile` searches the *chains* of configurations a profile
may use: every subset of the lower hull, and every one or two configurations of the
Pareto front (off the hull, a single configuration can beat a mix that needs a switch).
For each chain it solves the exact profile with the budget shortened by the chain's
overheads, then prices the result with the overheads it really pays (fewer, if the
profile leaves a configuration out) and keeps the cheapest. A step that saves less
than its overhead costs is thus never taken. Not exact, since the overhead energy
depends on where a switch falls; ``tests/heuristic/sts/test_switching.py`` measures
the gap against a reference that enumerates those positions block by block.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from heuristic.sts.profile import Option, Profile, Step, greedy_parts, lower_hull, pareto_front
from instances import Config, EpochDistribution

# beyond this many hull configurations, the hull's subsets are not all tried: only the
# hull itself less one configuration at a time (real hulls have 1-5)
MAX_HULL_SUBSETS = 6


@dataclass(frozen=True)
class Relaunch:
    """What a job's switches cost: ``hours`` of overhead (``δ``), the energy cost per
    hour of overhead on each configuration, and the configuration it runs now with the
    overhead it has still to run there (continuing it is no relaunch)."""

    hours: float
    hourly_cost: Mapping[Config, float]
    current: Config | None = None
    left: float = 0.0


@dataclass(frozen=True)
class ChainStats:
    """What a chain's floor needs (:func:`relaunch_profile`): its cheapest cost per
    epoch, fastest hours per epoch, cheapest hour of overhead, and configurations; and
    what pricing its profile needs: the cost of an hour of overhead on each of its
    options, in order."""

    cost: float
    time: float
    hourly: float
    configs: frozenset[Config]
    each: tuple[float, ...]


def chain_stats(chain: Sequence[Option], hourly_cost: Mapping[Config, float]) -> ChainStats:
    return ChainStats(
        min(o.cost for o in chain),
        min(o.time for o in chain),
        min(hourly_cost[o.config] for o in chain),
        frozenset(o.config for o in chain),
        tuple(hourly_cost[o.config] for o in chain),
    )


def chains(options: Sequence[Option]) -> list[list[Option]]:
    """The configuration sets a profile may use, each slowest first and convex (a set
    whose lower hull is smaller is covered by that hull)."""
    hull = lower_hull(options)
    front = pareto_front(options)
    found: dict[tuple[Config, ...], list[Option]] = {}

    def add(c: Sequence[Option]) -> None:
        if c and lower_hull(c) == list(c):
            found.setdefault(tuple(o.config for o in c), list(c))

    if len(hull) <= MAX_HULL_SUBSETS:
        for r in range(1, len(hull) + 1):
            for sub in itertools.combinations(hull, r):
                add(sub)
    else:
        add(hull)
        for i in range(len(hull)):
            add(hull[:i] + hull[i + 1 :])
    for r in (1, 2):
        for sub in itertools.combinations(front, r):
            add(sub)
    return list(found.values())


def continuing(options: Sequence[Option], current: Config | None) -> list[list[Option]]:
    """Chains that start on the configuration the job runs now (for a job none of
    whose chains has it): continuing it is free, so even an option off the Pareto front
    may pay (alone, or before a faster and dearer one)."""
    if current is None:
        return []
    now = next((o for o in options if o.config == current), None)
    if now is None:
        return []
    out = [[now]]
    for o in options:
        if o.time < now.time and o.cost > now.cost:
            out.append([now, o])
    return out


def _priced(
    chain: Sequence[Option],
    each: Sequence[float],
    parts: Sequence[tuple[int, float, float]],
    dist: EpochDistribution,
    relaunch: Relaunch,
) -> tuple[list[float], float, float]:
    """The overhead each step of a profile on ``chain`` pays (steps as chain index,
    start, end; ``each``: an hour of overhead's cost on each option), its worst-case
    hours with the overheads, and the overheads' expected energy cost."""
    losts = []
    overhead = 0.0
    for n, (k, start, _) in enumerate(parts):
        lost = relaunch.left if n == 0 and chain[k].config == relaunch.current else relaunch.hours
        losts.append(lost)
        overhead += each[k] * lost * dist.beyond(start)
    worst = sum(
        (end - start) * chain[k].time + lost
        for (k, start, end), lost in zip(parts, losts, strict=True)
    )
    return losts, worst, overhead


@dataclass(frozen=True)
class ChainSet:
    """The chains a job's profiles on one GPU type search while it runs ``current`` (or
    waits), with what their floors and the search read, as arrays: STS solves a job's
    profile at every decision, and its chains change only when ``current`` does.

    ``held``: the chain holds the current configuration; ``starts``: its slowest option
    is the current configuration; ``alone``: the index of the chain of its slowest
    option alone where that comes earlier (else -1), whose profile it is whenever its
    own needs no faster option (:func:`relaunch_profile`)."""

    chains: tuple[Sequence[Option], ...]
    stats: tuple[ChainStats, ...]
    held: np.ndarray
    cost: np.ndarray
    time: np.ndarray
    hourly: np.ndarray
    starts: tuple[bool, ...]
    size: tuple[int, ...]
    slowest: tuple[float, ...]
    alone: tuple[int, ...]


def chain_set(
    options: Sequence[Option],
    relaunch: Relaunch,
    candidates: Sequence[Sequence[Option]] | None = None,
    stats: Sequence[ChainStats] | None = None,
) -> ChainSet:
    """The chains to try (``candidates``, with their ``stats`` if the caller keeps
    them, else :func:`chains`; if none holds the job's current configuration, the chains
    that continue on it are added) and what the search reads of them."""
    tried: list[Sequence[Option]] = list(candidates if candidates is not None else chains(options))
    known = list(stats) if stats is not None and candidates is not None else []
    known += [chain_stats(c, relaunch.hourly_cost) for c in tried[len(known) :]]
    current = relaunch.current
    held = [current is not None and current in st.configs for st in known]
    if not any(held):
        extra = continuing(options, current)
        tried += extra
        known += [chain_stats(c, relaunch.hourly_cost) for c in extra]
        held += [True] * len(extra)
    single = {c[0].config: i for i, c in reversed(list(enumerate(tried))) if len(c) == 1}
    return ChainSet(
        tuple(tried),
        tuple(known),
        np.array(held, dtype=bool),
        np.array([st.cost for st in known], dtype=float),
        np.array([st.time for st in known], dtype=float),
        np.array([st.hourly for st in known], dtype=float),
        tuple(c[0].config == current for c in tried),
        tuple(len(c) for c in tried),
        tuple(c[0].time for c in tried),
        tuple(j if (j := single.get(c[0].config, i)) < i else -1 for i, c in enumerate(tried)),
    )


def _floors(
    cs: ChainSet, mean: float, worst: float, budget: float, omega: float, r: Relaunch
) -> list[float]:
    """No profile on a chain costs less than its floor: every expected epoch at the
    chain's cheapest cost, the first step's overhead (surely paid) at its cheapest hour,
    and the lateness of every epoch at its fastest time after that overhead. (Elementwise
    in the order of the scalar formula: the same floats.)"""
    lost = np.where(cs.held, min(r.hours, r.left), r.hours)
    late = np.maximum(0.0, worst * cs.time + lost - budget)
    floors: list[float] = (mean * cs.cost + lost * cs.hourly + omega * late).tolist()
    return floors


def relaunch_profile(
    options: Sequence[Option],
    dist: EpochDistribution,
    budget: float,
    omega: float,
    relaunch: Relaunch,
    candidates: Sequence[Sequence[Option]] | None = None,
    stats: Sequence[ChainStats] | None = None,
    *,
    prune: bool = True,
    chained: ChainSet | None = None,
) -> Profile:
    """The cheapest profile found over :func:`chains` (or ``candidates``, when the
    caller has them, with their ``stats`` if it keeps those too, or their whole
    :class:`ChainSet` as ``chained``) with the overhead paid; see the module docstring.
    ``prune=False`` solves every chain (the same profile, more slowly: a test compares
    them)."""
    cs = chained if chained is not None else chain_set(options, relaunch, candidates, stats)
    # Chains in order of their floor, until a floor exceeds the best found: the ones
    # left out cannot win. Ties go to the earlier chain, as if every chain were solved
    # in that order (same profiles as without the floors). A chain whose slowest option
    # alone meets its budget runs that option throughout: the very profile of that
    # option's own chain, which comes earlier and so wins the tie; it is not solved.
    # Only the best profile's steps are built.
    floors = _floors(cs, dist.mean(), dist.max_epochs, budget, omega, relaunch)
    work = sum(dist.block_lengths)  # as greedy_parts sums it
    best: tuple[int, list[tuple[int, float, float]], list[float], float, float, float] | None
    best = None
    best_key: tuple[float, int, int] | None = None
    limit = math.inf
    for i in sorted(range(len(floors)), key=floors.__getitem__):  # stable: ties by index
        if prune and floors[i] > limit:
            break
        first = relaunch.left if cs.starts[i] else relaunch.hours
        reduced = budget - (first + relaunch.hours * (cs.size[i] - 1))
        if prune and cs.alone[i] >= 0 and not work * cs.slowest[i] > reduced + 1e-12:
            continue
        chain = cs.chains[i]
        parts, _, energy = greedy_parts(chain, dist, reduced, omega)
        losts, time, overhead = _priced(chain, cs.stats[i].each, parts, dist, relaunch)
        energy += overhead
        late = omega * max(0.0, time - budget)
        key = (energy + late, len(parts), i)
        if best_key is None or key < best_key:
            best, best_key = (i, parts, losts, time, energy, late), key
            limit = key[0] * (1 + 1e-9) + 1e-15
    assert best is not None, "a job has at least one option"
    i, parts, losts, time, energy, late = best
    steps = tuple(
        Step(cs.chains[i][k].config, start, end, lost)
        for (k, start, end), lost in zip(parts, losts, strict=True)
    )
    return Profile(steps, time, energy, late, budget)
