"""A pricing round spread over forked processes gives what one process gives: the same
bounds, values, exactness and columns, heuristic and exact, and the whole column
generation the same bound; the groups partition the jobs with their work balanced."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from milp.decomposition import oracle as oracle_module
from milp.decomposition import spread
from milp.decomposition.colgen import CgOptions, _best_known, generate
from milp.decomposition.oracle import Oracle
from tests.milp.decomposition.instances import two_nodes
from tests.milp.decomposition.root import root_master

SLOTS = 8


@given(st.lists(st.integers(0, 1000), min_size=1, max_size=30), st.integers(1, 5))
@settings(max_examples=60, deadline=None)
def test_balanced_groups_partition_the_items_evenly(weights, groups):
    got = spread.balanced(weights, groups)
    assert sorted(j for g in got for j in g) == list(range(len(weights)))
    assert all(g == sorted(g) for g in got) and len(got) <= groups
    loads = [sum(weights[j] for j in g) for g in got]
    if len(got) == groups:  # greedy by weight: no group beats another by more than one item
        assert max(loads) - min(loads) <= max(weights)


def test_fan_out_keeps_the_items_order():
    weights = [5, 1, 9, 3, 7]

    def part(group):
        return [(j, len(group)) for j in group]

    for one_by_one in (True, False):
        got = spread.fan_out(part, weights, 2, one_by_one=one_by_one)
        assert got is not None and [j for j, _ in got] == list(range(5))
        assert all(size == 1 for _, size in got) == one_by_one
    assert spread.fan_out(part, weights, 1, one_by_one=True) is None  # one worker: not spread


def test_a_daemonic_process_prices_alone(monkeypatch):
    """A daemonic process (a Dask or multiprocessing pool's worker) may not have
    children: the round is not spread there."""
    import multiprocessing
    import types

    monkeypatch.setattr(
        multiprocessing, "current_process", lambda: types.SimpleNamespace(daemon=True)
    )
    assert spread.fan_out(lambda g: list(g), [1, 2, 3], 2, one_by_one=False) is None


@pytest.mark.parametrize("delta", [0.0, 0.2])
def test_a_spread_round_prices_as_one_process(monkeypatch, delta):
    monkeypatch.setattr(oracle_module, "SPREAD_WORK", 0)  # spread even these small rounds
    inst = two_nodes(1, jobs=3, delta=delta)
    master, alone, _ = root_master(inst, SLOTS)
    _, lam, _ = master.solve()
    lam = lam + np.random.default_rng(0).uniform(0, 0.05, lam.shape)  # prices that bite
    spread_out = Oracle(master.space, CgOptions().grid, workers=2)
    calls = []
    real = spread.fan_out
    monkeypatch.setattr(oracle_module, "fan_out", lambda *a, **k: calls.append(1) or real(*a, **k))
    upper = _best_known(master, lam)
    found = []
    for beam, budget in ((4, None), (None, None), (None, 3)):
        a = alone.price(lam, upper, beam=beam, keep=3, budget=budget)
        b = spread_out.price(lam, upper, beam=beam, keep=3, budget=budget)
        assert np.array_equal(a.lower, b.lower) and np.array_equal(a.value, b.value)
        assert np.array_equal(a.exact, b.exact)
        assert [(c.job, c.start, c.choices, c.cost) for c in a.columns] == [
            (c.job, c.start, c.choices, c.cost) for c in b.columns
        ]
        found.append(len(a.columns))
    assert len(calls) == 6  # each oracle's every round went through fan_out
    assert found[1] > 0 and a.exact.sum() < len(a.exact)  # columns found; budget 3 cut some


def test_the_generation_spread_ends_at_the_same_bound(monkeypatch):
    monkeypatch.setattr(oracle_module, "SPREAD_WORK", 0)
    inst = two_nodes(2, jobs=3, delta=0.2)
    bounds = []
    for workers in (1, 2):
        master, _, floor = root_master(inst, SLOTS)
        oracle = Oracle(master.space, CgOptions().grid, workers=workers)
        gen = generate(master, oracle, CgOptions(), floor, None)
        bounds.append((gen.bound, gen.lp_value, gen.rounds, gen.termination))
    assert bounds[0] == bounds[1]


@pytest.mark.parametrize("workers", [0, -2, 1.5])
def test_a_bad_worker_count_is_refused_by_name(workers):
    from milp.decomposition.solve import solve
    from milp.requirements import MilpError

    with pytest.raises(MilpError, match="workers"):
        solve(two_nodes(0), slots=SLOTS, options=CgOptions(workers=workers))
