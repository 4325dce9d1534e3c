"""Energy prices and carbon over time (docs/model.md, 'Energy prices and carbon over
time') in the evaluator, the Monte Carlo replay, the checker and the engine; and that an
explicit flat series changes no figure."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristic.core.registry import make_policy, policy_names
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node, Plan, Segment
from instances.bundled import bundled
from instances.energy import Carbon, Series
from instances.generators import SyntheticSpec, synthetic
from instances.generators.suite import milp_suite
from tests.plans import STS_BLIND, cases, plain_rollout
from tests.strategies import priced_instances, serial_plans
from tests.validation.test_online_pinned import _fingerprint
from validation.check import check_plan
from validation.evaluate import evaluate, scenario_costs
from validation.montecarlo import replay
from validation.online import run_online
from validation.scenario import scenario_instance
from validation.simulator import rollout, simulate

V100 = GpuType("v100", 32.0, 300.0)
C1 = Config("v100", 1)


def _flat(inst: Instance) -> Instance:
    """The instance with an explicit flat series at its own price (and a flat carbon
    series priced at 0: counted, not charged)."""
    return inst.replace(
        prices=Series.regular(1.0, [inst.energy_price] * 24),
        carbon=Carbon(Series.flat(250.0, upper=1e5), 0.0),
    )


def _instances() -> list[Instance]:
    suite = milp_suite()
    return [bundled("tiny"), bundled("small"), bundled("medium"), *suite[:2], *suite[-2:]]


def test_the_blind_variants_plan_as_sts_without_a_series_or_idle_power():
    """What :data:`tests.plans.STS_BLIND` rests on, checked on ``small``."""
    inst = bundled("small")
    assert inst.prices is None and inst.carbon is None and not inst.idle_power
    sts = plain_rollout(inst, "sts")
    assert all(plain_rollout(inst, p) == sts for p in STS_BLIND)


@pytest.mark.parametrize(
    ("inst", "name"),
    [(i, p) for i in _instances() for _, p in cases([i.name], policy_names())],
    ids=lambda x: x.name if isinstance(x, Instance) else x,
)
def test_an_explicit_flat_series_changes_no_figure(inst, name):
    """Every registered policy, its rollout and a sampled run, the exact costs, the
    realised costs and the Monte Carlo replay: to the last digit (the carbon, counted
    at a flat 250 g/kWh, is that times the energy)."""
    flat = _flat(inst)
    plan = plain_rollout(inst, name)
    assert rollout(flat, make_policy(name, seed=0)) == plan
    ev, ev_flat = evaluate(inst, plan), evaluate(flat, plan)
    for a, b in zip(ev.jobs, ev_flat.jobs, strict=True):
        assert (a.energy_cost, a.tardiness_cost, a.expected_energy_kwh) == (
            b.energy_cost,
            b.tardiness_cost,
            b.expected_energy_kwh,
        )
        assert b.carbon_cost == 0.0
        assert b.carbon_kg == pytest.approx(0.25 * a.expected_energy_kwh, rel=1e-12)
    assert (ev.total_cost, ev.energy_cost) == (ev_flat.total_cost, ev_flat.energy_cost)
    run = simulate(inst, make_policy(name, seed=0), mode="sampled", seed=3)
    mine = scenario_costs(inst, run.plan, run.epochs, tardiness="expected")
    again = scenario_costs(_without_carbon(flat), run.plan, run.epochs, tardiness="expected")
    assert mine == again
    if name == "sts":
        assert replay(inst, plan, samples=50, seed=1) == replay(
            _without_carbon(flat), plan, samples=50, seed=1
        )


def _without_carbon(inst: Instance) -> Instance:
    return inst.replace(carbon=None)


def test_an_online_run_is_unchanged_under_a_flat_series():
    """STS online on 100 synthetic jobs with measured overheads (202 decisions), with
    and without an explicit flat series: the same segments and realised costs, to the
    last digit. (The 300-job run pinned in tests/validation/test_online_pinned.py took
    16 s more here.)"""
    inst = synthetic(SyntheticSpec(nodes=10, jobs=100, relaunch="measured"), seed=0)
    plain = run_online(inst, "sts")
    flat = run_online(inst.replace(prices=Series.regular(0.5, [inst.energy_price] * 3)), "sts")
    figures = ("energy_cost", "tardiness_cost", "decisions")
    assert [repr(flat.summary()[k]) for k in figures] == [repr(plain.summary()[k]) for k in figures]
    assert _fingerprint(flat) == _fingerprint(plain)


def _one_job(prices: Series, *, relaunch: float = 0.0, carbon: Carbon | None = None) -> Instance:
    dist = EpochDistribution((2.0, 4.0), (0.5, 0.5))
    job = Job("a", 0.0, 20.0, dist, {C1: 1.0}, 8.0, relaunch_hours=relaunch)
    return Instance((V100,), (Node("n", "v100", 1),), (job,), prices=prices, carbon=carbon)


def test_a_segment_pays_the_prices_of_the_hours_it_runs_by_hand():
    """0.3 kW for 4 epochs of 1 h from time 1, stopping at 2 epochs with probability
    1/2, prices 0.1 then 0.5 per kWh from hour 2 (held): epoch 1 runs in [1, 2) at 0.1
    and is always paid; epoch 2 in [2, 3) at 0.5, always paid; epochs 3-4 in [3, 5) at
    0.5, paid half the time."""
    inst = _one_job(Series((0.0, 2.0, 3.0), (0.1, 0.5), "hold"))
    plan = Plan((Segment(1.0, 5.0, "a", C1, (("n", 0),)),))
    ev = evaluate(inst, plan)
    assert ev.energy_cost == pytest.approx(0.3 * (0.1 + 0.5 + 0.5 * 2 * 0.5))
    assert ev.expected_energy_kwh == pytest.approx(0.3 * 3)
    # with a relaunch overhead of half an hour, paid in full (P(N > 0) = 1) at 0.1
    slow = _one_job(Series((0.0, 2.0, 3.0), (0.1, 0.5), "hold"), relaunch=0.5)
    plan = Plan((Segment(1.0, 5.5, "a", C1, (("n", 0),)),))
    # overhead [1, 1.5) at 0.1; epochs 1-2 in [1.5, 3.5), paid; epochs 3-4 in [3.5, 5.5)
    cost = 0.3 * (0.5 * 0.1 + (0.5 * 0.1 + 1.0 * 0.5 + 0.5 * 0.5) + 0.5 * (2.0 * 0.5))
    assert evaluate(slow, plan).energy_cost == pytest.approx(cost)


def test_carbon_is_counted_and_priced():
    """The same run under a carbon intensity of 400 g/kWh for two hours, then 100,
    repeated, at 50 per tonne."""
    carbon = Carbon(Series.regular(2.0, [400.0, 100.0], upper=1e5), 50.0)
    inst = _one_job(Series.flat(0.2), carbon=carbon)
    plan = Plan((Segment(1.0, 5.0, "a", C1, (("n", 0),)),))
    ev = evaluate(inst, plan)
    grams = 0.3 * (400 + 100 + 0.5 * (100 + 400))  # hours [1,2) [2,3) [3,4) [4,5)
    assert ev.carbon_kg == pytest.approx(grams / 1000)
    assert ev.carbon_cost == pytest.approx(50 * grams / 1e6)
    assert ev.total_cost == pytest.approx(ev.energy_cost + ev.carbon_cost + ev.tardiness_cost)
    assert ev.summary()["carbon_kg"] == ev.carbon_kg


def _enumerated(inst: Instance, plan: Plan) -> tuple[float, float]:
    """Expected (energy cost, carbon cost) by enumerating each job's stops: the bill is
    a sum over jobs, so its expectation is each job's realised bill at each of its stops
    weighted by that stop's probability (the other jobs stopped at 0: nothing run)."""
    energy = carbon = 0.0
    for job in inst.jobs:
        for stop, p in zip(job.distribution.stops, job.distribution.probabilities, strict=True):
            epochs = {j.id: 0.0 for j in inst.jobs} | {job.id: stop}
            cost = scenario_costs(inst, plan, epochs)
            energy += p * cost.energy_cost
            carbon += p * cost.carbon_cost
    return energy, carbon


@settings(max_examples=40)
@given(st.data())
def test_the_exact_bill_is_the_enumeration_of_every_stop(data):
    """The evaluator's expectation (exposure of each block at its survival) against the
    realised bills of every stop (the hours run, each paid): two computations, one
    figure, with prices, carbon, overheads and pauses."""
    inst = data.draw(priced_instances(max_jobs=3, relaunch=data.draw(st.booleans())))
    plan = data.draw(serial_plans(inst))
    ev = evaluate(inst, plan)
    energy, carbon = _enumerated(inst, plan)
    assert ev.energy_cost == pytest.approx(energy, rel=1e-9, abs=1e-12)
    assert ev.carbon_cost == pytest.approx(carbon, rel=1e-9, abs=1e-12)


@settings(max_examples=20)
@given(st.data())
def test_exact_cost_inside_monte_carlo_99_interval(data):
    inst = data.draw(priced_instances(max_jobs=3, relaunch=True))
    plan = data.draw(serial_plans(inst))
    exact = evaluate(inst, plan)
    mc = replay(inst, plan, samples=1500, seed=data.draw(st.integers(0, 5)))
    # as in test_montecarlo: stops of tiny probability may never be sampled
    assert mc.contains(exact.total_cost, rel_tol=1e-5), (mc.interval, exact.total_cost)


@settings(max_examples=15)
@given(priced_instances(max_jobs=4, relaunch=True), st.sampled_from(["fifo", "sts", "lp"]))
def test_the_engine_and_the_checker_agree_under_prices(inst, name):
    """The engine's rollout is a plan the checker accepts, whatever the bill; a sampled
    run's realised costs are the same whether costed as the evaluator's exact figure on
    the scenario's instance (every job's stop known) or hour by hour to its stop."""
    plan = rollout(inst, make_policy(name, seed=0))
    assert check_plan(inst, plan) == []
    assert math.isfinite(evaluate(inst, plan).total_cost)
    run = simulate(inst, make_policy(name, seed=0), mode="sampled", seed=2)
    known = evaluate(scenario_instance(inst, run.epochs), run.plan, tardiness="expected")
    hourly = scenario_costs(inst, run.plan, run.epochs, tardiness="expected")
    assert known.energy_cost == pytest.approx(hourly.energy_cost, rel=1e-9, abs=1e-12)
    assert known.carbon_cost == pytest.approx(hourly.carbon_cost, rel=1e-9, abs=1e-12)
    assert known.tardiness_cost == pytest.approx(hourly.tardiness_cost, rel=1e-9, abs=1e-12)
