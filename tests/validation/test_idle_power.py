"""Idle power (docs/model.md, 'Idle power'): nodes' base power and idle GPUs' power,
charged while the cluster is powered, from time 0 to the last completion; in the
evaluator, the Monte Carlo replay and online runs; absent, nothing changes."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristic.core.registry import make_policy
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
    instance_from_dict,
    instance_to_dict,
)
from instances.energy import Carbon, Series
from tests.strategies import priced_instances, serial_plans
from tests.validation.joint import joint_expectation
from validation.evaluate import evaluate, scenario_costs
from validation.montecarlo import replay
from validation.online import run_online
from validation.simulator import rollout

C1 = Config("v100", 1)


def _two_jobs(prices: Series | None = None) -> Instance:
    """One node of 2 V100s (300 W busy, 50 W idle, 100 W base); job a stops at 2 or 4
    epochs (1/2 each), job b runs its 1 epoch; 1 h per epoch on one GPU."""
    gpu = GpuType("v100", 32.0, 300.0, idle_w=50.0)
    a = Job("a", 0.0, 20.0, EpochDistribution((2.0, 4.0), (0.5, 0.5)), {C1: 1.0}, 8.0)
    b = Job("b", 0.0, 20.0, EpochDistribution.deterministic(1.0), {C1: 1.0}, 8.0)
    node = Node("n", "v100", 2, base_w=100.0)
    return Instance((gpu,), (node,), (a, b), prices=prices)


PLAN = Plan(
    (
        Segment(1.0, 5.0, "a", C1, (("n", 0),)),
        Segment(0.0, 1.0, "b", C1, (("n", 1),)),
    )
)


def test_idle_power_by_hand():
    """The cluster is powered from 0 until a completes, at 3 or 5 (1/2 each): 4 h
    expected at 100 + 2 x 50 = 200 W, less 50 W on each GPU while a job runs on it
    (b: 1 h; a: 2 h, then 2 h half the time: 4 GPU-hours): 0.8 - 0.2 = 0.6 kWh."""
    inst = _two_jobs()
    ev = evaluate(inst, PLAN)
    assert ev.idle.kwh == pytest.approx(0.6)
    assert ev.idle.energy_cost == pytest.approx(0.2 * 0.6)
    jobs_kwh = 0.3 * (1 + 2 + 0.5 * 2)
    assert ev.expected_energy_kwh == pytest.approx(jobs_kwh + 0.6)
    assert ev.energy_cost == pytest.approx(0.2 * (jobs_kwh + 0.6))
    assert ev.total_cost == pytest.approx(ev.energy_cost + ev.tardiness_cost)
    assert ev.summary()["idle_kwh"] == pytest.approx(0.6)
    # at a price of 0.1 to hour 4, then 1.0: the cluster is powered in [0, 3), and in
    # [3, 5) half the time; a's GPU is busy in [1, 3), and in [3, 5) half the time
    dear = _two_jobs(Series((0.0, 4.0, 5.0), (0.1, 1.0), "hold"))
    powered = 0.2 * (0.1 * 3 + 0.5 * (0.1 + 1.0))
    busy = 0.05 * (0.1 * 1 + 0.1 * 2 + 0.5 * (0.1 + 1.0))
    assert evaluate(dear, PLAN).idle.energy_cost == pytest.approx(powered - busy)


def test_idle_carbon_by_hand():
    """The idle 0.6 kWh of ``test_idle_power_by_hand`` at 500 g/kWh: 300 g, at 100 per
    tonne 0.03, counted and priced beside the jobs' (a mutant that left the idle grams
    unpriced passed every test here; only a MILP test caught it)."""
    carbon = Carbon(Series.flat(500.0, upper=1e5), 100.0)
    ev = evaluate(replace(_two_jobs(), carbon=carbon), PLAN)
    assert ev.idle.carbon_kg == pytest.approx(0.3)
    assert ev.idle.carbon_cost == pytest.approx(100 * 300 / 1e6)
    jobs_grams = 500 * 0.3 * (1 + 2 + 0.5 * 2)
    assert ev.carbon_kg == pytest.approx(0.3 + jobs_grams / 1000)
    assert ev.carbon_cost == pytest.approx(100 * (300 + jobs_grams) / 1e6)


def test_realised_idle_power():
    """a stopping at 2 epochs: powered 3 h, 0.6 - 0.05 x 3 = 0.45 kWh; at 4: 5 h."""
    inst = _two_jobs()
    at2 = scenario_costs(inst, PLAN, {"a": 2.0, "b": 1.0})
    at4 = scenario_costs(inst, PLAN, {"a": 4.0, "b": 1.0})
    assert at2.energy_cost == pytest.approx(0.2 * (0.3 * 3 + 0.45))
    assert at4.energy_cost == pytest.approx(0.2 * (0.3 * 5 + 1.0 - 0.25))


@settings(max_examples=30)
@given(st.data())
def test_the_exact_bill_is_the_joint_enumeration_of_stops(data):
    inst = data.draw(priced_instances(max_jobs=3, relaunch=data.draw(st.booleans()), idle=True))
    plan = data.draw(serial_plans(inst))
    ev = evaluate(inst, plan)
    energy, carbon = joint_expectation(inst, plan)
    assert ev.energy_cost == pytest.approx(energy, rel=1e-9, abs=1e-12)
    assert ev.carbon_cost == pytest.approx(carbon, rel=1e-9, abs=1e-12)


@settings(max_examples=15)
@given(st.data())
def test_exact_cost_inside_monte_carlo_99_interval(data):
    inst = data.draw(priced_instances(max_jobs=3, relaunch=True, idle=True))
    plan = data.draw(serial_plans(inst))
    exact = evaluate(inst, plan)
    mc = replay(inst, plan, samples=1500, seed=data.draw(st.integers(0, 5)))
    assert mc.contains(exact.total_cost, rel_tol=1e-5), (mc.interval, exact.total_cost)


def test_online_runs_charge_the_idle_power(small):
    """A sampled run's realised cost: the evaluator on the scenario's instance, the
    cluster powered until its last completion."""
    idle = small.replace(
        gpu_types=tuple(replace(g, idle_w=0.2 * g.power_w) for g in small.gpu_types),
        nodes=tuple(replace(n, base_w=150.0) for n in small.nodes),
    )
    blind = {"idle_tail": False}  # STS's one rule that sees idle power (test_tail.py)
    plain = run_online(small, "sts", seed=1, options=blind)
    charged = run_online(idle, "sts", seed=1, options=blind)
    assert charged.result.plan == plain.result.plan  # nothing else sees it
    cost = scenario_costs(idle, charged.result.plan, charged.result.epochs, tardiness="expected")
    assert charged.evaluation.energy_cost == pytest.approx(cost.energy_cost, rel=1e-9)
    assert charged.summary()["idle_kwh"] > 0 == plain.summary()["idle_kwh"]
    assert charged.summary()["energy_cost"] > plain.summary()["energy_cost"]


def test_no_idle_power_changes_nothing(small):
    plan = rollout(small, make_policy("sts"))
    zero = small.replace(
        gpu_types=tuple(replace(g, idle_w=0.0) for g in small.gpu_types),
        nodes=tuple(replace(n, base_w=0.0) for n in small.nodes),
    )
    assert not zero.idle_power
    assert evaluate(zero, plan) == evaluate(small, plan)
    assert "idle_w" not in json.dumps(instance_to_dict(zero))


def test_round_trip_and_refusals(small):
    doc = instance_to_dict(small)
    doc["gpu_types"][0]["idle_w"] = 40.0
    doc["nodes"][0]["base_w"] = 120.0
    inst = instance_from_dict(json.loads(json.dumps(doc)))
    assert inst.gpu_types[0].idle_w == 40.0 and inst.nodes[0].base_w == 120.0
    assert instance_from_dict(instance_to_dict(inst)) == inst
    for where, field, value, words in [
        ("gpu_types", "idle_w", 1e4, "at most its busy power"),
        ("gpu_types", "idle_w", -1.0, "non-negative"),
        ("nodes", "base_w", -5.0, "non-negative"),
        ("nodes", "base_w", 1e7, "at most"),
    ]:
        bad = json.loads(json.dumps(doc))
        bad[where][0][field] = value
        with pytest.raises(InstanceError) as err:
            instance_from_dict(bad)
        assert err.value.path == f"{where}[0].{field}" and words in str(err.value)


@pytest.mark.parametrize("price", [0.0, 0.6])
def test_a_subnormal_first_stop_keeps_the_bill_finite(price):
    # hypothesis found it: P(C_j <= t) going from 1e-322 to 1 as a running ratio
    # overflowed, and the idle hours were paid with probability -inf (NaN at price 0)
    k = Config("k80", 1)
    gpu = GpuType("k80", 12.0, 100.0, idle_w=0.0)
    node = Node("n0", "k80", 1, base_w=80.0)
    dists = (
        EpochDistribution((1.0, 2.0), (1e-322, 1.0)),
        EpochDistribution((1.0, 2.0), (0.95, 0.05)),
    )
    jobs = tuple(Job(f"j{i}", 0.0, 1.0, d, {k: 1.0}, 2.0) for i, d in enumerate(dists))
    series = Series(times=(0.0, 1.0), values=(price,), after="repeat")
    inst = Instance((gpu,), (node,), jobs, energy_price=0.5, prices=series)
    plan = Plan(
        (Segment(0.0, 2.0, "j0", k, (("n0", 0),)), Segment(2.0, 4.0, "j1", k, (("n0", 0),)))
    )
    ev = evaluate(inst, plan)
    energy, _ = joint_expectation(inst, plan)
    assert ev.energy_cost == pytest.approx(energy, rel=1e-9, abs=1e-12)


def _half_run(**fields: Any) -> tuple[Instance, Plan]:
    """One job of two epochs on a node drawing power of its own, and a plan that runs
    one of them: costed unchecked, the job never ends and the node stays powered."""
    k = Config("k80", 1)
    gpu = GpuType("k80", 12.0, 100.0, idle_w=10.0)
    node = Node("n0", "k80", 1, base_w=80.0)
    job = Job("j0", 0.0, 1.0, EpochDistribution.deterministic(2.0), {k: 1.0}, 2.0)
    inst = Instance((gpu,), (node,), (job,), **fields)
    return inst, Plan((Segment(0.0, 1.0, "j0", k, (("n0", 0),)),))


@pytest.mark.parametrize("after", ["repeat", "hold"])
@pytest.mark.parametrize("price", [0.0, 0.3])
def test_an_unchecked_plan_that_never_ends_costs_without_bound_or_not_at_all(after, price):
    """``evaluate(..., check=False)`` of a plan that leaves a job unfinished, nodes drawing
    power of their own, under a price series: the nodes stay powered for ever, so the
    bill is infinite where the series is above 0 past its end and finite where it holds
    0, as at one flat price (under a repeating series it raised an OverflowError, a
    review found)."""
    series = Series(times=(0.0, 1.0, 2.0), values=(0.5, price), after=after)
    inst, half = _half_run(energy_price=0.5, prices=series)
    ev = evaluate(inst, half, check=False)
    endless = after == "repeat" or price > 0  # repeated, the first hour's 0.5 comes back
    assert ev.energy_cost == math.inf if endless else math.isfinite(ev.energy_cost)
    assert series.cumulative(math.inf) == (math.inf if endless else 0.5)


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
    bills it 0 (not NaN), and a tardiness weight of 0 charges nothing for never ending
    (a free kWh, a flat series at 0 and an unpriced carbon series gave NaN: ``0 * inf``,
    a review of 2026-12-07)."""
    ev = evaluate(*_half_run(**fields), check=False)
    nan = {k: v for k, v in ev.summary().items() if math.isnan(v)}
    assert not nan, nan


def test_a_weight_of_zero_charges_nothing_for_a_job_never_completed():
    k = Config("k80", 1)
    job = Job("j0", 0.0, 1.0, EpochDistribution.deterministic(2.0), {k: 1.0}, 2.0, weight=0.0)
    inst = Instance((GpuType("k80", 12.0, 100.0),), (Node("n0", "k80", 1),), (job,))
    half = Plan((Segment(0.0, 1.0, "j0", k, (("n0", 0),)),))
    (cost,) = evaluate(inst, half, check=False).jobs
    assert cost.completion == math.inf
    assert cost.worst_case_tardiness_cost == 0.0 == cost.expected_tardiness_cost
