"""Cases of validation/evaluate.py, billing.py and timeline.py a mutation test found
untested (2026-12-07)."""

from __future__ import annotations

import math

import pytest

from instances import Config, EpochDistribution, GpuType, Instance, Job, Node, Plan, Segment
from validation.evaluate import evaluate, scenario_costs

C1 = Config("v100", 1)
GPU = GpuType("v100", 32.0, 300.0)


def test_a_stop_past_the_maximum_by_more_than_1e12_is_refused():
    """The stop may pass E by 1e-12 of it (a float step), no more: 22 * (1 + 5e-12)
    is refused by its own message."""
    from heuristic import make_policy
    from instances.bundled import bundled
    from validation import rollout

    tiny = bundled("tiny")
    plan = rollout(tiny, make_policy("fifo"))
    full = {j.id: j.max_epochs for j in tiny.jobs}
    e = tiny.job("j0").max_epochs
    with pytest.raises(ValueError, match="must be a number of epochs"):
        scenario_costs(tiny, plan, {**full, "j0": e * (1 + 5e-12)})
    assert math.isfinite(scenario_costs(tiny, plan, {**full, "j0": e * (1 + 5e-13)}).total_cost)


def test_an_unreachable_stop_of_probability_zero_adds_no_nan():
    """``expected`` tardiness sums over the stops that can happen: an unchecked plan
    that stops short of a job's stops costs an infinite tardiness, and a stop of
    probability 0 among them adds nothing to it, not ``0 * inf`` (NaN)."""
    dist = EpochDistribution((1.0, 2.0, 3.0), (0.5, 0.0, 0.5))
    job = Job("a", 0.0, 0.5, dist, {C1: 1.0}, 8.0, weight=3.0)
    inst = Instance((GPU,), (Node("n", "v100", 1),), (job,))
    one = Plan((Segment(0.0, 1.0, "a", C1, (("n", 0),)),))  # stops at 1 of 3 epochs
    (cost,) = evaluate(inst, one, check=False, tardiness="expected").jobs
    assert cost.expected_tardiness_cost == math.inf == cost.tardiness_cost
    full = Plan((Segment(0.0, 3.0, "a", C1, (("n", 0),)),))
    (done,) = evaluate(inst, full, tardiness="expected").jobs
    assert done.tardiness_cost == pytest.approx(3.0 * (0.5 * 0.5 + 0.5 * 2.5))


def test_a_scenarios_carbon_kg_holds_the_idle_carbon_its_price_is_paid_on():
    """Realised carbon with idle power: the kilograms are those the carbon cost prices
    (jobs' and the powered cluster's), as in :func:`evaluate`."""
    from instances.energy import Carbon, Series

    gpu = GpuType("v100", 32.0, 300.0, idle_w=50.0)
    a = Job("a", 0.0, 20.0, EpochDistribution((2.0, 4.0), (0.5, 0.5)), {C1: 1.0}, 8.0)
    node = Node("n", "v100", 2, base_w=100.0)
    carbon = Carbon(Series.regular(1.0, [300.0, 100.0], upper=1e5), 80.0)
    inst = Instance((gpu,), (node,), (a,), energy_price=0.2, carbon=carbon)
    plan = Plan((Segment(0.0, 4.0, "a", C1, (("n", 0),)),))
    for stop in (2.0, 4.0):
        cost = scenario_costs(inst, plan, {"a": stop})
        assert cost.carbon_kg == pytest.approx(cost.carbon_cost * 1e3 / 80.0, rel=1e-12)
        # the job's 300 W and the idle 100 W base + 50 W of the free GPU, 300/100 g/kWh
        grams = sum(
            (0.45 if t < stop else 0.0) * (300.0 if t % 2 == 0 else 100.0) for t in range(4)
        )
        assert cost.carbon_kg == pytest.approx(grams / 1e3, rel=1e-12)
    ev = evaluate(inst, plan)
    assert ev.carbon_kg == pytest.approx(ev.carbon_cost * 1e3 / 80.0, rel=1e-12)


def test_a_job_stopped_at_zero_epochs_completes_at_its_start():
    """A stop at 0 epochs is reached when the job starts: no relaunch overhead is run
    (nor paid), so the realised ``expected`` tardiness counts from the start."""
    from validation.timeline import Timeline

    job = Job(
        "a",
        0.0,
        1.2,
        EpochDistribution((1.0, 2.0), (0.5, 0.5)),
        {C1: 1.0},
        8.0,
        weight=2.0,
        relaunch_hours=0.5,
    )
    inst = Instance((GPU,), (Node("n", "v100", 1),), (job,))
    plan = Plan((Segment(1.0, 3.5, "a", C1, (("n", 0),)),))
    tl = Timeline.of(inst, "a", plan.segments)
    assert tl.time_at(0.0) == 1.0 and tl.time_at(1.0) == 2.5
    cost = scenario_costs(inst, plan, {"a": 0.0}, tardiness="expected")
    assert cost.tardiness_cost == 0.0 and cost.energy_cost == 0.0
    late = scenario_costs(inst, plan, {"a": 1.0}, tardiness="expected")
    assert late.tardiness_cost == pytest.approx(2.0 * (2.5 - 1.2))


def test_a_boots_energy_carries_its_carbon():
    """Nodes powered off and booted (tests/validation/test_power_off.py's pair): the
    boots' kWh are in the idle energy and so in its carbon, at a flat 200 g/kWh
    ``idle.kwh * 0.2`` kg, priced per tonne."""
    from instances.energy import Carbon, Series
    from instances.power import PowerOff

    gpu = GpuType("v100", 32.0, 300.0)
    a = Job("a", 0.0, 20.0, EpochDistribution((1.0, 3.0), (0.5, 0.5)), {C1: 1.0}, 8.0)
    b = Job("b", 0.0, 20.0, EpochDistribution.deterministic(1.0), {C1: 1.0}, 8.0)
    node = Node("n", "v100", 1, base_w=100.0)
    carbon = Carbon(Series.flat(200.0, upper=1e5), 50.0)
    inst = Instance(
        (gpu,),
        (node,),
        (a, b),
        carbon=carbon,
        power_off=PowerOff(after_h=0.5, boot_h=0.25, boot_kwh=0.3),
    )
    plan = Plan((Segment(0.0, 3.0, "a", C1, (("n", 0),)), Segment(3.5, 4.5, "b", C1, (("n", 0),))))
    idle = evaluate(inst, plan).idle
    assert idle.boots == pytest.approx(0.5)
    assert idle.kwh == pytest.approx(0.1 * 3.625 + 0.5 * 0.3)
    assert idle.carbon_kg == pytest.approx(idle.kwh * 0.2, rel=1e-12)
    assert idle.carbon_cost == pytest.approx(idle.carbon_kg / 1e3 * 50.0, rel=1e-12)
