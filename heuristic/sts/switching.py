"""Single-job profiles that pay for their switches (docs/model.md, E1).

With a relaunch overhead ``δ`` every step of a profile that is not the continuation of
what the job runs now costs ``δ`` hours without progress, at its configuration's power,
paid only if the job is still running when the step begins (``P(N > a)`` at its start
``a``). The LP of :mod:`heuristic.sts.profile` then gains fixed charges and is no longer a
knapsack. :func:`relaunch_profile` searches the *chains* of configurations a profile
may use (:mod:`heuristic.sts.chainset`): every subset of the lower hull, and every one
or two configurations of the Pareto front (off the hull, a single configuration can
beat a mix that needs a switch).
For each chain it solves the exact profile with the budget shortened by the chain's
overheads, then prices the result with the overheads it really pays (fewer, if the
profile leaves a configuration out) and keeps the cheapest. A step that saves less
than its overhead costs is thus never taken. Not exact, since the overhead energy
depends on where a switch falls; ``tests/heuristic/sts/test_switching.py`` measures
the gap against a reference that enumerates those positions block by block.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from heuristic.sts.chainset import ChainSet, chain_set
from heuristic.sts.profile import Option, Profile, Step, greedy_parts
from instances import Config, EpochDistribution


@dataclass(frozen=True)
class Relaunch:
    """What a job's switches cost: ``hours`` of overhead (``δ``), the energy cost per
    hour of overhead on each configuration, and the configuration it runs now with the
    overhead it has still to run there (continuing it is no relaunch)."""

    hours: float
    hourly_cost: Mapping[Config, float]
    current: Config | None = None
    left: float = 0.0


def _priced(
    chain: Sequence[Option],
    each: Sequence[float],
    parts: Sequence[tuple[int, float, float]],
    dist: EpochDistribution,
    relaunch: Relaunch,
    at: int,
) -> tuple[list[float], float, float]:
    """The overhead each step of a profile on ``chain`` pays (steps as chain index,
    start, end; ``each``: an hour of overhead's cost on each option; ``at``: where the
    current configuration sits in the chain, -1 if not), its worst-case hours with the
    overheads, and the overheads' expected energy cost."""
    losts = []
    overhead = 0.0
    for n, (k, start, _) in enumerate(parts):
        lost = relaunch.left if n == 0 and k == at else relaunch.hours
        losts.append(lost)
        overhead += each[k] * lost * dist.beyond(start)
    worst = sum(
        (end - start) * chain[k].time + lost
        for (k, start, end), lost in zip(parts, losts, strict=True)
    )
    return losts, worst, overhead


def _floors(
    cs: ChainSet, mean: float, worst: float, budget: float, omega: float, r: Relaunch
) -> np.ndarray:
    """No profile on a chain costs less than its floor: every expected epoch at the
    chain's cheapest cost, the first step's overhead (surely paid) at its cheapest hour,
    and the lateness of every epoch at its fastest time after that overhead. (Elementwise
    in the order of the scalar formula: the same floats.)"""
    lost, lost_cost, _ = cs.paid(r.hours, r.left)
    late = np.maximum(0.0, worst * cs.time + lost - budget)
    floors: np.ndarray = mean * cs.cost + lost_cost + omega * late
    return floors


def relaunch_profile(
    options: Sequence[Option],
    dist: EpochDistribution,
    budget: float,
    omega: float,
    relaunch: Relaunch,
    *,
    prune: bool = True,
    chained: ChainSet | None = None,
) -> Profile:
    """The cheapest profile found over the chains of ``options`` (or ``chained``, their
    :class:`ChainSet` where the caller keeps it) with the overhead paid; see the module
    docstring. ``prune=False`` solves every chain (the same profile, more slowly: a test
    compares them)."""
    cs = chained
    if cs is None:
        cs = chain_set(options, relaunch.current, relaunch.hourly_cost)
    # Chains in order of their floor, until a floor exceeds the best found: the ones
    # left out cannot win. Ties go to the earlier chain, as if every chain were solved
    # in that order (same profiles as without the floors). A chain whose slowest option
    # alone meets its budget (shortened by its overheads) runs that option throughout:
    # the very profile of that option's own chain, which comes earlier and so wins the
    # tie; it is not solved. Only the best profile's steps are built.
    floors = _floors(cs, dist.mean(), dist.max_epochs, budget, omega, relaunch)
    reduced = budget - cs.paid(relaunch.hours, relaunch.left)[2]
    if prune:
        work = sum(dist.block_lengths)  # as greedy_parts sums it
        todo = np.flatnonzero(cs.single | (work * cs.slowest > reduced + 1e-12))
    else:
        todo = np.arange(len(cs.index))
    todo = todo[np.argsort(floors[todo], kind="stable")]  # ties by index
    low, budgets = floors.tolist(), reduced.tolist()
    best: tuple[int, list[tuple[int, float, float]], list[float], float, float, float] | None
    best = None
    best_key: tuple[float, int, int] | None = None
    limit = math.inf
    for i in todo.tolist():
        if prune and low[i] > limit:
            break
        chain = cs.chain(i)
        parts, _, energy = greedy_parts(chain, dist, budgets[i], omega)
        losts, time, overhead = _priced(chain, cs.each(i), parts, dist, relaunch, cs.at[i])
        energy += overhead
        late = omega * max(0.0, time - budget)
        key = (energy + late, len(parts), i)
        if best_key is None or key < best_key:
            best, best_key = (i, parts, losts, time, energy, late), key
            limit = key[0] * (1 + 1e-9) + 1e-15
    assert best is not None, "a job has at least one option"
    i, parts, losts, time, energy, late = best
    steps = tuple(
        Step(cs.options[cs.index[i][k]].config, start, end, lost)
        for (k, start, end), lost in zip(parts, losts, strict=True)
    )
    return Profile(steps, time, energy, late, budget)
