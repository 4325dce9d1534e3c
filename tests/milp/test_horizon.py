"""The MILP's horizon in two stages (milp/solve.py, `_from_the_base`): where the reach
from the start is far past the base horizon, the base one is solved first and its best
plan sets a shorter reach; the result is the instance's optimum either way."""

from __future__ import annotations

from dataclasses import replace

import pytest

from heuristic.sts.policy import StsPolicy
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node, Plan, Segment
from milp import SolutionStatus, solve
from milp.alone import least_alone
from milp.data import milp_data
from milp.solve import TWO_STAGES, horizon
from tests.milp.brute_force import brute_force
from validation.evaluate import evaluate
from validation.simulator import rollout

ONE, TWO, FOUR = Config("v100", 1), Config("v100", 2), Config("v100", 4)
V100 = (GpuType("v100", 16.0, 300.0),)


def _two_jobs() -> Instance:
    """Two jobs of 1-4 and 1-3 epochs on one node of four GPUs, both due at hour 1, the
    second of weight 0.002 (expected mode): the STS rollout costs 1.656 where 1.59238
    exists, and from its cost the horizon reaches 134 slots (70 from the optimum's)."""
    times_a = {ONE: 1.0, TWO: 0.53, FOUR: 0.3}
    times_b = {ONE: 1.0, TWO: 0.51, FOUR: 0.3}
    jobs = (
        Job("a", 0.0, 1.0, EpochDistribution((1.0, 4.0), (0.5, 0.5)), times_a, 4.0, weight=0.3),
        Job("b", 0.0, 1.0, EpochDistribution((1.0, 3.0), (0.5, 0.5)), times_b, 4.0, weight=0.002),
    )
    return Instance(
        V100, (Node("n", "v100", 4),), jobs, energy_price=1.0, slot=1.0, tardiness="expected"
    )


def test_a_loose_reach_is_solved_from_the_base_horizons_optimum():
    inst = _two_jobs()
    start = rollout(inst, StsPolicy())
    loose = horizon(inst, start)
    assert loose.slots >= TWO_STAGES * loose.base
    res = solve(inst, initial_plan=start, time_limit=60)
    best, _ = brute_force(inst, 7)
    assert res.status is SolutionStatus.OPTIMAL
    assert res.objective == pytest.approx(best) == pytest.approx(1.592377358490566)
    assert res.bound == pytest.approx(best)
    # the second stage solves the reach of the first stage's optimum, not the start's
    assert res.slots == horizon(inst, res.plan).slots < loose.slots
    assert res.warm_start_cost == pytest.approx(evaluate(inst, start).total_cost)
    assert res.note.startswith("the base horizon of 5 slots first (optimum 1.59238)")


def test_a_base_optimum_that_reaches_no_further_is_the_instances():
    """One job of three epochs due at hour 3, weight 0.03: on one GPU it is on time at
    0.9; the start runs it on four (1.08), from whose cost it may end six hours late.
    The base horizon's optimum leaves no room for lateness, so its result, bound
    included, is the instance's, with no second stage."""
    job = Job(
        "j", 0.0, 3.0, EpochDistribution.deterministic(3.0), {ONE: 1.0, FOUR: 0.3}, 4.0, weight=0.03
    )
    inst = Instance(V100, (Node("n", "v100", 4),), (job,), energy_price=1.0, slot=1.0)
    start = Plan.of([Segment(0.0, 1.0, "j", FOUR, tuple(("n", g) for g in range(4)))])
    assert evaluate(inst, start).total_cost == pytest.approx(1.08)
    assert horizon(inst, start).slots >= TWO_STAGES * 3
    res = solve(inst, initial_plan=start, time_limit=60)
    best, _ = brute_force(inst, 10)
    assert res.status is SolutionStatus.OPTIMAL and res.slots == 3
    assert res.objective == pytest.approx(best) == pytest.approx(0.9)
    assert res.bound == pytest.approx(0.9)
    assert "no plan as good ends past it" in res.note


def test_a_cold_solve_in_two_stages_finds_the_optimum():
    """The first test's instance without a warm start: the base horizon's plan starts the
    second stage, and no start's cost is reported."""
    inst = _two_jobs()
    res = solve(inst, time_limit=60)
    assert res.status is SolutionStatus.OPTIMAL
    assert res.objective == pytest.approx(1.592377358490566)
    assert res.warm_start_cost is None


def test_the_optimum_as_cutoff_keeps_the_optimum_where_a_job_is_late_even_alone():
    """The tightest cutoff, the optimum's own cost, on the first test's instance: job
    `a` cannot be on time at its least energy, so the others' windows are cut by its
    least cost alone as well as by energies (milp/data.py, `_rooms`); the optimum stays."""
    inst = _two_jobs()
    best, plan = brute_force(inst, 7)
    a = inst.job("a")
    alone = least_alone(inst, a, "expected", inst.energy_price)
    assert alone is not None and alone > milp_data(inst, 7).jobs["a"].least_energy() + 0.1
    res = solve(inst, initial_plan=plan, slots=7, time_limit=60)
    assert res.status is SolutionStatus.OPTIMAL
    assert res.objective == pytest.approx(best)


def test_the_first_stages_note_says_what_it_found():
    """An optimum, a plan not proved, or nothing cheaper than the start (the note said
    "solved first" in each case)."""
    from milp.solve import _first_note

    inst = _two_jobs()
    start = rollout(inst, StsPolicy())
    res = solve(inst, initial_plan=start, time_limit=60)
    assert _first_note(res, start, 5) == "the base horizon of 5 slots first (optimum 1.59238)"
    unproved = replace(res, status=SolutionStatus.FEASIBLE)
    assert "best 1.59238 in its share of the time, not proved" in _first_note(unproved, start, 5)
    kept = replace(res, status=SolutionStatus.FEASIBLE, plan=start)
    assert "nothing cheaper than the start" in _first_note(kept, start, 5)
