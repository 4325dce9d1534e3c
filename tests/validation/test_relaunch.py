"""The relaunch overhead (docs/model.md, E1) in the evaluator, the Monte Carlo replay,
the checker and the engine; and that without it every figure is what it was."""

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristic.core.registry import make_policy, policy_names
from instances import (
    Config,
    EpochDistribution,
    GpuType,
    Instance,
    InstanceError,
    Job,
    Node,
    Plan,
    Segment,
)
from instances.io import instance_from_dict, instance_to_dict
from tests.delta0_golden import figures
from tests.strategies import instances, serial_plans
from validation.check import check_plan, relaunch_notes
from validation.evaluate import evaluate, evaluate_scenario
from validation.montecarlo import replay
from validation.simulator import simulate

GOLDEN = Path(__file__).parent.parent / "delta0_golden.json"
V100 = GpuType("v100", 32.0, 300.0)
C1, C2 = Config("v100", 1), Config("v100", 2)


def one_job(delta: float, *, job_delta: float | None = None, slot: float | None = None) -> Instance:
    dist = EpochDistribution((4.0, 10.0), (0.5, 0.5))
    job = Job("a", 0.0, 20.0, dist, {C1: 1.0, C2: 0.6}, 8.0, relaunch_hours=job_delta)
    return Instance(
        (V100,), (Node("n0", "v100", 2),), (job,), slot=slot, relaunch_hours=delta, name="one"
    )


def test_without_overhead_every_figure_is_unchanged():
    """Every registered policy on the bundled instances and the MILP suite, rollout and
    a sampled run, and the MILP's optimum on the small suite instances: the figures the
    code gave before the overhead existed (tests/delta0_golden.py), to the last digit.
    HiGHS's own objective value is its arithmetic, not ours: it may move in the last
    digits between HiGHS releases (1.16 did, by 1e-14 relative), so it is compared to
    1e-12; the evaluator's cost of the MILP's plan stays exact."""
    got, want = figures(), json.loads(GOLDEN.read_text())
    solver = {k: row["milp"].pop(1) for k, row in got.items() if "milp" in row}
    pinned = {k: row["milp"].pop(1) for k, row in want.items() if "milp" in row}
    assert got == want
    assert solver == pytest.approx(pinned, rel=1e-12, abs=0.0)


def test_explicit_zero_overhead_is_no_overhead():
    inst = one_job(0.0, job_delta=0.0)
    plan = Plan.of(
        [
            Segment(0.0, 4.0, "a", C1, (("n0", 0),)),
            Segment(5.0, 8.6, "a", C2, (("n0", 0), ("n0", 1))),
        ]
    )
    assert evaluate(inst, plan) == evaluate(one_job(0.0), plan)
    assert not relaunch_notes(inst, plan)


def test_pause_and_resize_pay_the_overhead_once_each():
    """4 epochs on one GPU, a pause, then 6 on two: the first start and the resume each
    spend 0.5 h without progress; the overhead after 4 epochs is paid only by the half
    of the runs that go on."""
    inst = one_job(0.5)
    g0, g01 = (("n0", 0),), (("n0", 0), ("n0", 1))
    plan = Plan.of([Segment(0.0, 4.5, "a", C1, g0), Segment(6.0, 10.1, "a", C2, g01)])
    assert not check_plan(inst, plan)
    ev = evaluate(inst, plan).jobs[0]
    assert ev.relaunches == 2
    assert ev.completion == pytest.approx(10.1)
    # overhead: 300 W x 0.5 h (P(N>0) = 1) + 600 W x 0.5 h x P(N > 4) = 0.5
    assert ev.overhead_kwh == pytest.approx(0.15 + 0.3 * 0.5)
    epochs_kwh = 4 * 0.3 * 1.0 + 6 * 0.36 * 0.5
    assert ev.expected_energy_kwh == pytest.approx(epochs_kwh + 0.3)
    assert ev.worst_case_energy_kwh == pytest.approx(4 * 0.3 + 6 * 0.36 + 0.15 + 0.3)


@pytest.mark.parametrize(("stop", "kwh"), [(4.0, 0.3 * 4.5), (10.0, 0.3 * 4.5 + 0.6 * 4.1)])
def test_a_run_that_stops_where_its_resume_would_begin_pays_no_resume(stop, kwh):
    """The plan above realised: stopped after its 4th epoch, the job never resumes and
    pays the first start's 0.5 h alone (a mutant charging the resume's overhead after
    the stop was caught only by a Monte Carlo interval); run to 10, both."""
    inst = one_job(0.5)
    g0, g01 = (("n0", 0),), (("n0", 0), ("n0", 1))
    plan = Plan.of([Segment(0.0, 4.5, "a", C1, g0), Segment(6.0, 10.1, "a", C2, g01)])
    energy, _ = evaluate_scenario(inst, plan, {"a": stop})
    assert energy == pytest.approx(inst.energy_price * kwh)


def test_a_job_of_its_own_overrides_the_instance():
    inst = one_job(0.5, job_delta=0.0)
    assert inst.relaunch("a") == 0.0
    assert one_job(0.0, job_delta=0.25).relaunch("a") == 0.25


def test_a_continuation_carries_what_is_left_of_the_overhead():
    """The same configuration and GPUs, split in two adjacent segments within the
    overhead, is one launch; other GPUs at the same instant are a relaunch."""
    inst = one_job(0.5)
    g0 = (("n0", 0),)
    split = Plan.of([Segment(0.0, 0.2, "a", C1, g0), Segment(0.2, 10.5, "a", C1, g0)])
    whole = Plan.of([Segment(0.0, 10.5, "a", C1, g0)])
    assert evaluate(inst, split).total_cost == pytest.approx(evaluate(inst, whole).total_cost)
    assert evaluate(inst, split).jobs[0].relaunches == 1
    moved = Plan.of([Segment(0.0, 0.2, "a", C1, g0), Segment(0.2, 10.7, "a", C1, (("n0", 1),))])
    assert not check_plan(inst, moved)
    ev = evaluate(inst, moved).jobs[0]
    assert ev.relaunches == 2 and ev.completion == pytest.approx(10.7)
    [note] = relaunch_notes(inst, moved)
    assert note.kind == "overhead-only" and note.time == 0.0


def test_a_plan_that_ignores_the_overhead_is_incomplete():
    inst = one_job(0.5)
    plan = Plan.of([Segment(0.0, 10.0, "a", C1, (("n0", 0),))])
    [v] = check_plan(inst, plan)
    assert v.kind == "incomplete"


@pytest.mark.parametrize("bad", [-0.1, math.inf, "x", 1e9])
def test_bad_overheads_are_refused_naming_the_field(bad):
    doc = instance_to_dict(one_job(0.5))
    doc["relaunch_hours"] = bad
    with pytest.raises(InstanceError, match="relaunch_hours"):
        instance_from_dict(doc)
    doc = instance_to_dict(one_job(0.0))
    doc["jobs"][0]["relaunch_hours"] = bad
    with pytest.raises(InstanceError, match=r"jobs\[0\].*relaunch_hours"):
        instance_from_dict(doc)


def test_overheads_round_trip_and_zero_is_not_written():
    inst = one_job(0.5, job_delta=0.25)
    assert instance_from_dict(instance_to_dict(inst)) == inst
    plain = instance_to_dict(one_job(0.0))
    assert "relaunch_hours" not in plain and "relaunch_hours" not in plain["jobs"][0]


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_exact_cost_inside_monte_carlo_interval_with_overheads(data):
    inst = data.draw(instances(max_jobs=3, relaunch=True))
    plan = data.draw(serial_plans(inst))
    assert not check_plan(inst, plan)
    exact = evaluate(inst, plan)
    mc = replay(inst, plan, samples=1500, seed=data.draw(st.integers(0, 5)))
    assert mc.contains(exact.total_cost, rel_tol=1e-5), (mc.interval, exact.total_cost)


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_engine_and_evaluator_read_overheads_alike(data):
    """Every policy's rollout is a complete plan whose completions, read by the
    evaluator, are the engine's; a sampled run's realised cost is finite."""
    inst = data.draw(instances(max_jobs=4, relaunch=True))
    name = data.draw(st.sampled_from(policy_names()))
    run = simulate(inst, make_policy(name, seed=0), mode="rollout")
    assert not check_plan(inst, run.plan)
    ev = evaluate(inst, run.plan)
    for j in ev.jobs:
        assert j.completion == pytest.approx(run.completions[j.job], abs=1e-7)
    sampled = simulate(inst, make_policy(name, seed=0), mode="sampled", seed=1)
    energy, tard = evaluate_scenario(inst, sampled.plan, sampled.epochs, tardiness="expected")
    assert math.isfinite(energy + tard)


def suspendable(suspend: float | None, *, job_suspend: float | None = None) -> Instance:
    """One job, relaunch overhead 0.5 h, and a suspend overhead (None: as a relaunch)."""
    inst = one_job(0.5)
    job = inst.jobs[0]
    if job_suspend is not None:
        inst = inst.replace(jobs=(replace(job, suspend_hours=job_suspend),))
    return inst.replace(suspend_hours=suspend)


def test_a_resume_on_the_same_gpus_pays_the_suspend_overhead_a_move_the_relaunch():
    """4 epochs, a pause, 6 more on the same GPU: the resume spends 0.1 h without
    progress instead of 0.5; on the other GPU it is a relaunch, 0.5 h."""
    g0, g1 = (("n0", 0),), (("n0", 1),)
    inst = suspendable(0.1)
    same = Plan.of([Segment(0.0, 4.5, "a", C1, g0), Segment(6.0, 12.1, "a", C1, g0)])
    moved = Plan.of([Segment(0.0, 4.5, "a", C1, g0), Segment(6.0, 12.5, "a", C1, g1)])
    for plan, resume in ((same, 0.1), (moved, 0.5)):
        assert not check_plan(inst, plan)
        ev = evaluate(inst, plan).jobs[0]
        assert ev.completion == pytest.approx(plan.segments[-1].end)
        # first start 0.5 h at P(N>0) = 1, the resume at P(N > 4) = 0.5; 300 W
        assert ev.overhead_kwh == pytest.approx(0.3 * 0.5 + 0.3 * resume * 0.5)
    assert inst.resume("a") == 0.1 and inst.relaunch("a") == 0.5


def test_without_a_suspend_overhead_a_resume_is_a_relaunch_and_figures_stay():
    g0 = (("n0", 0),)
    plan = Plan.of([Segment(0.0, 4.5, "a", C1, g0), Segment(6.0, 12.5, "a", C1, g0)])
    assert evaluate(suspendable(None), plan) == evaluate(one_job(0.5), plan)
    assert suspendable(0.5).resume("a") == suspendable(None).resume("a") == 0.5
    doc = instance_to_dict(one_job(0.5))
    assert "suspend_hours" not in doc and "suspend_hours" not in doc["jobs"][0]
    inst = suspendable(0.1, job_suspend=0.05)
    assert inst.resume("a") == 0.05
    assert instance_from_dict(instance_to_dict(inst)) == inst


@pytest.mark.parametrize(
    ("where", "value", "field"),
    [
        ("top", 0.6, "suspend_hours"),
        ("job", 0.7, r"jobs\[0\]\.suspend_hours"),
        ("top", -1, "suspend"),
    ],
)
def test_a_suspend_longer_than_a_relaunch_or_malformed_is_refused(where, value, field):
    doc = instance_to_dict(one_job(0.5))
    (doc if where == "top" else doc["jobs"][0])["suspend_hours"] = value
    with pytest.raises(InstanceError, match=field):
        instance_from_dict(doc)


def test_the_milp_refuses_a_cheaper_resume_rather_than_misprice_it():
    from milp import MilpError, solve

    inst = suspendable(0.1).replace(slot=0.5)
    with pytest.raises(MilpError, match="suspend_hours"):
        solve(inst, time_limit=5)


def test_a_launch_cut_short_by_a_suspend_goes_on_after_the_resume():
    """Suspended 0.2 h into its 0.5 h launch, the job resumes on the same GPU with the
    0.3 h left plus the 0.1 h suspend overhead; a relaunch would cost at most 0.5 h."""
    g0 = (("n0", 0),)
    inst = suspendable(0.1)
    plan = Plan.of([Segment(0.0, 0.2, "a", C1, g0), Segment(1.0, 11.4, "a", C1, g0)])
    assert not check_plan(inst, plan)
    ev = evaluate(inst, plan).jobs[0]
    assert ev.completion == pytest.approx(11.4)  # 1.0 + 0.4 + 10 epochs of 1 h
    capped = suspendable(0.45)
    late = Plan.of([Segment(0.0, 0.2, "a", C1, g0), Segment(1.0, 11.5, "a", C1, g0)])
    assert evaluate(capped, late).jobs[0].completion == pytest.approx(11.5)  # 0.5, not 0.75


class _PauseAndResume:
    """Runs the job on GPU 0, pauses it at 0.2 h, resumes it there at 1 h."""

    name = "pause-and-resume"

    def decide(self, state):
        from heuristic.core.occupancy import Allocation
        from heuristic.core.policy import Decision

        (status,) = state.jobs
        on = Allocation(C1, (("n0", 0),))
        if state.time < 0.1:
            return Decision({"a": on}, wake_at=0.2)
        if state.time < 0.5:
            return Decision({"a": None}, wake_at=1.0)
        return Decision({} if status.allocation else {"a": on})


def test_the_engine_carries_a_launch_cut_short_as_the_evaluator_does():
    inst = suspendable(0.1)
    run = simulate(inst, _PauseAndResume(), mode="rollout")
    assert run.completions["a"] == pytest.approx(11.4)
    assert evaluate(inst, run.plan).jobs[0].completion == pytest.approx(11.4)
