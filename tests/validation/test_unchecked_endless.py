"""An unchecked plan that never completes a job (``evaluate(..., check=False)``) is
costed without NaN: a rate of 0 (a free kWh, a carbon price of 0, a tardiness weight
of 0) charges nothing for its endless hours, where ``0 * inf`` made the figures NaN (a
review of 2026-12-07)."""

from __future__ import annotations

import math

import pytest

from instances import Config, EpochDistribution, GpuType, Instance, Job, Node, Plan, Segment
from instances.energy import Carbon, Series
from validation.evaluate import evaluate

K = Config("k80", 1)


@pytest.mark.parametrize(
    "fields",
    [
        {"energy_price": 0.0},  # free energy (and so default weights of 0)
        {"energy_price": 0.5, "prices": Series.flat(0.0)},  # a flat series at 0
        {
            "energy_price": 0.5,
            "carbon": Carbon(Series.regular(1.0, [100.0, 200.0], upper=1e5), 0.0),
        },
    ],
    ids=["price-0", "flat-series-0", "carbon-unpriced"],
)
def test_an_endless_unchecked_plan_has_no_nan_figure(fields):
    """As a held series ending at 0 bills an endless run a finite amount, a rate of 0
    bills it 0 (not NaN), and a tardiness weight of 0 charges nothing for never ending."""
    gpu = GpuType("k80", 12.0, 100.0, idle_w=10.0)
    job = Job("j0", 0.0, 1.0, EpochDistribution.deterministic(2.0), {K: 1.0}, 2.0)
    inst = Instance((gpu,), (Node("n0", "k80", 1, base_w=80.0),), (job,), **fields)
    half = Plan((Segment(0.0, 1.0, "j0", K, (("n0", 0),)),))  # one of its two epochs
    ev = evaluate(inst, half, check=False)
    nan = {k: v for k, v in ev.summary().items() if math.isnan(v)}
    assert not nan, nan


def test_a_weight_of_zero_charges_nothing_for_a_job_never_completed():
    job = Job("j0", 0.0, 1.0, EpochDistribution.deterministic(2.0), {K: 1.0}, 2.0, weight=0.0)
    inst = Instance((GpuType("k80", 12.0, 100.0),), (Node("n0", "k80", 1),), (job,))
    half = Plan((Segment(0.0, 1.0, "j0", K, (("n0", 0),)),))
    (cost,) = evaluate(inst, half, check=False).jobs
    assert cost.completion == math.inf
    assert cost.worst_case_tardiness_cost == 0.0 == cost.expected_tardiness_cost
