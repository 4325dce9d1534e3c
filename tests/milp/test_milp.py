"""The MILP: exact against brute force, consistent with the evaluator, warm-started."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heuristic.sts.policy import StsPolicy
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node, Plan, Segment
from instances.generators.suite import milp_suite, suite_instance
from milp import MilpError, SolutionStatus, Termination, build_model, solve
from milp.data import milp_data
from milp.solve import base_slots, default_slots
from tests.delta0_golden import without_relaunch
from tests.milp.brute_force import brute_force, solved_at_brute_force
from validation.evaluate import evaluate
from validation.simulator import rollout

SLOT = 0.5


def _tiny(seed: int, *, shared: bool = True, tardiness: str = "worst_case") -> Instance:
    """One v100 node with 2 GPUs, two jobs of 2-4 epochs with early stopping, due dates
    tight enough that the GPUs are contended."""
    import numpy as np

    rng = np.random.default_rng(seed)
    jobs = []
    for i in range(2):
        E = int(rng.integers(2, 4))
        stops = tuple(float(s) for s in range(1, E + 1))
        p = rng.dirichlet(np.ones(E))
        tau = float(rng.uniform(0.3, 0.7))
        times = {Config("v100", 1): tau, Config("v100", 2): tau / 1.6}
        if shared:
            times[Config("v100", 1, shared=True)] = tau / 0.7
        release = float(rng.integers(0, 2)) * SLOT
        due = release + float(rng.uniform(0.5, 1.5)) * E * tau
        jobs.append(
            Job(
                f"j{i}",
                release,
                round(due, 3),
                EpochDistribution(stops, tuple(p)),
                times,
                6.0 + 6 * i,
            )
        )
    return Instance(
        (GpuType("v100", 16.0, 300.0),),
        (Node("n", "v100", 2),),
        tuple(jobs),
        slot=SLOT,
        tardiness=tardiness,  # type: ignore[arg-type]
        name=f"tiny-{seed}",
    )


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mode", ["worst_case", "expected"])
def test_milp_optimum_equals_brute_force(seed, mode):
    inst = _tiny(seed, shared=seed % 2 == 0, tardiness=mode)
    # proved at the brute force's optimum, the evaluator's cost of the MILP's plan its
    # own objective, the capacity relaxation (before any solve) below the optimum
    _, res = solved_at_brute_force(inst, 7)
    assert res.termination is Termination.OPTIMAL
    assert res.bound <= res.objective + 1e-9


def _start_violations(inst: Instance, plan) -> tuple[float, float]:
    """The largest row or bound violation of ``plan`` set as the MIP start of the
    model with the evaluator's cost as cutoff, and the model's objective there."""
    from milp.data import milp_data
    from milp.model import model_of_data
    from milp.plan_io import start_values

    cost = evaluate(inst, plan).total_cost
    d = milp_data(inst, default_slots(inst, plan), None, cost)
    assert any(jd.relaunch > 0 for jd in d.jobs.values())
    m = model_of_data(d)
    assert hasattr(m, "first_run") and hasattr(m, "shared_label_order")
    start_values(m, d, plan)
    return start_violation(m)


def start_violation(m) -> tuple[float, float]:
    """The largest row or bound violation of the values set on ``m`` (a MIP start),
    and the model's objective there."""
    import numpy as np

    from milp.highs import compile_model, start_vector

    mats = compile_model(m)
    x = start_vector(mats)
    ax = mats.matrix @ x
    worst = max(
        float(np.max(mats.row_lower - ax, initial=0)),
        float(np.max(ax - mats.row_upper, initial=0)),
        float(np.max(mats.col_lower - x, initial=0)),
        float(np.max(x - mats.col_upper, initial=0)),
    )
    return worst, float(mats.cost @ x + mats.offset)


@pytest.mark.parametrize("name", ["suite-share-4n8j-s2", "suite-excl-4n10j-s2"])
def test_an_sts_plan_satisfies_every_row_and_costs_what_the_evaluator_says(name):
    """The relaunch cuts (first start, per-configuration charge, labels ordered by first
    use) hold for a real plan: the STS rollout, set as the MIP start, violates no row of
    the model with overheads, and the model's objective there is the evaluator's cost.
    Checked on the matrices, without a solver, so that a cut that removes real plans
    fails here even where HiGHS would repair the start."""
    (inst,) = [i for i in milp_suite() if i.name == name]
    plan = rollout(inst, StsPolicy())
    worst, objective = _start_violations(inst, plan)
    assert worst <= 1e-9
    assert objective == pytest.approx(evaluate(inst, plan).total_cost, rel=1e-9)


def test_a_tenant_may_stay_on_its_gpu_while_a_lower_label_empties():
    """With overheads, shared labels are ordered by first use, not kept packed from 0:
    two tenants start on GPUs 0 and 1 and the one on GPU 0 finishes first. Packing
    labels in every slot would move the other tenant to label 0, a relaunch the plan
    does not make; the model must take the plan as it is, at the evaluator's cost."""
    inst = _tiny(0, shared=True).replace(relaunch_hours=0.2)
    shared = Config("v100", 1, shared=True)
    start = max(j.release for j in inst.jobs)

    def hours(job: Job) -> float:  # the overhead, then every epoch, to whole slots
        need = 0.2 + job.distribution.max_epochs * job.epoch_times[shared]
        return math.ceil(need / SLOT - 1e-9) * SLOT

    # the shorter job takes the first label; the other starts a slot later on GPU 1
    # and so ends after it
    short, long = sorted(inst.jobs, key=hours)
    plan = Plan.of(
        [
            Segment(start, start + hours(short), short.id, shared, (("n", 0),)),
            Segment(start + SLOT, start + SLOT + hours(long), long.id, shared, (("n", 1),)),
        ]
    )
    worst, objective = _start_violations(inst, plan)
    assert worst <= 1e-9
    assert objective == pytest.approx(evaluate(inst, plan).total_cost, rel=1e-9)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("delta", [0.2, 0.7])
@pytest.mark.parametrize("mode", ["worst_case", "expected"])
def test_milp_with_relaunch_overhead_equals_brute_force(seed, delta, mode):
    """Start indicators (milp.overhead): with an overhead shorter and longer than a
    slot, the optimum is the brute force's, the evaluator's cost of the extracted plan
    is HiGHS's objective, and (seeds 0 and 1: one instance with sharing, one without,
    each overhead and mode; the warm solve took 40% of these tests' time) an STS warm
    start is feasible and never beaten upwards."""
    inst = _tiny(seed, shared=seed % 2 == 0, tardiness=mode).replace(relaunch_hours=delta)
    slots = 8
    best, _ = solved_at_brute_force(inst, slots)
    if seed > 1:
        return
    start = rollout(inst, StsPolicy())
    horizon = max(slots, base_slots(inst, start))
    warm = solve(inst, initial_plan=start, slots=horizon, time_limit=60)
    assert warm.optimal and warm.warm_start_cost is not None
    assert warm.objective <= best * (1 + 1e-6) + 1e-9  # more slots can only help
    if horizon == slots:
        assert warm.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    # HiGHS takes the STS plan as it is (it checks the start before presolve, which
    # may solve the model outright) and values it as the evaluator does
    logged = _start_objective(warm.log)
    if logged is not None:
        assert logged == pytest.approx(warm.warm_start_cost, rel=1e-6)
    else:
        for kind in ("Col", "Integer", "Row"):
            assert re.search(rf"{kind}\s+infeasibilities\s+0\s+0\s+0", warm.log), warm.log


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mode", ["worst_case", "expected"])
def test_a_warm_start_at_the_optimum_cuts_no_optimal_plan(seed, mode):
    # the warm start's cost cuts each job's slots (milp.data.milp_data); started from an
    # optimal plan, the cut is as tight as it gets and must still keep an optimum
    inst = _tiny(seed, shared=seed % 2 == 0, tardiness=mode)
    best, plan = brute_force(inst, 7)
    res = solve(inst, slots=7, initial_plan=plan, time_limit=60)
    assert res.status is SolutionStatus.OPTIMAL
    assert res.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert res.variables <= solve(inst, slots=7, time_limit=60).variables


def test_the_warm_starts_cutoff_removes_late_slots_and_keeps_the_optimum():
    from instances.generators.suite import milp_suite

    # the smallest suite instance where the cut is large (642 columns against 943;
    # suite-excl-2n4j-s2, 1,429 against 2,647, took 9 s a solve)
    inst = next(i for i in milp_suite() if i.name == "suite-share-2n4j-s1")
    start = rollout(inst, StsPolicy())
    warm = solve(inst, initial_plan=start, time_limit=60)
    cold = solve(inst, slots=warm.slots, time_limit=60)
    assert warm.optimal and cold.optimal
    assert warm.objective == pytest.approx(cold.objective, rel=1e-6)
    assert warm.variables < 0.9 * cold.variables


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000))
def test_milp_never_exceeds_its_warm_start(seed):
    inst = _tiny(seed)
    start = rollout(inst, StsPolicy())
    res = solve(inst, initial_plan=start, time_limit=30)
    assert res.objective is not None and res.warm_start_cost is not None
    assert res.objective <= res.warm_start_cost * (1 + 1e-9) + 1e-12
    assert res.objective == pytest.approx(res.solver_objective, rel=1e-6, abs=1e-9)


def _logged_start_objective(inst, plan, log) -> float:
    """The objective HiGHS logs for ``plan`` as a MIP start. The model is built and
    compiled as :func:`milp.solve` does, but HiGHS's 5 s are its own: a time limit on
    the whole call would leave HiGHS no time to read the start on a loaded machine."""
    from milp.data import milp_data
    from milp.highs import compile_model, run_highs, start_vector
    from milp.model import model_of_data
    from milp.plan_io import start_values

    data = milp_data(inst, default_slots(inst, plan), None, evaluate(inst, plan).total_cost)
    model = model_of_data(data)
    start_values(model, data, plan)
    mats = compile_model(model)
    answer = run_highs(
        mats,
        start=start_vector(mats),
        time_limit=5.0,
        mip_gap=1e-6,
        threads=1,
        log_file=log,
        stream=False,
        # HiGHS checks the start after presolve, which takes 3.4 s of the 5 on `small`
        # alone and may not end within them on a loaded machine; without it the check
        # comes first. No branch-and-bound node after it: the start is all this reads
        # (else HiGHS searched on to the 5 s)
        options={"presolve": "off", "mip_max_nodes": 0},
    )
    logged = _start_objective(answer.log)
    assert logged is not None, answer.log
    return logged


def _start_objective(log: str) -> float | None:
    """The objective HiGHS logs for an accepted MIP start (highspy <= 1.15 writes
    "feasible, objective value is X", 1.16 "feasible: objective value is X")."""
    found = re.search(r"MIP start solution is feasible[,:] objective value is (\S+)", log)
    return None if found is None else float(found.group(1))


def test_highs_accepts_the_warm_start_and_logs_its_objective(small, tmp_path):
    start = rollout(small, StsPolicy())
    logged = _logged_start_objective(small, start, tmp_path / "overheads.log")
    # `small` pays relaunch overheads and STS moves some jobs to other GPUs of the node
    # they run on: the model counts GPUs per node, so it values the start as the plan
    # that keeps them (cheaper, never dearer); without overheads, exactly as the evaluator
    assert logged <= evaluate(small, start).total_cost * (1 + 1e-6)
    plain = without_relaunch(small)
    plain_start = rollout(plain, StsPolicy())
    logged = _logged_start_objective(plain, plain_start, tmp_path / "plain.log")
    assert logged == pytest.approx(evaluate(plain, plain_start).total_cost, rel=1e-6)


def test_short_time_limit_still_returns_at_least_the_warm_start_with_bound_and_gap(small):
    start = rollout(small, StsPolicy())
    res = solve(small, initial_plan=start, time_limit=0.5)
    assert res.plan is not None
    assert res.objective <= res.warm_start_cost * (1 + 1e-9)
    assert res.bound is not None and res.gap is not None and res.gap >= 0
    if res.termination is Termination.TIME_LIMIT:
        assert res.status is SolutionStatus.FEASIBLE


def test_no_variables_for_configurations_no_node_can_host():
    times = {Config("v100", 1): 0.5, Config("v100", 8): 0.1, Config("a100", 1): 0.3}
    job = Job("j", 0.0, 4.0, EpochDistribution.deterministic(3), times, 4.0)
    inst = Instance(
        (GpuType("v100", 16.0, 300.0), GpuType("a100", 40.0, 400.0)),
        (Node("n", "v100", 2),),
        (job,),
        slot=SLOT,
    )
    m, d = build_model(inst, 8)
    used = {d.jobs[j].configs[k] for j, k, _ in m.run_index}
    assert used == {Config("v100", 1)}
    assert all(d.jobs[j].configs[k] == Config("v100", 1) for j, k, _, _ in m.place_index)


def test_a_job_that_cannot_finish_in_the_horizon_is_named():
    job = Job(
        "late-one", 1.0, 3.0, EpochDistribution.deterministic(10), {Config("v100", 1): 0.5}, 4.0
    )
    inst = Instance((GpuType("v100", 16.0, 300.0),), (Node("n", "v100", 1),), (job,), slot=SLOT)
    with pytest.raises(
        MilpError,
        match=r"job 'late-one' cannot finish within the horizon of 8 slots"
        r".*needs at least 10 slots",
    ):
        solve(inst, slots=8)


def test_jobs_competing_beyond_the_horizon_get_a_clear_message():
    ten = EpochDistribution.deterministic(4)
    jobs = tuple(Job(f"j{i}", 0.0, 2.0, ten, {Config("v100", 1): 0.5}, 4.0) for i in range(2))
    inst = Instance((GpuType("v100", 16.0, 300.0),), (Node("n", "v100", 1),), jobs, slot=SLOT)
    with pytest.raises(MilpError, match=r"no slot-aligned plan .* within the horizon of 5 slots"):
        solve(inst, slots=5)


def test_instance_without_slot_is_refused_with_a_hint(base):
    with pytest.raises(MilpError, match="no slot length"):
        solve(base)


def test_time_up_before_highs_returns_the_warm_start_and_a_finite_bound(small):
    start = rollout(small, StsPolicy())
    res = solve(small, initial_plan=start, time_limit=1e-6)
    assert res.termination is Termination.TIME_LIMIT
    assert res.status is SolutionStatus.FEASIBLE and not res.optimal
    assert res.plan == start and res.objective == res.warm_start_cost
    assert res.solver_objective is None
    # the bound is the jobs' least expected energy: finite, valid, below the plan
    assert res.bound is not None and 0 < res.bound <= res.objective
    assert "HiGHS did not run" in res.note and res.runtime < 1.0


def test_time_up_with_no_start_returns_no_plan_and_still_a_bound():
    inst = milp_suite()[0]
    res = solve(inst, time_limit=1e-6)
    assert res.termination is Termination.TIME_LIMIT and res.status is SolutionStatus.NONE
    assert res.plan is None and res.objective is None and res.gap is None
    assert res.bound is not None and res.bound > 0
    exact = solve(inst, time_limit=60)
    assert exact.optimal and res.bound <= exact.objective + 1e-9
    assert exact.bound is not None and exact.bound >= res.bound - 1e-9


@pytest.mark.parametrize("limit", [math.nan, -1.0, 0.0, -math.inf])
def test_a_time_limit_that_is_not_a_positive_number_is_refused(small, limit):
    with pytest.raises(MilpError, match="time_limit"):
        solve(small, time_limit=limit)


def test_a_model_too_large_to_build_is_refused_before_building(small):
    with pytest.raises(MilpError, match="exact MILP is for small instances"):
        solve(small, slots=10**6)
    # a thousand stopping points per job: few slots, but a work variable per block
    many = EpochDistribution(tuple(8.0 * (i + 1) / 1000 for i in range(1000)), (1e-3,) * 1000)
    blocks = small.replace(
        jobs=tuple(small.pinned_job(j.id, distribution=many) for j in small.jobs)
    )
    with pytest.raises(MilpError, match=r"up to [0-9,]+ variables over 7[0-9] slots"):
        solve(blocks, time_limit=5)


def test_the_capacity_relaxation_charges_a_job_too_late_even_alone():
    # one job of 4 epochs of 0.5 h due at 1 h: alone at top speed it ends at 2 h, so it
    # is at least 1 h late, whatever any plan does
    times = {Config("v100", 1): 0.5}
    job = Job("j", 0.0, 1.0, EpochDistribution.deterministic(4), times, 4.0, weight=3.0)
    inst = Instance((GpuType("v100", 16, 300),), (Node("n", "v100", 1),), (job,), slot=SLOT)
    from milp.data import milp_data

    data = milp_data(inst, 10)
    assert data.least_tardiness("j") == pytest.approx(3.0)
    assert data.separable_bound() == pytest.approx(data.energy_floor() + 3.0)
    stopped = solve(inst, slots=10, time_limit=1e-6)  # HiGHS never runs: the bound is it
    exact = solve(inst, slots=10, time_limit=60)
    assert stopped.bound == pytest.approx(data.separable_bound())
    assert exact.optimal and exact.objective == pytest.approx(stopped.bound)


def test_a_weight_too_small_to_cut_a_window_cuts_nothing():
    """The cutoff's window, due + room / weight, overflowed for a weight of 5e-324 (the
    reader takes any weight in [0, 1e30]) and `bound` and `gap` ended in a traceback
    (found by a probe, 2026-12-05): such a job's window is the whole horizon. On the
    default horizon nothing bounds how late a plan as good as the start may end, so no
    optimum is claimed there (docs/milp.md, 'The horizon')."""
    from dataclasses import replace

    base = _tiny(3)
    inst = replace(base, jobs=tuple(replace(j, weight=5e-324) for j in base.jobs))
    start = rollout(inst, StsPolicy())
    unbounded = solve(inst, initial_plan=start, time_limit=30)
    assert not unbounded.optimal and "a plan late past it may cost less" in unbounded.note
    slots = base_slots(inst, start)
    res = solve(inst, initial_plan=start, slots=slots, time_limit=30)
    cold = solve(inst, slots=slots, time_limit=30)
    assert res.optimal and cold.optimal
    assert res.objective == pytest.approx(cold.objective, rel=1e-6)
    assert res.variables == cold.variables  # no window cut


def test_a_relaunch_spanning_thousands_of_slots_is_refused_before_the_build():
    """The relaunch rows tie each slot to every slot an overhead spans: at 1,000 h of
    overhead (the reader's maximum) on 0.25-h slots `bound` built rows for minutes past
    its time limit (found by a probe, 2026-12-05); here on 0.5-h slots. The size check
    counts those terms."""
    from milp.requirements import ModelTooLarge

    inst = _tiny(0, shared=True).replace(relaunch_hours=1000.0)
    with pytest.raises(ModelTooLarge, match=r"relaunch terms .* overhead of 1000 h spans"):
        solve(inst, time_limit=5)
    assert solve(inst.replace(relaunch_hours=0.2), time_limit=30).optimal


@pytest.mark.parametrize("seed", range(3))
def test_a_tiny_currency_unit_gives_the_same_optimum_scaled(seed):
    """HiGHS's tolerances are absolute: at an energy price of 2e-5 (every cost 1e-4 of
    the usual) a cold solve "proved" a plan 6% dearer than the optimum and reported its
    cost as the bound, above a plan the evaluator costs lower (found by a probe,
    2026-12-05). The objective is scaled by a power of two below TINY_COST."""
    from heuristic.core.highs_run import cost_scale

    usual = _tiny(seed)
    tiny = usual.replace(energy_price=usual.energy_price * 1e-4)  # default weights follow
    a, b = solve(usual, slots=9, time_limit=30), solve(tiny, slots=9, time_limit=30)
    assert a.optimal and b.optimal and a.objective is not None and b.objective is not None
    assert b.objective == pytest.approx(a.objective * 1e-4, rel=1e-6)
    assert b.bound == pytest.approx(a.bound * 1e-4, rel=1e-6)
    assert cost_scale(np.array([0.5, -3.0])) == 1.0  # the usual units: not scaled
    assert cost_scale(np.array([3e-5, 0.0])) == 2.0**16


def test_costs_near_the_smallest_double_are_scaled_without_overflow():
    """Free energy and a weight of 5e-324 (both read) made the scale 2**1075, an
    OverflowError where the instance had solved before (found in review, 2026-12-05)."""
    from dataclasses import replace

    from heuristic.core.highs_run import cost_scale

    assert cost_scale(np.array([5e-324])) == 2.0**1000
    base = _tiny(1).replace(energy_price=0.0)
    inst = replace(base, jobs=tuple(replace(j, weight=5e-324) for j in base.jobs))
    res = solve(inst, slots=9, time_limit=30)
    assert res.optimal and res.objective is not None and res.objective >= 0


@pytest.mark.parametrize("seed", [3, 5])
def test_mixed_units_scale_by_the_objective_not_the_largest_coefficient(seed):
    """A tiny energy price beside tardiness weights near 1 left the largest coefficient
    at 1.2 and the objective at 1e-5: a cold solve "proved" a plan 6-10% above the
    usual optimum in those units (found in review, 2026-12-05). The separable bound
    sets the scale."""
    from dataclasses import replace

    usual = _tiny(seed)
    loose = usual.replace(
        jobs=tuple(
            replace(j, due=round(j.release + 2.5 * (j.due - j.release), 3)) for j in usual.jobs
        )
    )
    weights = {j.id: loose.tardiness_weight(j.id) for j in loose.jobs}
    pinned = loose.replace(jobs=tuple(replace(j, weight=weights[j.id]) for j in loose.jobs))
    mixed = pinned.replace(energy_price=loose.energy_price * 1e-4)
    a, b = solve(loose, slots=9, time_limit=30), solve(mixed, slots=9, time_limit=30)
    assert a.optimal and b.optimal and a.objective is not None and b.objective is not None
    assert b.objective == pytest.approx(a.objective * 1e-4, rel=1e-6)
    assert b.bound is not None and b.bound <= b.objective * (1 + 1e-6)


def test_the_relaunch_families_let_a_time_limit_stop_them_inside(monkeypatch):
    """The build's ``step`` is called inside the two relaunch families, every few
    (job, slot) pairs as their rows are made and every few rows as Pyomo adds them: one
    family of `medium` on its 570-slot reach took 21 s to add, and a 60-s call ended at
    65-71 s. Here with the counts lowered, on a suite instance with measured overheads."""
    import milp.constraints
    import milp.overhead
    from milp.model import model_of_data

    monkeypatch.setattr(milp.constraints, "ROWS_PER_STEP", 50)
    monkeypatch.setattr(milp.overhead, "CALLS_PER_STEP", 5)
    inst = suite_instance("suite-excl-2n4j-s2")
    stages: list[str] = []
    model_of_data(milp_data(inst, 13), stages.append)
    assert any(s.startswith("relaunch_begin (row 50 of") for s in stages)
    assert any(s.startswith("relaunch_overhead (row 50 of") for s in stages)
    # more calls than jobs within each family of made rows
    for family in ("relaunch_begin (job", "relaunched (job", "relaunch_overhead (job"):
        assert sum(s.startswith(family) for s in stages) > len(inst.jobs), family


# two jobs on three GPUs with sharing, expected mode (a review's random instance, 2026-12-06)
_HANDED_BACK = json.loads(
    '{"format": "gpusched-instance/1", "name": "r43", "energy_price": 0.5, "tardiness": "expected", "slot": 1.0, "max_share": 2, "gpu_types": [{"name": "v100", "memory_gb": 16.0, "power_w": 300.0}], "nodes": [{"id": "n", "gpu_type": "v100", "num_gpus": 3}], "jobs": [{"id": "j0", "release": 0.0, "due": 0.29, "weight": 10.0, "priority": 1.0, "memory_gb": 6.0, "max_epochs": 1.0, "distribution": {"stops": [1.0], "probabilities": [1.0]}, "configs": [{"gpu_type": "v100", "gpus": 1, "nodes": 1, "shared": false, "epoch_time": 0.4572936611425371}, {"gpu_type": "v100", "gpus": 1, "nodes": 1, "shared": true, "epoch_time": 0.6720829266247969}, {"gpu_type": "v100", "gpus": 2, "nodes": 1, "shared": false, "epoch_time": 0.3302750020056688}]}, {"id": "j1", "release": 0.0, "due": 0.872, "weight": 0.1, "priority": 1.0, "memory_gb": 6.0, "max_epochs": 4.0, "distribution": {"stops": [2.0, 4.0], "probabilities": [0.36963684307488015, 0.6303631569251199]}, "configs": [{"gpu_type": "v100", "gpus": 1, "nodes": 1, "shared": false, "epoch_time": 0.6398419821702412}, {"gpu_type": "v100", "gpus": 1, "nodes": 1, "shared": true, "epoch_time": 0.7294579586305721}], "relaunch_hours": 0.0}]}'  # noqa: E501
)


def test_highs_handing_back_the_start_is_run_again_without_it():
    """Warm-started by STS on 3 slots, HiGHS 1.16 reported an optimum of 7.5046 and
    handed back the start's values (7.5533 by the evaluator): the result said OPTIMAL for
    the start. The plan returned must now meet the bound, and where HiGHS hands back the
    start it runs again without it (milp.highs.run_highs): the optimum is found."""
    from instances.io import instance_from_dict

    inst = instance_from_dict(_HANDED_BACK)
    warm = solve(inst, initial_plan=rollout(inst, StsPolicy()), slots=3, time_limit=60)
    cold = solve(inst, slots=3, time_limit=60)
    assert cold.optimal and cold.objective == pytest.approx(7.504634742230935)
    assert warm.bound is not None and warm.bound <= cold.objective * (1 + 1e-9)
    # the solver's objective is the model's value of the plan handed back (HiGHS's own
    # figure was the optimum's, 7.5046, beside the start's values); HiGHS runs again
    # without the start and the optimum is found
    assert warm.solver_objective == pytest.approx(warm.objective, rel=1e-9)
    assert warm.optimal and warm.objective == pytest.approx(cold.objective, rel=1e-9)
    assert "run again without them" in warm.log


def test_a_dearer_plan_of_highs_gives_way_to_its_start(monkeypatch):
    """Where HiGHS does not take the start, it may stop at its limit on a dearer plan of
    its own: the start is kept, by the evaluator's cost. Simulated by decoding HiGHS's
    answer as EDF-fastest's plan (1.9 times the start's cost)."""
    import sys

    from heuristic.core.registry import make_policy

    milp_solve = sys.modules["milp.solve"]  # the module (``milp.solve`` is the function)

    inst = next(i for i in milp_suite() if i.name == "suite-share-2n4j-s1")
    start = rollout(inst, StsPolicy())
    dearer = rollout(inst, make_policy("edf-fastest"))
    assert evaluate(inst, dearer).total_cost > 1.5 * evaluate(inst, start).total_cost
    monkeypatch.setattr(milp_solve, "solution_plan", lambda model, data: dearer)
    res = solve(inst, initial_plan=start, time_limit=60)
    assert res.plan == start and res.solver_objective is None
    assert res.objective == pytest.approx(evaluate(inst, start).total_cost, rel=1e-12)
    assert res.bound is None or res.bound <= res.objective * (1 + 1e-6)
