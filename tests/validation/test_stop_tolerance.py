"""Progress one float step from a stopping point is at it: the distribution, the
evaluator, the Monte Carlo replay, the engine and the checker read it with one
tolerance (instances.distribution.STOP_TOL)."""

import itertools
import math

import pytest

from heuristic import make_policy
from heuristic.core.occupancy import Allocation
from heuristic.core.policy import Decision, SchedulerState
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node, Plan, Segment
from instances.distribution import STOP_TOL, reaches
from validation.check import check_plan
from validation.evaluate import evaluate, evaluate_scenario
from validation.montecarlo import replay
from validation.simulator import simulate
from validation.timeline import Timeline

C1 = Config("v100", 1)
GPU = (("n0", 0),)
HALF = EpochDistribution((2.0, 4.0), (0.5, 0.5))


def test_progress_a_float_step_from_a_stop_is_at_it():
    below, above = 1.9999999999999996, math.nextafter(2.0, 4.0)  # two steps, one step
    assert reaches(below, 2.0) and not reaches(2.0 - 10 * STOP_TOL, 2.0)
    assert HALF.beyond(below) == HALF.beyond(2.0) == 0.5
    assert HALF.survival(above) == HALF.survival(2.0) == 1.0
    assert HALF.block_of(above) == HALF.block_of(2.0) == 0
    assert HALF.conditional(below).stops == pytest.approx(HALF.conditional(2.0).stops)
    assert HALF.conditional(below).probabilities == (1.0,)


def paused_at_a_float_step() -> tuple[Instance, Plan]:
    """0.1 h an epoch after a 0.5 h relaunch overhead: [0, 0.7) runs 0.2 h / 0.1 =
    1.9999999999999996 epochs (one float step short of the stop at 2); the job resumes
    at 2.5 h and relaunches."""
    job = Job("a", 0.0, 20.0, HALF, {C1: 0.1}, 8.0)
    inst = Instance(
        (GpuType("v100", 32.0, 300.0),), (Node("n0", "v100", 1),), (job,), relaunch_hours=0.5
    )
    plan = Plan.of([Segment(0.0, 0.7, "a", C1, GPU), Segment(2.5, 3.2, "a", C1, GPU)])
    return inst, plan


def test_a_relaunch_at_a_float_step_below_a_stop_is_paid_only_by_jobs_running_past_it():
    """Block 2 is complete at 0.7 h; the relaunch at 2.5 h is paid with P(N > 2) = 0.5,
    not 1 (0.15 kWh of overhead each: 0.15 + 0.5 x 0.15), as each sampled run pays it."""
    inst, plan = paused_at_a_float_step()
    assert Timeline.of(inst, "a", plan.for_job("a")).pieces[0].w1 < 2.0
    assert check_plan(inst, plan) == []
    ev = evaluate(inst, plan, tardiness="expected")
    assert ev.overhead_kwh == pytest.approx(0.15 + 0.5 * 0.15)
    assert ev.expected_energy_kwh == pytest.approx(0.225 + 0.03 * (2 + 0.5 * 2))
    price = inst.energy_price
    stop2, _ = evaluate_scenario(inst, plan, {"a": 2.0}, tardiness="expected")
    stop4, _ = evaluate_scenario(inst, plan, {"a": 4.0}, tardiness="expected")
    assert stop2 == pytest.approx(price * (0.15 + 0.03 * 2))
    assert stop4 == pytest.approx(price * (0.3 + 0.03 * 4))
    assert replay(inst, plan, samples=400, seed=1, tardiness="expected").contains(ev.total_cost)


class PauseNearTheEnd:
    """Runs the job at once, pauses it when 1e-9 of its 2 epochs (1e-8 h at 10 h an
    epoch, beyond the engine's 1e-9 h clock tolerance) are left, resumes it at 30 h."""

    name = "pause-near-the-end"

    def decide(self, state: SchedulerState) -> Decision:
        alloc = Allocation(C1, GPU)
        if state.time < 1.0:
            return Decision({"a": alloc}, wake_at=20.0 - 1e-8)
        if state.time < 25.0:
            return Decision({"a": None}, wake_at=30.0)
        return Decision({"a": alloc})


def test_the_engine_ends_a_job_whose_progress_reaches_its_stop():
    """The checker reads progress 2 - 1e-9 as the job's 2 epochs done; the engine ends
    the job there too, rather than resume it for an after-completion segment."""
    job = Job("a", 0.0, 40.0, EpochDistribution.deterministic(2.0), {C1: 10.0}, 8.0)
    inst = Instance((GpuType("v100", 32.0, 300.0),), (Node("n0", "v100", 1),), (job,))
    run = simulate(inst, PauseNearTheEnd())
    assert len(run.plan) == 1 and run.completions["a"] == 20.0 - 1e-8
    assert check_plan(inst, run.plan) == []
    # the evaluator's completion is the engine's: the end of the segment that reached it
    assert evaluate(inst, run.plan).jobs[0].completion == run.completions["a"]


@pytest.mark.parametrize(("release", "tau"), [(5000.3, 1.3e-5), (50000.1, 1e-3)])
def test_late_short_epochs_reach_their_stop_despite_the_clock(release, tau):
    """Late in a long trace a float hour holds few digits: the engine's stop time,
    rounded to it, left a job with 0.05-s epochs released at 5,000 h 3.4e-8 epochs
    short, above STOP_TOL, and its own checker refused every policy's plan (found by
    a probe, 2026-12-05). The timeline absorbs the clock's rounding (CLOCK_ULPS)."""
    job = Job("j0", release, release + 1.0, EpochDistribution((3.0,), (1.0,)), {C1: tau}, 6.0)
    inst = Instance((GpuType("v100", 32.0, 300.0),), (Node("n0", "v100", 1),), (job,))
    for mode in ("rollout", "sampled"):
        res = simulate(inst, make_policy("fifo"), mode=mode, seed=1)
        assert check_plan(inst, res.plan) == []
        assert Timeline.of(inst, "j0", res.plan.for_job("j0")).complete
    ev = evaluate(inst, simulate(inst, make_policy("fifo")).plan)
    assert ev.total_cost == pytest.approx(3 * tau * 0.3 * inst.energy_price, rel=1e-6)


def test_an_early_stop_a_clock_step_short_is_reached_by_every_reader():
    """A step ending one float step short of an early stop late in a trace (5.2e-8
    epochs, above STOP_TOL), then a pause: the evaluator read the stop as reached at
    the resume, 5 h later, doubling the tardiness of the runs that stop there, where the
    engine ends them at the step's end (found in review, 2026-12-05)."""
    tau, release = 1.3e-5, 5000.3
    dist = EpochDistribution((1.5, 3.0), (0.5, 0.5))
    job = Job("j0", release, release + 1.0, dist, {C1: tau}, 6.0)
    inst = Instance((GpuType("v100", 32.0, 300.0),), (Node("n0", "v100", 1),), (job,))
    exact = release + 1.5 * tau  # reaches 1.5 (1.8e-8 epochs over)
    short = math.nextafter(exact, 0.0)  # 5.2e-8 epochs short
    plans = [
        Plan.of(
            [
                Segment(release, end, "j0", C1, GPU),
                Segment(end + 5, end + 5 + 1.5 * tau, "j0", C1, GPU),
            ]
        )
        for end in (exact, short)
    ]
    assert not reaches((short - release) / tau, 1.5)
    assert Timeline.of(inst, "j0", plans[1].for_job("j0")).pieces[0].w1 == 1.5
    costs = [evaluate(inst, plan, tardiness="expected").total_cost for plan in plans]
    assert costs[1] == pytest.approx(costs[0], rel=1e-9)
    assert check_plan(inst, plans[1]) == []


def test_many_segments_do_not_hide_a_real_shortfall():
    """The clock's rounding is counted per segment but never above the engine's clock
    tolerance (1e-9 h): 1,000 contiguous segments ending 2e-8 h short of the last epoch
    are short, as they were before (found in review, 2026-12-05)."""
    tau, release = 1e-3, 50000.1
    job = Job("j0", release, release + 10.0, EpochDistribution((3.0,), (1.0,)), {C1: tau}, 6.0)
    inst = Instance((GpuType("v100", 32.0, 300.0),), (Node("n0", "v100", 1),), (job,))
    times = [release + (3 * tau - 2e-8) * k / 1000 for k in range(1001)]
    plan = Plan.of(Segment(a, b, "j0", C1, GPU) for a, b in itertools.pairwise(times))
    assert not Timeline.of(inst, "j0", plan.for_job("j0")).complete
    assert any("incomplete" in str(v) for v in check_plan(inst, plan))
