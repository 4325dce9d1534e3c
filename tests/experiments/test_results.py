"""One result vocabulary: the MILP solve, the neighbourhood search, the Lagrangian bound,
the clairvoyant bound and the STS search each answer ``objective``, ``bound``, ``gap``,
``status``, ``termination``, ``runtime`` and ``summary()``, with no second name for any
of them."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from experiments.bound import clairvoyant_bound
from heuristic.core.result import SolutionStatus, Termination, relative_gap
from heuristic.sts.policy import StsPolicy
from instances.generators.suite import milp_suite
from milp import improve, lagrangian_bound, solve
from milp.improve import tune_sts
from milp.solve import base_slots
from validation.evaluate import evaluate
from validation.simulator import rollout

VOCABULARY = ("objective", "bound", "gap", "status", "termination", "runtime")
OLD_NAMES = ("seconds", "cost", "value", "mean", "first")


@pytest.fixture(scope="module")
def results():
    inst = milp_suite()[0]  # 2 nodes, 4 jobs: every method runs in seconds
    start = rollout(inst, StsPolicy())
    slots = base_slots(inst, start)
    return inst, {
        "solve": solve(inst, initial_plan=start, time_limit=30, threads=1),
        "improve": improve(inst, time_limit=30, search_evaluations=20, iterations=2),
        "lagrange": lagrangian_bound(inst, slots, states=16, time_limit=30),
        "clairvoyant": clairvoyant_bound(inst, scenarios=2, time_limit=30),
        "search": tune_sts(inst, evaluations=20),
    }


def test_every_result_speaks_the_vocabulary_and_nothing_twice(results):
    _, found = results
    for name, res in found.items():
        for field in VOCABULARY:
            assert hasattr(res, field), (name, field)
        assert isinstance(res.status, SolutionStatus), name
        assert isinstance(res.termination, Termination), name
        assert res.runtime > 0, name
        assert res.gap == relative_gap(res.objective, res.bound), name
        assert [n for n in OLD_NAMES if hasattr(res, n)] == [], name


def test_each_summary_names_the_method_and_prints_the_figures(results):
    inst, found = results
    heads = {
        "solve": "MILP of",
        "improve": "neighbourhood search on",
        "lagrange": "Lagrangian bound of",
        "clairvoyant": "clairvoyant bound of",
        "search": "STS search on",
    }
    for name, res in found.items():
        text = res.summary()
        title, *lines = text.splitlines()
        assert title.startswith(heads[name]) and repr(inst.name) in title, name
        labels = [line.split()[0] for line in lines[:5]]
        assert labels == ["objective", "bound", "gap", "status", "runtime"], name
        assert f"{res.runtime:.2f} s" in lines[4], name
        assert "nan" not in text.lower(), name
        if res.objective is not None:
            assert f"{res.objective:.6g}" in lines[0], name


def test_what_a_method_has_not_it_says_it_has_not(results):
    inst, found = results
    search, lag = found["search"], found["lagrange"]
    # a heuristic proves no bound
    assert search.bound is None and search.gap is None
    assert search.status is SolutionStatus.FEASIBLE
    assert search.termination is Termination.OTHER_LIMIT  # its evaluation budget
    assert "none (no bound proved)" in search.summary()
    # a bound alone finds no plan
    assert lag.objective is None and lag.gap is None and lag.status is SolutionStatus.NONE
    assert lag.capacity_relaxation <= lag.bound
    # the solve's and the search's objective is the evaluator's cost of their plan
    for name in ("solve", "improve"):
        res = found[name]
        assert res.objective == evaluate(inst, res.plan).total_cost


def test_the_clairvoyant_bound_averages_its_scenarios(results):
    _, found = results
    res = found["clairvoyant"]
    assert res.bound == pytest.approx(np.mean(res.bounds))
    assert res.objective == pytest.approx(np.mean(res.costs))
    assert res.bound <= res.objective + 1e-9
    proved = res.proved == res.scenarios
    assert (res.status is SolutionStatus.OPTIMAL) == proved
    assert (res.termination is Termination.OPTIMAL) == proved


def test_the_neighbourhood_search_is_optimal_once_its_plan_meets_its_bound(results):
    _, found = results
    res = found["improve"]
    met = res.objective <= res.bound * (1 + 1e-9)
    assert (res.status is SolutionStatus.OPTIMAL) == met
    assert (res.termination is Termination.OPTIMAL) == met
    if not met:  # stopped after its two neighbourhoods
        assert res.termination is Termination.OTHER_LIMIT


def test_the_solve_takes_what_a_user_passes_and_no_search_plumbing():
    params = set(inspect.signature(solve).parameters)
    assert params == {
        "instance",
        "initial_plan",
        "slots",
        "slot",
        "time_limit",
        "mip_gap",
        "threads",
        "tardiness",
        "log_file",
        "stream",
    }
