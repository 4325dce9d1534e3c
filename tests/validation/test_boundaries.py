"""The tolerances and boundaries of a job's timeline, its stop distribution and the
plan checker, each on the side the code puts it. A mutation check (2026-12-06) found
each of these rules free to move (a tolerance ten times looser, a check dropped, a
strict comparison made loose) with every test passing; each case here sits where the
mutant and the code disagree."""

from __future__ import annotations

import itertools

import pytest

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
from tests.validation.violations import kinds
from validation.timeline import Timeline

C1 = Config("v100", 1)
GPU = (("n0", 0),)
V100 = GpuType("v100", 32.0, 300.0)


def _one(job: Job, **kw: object) -> Instance:
    return Instance((V100,), (Node("n0", "v100", 1),), (job,), **kw)  # type: ignore[arg-type]


def _job(epochs: float, tau: float = 1.0, release: float = 0.0, due: float = 20.0) -> Job:
    dist = EpochDistribution.deterministic(epochs)
    return Job("a", release, release + due, dist, {C1: tau}, 8.0)


def test_a_pause_of_five_clock_tolerances_is_a_relaunch():
    """Two segments on one GPU 5e-9 h apart: a pause (the clock's tolerance is 1e-9 h),
    so the second pays the 0.5 h overhead again and the job is half an epoch short."""
    inst = _one(_job(2.0), relaunch_hours=0.5)
    plan = Plan.of([Segment(0.0, 1.5, "a", C1, GPU), Segment(1.5 + 5e-9, 2.5 + 5e-9, "a", C1, GPU)])
    assert Timeline.of(inst, "a", plan.for_job("a")).progress == pytest.approx(1.5)
    assert kinds(inst, plan) == ["incomplete"]


def test_many_segments_late_in_a_trace_end_short_by_five_clock_tolerances():
    """1,000 contiguous segments of 1e-3 h epochs at 50,000 h ending 5e-9 h short of
    the third epoch: more than the clock's 1e-9 h, so incomplete."""
    tau, rel = 1e-3, 50000.1
    job = Job("a", rel, rel + 10.0, EpochDistribution((3.0,), (1.0,)), {C1: tau}, 6.0)
    inst = _one(job)
    times = [rel + (3 * tau - 5e-9) * k / 1000 for k in range(1001)]
    plan = Plan.of(Segment(a, b, "a", C1, GPU) for a, b in itertools.pairwise(times))
    assert not Timeline.of(inst, "a", plan.for_job("a")).complete
    assert kinds(inst, plan) == ["incomplete"]


def test_ten_segments_late_in_a_trace_sum_their_clock_rounding():
    """Ten contiguous segments of 0.05-s epochs at 5,000 h ending 1e-6 epochs short:
    within the clock's rounding summed over the ten (one segment's alone is less), so
    complete."""
    tau, rel = 1.3e-5, 5000.3
    job = Job("a", rel, rel + 1.0, EpochDistribution((3.0,), (1.0,)), {C1: tau}, 6.0)
    inst = _one(job)
    times = [rel + (3 - 1e-6) * tau * k / 10 for k in range(11)]
    plan = Plan.of(Segment(a, b, "a", C1, GPU) for a, b in itertools.pairwise(times))
    assert Timeline.of(inst, "a", plan.for_job("a")).complete
    assert kinds(inst, plan) == []


@pytest.mark.parametrize(
    ("epochs", "short", "complete"),
    [
        (1.0, 5e-9, False),  # five times the stop tolerance (1e-9 epochs): short
        (0.5, 7e-10, True),  # below one epoch the tolerance is still 1e-9 epochs
    ],
)
def test_the_stop_tolerance_at_and_below_one_epoch(epochs, short, complete):
    inst = _one(_job(epochs))
    plan = Plan.of([Segment(0.0, epochs - short, "a", C1, GPU)])
    assert Timeline.of(inst, "a", plan.for_job("a")).complete is complete
    assert kinds(inst, plan) == ([] if complete else ["incomplete"])


@pytest.mark.parametrize(
    ("stops", "probabilities", "reason"),
    [
        ((1.0, 2.0), (0.5, 0.500005), "sum"),  # 1.000005: off by more than 1e-6
        ((1.0, 2.0), (1.0, 0.0), "positive"),  # the maximum never reached
    ],
)
def test_a_distribution_off_by_five_millionths_or_never_reaching_its_maximum_is_refused(
    stops, probabilities, reason
):
    with pytest.raises(InstanceError, match=reason):
        EpochDistribution(stops, probabilities)


@pytest.mark.parametrize(
    ("epochs", "end"),
    [
        (2.0, 2.0 + 5e-7),  # 5e-7 h past a slot's end: off the grid (2e-7 h tolerance at 2 h)
        (2.25, 2.25),  # a start on the grid and an end off it
    ],
)
def test_a_segment_ending_off_the_slot_grid_is_off_slot(epochs, end):
    inst = _one(_job(epochs), slot=0.5)
    assert kinds(inst, Plan.of([Segment(0.0, end, "a", C1, GPU)])) == ["off-slot"]


def test_dram_filled_exactly_fits():
    """Two jobs of 60 GB of host memory each on a node of 120 GB."""
    f = Config("v100", 1, dram_gb=60.0)
    jobs = tuple(
        Job(f"j{i}", 0.0, 10.0, EpochDistribution.deterministic(2.0), {f: 1.0}, 8.0)
        for i in range(2)
    )
    inst = Instance((V100,), (Node("n0", "v100", 2, dram_gb=120.0),), jobs)
    plan = Plan.of(
        [Segment(0.0, 2.0, "j0", f, (("n0", 0),)), Segment(0.0, 2.0, "j1", f, (("n0", 1),))]
    )
    assert kinds(inst, plan) == []


def test_a_multi_node_segment_naming_a_gpu_twice_is_refused():
    """Two GPUs on each of two nodes, (n1, 0) named twice: the capacity sweep takes a
    multi-node segment's whole nodes and would never see the duplicate."""
    m2 = Config("v100", 4, nodes=2)
    job = Job("a", 0.0, 10.0, EpochDistribution.deterministic(4.0), {m2: 0.5}, 8.0)
    inst = Instance((V100,), (Node("n1", "v100", 4), Node("n2", "v100", 4)), (job,))
    gpus = (("n1", 0), ("n1", 0), ("n2", 0), ("n2", 1))
    assert kinds(inst, Plan.of([Segment(0.0, 2.0, "a", m2, gpus)])) == ["bad-gpus"]
