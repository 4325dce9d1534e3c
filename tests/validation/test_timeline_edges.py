"""A clock-rounding case of validation/timeline.py a mutation test found untested
(2026-12-07), beside tests/validation/test_boundaries.py."""

from __future__ import annotations

import itertools

from instances import Config, EpochDistribution, GpuType, Instance, Job, Node, Plan, Segment
from validation.timeline import Timeline

C1 = Config("v100", 1)
GPU = (("n0", 0),)
V100 = GpuType("v100", 32.0, 300.0)


def test_one_segment_late_in_a_trace_is_allowed_only_its_own_clock_rounding():
    """The ten segments of test_ten_segments_late_in_a_trace_sum_their_clock_rounding
    end 1e-6 epochs short and are complete; one segment alone, as short, is not: its
    clock rounding (4 ulps of 5,000 h over 0.05-s epochs, 2.8e-7 epochs) is less."""
    tau, rel = 1.3e-5, 5000.3
    job = Job("a", rel, rel + 1.0, EpochDistribution((3.0,), (1.0,)), {C1: tau}, 6.0)
    inst = Instance((V100,), (Node("n0", "v100", 1),), (job,))
    one = Plan.of([Segment(rel, rel + (3 - 1e-6) * tau, "a", C1, GPU)])
    assert not Timeline.of(inst, "a", one.for_job("a")).complete
    times = [rel + (3 - 1e-6) * tau * k / 10 for k in range(11)]
    ten = Plan.of(Segment(a, b, "a", C1, GPU) for a, b in itertools.pairwise(times))
    assert Timeline.of(inst, "a", ten.for_job("a")).complete
