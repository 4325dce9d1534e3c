"""Edges of STS's timing under a changing price (heuristic/sts/timing.py, cells.py) that a
mutation review found free to move: a late price-blind profile against a timed faster
one, a running job's relaunch where it would pause, the expected power of a later
step's relaunch, ties between equally cheap windows, the late search's gate and its
whole-cell budgets, and the recovering margin's catch-up."""

from __future__ import annotations

import math

import numpy as np
import pytest

from heuristic.core.occupancy import Allocation
from heuristic.core.policy import JobStatus
from heuristic.core.registry import make_policy
from heuristic.sts.cells import place_runs
from heuristic.sts.hulls import HullTable, JobProfiles
from heuristic.sts.profile import Profile, Step
from heuristic.sts.tariff import Grid, Tariff
from heuristic.sts.timing import _catch_up, _Late, load, power_at, timing
from instances import Config, EpochDistribution, Job
from tests.heuristic.sts.test_timing import _late_by_a_hair, _one_job, _spike
from validation.evaluate import evaluate
from validation.simulator import simulate

ONE, FOUR = Config("v100", 1), Config("v100", 4)


def test_a_late_blind_profile_loses_to_a_timed_one_dearer_in_energy_only():
    """Six epochs due at 6.09 h after a 0.1-h launch: on one V100 the run ends 0.01 h
    late, which at weight 100 (1.0) costs less than four V100s' dearer epochs at the
    reference price, so the price-blind profile is late. Under the series four V100s
    in the cheap hours 2-4 bill more energy than the slow run (2.07 against 1.53) but
    less than its energy and tardiness together: the timed profile is compared on the
    objective, not on the energy alone, and the due date is met."""
    job = _late_by_a_hair(10.0)
    inst = _one_job(job, [1.0, 1.0, 0.47, 0.47, 0.47] + [1.0] * 19, energy_price=1.0)
    blind = evaluate(inst, simulate(inst, make_policy("sts-price-blind")).plan)
    assert blind.missed == 1
    ev = evaluate(inst, simulate(inst, make_policy("sts")).plan)
    assert ev.missed == 0
    assert ev.energy_cost > blind.energy_cost
    assert ev.total_cost < blind.total_cost


def test_a_running_job_does_not_pause_where_its_relaunch_costs_more_than_it_saves():
    """A job running on one V100 with three epochs left and a 0.5-h relaunch, at hour
    1.0 of 1.0 per kWh, then 0.9: running on costs 0.57; pausing for the cheap hour and
    resuming costs 0.54 plus the relaunch's 0.135. Its timed profile runs on; a job
    that does not run yet starts in the cheaper hour."""
    job = Job(
        "j",
        0.0,
        12.0,
        EpochDistribution.deterministic(4.0),
        {ONE: 1.0},
        4.0,
        relaunch_hours=0.5,
    )
    inst = _one_job(job, [0.5, 1.0] + [0.9] * 22)
    table = HullTable(inst, rule=make_policy("sts").options.timing_rule)
    running = JobStatus(job, 1.0, Allocation(ONE, (("n", 0),)))
    found = next(iter(JobProfiles(inst, running, 1.0, ("v100",), table).in_order())).profile
    assert not found.runs or found.runs == ((0.0, pytest.approx(3.0)),)
    waiting = JobStatus(job, 1.0, None)
    found = next(iter(JobProfiles(inst, waiting, 1.0, ("v100",), table).in_order())).profile
    assert found.runs and found.runs[0][0] == pytest.approx(1.0)


def test_a_later_steps_relaunch_draws_power_while_the_job_may_still_run():
    """A profile of one epoch on one V100, then a 0.25-h relaunch onto four V100s for
    the second: the relaunch's row draws the four GPUs' 1.2 kW times the chance that
    the job runs past its first epoch (0.5), as the evaluator bills it."""
    job = Job("j", 0.0, 12.0, EpochDistribution((1.0, 2.0), (0.5, 0.5)), {ONE: 1.0, FOUR: 0.4}, 4.0)
    inst = _one_job(job, [1.0] * 24)
    prof = Profile((Step(ONE, 0.0, 1.0), Step(FOUR, 1.0, 2.0, lost=0.25)), 1.65, 0.0, 0.0, 12.0)
    rows = load(inst, job, prof, job.distribution)
    expected = [[0.0, 1.0, 0.3], [1.0, 1.25, 0.6], [1.25, 1.65, 0.6]]
    assert rows.ravel().tolist() == pytest.approx(np.ravel(expected).tolist())


def test_the_power_at_a_rows_start_is_that_rows():
    """A run time on the edge between two rows reads the row starting there."""
    rows = np.array([[0.0, 1.0, 0.3], [1.0, 2.0, 1.2]])
    assert power_at(rows, np.array([0.0, 0.5, 1.0, 1.5])).tolist() == [0.3, 0.3, 1.2, 1.2]


def test_a_relaunch_of_exactly_one_cell_does_not_pause_the_run():
    """A resume whose relaunch lasts a whole cell would make no progress in a one-cell
    window: a two-hour run stays back to back (5.1, through a dear cell) rather than
    pause over it (0.3 with the relaunch's hour billed)."""
    rows = np.array([[0.0, 2.0, 1.0]])
    grid = Grid(np.array([0.0, 1.0, 2.0, 3.0, 4.0]), np.array([0.1, 5.0, 0.1, 5.0]))
    cost, windows = timing(rows, grid, 1.0, running=False)
    assert len(windows) == 1
    assert cost == pytest.approx(5.1)
    cost, windows = timing(rows, grid, 0.9, running=False)  # a resume within a cell
    assert windows == ((0.0, 1.0), (2.0, 3.0)) and cost == pytest.approx(0.29)


def test_equally_cheap_windows_go_to_the_earliest():
    """Two hours of run at 1 kW with a short first cell: running its half hour and
    pausing over the dear cell (0.5 + 1.0 + 0.5 + a 0.2-h relaunch at 1.0) or idling
    it and pausing likewise (1.0 + 1.0 + the relaunch) bill the same 2.2: the earlier
    run is kept (slack is kept, as in place_runs)."""
    rows = np.array([[0.0, 2.0, 1.0]])
    grid = Grid(np.array([0.0, 0.5, 1.5, 2.5, 3.5]), np.array([1.0, 1.0, 2.0, 1.0]))
    cost, windows = timing(rows, grid, 0.2, running=False)
    assert cost == pytest.approx(2.2)
    assert windows[0][0] == 0.0


def test_place_runs_resumes_on_a_tie_with_running_on():
    """Two portions; the last may not end in cell 1 (a tail of 10 there): portion 0 in
    cell 0 and a free resume in cell 2, or portion 0 in cell 1 and on into cell 2, cost
    the same. Ties go to the earlier cells."""
    cost, cells = place_runs(
        np.ones(2), np.ones(3), np.zeros(2), False, tail=np.array([0.0, 10.0, 0.0])
    )
    assert cost == pytest.approx(2.0)
    assert cells.tolist() == [0, 2]


def test_the_late_search_opens_where_an_hour_bills_more_than_an_hour_late():
    """The spike bills four V100s' hour at 120 against a weight of 80: the gate opens
    (an hour moved past the due date may save more than it costs) and the run waits
    for hour 2, 1.2 h late (96 + 0.72) rather than 144 in the spike."""
    inst = _spike(80.0)
    table = HullTable(inst, rule=make_policy("sts").options.timing_rule)
    status = JobStatus(inst.jobs[0], 0.0, None)
    found = next(iter(JobProfiles(inst, status, 0.0, ("v100",), table).in_order())).profile
    assert found.runs and found.runs[0][0] >= 2.0 - 1e-9
    assert found.objective == pytest.approx(80.0 * 1.2 + 0.5 * 1.44)


def test_the_whole_cell_budgets_run_every_cell_to_eight_then_by_half_again():
    """The late search's whole-cell budgets: 1 to 8 cells, then 12, 18, 27, ... within
    its reach, and up to the first whose profile is the longest budget's."""
    inst = _spike(80.0)
    asked: list[float] = []

    def solve(budget: float) -> Profile:
        asked.append(budget)
        step = Step(FOUR if budget < 5.0 else ONE, 0.0, 3.0)
        return Profile((step,), 1.0, 0.0, 0.0, budget)

    late = _Late(inst, inst.jobs[0], Tariff.of(inst), 0.0, 2.0, None, lambda p: p, None, solve)
    found = late._whole(30.0)
    assert asked == [27.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert [p.budget for p in found] == [1.0, 2.0, 3.0, 4.0, 27.0]


def test_the_catch_up_counts_the_relaunch_and_an_empty_span():
    """The fastest configuration catches up only where its last epochs and their
    relaunch fit before the budget (a span of 2 x 0.4 + 0.5 h, not 0.8); at a budget of
    0 the span is empty and the fastest is taken."""
    asked: list[tuple[float, float]] = []

    def room(cfg: Config, edges: np.ndarray) -> np.ndarray:
        asked.append((float(edges[0]), float(edges[1])))
        return np.array([cfg == ONE or edges[0] >= 2.0])

    quick = ((0.4, FOUR), (1.0, ONE))
    assert _catch_up(quick, room, 3.0, 0.1, 2.0, 0.5) == 1.0
    assert asked[0] == (pytest.approx(1.7), 3.0)
    asked.clear()
    assert _catch_up(quick, room, 0.0, 0.1, 2.0, 0.5) == 0.4
    assert asked == []
    assert _catch_up(quick, None, 3.0, 0.1, 2.0, 0.5) == 0.4
    assert math.isinf(_catch_up((), room, 3.0, 0.1, 2.0, 0.5))


def test_a_margin_that_cannot_recover_keeps_the_cells_to_the_margin():
    """One configuration only: a slipped run cannot catch up (its last step relaunched
    on the fastest configuration gains minus the 0.5-h relaunch), so the recovering
    margin keeps the plain margin's cells, to 9 h of a 10-h budget, and the run ends in
    the cheap hours 6-8; it is not cut shorter by the relaunch it could not recover."""
    job = Job(
        "j",
        0.0,
        10.0,
        EpochDistribution.deterministic(2.0),
        {ONE: 1.0},
        4.0,
        relaunch_hours=0.5,
    )
    inst = _one_job(job, [1.0] * 6 + [0.1] * 3 + [1.0] * 15)
    rule = make_policy("sts").options.timing_rule
    assert rule.recover
    table = HullTable(inst, rule=rule)
    status = JobStatus(job, 0.0, None)
    found = next(iter(JobProfiles(inst, status, 0.0, ("v100",), table).in_order())).profile
    assert found.runs and found.runs[0][0] >= 6.0 - 1e-9
    assert found.runs[-1][1] <= 9.0 + 1e-9


def test_a_running_job_late_for_a_spike_counts_its_resume_in_the_tardiness():
    """Running on four V100s when a two-hour spike begins, with a 0.25-h relaunch: the
    late search pauses it to hour 2, and its resume's relaunch pushes the end, and the
    tardiness, 0.25 h later than its run window, as the evaluator counts it (the bill
    keeps only the energy)."""
    inst = _spike(80.0, relaunch_hours=0.25)
    table = HullTable(inst, rule=make_policy("sts").options.timing_rule)
    status = JobStatus(inst.jobs[0], 0.0, Allocation(FOUR, tuple(("n", g) for g in range(4))))
    found = next(iter(JobProfiles(inst, status, 0.0, ("v100",), table).in_order())).profile
    assert found.runs and found.runs[0][0] >= 2.0 - 1e-9
    end = found.runs[-1][1]
    assert found.tardiness_cost == pytest.approx(80.0 * (end + 0.25 - 2.0))
    assert found.energy_cost < 2.0


def test_a_profile_late_only_for_its_shorter_budget_is_on_time():
    """Four epochs due at 5.7 h, hours 1, 3 and 4 dear: the cheapest timing runs four
    V100s (1.6 h) in hours 0 and 2, the profile STS solved for the shortest share of the
    window (1.425 h), which it runs past; within the job's own budget it is on time,
    and its objective holds no tardiness."""
    job = Job(
        "j", 0.0, 5.7, EpochDistribution.deterministic(4.0), {ONE: 1.0, FOUR: 0.4}, 4.0, weight=4.0
    )
    inst = _one_job(job, [1.0, 3.0, 1.0, 3.0, 3.0, 1.0] + [0.1] * 18)
    table = HullTable(inst, rule=make_policy("sts").options.timing_rule)
    found = next(
        iter(JobProfiles(inst, JobStatus(job, 0.0, None), 0.0, ("v100",), table).in_order())
    ).profile
    assert found.runs == ((0.0, 1.0), (2.0, pytest.approx(2.6)))
    assert found.tardiness_cost == 0.0
    assert found.objective == pytest.approx(1.92)
