"""The compiled search over a job's chains (heuristic/sts/chainsearch.py) against the
same search written in Python from the profile's own greedy (the form it replaced):
the same profile to the last bit, pruned or not."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristic.sts.chainset import ChainSet, chain_set
from heuristic.sts.profile import Option, Profile, Step, greedy_parts
from heuristic.sts.switching import Relaunch, relaunch_profile
from instances import Config, EpochDistribution
from tests.heuristic.sts.test_switching import random_case


def _priced(chain, each, parts, dist, relaunch, at):
    """The overhead each step pays, the profile's worst-case hours with them, and their
    expected energy cost."""
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


def python_profile(cs: ChainSet, dist, budget, omega, relaunch: Relaunch, prune=True):
    """The search as it was written in Python: chains in order of their floor, each
    one's greedy profile priced with its overheads, the cheapest kept."""
    lost, lost_cost, ahead = cs.paid(relaunch.hours, relaunch.left)
    late = np.maximum(0.0, dist.max_epochs * cs.time + lost - budget)
    floors = dist.mean() * cs.cost + lost_cost + omega * late
    reduced = budget - ahead
    if prune:
        work = sum(dist.block_lengths)
        todo = np.flatnonzero(cs.single | (work * cs.slowest > reduced + 1e-12))
    else:
        todo = np.arange(len(cs.index))
    todo = todo[np.argsort(floors[todo], kind="stable")]
    low, budgets = floors.tolist(), reduced.tolist()
    best, best_key, limit = None, None, math.inf
    for i in todo.tolist():
        if prune and low[i] > limit:
            break
        chain = [cs.options[k] for k in cs.index[i]]
        each = [float(cs.option_overhead[k]) for k in cs.index[i]]
        at = int(cs.places[i])
        parts, _, energy = greedy_parts(chain, dist, budgets[i], omega)
        losts, time, overhead = _priced(chain, each, parts, dist, relaunch, at)
        energy += overhead
        tardy = omega * max(0.0, time - budget)
        key = (energy + tardy, len(parts), i)
        if best_key is None or key < best_key:
            best, best_key = (i, parts, losts, time, energy, tardy), key
            limit = key[0] * (1 + 1e-9) + 1e-15
    i, parts, losts, time, energy, tardy = best
    steps = tuple(
        Step(cs.options[cs.index[i][k]].config, start, end, lost)
        for (k, start, end), lost in zip(parts, losts, strict=True)
    )
    return Profile(steps, time, energy, tardy, budget)


def wide_case(rng: np.random.Generator):
    """Larger than the reference's cases: up to seven configurations on two types' worth
    of sizes, up to 40 stopping points on up to 200 epochs (some with no job stopping
    there, and conditioned on progress, each half the time), overheads from none to an
    hour, budgets from late to loose."""
    n = int(rng.integers(1, 8))
    options = []
    for i in range(n):
        t = float(rng.uniform(0.05, 1.0))
        config = Config("v100", 2**i) if i < 4 else Config("a100", 2 ** (i - 4))
        options.append(Option(config, t, float(rng.uniform(0.1, 1.0)) / t**0.5))
    E = int(rng.integers(2, 200))
    inner = sorted({int(x) for x in rng.integers(1, E, size=int(rng.integers(0, 40)))})
    stops = tuple(float(x) for x in [*inner, E])
    p = rng.dirichlet(np.ones(len(stops)) * float(rng.choice([0.2, 1.0, 5.0])))
    if rng.random() < 0.5:  # stops where no job stops: blocks of equal survival, so
        p[:-1] *= rng.random(len(p) - 1) < 0.5  # upgrades of equal rate, ordered by block
    p[-1] = max(p[-1], 1e-3)
    dist = EpochDistribution(stops, tuple(float(x) for x in p / p.sum()))
    if rng.random() < 0.5:
        dist = dist.conditional(float(rng.uniform(0, E * 0.9)))
    hours = float(rng.choice([0.0, 0.05, 0.2, 0.5, 1.0]))
    hourly = {o.config: float(rng.uniform(0.05, 0.5)) for o in options}
    current = options[int(rng.integers(n))].config if rng.random() < 0.5 else None
    left = float(rng.choice([0.0, hours / 2, hours])) if current is not None else 0.0
    budget = min(o.time for o in options) * dist.max_epochs * float(rng.uniform(-0.5, 4.0))
    omega = float(rng.uniform(0.5, 50.0))
    return options, dist, budget, omega, Relaunch(hours, hourly, current, left)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans(), st.booleans())
def test_the_compiled_search_gives_the_python_searchs_profile(seed, wide, prune):
    rng = np.random.default_rng(seed)
    options, dist, budget, omega, rl = (wide_case if wide else random_case)(rng)
    cs = chain_set(options, rl.current, rl.hourly_cost)
    got = relaunch_profile(options, dist, budget, omega, rl, prune=prune, chained=cs)
    assert got == python_profile(cs, dist, budget, omega, rl, prune)
