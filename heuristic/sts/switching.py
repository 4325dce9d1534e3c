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
than its overhead costs is thus never taken (the search runs compiled:
:mod:`heuristic.sts.chainsearch`). Not exact, since the overhead energy
depends on where a switch falls; ``tests/heuristic/sts/test_switching.py`` measures
the gap against a reference that enumerates those positions block by block.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from heuristic.sts.chainsearch import search
from heuristic.sts.chainset import ChainSet, chain_set
from heuristic.sts.profile import Option, Profile, Step
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
    i, ks, starts, ends, losts, time, energy, late = search(
        cs, dist, budget, omega, relaunch.hours, relaunch.left, prune
    )
    assert i >= 0, "a job has at least one option"
    chain = cs.index[i]
    steps = tuple(
        Step(cs.options[chain[k]].config, start, end, lost)
        for k, start, end, lost in zip(
            ks.tolist(), starts.tolist(), ends.tolist(), losts.tolist(), strict=True
        )
    )
    return Profile(steps, time, energy, late, budget)
