"""The MILP with prices that change by the slot (docs/milp.md, 'Prices per slot'): exact
against brute force, its objective the evaluator's cost of its plan, the Lagrangian bound
below the optimum, the rolling MILP shifting the series; what it cannot price refused."""

from __future__ import annotations

import numpy as np
import pytest

from heuristic.core.registry import make_policy
from heuristic.sts.policy import StsPolicy
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node, Plan, Segment
from instances.energy import Carbon, Series
from instances.generators.prices import lay_prices
from instances.generators.suite import milp_suite
from instances.power import PowerOff
from milp import MilpError, SolutionStatus, default_slots, solve
from milp.data import milp_data
from milp.decomposition import solve as decompose
from milp.lagrange import lagrangian_bound
from milp.rolling import remaining_instance
from milp.solve import base_slots, horizon
from tests.heuristic.sts.test_timing import _spike
from tests.milp.brute_force import brute_force, solved_at_brute_force
from tests.milp.test_milp import SLOT, _start_violations, _tiny
from validation.evaluate import evaluate
from validation.online import run_online
from validation.simulator import rollout


def _priced(seed: int, *, mode: str = "worst_case", carbon: bool = False, relaunch: float = 0.0):
    """``_tiny`` with a price for every slot (or every hour), strongly varying, and a
    priced carbon series."""
    rng = np.random.default_rng(100 + seed)
    step = SLOT if seed % 2 == 0 else 2 * SLOT
    prices = Series.regular(step, tuple(float(x) for x in rng.uniform(0.0, 0.8, 6)))
    inst = _tiny(seed, shared=seed % 2 == 0, tardiness=mode).replace(
        prices=prices, relaunch_hours=relaunch
    )
    if carbon:
        intensity = Series.regular(
            1.0, tuple(float(x) for x in rng.uniform(100, 700, 3)), upper=1e5
        )
        inst = inst.replace(carbon=Carbon(intensity, 400.0))
    return inst


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mode", ["worst_case", "expected"])
def test_milp_with_prices_equals_brute_force(seed, mode):
    inst = _priced(seed, mode=mode, carbon=seed % 3 == 0)
    slots = 7
    best, _ = solved_at_brute_force(inst, slots)
    lb = lagrangian_bound(inst, slots, upper=best, states=32)
    assert lb.capacity_relaxation - 1e-12 <= lb.bound <= best + 1e-9


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("delta", [0.2, 0.7])
def test_milp_with_prices_and_relaunch_overhead_equals_brute_force(seed, delta):
    """The overhead's slots pay their own prices (an overhead longer than a slot spans
    two prices); an STS warm start never beaten upwards (seeds 0 and 1), on its own
    horizon: these jobs' reach runs to 497-1,558 slots, where the solve ran into its
    time limit (tests are capped by size, not by the clock)."""
    inst = _priced(seed, mode="expected", carbon=True, relaunch=delta)
    slots = 8
    best, _ = brute_force(inst, slots)
    res = solve(inst, slots=slots, time_limit=60)
    assert res.status is SolutionStatus.OPTIMAL
    assert res.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert res.objective == pytest.approx(res.solver_objective, rel=1e-6, abs=1e-9)
    if seed == 2:
        return
    start = rollout(inst, StsPolicy())
    warm = solve(inst, initial_plan=start, slots=base_slots(inst, start), time_limit=60)
    assert warm.status is SolutionStatus.OPTIMAL and warm.warm_start_cost is not None
    assert warm.objective <= warm.warm_start_cost * (1 + 1e-9) + 1e-12


def test_prices_move_the_optimum():
    """Dear first hour, cheap after: the optimum holds fewer GPU-hours in the dear hour
    than the plan optimal at one price, and pays less."""
    inst = _tiny(4, tardiness="worst_case")
    dear_first = inst.replace(prices=Series.regular(SLOT, (2.0, 2.0, 0.05, 0.05, 0.05, 0.05, 0.05)))
    flat, priced = solve(inst, slots=7, time_limit=60), solve(dear_first, slots=7, time_limit=60)
    assert flat.plan is not None and priced.plan is not None

    def dear_gpu_hours(plan):
        return sum(max(0.0, min(s.end, 1.0) - s.start) * len(s.gpus) for s in plan)

    assert dear_gpu_hours(priced.plan) == 0.5 < dear_gpu_hours(flat.plan) == 1.0
    cost = evaluate(dear_first, priced.plan).total_cost
    assert cost < 0.8 * evaluate(dear_first, flat.plan).total_cost


@pytest.mark.parametrize("name", ["suite-share-4n8j-s2", "suite-excl-4n10j-s2"])
def test_an_sts_plan_costs_what_the_evaluator_says_under_a_real_series(name):
    """The model's objective at an STS plan (a MIP start) is the evaluator's cost, every
    row satisfied, with the bundled series and a priced carbon."""
    inst = lay_prices(next(i for i in milp_suite() if i.name == name), "au-nsw-2023:17", 90.0)
    plan = rollout(inst, StsPolicy())
    worst, objective = _start_violations(inst, plan)
    assert worst <= 1e-9
    assert objective == pytest.approx(evaluate(inst, plan).total_cost, rel=1e-9)


def test_a_flat_series_builds_the_model_without_prices():
    inst = _tiny(0)
    flat = inst.replace(prices=Series.regular(1.0, (inst.energy_price,) * 4))
    assert milp_data(flat, 7).jobs["j0"].slot_price is None
    a, b = solve(inst, slots=7, time_limit=60), solve(flat, slots=7, time_limit=60)
    assert (a.objective, a.solver_objective, a.plan) == (b.objective, b.solver_objective, b.plan)


def test_what_the_milp_cannot_price_is_refused():
    inst = _tiny(0)
    off_grid = inst.replace(prices=Series((0.0, 0.3, 2.0), (0.1, 0.5)))
    with pytest.raises(MilpError, match=r"prices series .* changes at 0.3 h, inside a slot"):
        solve(off_grid, slots=7)
    booting = inst.replace(power_off=PowerOff(0.5, 0.1, 0.2))
    with pytest.raises(MilpError, match=r"nodes powered off when empty \(power_off\)"):
        milp_data(booting, 7)  # a caller that does not bound the nodes' own energy
    # a whole solve bounds it (tests/milp/test_idle.py): boots count as nothing in the
    # bound, the plan pays them in the evaluator, so it is optimal only if that meets it
    res = solve(booting, slots=7, time_limit=60)
    assert res.evaluation is not None and res.evaluation.idle is not None
    assert res.evaluation.idle.boots > 0 and res.objective > res.bound
    assert res.status is not SolutionStatus.OPTIMAL or res.gap <= 1e-4


def test_the_rolling_milp_sees_the_series_from_now():
    inst = _priced(1, carbon=True)
    from heuristic.core.occupancy import Occupancy
    from heuristic.core.policy import JobStatus, SchedulerState

    state = SchedulerState(1.5, inst, (JobStatus(inst.jobs[0], 0.0, None),), Occupancy(inst))
    sub = remaining_instance(state)
    assert sub.prices is not None and sub.carbon is not None
    for t in (0.25, 0.75, 3.1, 11.6):
        assert sub.prices.at(t) == inst.prices.at(t + 1.5)
        assert sub.carbon.intensity.at(t) == inst.carbon.intensity.at(t + 1.5)
    run = run_online(inst, "milp", seed=0, options={"time_limit_seconds": 20})
    assert run.evaluation.total_cost > 0


def test_the_default_horizon_reaches_a_plan_late_for_a_price_spike():
    """Three epochs due at hour 2 in a two-hour spike (100 per kWh, then 0.5), hourly
    slots: the optimum waits out the spike and is late by two hours (8.63, the brute
    force over eight slots). Warm-started on time, the default horizon ended at the due
    date, and the MILP called the on-time plan's 126.0 optimal (and a benchmark's
    `optimum` 5.00 where 2.997 exists); it now reaches as far as a plan as good as the
    warm start can be late."""
    inst = _spike(4.0, slot=1.0)
    on_time = rollout(inst, make_policy("sts", late_for_price=False))
    assert evaluate(inst, on_time).missed == 0
    assert default_slots(inst, on_time) > 2
    res = solve(inst, initial_plan=on_time, time_limit=60)
    best, _ = brute_force(inst, 8)
    assert res.status is SolutionStatus.OPTIMAL
    assert res.objective == pytest.approx(best) == pytest.approx(8.63)


@pytest.mark.parametrize("prices", [None, Series.flat(1.0)])
def test_the_default_horizon_reaches_a_late_plan_under_a_flat_bill(prices):
    """One price every hour (no series, or a flat one at the energy price): three epochs
    due at hour 1, one GPU at an hour an epoch (0.3 kWh each) or four at 0.3 h (0.36
    kWh), a weight of 0.01. Running slowly and two hours late costs 0.92 against the
    on-time plan's 1.08. The horizon ended at the due date under a flat bill, and the
    MILP called 1.08 optimal (a review of 2026-12-06); it now reaches as far as under a
    series."""
    one, four = Config("v100", 1), Config("v100", 4)
    dist = EpochDistribution.deterministic(3.0)
    job = Job("j", 0.0, 1.0, dist, {one: 1.0, four: 0.3}, 4.0, weight=0.01)
    inst = Instance(
        (GpuType("v100", 16.0, 300.0),),
        (Node("n", "v100", 4),),
        (job,),
        energy_price=1.0,
        prices=prices,
        slot=1.0,
    )
    warm = Plan.of([Segment(0.0, 1.0, "j", four, tuple(("n", g) for g in range(4)))])
    assert evaluate(inst, warm).total_cost == pytest.approx(1.08)
    assert default_slots(inst, warm) > 3
    res = solve(inst, initial_plan=warm, time_limit=60)
    best, _ = brute_force(inst, 8)
    assert res.status is SolutionStatus.OPTIMAL
    assert res.objective == pytest.approx(best) == pytest.approx(0.92)


def test_a_reach_too_large_to_build_solves_the_base_horizon_and_claims_nothing(monkeypatch):
    """The flat case above with the size limit set to the base horizon's model: the
    reach's model is too large, so the base horizon is solved, its optimum (the on-time
    1.08) is not called the instance's, and the note says why (`within_size`)."""
    import milp.data

    one, four = Config("v100", 1), Config("v100", 4)
    dist = EpochDistribution.deterministic(3.0)
    job = Job("j", 0.0, 1.0, dist, {one: 1.0, four: 0.3}, 4.0, weight=0.01)
    inst = Instance(
        (GpuType("v100", 16.0, 300.0),), (Node("n", "v100", 4),), (job,), energy_price=1.0, slot=1.0
    )
    warm = Plan.of([Segment(0.0, 1.0, "j", four, tuple(("n", g) for g in range(4)))])
    base = solve(inst, initial_plan=warm, slots=1, time_limit=60)
    assert base.optimal and base.objective == pytest.approx(1.08)
    monkeypatch.setattr(milp.data, "MAX_MODEL_VARIABLES", base.variables)
    res = solve(inst, initial_plan=warm, time_limit=60)
    assert res.slots == 1 and res.status is SolutionStatus.FEASIBLE and res.bound is None
    assert "a model reaching" in res.note and "a plan late past it may cost less" in res.note


def _one_job(weight: float | None, dist: EpochDistribution, due: float, prices: Series, **kw):
    """One job on one V100 node, hourly slots."""
    job = Job("j", kw.pop("release", 0.0), due, dist, {Config("v100", 1): 1.0}, 4.0, weight=weight)
    return Instance(
        (GpuType("v100", 16.0, 300.0),),
        (Node("n", "v100", 1),),
        (job,),
        energy_price=0.5,
        prices=prices,
        slot=1.0,
        **kw,
    )


def _slots_plan(inst: Instance, slots: list[int]) -> Plan:
    one = Config("v100", 1)
    return Plan.of([Segment(float(t), t + 1.0, "j", one, (("n", 0),)) for t in slots])


def test_branch_and_price_reads_the_horizon_in_the_mode_it_solves():
    """A worst-case instance solved in expected mode: the late plan pays its tardiness
    only with probability 0.1, so the horizon reaches further than in worst-case mode.
    Branch-and-price read the instance's mode and proved 3.2325 on the short horizon
    (a review of 2026-12-06); it now finds the compact MILP's 1.2475."""
    dist = EpochDistribution((1.0, 2.0, 3.0), (0.45, 0.45, 0.10))
    prices = Series.regular(1.0, [0.5, 0.5] + [100.0] * 10 + [0.5] * 12)
    inst = _one_job(1.0, dist, 3.0, prices, tardiness="worst_case")
    on_time = _slots_plan(inst, [0, 1, 2])
    compact = solve(inst, initial_plan=on_time, tardiness="expected", time_limit=60)
    bp = decompose(inst, on_time, tardiness="expected", time_limit=60)
    assert compact.optimal and bp.optimal
    assert bp.objective == pytest.approx(compact.objective) == pytest.approx(1.2475)


@pytest.mark.parametrize("weight", [0.0, 5e-324, 1e-12])
def test_an_unbounded_reach_is_solved_on_the_base_horizon_and_not_called_optimal(weight):
    """A job whose lateness nothing bounds (no weight, or one so small that the reach
    overflows or runs past any model) under a spike: the base horizon is solved, the
    result is not called optimal and has no bound, and the note says why (it said
    OPTIMAL 60.0 where 0.3 exists; 1e-12 crashed on a 434-TiB array, a review)."""
    prices = Series.regular(1.0, [0.5, 0.5, 100.0, 100.0, 100.0, 0.5, 0.5, 0.5], after="hold")
    inst = _one_job(weight, EpochDistribution.deterministic(2.0), 4.0, prices, release=2.0)
    warm = _slots_plan(inst, [2, 3])
    reach = horizon(inst, warm)
    assert reach.short and reach.slots == reach.base == 4
    res = solve(inst, initial_plan=warm, time_limit=60)
    assert res.status is SolutionStatus.FEASIBLE and res.bound is None
    assert "late past it may cost less" in res.note
    bp = decompose(inst, warm, time_limit=60)
    assert not bp.optimal and "late past it may cost less" in bp.note


def test_a_build_stopped_by_the_clock_on_a_horizon_kept_short_says_so_in_full():
    """A job of no tardiness weight keeps the base horizon (its lateness is not bounded);
    with the time up before HiGHS, the result claims no bound and its note ends as every
    short horizon's does (`late_note`), which it lacked."""
    job = Job(
        "j",
        0.0,
        1.0,
        EpochDistribution.deterministic(3.0),
        {Config("v100", 1): 1.0},
        4.0,
        weight=0.0,
    )
    inst = Instance(
        (GpuType("v100", 16.0, 300.0),), (Node("n", "v100", 1),), (job,), energy_price=1.0, slot=1.0
    )
    one = Config("v100", 1)
    start = Plan.of([Segment(float(t), t + 1.0, "j", one, (("n", 0),)) for t in range(3)])
    res = solve(inst, initial_plan=start, time_limit=1e-6)
    assert res.bound is None and res.status is SolutionStatus.FEASIBLE
    assert "HiGHS did not run" in res.note
    assert res.note.endswith("a plan late past it may cost less")
