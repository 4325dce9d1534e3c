"""Branch-and-price: its optimum is brute force's (one node, sharing, overheads shorter
and longer than a slot, both tardiness modes; a stopped generation's bound below it)
and the compact MILP's on the suite; its
time limit holds; the same call gives the same result; its result reads as every
other (objective, bound, gap, status, termination, runtime, summary); the pool's
integer master finds the cheapest plan among the columns it holds."""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristic.core.result import SolutionStatus, Termination
from heuristic.sts.policy import StsPolicy
from instances.generators.suite import milp_suite, suite_instance
from milp.data import milp_data
from milp.decomposition import CgOptions, solve
from milp.decomposition.columns import columns_of_plan
from milp.decomposition.search import Incumbent, from_pool
from milp.decomposition.space import build_space
from milp.solve import base_slots
from tests.milp.brute_force import brute_force
from tests.milp.decomposition.reference import compact_optimum
from tests.milp.test_milp import _tiny
from validation.check import check_plan
from validation.evaluate import evaluate
from validation.simulator import rollout

SLOTS = 8


@settings(max_examples=30, deadline=None)
@given(
    st.integers(0, 100_000),
    st.booleans(),
    st.sampled_from([0.0, 0.2, 0.7]),
    st.sampled_from(["worst_case", "expected"]),
    st.sampled_from([1, 4]),
)
def test_branch_and_price_reaches_the_brute_force_optimum(seed, shared, delta, mode, rounds):
    """And a generation stopped after one or four master solves (no branching then)
    still bounds it: every round's Lagrangian bound is valid, and its plan costs what
    the evaluator says."""
    inst = _tiny(seed, shared=shared, tardiness=mode).replace(relaunch_hours=delta)
    best, _ = brute_force(inst, SLOTS)
    res = solve(inst, slots=SLOTS, time_limit=60)
    assert res.termination is Termination.OPTIMAL and res.optimal
    assert res.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert res.bound <= best + 1e-9 * max(1.0, best)
    short = solve(inst, slots=SLOTS, time_limit=None, options=CgOptions(rounds=rounds))
    assert short.root_bound <= best + 1e-9 * max(1.0, best)
    if short.plan is not None:
        assert evaluate(inst, short.plan).total_cost == pytest.approx(short.objective, rel=1e-12)
        assert short.objective >= best - 1e-9 * max(1.0, best)


def _suite(name: str):
    (inst,) = [i for i in milp_suite() if i.name == name]
    return inst


# The compact MILP's optima of the two instances with overheads on branch-and-price's
# slots, pinned: milp.solve(inst, slots=13) proved them at 7dc58b0 (8-12 s of CPU
# each, branch-and-price under 1 s; 0.1047 and 0.08237 in docs/benchmarks.md's table
# with measured overheads); excl-2n4j-s2's horizon reached 14 slots for a day (the
# reach under a flat bill, before it ended with the last slot ending by it), and
# milp.solve(inst, slots=14) proved the same optimum to the last digit (8.6 s,
# 2026-12-06). The compact MILP still solves suite-excl-2n4j-s2 on these
# slots in tests/milp/test_milp.py (the warm start's cutoff) and is held to brute force
# with sharing and overheads there; excl-3n6j-s1 (about 1 s) is still solved here.
PINNED = {
    "suite-excl-2n4j-s2": (13, 0.10473162826799803),
    "suite-share-2n4j-s2": (13, 0.08237228869472393),
}


@pytest.mark.parametrize(
    "name", ["suite-excl-2n4j-s2", "suite-share-2n4j-s2", "suite-excl-3n6j-s1"]
)
def test_branch_and_price_equals_the_compact_milp_on_the_suite(name):
    """Suite instances the compact MILP proves in seconds (with overheads, with
    sharing, without): the two optima agree, and the plan passes the checker."""
    inst = _suite(name)
    res = solve(inst, time_limit=60)
    assert res.optimal
    optimum = compact_optimum(name, inst, res.slots, PINNED, 60)
    assert res.objective == pytest.approx(optimum, rel=1e-6)
    assert res.plan is not None and check_plan(inst, res.plan) == []


def test_the_time_limit_holds_and_the_stopped_search_still_certifies():
    """The hardest suite run (share-2n6j-s2 without overheads: 225 nodes and about
    20 s of CPU to prove it) under a 2 s limit: the call returns within it and a
    little, with a plan, a bound below it and the time limit as its reason."""
    inst = suite_instance("suite-share-2n6j-s2", "none")
    t0 = time.perf_counter()
    res = solve(inst, time_limit=2.0)
    assert time.perf_counter() - t0 < 2.0 + 1.0
    assert res.termination is Termination.TIME_LIMIT
    assert res.status is SolutionStatus.FEASIBLE
    assert res.bound <= 0.111645 < res.objective + 1e-6  # the optimum (docs/benchmarks.md)


def test_the_same_call_gives_the_same_result():
    inst = _suite("suite-share-4n8j-s2")
    one, two = solve(inst, time_limit=60), solve(inst, time_limit=60)
    assert one.plan == two.plan
    assert (one.objective, one.bound, one.nodes, one.columns) == (
        two.objective,
        two.bound,
        two.nodes,
        two.columns,
    )


def test_the_result_speaks_the_vocabulary():
    inst = _suite("suite-excl-4n10j-s2")
    res = solve(inst, time_limit=60)
    assert res.optimal and res.gap == pytest.approx(0.0, abs=1e-6)
    assert res.objective == pytest.approx(res.evaluation.total_cost)
    text = res.summary()
    for label in ("objective", "bound", "gap", "status", "runtime", "root bound", "warm start"):
        assert label in text


def test_the_pool_gives_the_cheapest_plan_among_its_columns():
    """The restricted-master heuristic: from a pool holding the STS plan's columns and
    the optimum's, with the STS plan as the incumbent, it finds the optimum."""
    inst = _suite("suite-share-4n10j-s2")
    sts = rollout(inst, StsPolicy())
    slots = base_slots(inst, sts)
    best = solve(inst, initial_plan=sts, slots=slots, time_limit=60)
    assert best.optimal and best.plan is not None
    space = build_space(milp_data(inst, slots, None, None, check_size=False))
    start = columns_of_plan(space, sts)
    incumbent = Incumbent(start, math.fsum(c.cost for c in start))
    assert incumbent.cost > best.objective * (1 + 1e-3)  # else nothing to find
    from_pool(space, start + columns_of_plan(space, best.plan), incumbent, None)
    assert incumbent.cost == pytest.approx(best.objective, rel=1e-9)
    assert incumbent.columns is not None and len(incumbent.columns) == len(inst.jobs)


def test_columns_that_make_no_plan_are_refused_not_asserted():
    """At a tardiness weight of 1e20 (the reader takes up to 1e30) the integer master's
    columns left a job with none, and `gap` and `improve --method colgen` ended in an
    AssertionError (found by a probe, 2026-12-05): now a MilpError naming the instance
    and the weight, which the command line reports as an error."""
    from instances import read_instance
    from milp import MilpError
    from milp.decomposition.solve import solve as decompose
    from tests.conftest import DATA

    inst = read_instance(DATA / "extreme" / "huge_weight.json")
    with pytest.raises(MilpError, match=r"'t1': the columns chosen do not make a plan.*1e\+20"):
        decompose(inst, time_limit=20)


@pytest.mark.parametrize("seed", [3])
def test_a_tiny_currency_unit_gives_the_decomposition_the_same_optimum_scaled(seed):
    """The decomposition holds its costs in columns, masters, duals and pricing, none
    scaled: at an energy price of 1e-4 of the usual its bound was 0.75% above the
    optimum (found in review, 2026-12-05). The instance is restated in a unit a power
    of two larger (milp.decomposition.units) and the result read back."""
    from milp.decomposition.solve import solve as decompose
    from milp.decomposition.units import cost_factor, in_unit
    from tests.milp.test_milp import _tiny

    usual = _tiny(seed)
    tiny = usual.replace(energy_price=usual.energy_price * 1e-4)
    a, b = decompose(usual, slots=9, time_limit=20), decompose(tiny, slots=9, time_limit=20)
    assert a.optimal and b.optimal and a.objective is not None and b.objective is not None
    assert b.objective == pytest.approx(a.objective * 1e-4, rel=1e-9)
    assert b.bound == pytest.approx(a.bound * 1e-4, rel=1e-6)
    assert b.warm_start_cost == pytest.approx(a.warm_start_cost * 1e-4, rel=1e-9)
    assert cost_factor(0.5) == 1.0 and cost_factor(3e-5) == 2.0**16
    restated = in_unit(tiny, 2.0**16)
    assert restated is not None and restated.energy_price == tiny.energy_price * 2.0**16


def test_a_series_restated_in_another_unit_keeps_its_times_and_bound():
    from instances import InstanceError
    from instances.energy import Series

    series = Series.regular(1.0, [0.1, 0.3], "hold")
    scaled = series.scaled(4.0)
    assert scaled.values == (0.4, 1.2) and scaled.times == series.times
    assert scaled.after == "hold" and scaled.integral(0.0, 2.0) == pytest.approx(1.6)
    with pytest.raises(InstanceError, match="scaled by 1e\\+07"):
        series.scaled(1e7)
