"""The chains a job's profiles may use (heuristic/sts/chainset.py): built as indices
without re-sorting each subset, they must be the very chains of the definition (every
subset of the lower hull, every one or two options of the Pareto front, each kept if
it is its own lower hull), in the same order."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristic.sts.chainset import MAX_HULL_SUBSETS, chain_set, chains
from heuristic.sts.profile import Option, lower_hull, pareto_front
from instances import Config


def reference(options: list[Option]) -> list[list[Option]]:
    """The definition, as written before the chains were built as indices."""
    hull, front = lower_hull(options), pareto_front(options)
    found: dict[tuple[Config, ...], list[Option]] = {}

    def add(c: tuple[Option, ...]) -> None:
        if c and lower_hull(c) == list(c):
            found.setdefault(tuple(o.config for o in c), list(c))

    if len(hull) <= MAX_HULL_SUBSETS:
        for r in range(1, len(hull) + 1):
            for sub in itertools.combinations(hull, r):
                add(sub)
    else:
        add(tuple(hull))
        for i in range(len(hull)):
            add(tuple(hull[:i] + hull[i + 1 :]))
    for r in (1, 2):
        for sub in itertools.combinations(front, r):
            add(sub)
    return list(found.values())


@st.composite
def option_sets(draw: st.DrawFn) -> list[Option]:
    """Up to 9 options: random, repeated times or costs (ties), points on a line
    (turns of zero), or on a convex curve (hulls beyond MAX_HULL_SUBSETS)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = int(rng.integers(1, 10))
    kind = draw(st.sampled_from(["random", "ties", "line", "convex"]))
    times = np.sort(rng.uniform(0.1, 5.0, n))
    if kind == "convex":
        costs = 1.0 / times
    elif kind == "line":
        times = np.round(times, 1)
        costs = np.round(5.0 - times, 1)
    else:
        costs = rng.uniform(0.5, 5.0, n)
    if kind == "ties":
        times = rng.choice(times[: max(1, n // 2)], n)
        costs = rng.choice(costs[: max(1, n // 2)], n)
    pairs = zip(times.tolist(), costs.tolist(), strict=True)
    return [Option(Config("v100", g + 1), t, c) for g, (t, c) in enumerate(pairs)]


@settings(max_examples=400, deadline=None)
@given(option_sets())
def test_the_chains_are_those_of_the_definition(options):
    assert chains(options) == reference(options)


def test_a_chain_set_reads_the_current_configuration():
    a, b, c = (
        Option(Config("v100", g), t, k) for g, t, k in ((1, 4.0, 1.0), (2, 2.5, 1.4), (4, 2.0, 2.2))
    )
    hourly = {o.config: 0.1 * o.config.gpus for o in (a, b, c)}
    cs = chain_set([a, b, c], b.config, hourly)
    index = cs.index
    assert all(cs.held[i] == (1 in index[i]) for i in range(len(index)))
    assert all(cs.starts[i] == (index[i][0] == 1) for i in range(len(index)))
    # a chain that is its slowest option alone comes first, so the longer ones that start
    # on that option point to it
    for i, c_ in enumerate(index):
        j = int(cs.alone[i])
        assert (j == -1) == (len(c_) == 1 or (c_[0],) not in index[:i])
        if j >= 0:
            assert index[j] == (c_[0],)
    options = [[cs.options[k] for k in c_] for c_ in index]
    assert list(cs.cost) == [min(o.cost for o in chain) for chain in options]
    # the compiled search's layout: the chains one after another, the options' figures
    for i, chain in enumerate(options):
        held = cs.flat[cs.offsets[i] : cs.offsets[i + 1]].tolist()
        assert [cs.options[k] for k in held] == chain
        assert cs.places[i] == (index[i].index(1) if 1 in index[i] else -1)
    assert cs.option_overhead.tolist() == [hourly[o.config] for o in cs.options]
    assert cs.option_time.tolist() == [o.time for o in cs.options]


def test_a_job_running_off_its_chains_may_continue_where_it_runs():
    """An option off the Pareto front is in no chain: running it, the job may keep it
    (alone, or before a faster and dearer option)."""
    a, b = Option(Config("v100", 1), 4.0, 1.0), Option(Config("v100", 2), 2.0, 1.5)
    off = Option(Config("v100", 4), 3.0, 1.6)  # slower and dearer than b
    c = Option(Config("v100", 8), 1.0, 3.0)
    cs = chain_set([a, b, off, c], off.config, {o.config: 1.0 for o in (a, b, off, c)})
    assert cs.index[-2:] == ((2,), (2, 3))  # alone, or before c (faster and dearer)
    assert cs.held.tolist() == [False] * (len(cs.index) - 2) + [True, True]
