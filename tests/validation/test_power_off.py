"""Nodes powered off when empty (docs/model.md, 'Idle power'; validation/powered.py):
the rule by hand, against an interval union of every realised scenario, the exact bill
against the enumeration of the jobs' stops and the Monte Carlo replay, and a delay
beyond the horizon giving the always-on figures."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristic.core.registry import make_policy
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node, Plan, Segment
from instances.bundled import bundled
from instances.energy import Series
from instances.power import PowerOff
from tests.strategies import priced_instances, serial_plans
from tests.validation.joint import joint_expectation
from validation.evaluate import evaluate, scenario_costs
from validation.montecarlo import replay
from validation.online import run_online
from validation.powered import Completion, boots, node_spans, powered
from validation.simulator import rollout, simulate
from validation.timeline import Timeline

C1 = Config("v100", 1)
OPTION = PowerOff(after_h=0.5, boot_h=0.25, boot_kwh=0.3)


def _pair(option: PowerOff | None, prices: Series | None = None) -> Instance:
    """One node of one V100 (300 W busy, no idle power, 100 W base). Job a runs 1 or 3
    epochs (1/2 each) in [0, 3); job b runs its 1 epoch in [3.5, 4.5); 1 h per epoch."""
    gpu = GpuType("v100", 32.0, 300.0)
    a = Job("a", 0.0, 20.0, EpochDistribution((1.0, 3.0), (0.5, 0.5)), {C1: 1.0}, 8.0)
    b = Job("b", 0.0, 20.0, EpochDistribution.deterministic(1.0), {C1: 1.0}, 8.0)
    node = Node("n", "v100", 1, base_w=100.0)
    return Instance((gpu,), (node,), (a, b), prices=prices, power_off=option)


PAIR_PLAN = Plan((Segment(0.0, 3.0, "a", C1, (("n", 0),)), Segment(3.5, 4.5, "b", C1, (("n", 0),))))


def test_power_off_by_hand():
    """a stops at 1: empty in [1, 3.5), 2.5 h > d + b = 0.75, so off in [1.5, 3.25) and
    a boot; powered 1.5 + 1.25 = 2.75 h. a runs to 3: empty 0.5 h, kept on; powered
    [0, 4.5). Expected 3.625 h at 100 W and half a boot of 0.3 kWh: 0.5125 kWh, against
    0.45 always on."""
    ev = evaluate(_pair(OPTION), PAIR_PLAN)
    assert ev.idle.boots == pytest.approx(0.5)
    assert ev.idle.kwh == pytest.approx(0.1 * 3.625 + 0.5 * 0.3)
    assert evaluate(_pair(None), PAIR_PLAN).idle.kwh == pytest.approx(0.45)
    at1 = scenario_costs(_pair(OPTION), PAIR_PLAN, {"a": 1.0, "b": 1.0})
    assert at1.energy_cost == pytest.approx(0.2 * (0.3 * 2 + 0.1 * 2.75 + 0.3))
    # at 0.1 per kWh to hour 3.4, then 1.0: the boot [3.25, 3.5) costs 0.3 x (0.15 x 0.1
    # + 0.1 x 1.0) / 0.25; the powered hours 0.1 kW x (1.5 x 0.1 + (0.15 x 0.1 + 1.1 x
    # 1.0)) if a stops at 1, 0.1 kW x (3.4 x 0.1 + 1.1) if it runs to 3
    dear = _pair(OPTION, Series((0.0, 3.4, 10.0), (0.1, 1.0), "hold"))
    boot = 0.3 * (0.15 * 0.1 + 0.1 * 1.0) / 0.25
    hours = 0.5 * 0.1 * (0.15 + 0.015 + 1.1) + 0.5 * 0.1 * (0.34 + 1.1)
    assert evaluate(dear, PAIR_PLAN).idle.energy_cost == pytest.approx(hours + 0.5 * boot)


def test_a_spell_no_longer_than_delay_and_boot_keeps_the_node_on():
    """b starting exactly d + b after a's end at 3 still finds the node on; the
    back-to-back case of d = b = 0 too."""
    plan = Plan(
        (Segment(0.0, 3.0, "a", C1, (("n", 0),)), Segment(3.75, 4.75, "b", C1, (("n", 0),)))
    )
    at3 = scenario_costs(_pair(OPTION), plan, {"a": 3.0, "b": 1.0})
    assert at3.energy_cost == pytest.approx(0.2 * (0.3 * 4 + 0.1 * 4.75))
    snug = Plan((Segment(0.0, 3.0, "a", C1, (("n", 0),)), Segment(3.0, 4.0, "b", C1, (("n", 0),))))
    ev = evaluate(_pair(PowerOff(0.0, 0.0, 1.0)), snug)
    assert ev.idle.boots == pytest.approx(0.5)  # only when a stops at 1


def _realised_by_union(inst: Instance, plan: Plan, epochs: dict[str, float], node: str):
    """(powered hours, boots) of ``node`` from its busy intervals directly: each
    segment's active part, time 0 as a busy instant, spells of at most d + b merged,
    each merged stretch powered from b before to d after, cut at the last completion."""
    option = inst.power_off
    assert option is not None
    ends = {
        j.id: Timeline.of(inst, j.id, plan.for_job(j.id)).time_at(epochs[j.id]) for j in inst.jobs
    }
    horizon = max(ends.values())
    busy = sorted(
        (s.start, min(s.end, ends[s.job]))
        for s in plan.segments
        if node in s.node_ids and ends[s.job] > s.start + 1e-9
    )
    stretches = [[0.0, 0.0]]
    for s, e in busy:
        if s - stretches[-1][1] <= option.gap + 1e-9:
            stretches[-1][1] = max(stretches[-1][1], e)
        else:
            stretches.append([s, e])
    hours = sum(
        max(0.0, min(e + option.after_h, horizon) - max(0.0, s - option.boot_h))
        for s, e in stretches
    )
    return hours, len(stretches) - 1


@st.composite
def gapped_plans(draw: st.DrawFn, inst: Instance) -> Plan:
    """A serial plan with each job moved later by a drawn gap (on the slot grid when
    slotted), so that nodes go empty for spells of every length."""
    plan = draw(serial_plans(inst))
    unit = inst.slot or 1.0
    shift, by_job = 0.0, {}
    for job in inst.jobs:
        shift += unit * draw(st.sampled_from([0, 0, 1, 3]))
        by_job[job.id] = shift
    return Plan(
        tuple(
            replace(s, start=s.start + by_job[s.job], end=s.end + by_job[s.job])
            for s in plan.segments
        )
    )


@st.composite
def powered_off(draw: st.DrawFn, max_jobs: int = 3, relaunch: bool = False) -> Instance:
    inst = draw(priced_instances(max_jobs=max_jobs, relaunch=relaunch, idle=True))
    option = PowerOff(
        draw(st.sampled_from([0.0, 0.2, 1.0])),
        draw(st.sampled_from([0.0, 0.1, 0.5])),
        draw(st.sampled_from([0.0, 0.05, 1.0])),
    )
    return inst.replace(power_off=option)


@settings(max_examples=40)
@given(st.data())
def test_realised_powered_hours_and_boots_are_the_interval_union(data):
    inst = data.draw(powered_off(relaunch=data.draw(st.booleans())))
    plan = data.draw(gapped_plans(inst))
    epochs = {}
    for j in inst.jobs:
        epochs[j.id] = data.draw(st.sampled_from(j.distribution.stops))
    completions = [
        Completion.of([(Timeline.of(inst, j.id, plan.for_job(j.id)).time_at(epochs[j.id]), 1.0)])
        for j in inst.jobs
    ]
    assert inst.power_off is not None
    for node, spans in node_spans(inst, plan).items():
        hours, started = _realised_by_union(inst, plan, epochs, node)
        steps = powered(spans, completions, inst.power_off)
        assert sum(p * (b - a) for a, b, p in steps) == pytest.approx(hours, abs=1e-9)
        assert sum(p for _, p in boots(spans, completions, inst.power_off)) == started


@settings(max_examples=40)
@given(st.data())
def test_the_exact_bill_is_the_joint_enumeration_of_stops(data):
    inst = data.draw(powered_off(relaunch=data.draw(st.booleans())))
    plan = data.draw(gapped_plans(inst))
    ev = evaluate(inst, plan)
    energy, carbon = joint_expectation(inst, plan)
    assert ev.energy_cost == pytest.approx(energy, rel=1e-9, abs=1e-12)
    assert ev.carbon_cost == pytest.approx(carbon, rel=1e-9, abs=1e-12)


@settings(max_examples=10)  # 1,500 scenarios a plan, about a second each
@given(st.data())
def test_exact_cost_inside_monte_carlo_99_interval(data):
    inst = data.draw(powered_off(relaunch=True))
    plan = data.draw(gapped_plans(inst))
    exact = evaluate(inst, plan)
    mc = replay(inst, plan, samples=1500, seed=data.draw(st.integers(0, 5)))
    assert mc.contains(exact.total_cost, rel_tol=1e-5), (mc.interval, exact.total_cost)


@settings(max_examples=30)
@given(st.data())
def test_a_delay_beyond_the_horizon_is_always_on(data):
    inst = data.draw(priced_instances(max_jobs=3, relaunch=True, idle=True))
    plan = data.draw(gapped_plans(inst))
    on = evaluate(inst, plan)
    late = evaluate(inst.replace(power_off=PowerOff(1e5, 0.5, 1.0)), plan)
    assert late.idle.boots == 0
    assert late.idle.kwh == pytest.approx(on.idle.kwh, rel=1e-12, abs=1e-12)
    assert late.total_cost == pytest.approx(on.total_cost, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("name", ["tiny", "small"])
def test_bundled_always_on_against_a_delay_beyond_the_horizon(name):
    base = bundled(name)
    inst = base.replace(
        gpu_types=tuple(replace(g, idle_w=0.2 * g.power_w) for g in base.gpu_types),
        nodes=tuple(replace(n, base_w=150.0) for n in base.nodes),
    )
    plan = rollout(inst, make_policy("sts"))
    on = evaluate(inst, plan)
    late = evaluate(inst.replace(power_off=PowerOff(1e5)), plan)
    assert late.total_cost == pytest.approx(on.total_cost, rel=1e-12)
    off = evaluate(inst.replace(power_off=PowerOff(0.0)), plan)
    assert off.idle.kwh < on.idle.kwh  # an empty node draws nothing at once
    # the option without idle power or boot energy charges nothing
    assert evaluate(base.replace(power_off=PowerOff(0.0, 0.1)), plan) == evaluate(base, plan)


def _released(option: PowerOff) -> Instance:
    """Job a runs 1 epoch from 0; job b, released at 5, runs 1 epoch: the node is empty
    from 1 to 5."""
    gpu = GpuType("v100", 32.0, 300.0)
    a = Job("a", 0.0, 20.0, EpochDistribution.deterministic(1.0), {C1: 1.0}, 8.0)
    b = Job("b", 5.0, 20.0, EpochDistribution.deterministic(1.0), {C1: 1.0}, 8.0)
    node = Node("n", "v100", 1, base_w=100.0)
    return Instance((gpu,), (node,), (a, b), power_off=option)


def test_a_job_placed_on_an_off_node_waits_for_its_boot():
    inst = _released(PowerOff(after_h=1.0, boot_h=0.5, boot_kwh=0.3))
    result = simulate(inst, make_policy("fifo"), mode="rollout")
    assert [(s.job, s.start, s.end) for s in result.plan] == [("a", 0.0, 1.0), ("b", 5.5, 6.5)]
    assert result.power is not None
    assert result.power.off["n"][0] == (2.0, 5.0) and result.power.boots["n"] == (5.5,)
    assert result.power.powered_hours("n", 6.5) == pytest.approx(3.5)
    ev = evaluate(inst, result.plan)
    assert ev.idle.boots == 1 and ev.idle.kwh == pytest.approx(0.1 * 3.5 + 0.3)
    # within the delay the node is still on: no wait; without the option, no wait either
    near = simulate(_released(PowerOff(after_h=4.0, boot_h=0.5)), make_policy("fifo"))
    plain = simulate(_released(PowerOff(4.0)).replace(power_off=None), make_policy("fifo"))
    assert near.plan == plain.plan and near.plan.segments[1].start == 5.0


def _engine_against_evaluator(inst: Instance, result) -> float:
    """The engine's powered hours and boots of every node are the evaluator's reading of
    the realised plan; returns the energy (kWh) of the engine's powered nodes and boots,
    less the idle power of the GPUs its segments kept busy."""
    assert inst.power_off is not None and result.power is not None
    ends = [
        Timeline.of(inst, j.id, result.plan.for_job(j.id)).time_at(result.epochs[j.id])
        for j in inst.jobs
    ]
    completions = [Completion.of([(t, 1.0)]) for t in ends]
    horizon = max(ends)
    kwh = 0.0
    for node, spans in node_spans(inst, result.plan).items():
        steps = powered(spans, completions, inst.power_off)
        hours = sum(p * (b - a) for a, b, p in steps)
        assert result.power.powered_hours(node, horizon) == pytest.approx(hours, abs=1e-7)
        started = boots(spans, completions, inst.power_off)
        assert [t for t, _ in started] == pytest.approx(list(result.power.boots[node]))
        n = inst.node(node)
        kwh += (n.base_w + inst.gpu(n.gpu_type).idle_w * n.num_gpus) / 1000.0 * hours
        kwh += inst.power_off.boot_kwh * len(started)
    for seg in result.plan:
        busy = min(seg.end, ends[[j.id for j in inst.jobs].index(seg.job)]) - seg.start
        idle_kw = inst.gpu(seg.config.gpu_type).idle_w * inst.busy_share(seg.config) / 1000.0
        kwh -= idle_kw * max(0.0, busy)
    return kwh


@pytest.mark.parametrize("name", ["small", "medium"])
@pytest.mark.parametrize("policy", ["fifo", "sts", "gandiva"])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("slot", [None, 0.5])
def test_the_engine_charges_what_the_evaluator_reads(name, policy, seed, slot):
    """Online runs: every node's powered hours and boots as the engine kept them are the
    evaluator's reading of the realised plan, and so is the idle energy charged."""
    base = bundled(name)
    inst = base.replace(
        slot=slot,
        gpu_types=tuple(replace(g, idle_w=0.2 * g.power_w) for g in base.gpu_types),
        nodes=tuple(replace(n, base_w=150.0) for n in base.nodes),
        power_off=PowerOff(after_h=0.5 * seed, boot_h=0.1, boot_kwh=0.2),
    )
    online = run_online(inst, policy, seed=seed)
    result = online.result
    kwh = _engine_against_evaluator(inst, result)
    assert result.power is not None
    assert sum(len(b) for b in result.power.boots.values()) > 0  # the case is exercised
    assert online.evaluation.idle.kwh == pytest.approx(kwh, rel=1e-9)


@pytest.mark.parametrize(("policy", "options"), [("fifo", None), ("sts", {"rollout_below": 0})])
def test_an_option_that_never_turns_a_node_off_changes_no_run(policy, options):
    """A delay beyond the horizon: the same segments, the same figures to the last
    digit as without the option (no idle power charged, no boot energy). STS without
    its what-if runs, which are not made where nodes power off (they cannot resume the
    engine's boots: validation/rollout_choice.py)."""
    inst = bundled("medium")
    plain = run_online(inst, policy, seed=3, options=options)
    never = run_online(inst.replace(power_off=PowerOff(1e5, 0.5)), policy, seed=3, options=options)
    assert never.result.plan == plain.result.plan
    figures = [k for k in plain.summary() if not k.endswith(("_s", "_ms"))]  # not clocks
    assert [never.summary()[k] for k in figures] == [plain.summary()[k] for k in figures]
    assert never.evaluation == plain.evaluation
