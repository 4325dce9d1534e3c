import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from instances import Config, EpochDistribution, Plan, Segment
from tests.strategies import instances, serial_plans
from validation.evaluate import evaluate

V1 = Config("v100", 1)
V4 = Config("v100", 4)


def plan(*segs):
    return Plan(tuple(segs))


def test_costs_by_hand(base):
    p = plan(Segment(0.0, 2.0, "a", V1, (("n1", 0),)), Segment(3.5, 4.5, "b", V1, (("n1", 1),)))
    ev = evaluate(base, p)
    a, b = ev.jobs
    # a: 10 epochs at 0.06 kWh; expected epochs Phi(10) = 5 + 0.6*5 = 8
    assert a.expected_energy_kwh == pytest.approx(0.48)
    assert a.worst_case_energy_kwh == pytest.approx(0.6)
    assert a.energy_cost == pytest.approx(0.12) and a.tardiness_cost == 0.0
    # b: 4 epochs at 0.075 kWh, ends at 4.5, due 4.0, weight 2 per hour
    assert b.energy_cost == pytest.approx(0.25 * 0.3)
    assert b.tardiness_cost == pytest.approx(1.0) and b.missed
    assert ev.total_cost == pytest.approx(0.12 + 0.075 + 1.0)
    df = ev.by_job()
    assert df.loc["b", "late_h"] == pytest.approx(0.5)
    assert df["total_cost"].sum() == pytest.approx(ev.total_cost)


def test_expected_tardiness_counts_each_block(base):
    inst = base.replace(
        jobs=(base.job("a").__class__(**{**base.job("a").__dict__, "due": 1.5}), base.job("b"))
    )
    p = plan(Segment(0.0, 2.0, "a", V1, (("n1", 0),)), Segment(1.0, 2.0, "b", V1, (("n1", 1),)))
    # block 1 (5 epochs) ends at 1.0, block 2 at 2.0; omega_a = 1.5 per hour
    worst = evaluate(inst, p, tardiness="worst_case").jobs[0].tardiness_cost
    expected = evaluate(inst, p, tardiness="expected").jobs[0].tardiness_cost
    assert worst == pytest.approx(1.5 * 0.5)
    assert expected == pytest.approx(1.5 * (0.4 * 0.0 + 0.6 * 0.5))


def test_slotted_completion_counts_at_end_of_slot(base):
    p = plan(
        Segment(0.0, 2.0, "a", V1, (("n1", 0),)),
        Segment(3.5, 4.0, "b", V4, tuple(("n1", g) for g in range(4))),
    )
    exact = evaluate(base, p).jobs[1]
    assert exact.completion == pytest.approx(3.5 + 4 * 0.08)
    slotted = evaluate(base.replace(slot=0.25), p).jobs[1]
    assert slotted.completion == pytest.approx(4.0)
    late = evaluate(
        base.replace(
            slot=0.25,
            jobs=(base.job("a"), base.job("b").__class__(**{**base.job("b").__dict__, "due": 3.9})),
        ),
        p,
    ).jobs[1]
    assert late.tardiness_cost == pytest.approx(2.0 * 0.1)


@given(st.data())
def test_expected_energy_at_most_worst_case(data):
    inst = data.draw(instances())
    ev = evaluate(inst, data.draw(serial_plans(inst)))
    for j in ev.jobs:
        assert j.expected_energy_kwh <= j.worst_case_energy_kwh * (1 + 1e-12) + 1e-12
        assert j.expected_tardiness_cost <= j.worst_case_tardiness_cost * (1 + 1e-9) + 1e-12


@given(st.data())
def test_run_to_end_distribution_expected_equals_deterministic(data):
    inst = data.draw(instances())
    det = inst.replace(
        jobs=tuple(
            j.__class__(
                **{**j.__dict__, "distribution": EpochDistribution.deterministic(j.max_epochs)}
            )
            for j in inst.jobs
        )
    )
    p = data.draw(serial_plans(det))
    ev = evaluate(det, p)
    for j in ev.jobs:
        assert math.isclose(j.expected_energy_kwh, j.worst_case_energy_kwh, rel_tol=1e-12)
        assert math.isclose(
            j.expected_tardiness_cost, j.worst_case_tardiness_cost, rel_tol=1e-12, abs_tol=1e-12
        )
    # and the energy is sum of P_c * hours of work actually done
    hours_cost = sum(
        det.epoch_cost(p_.job, p_.config)
        * min(p_.duration / det.epoch_time(p_.job, p_.config), 1e18)
        for p_ in p
    )
    assert ev.energy_cost <= hours_cost * (1 + 1e-9) + 1e-12


@given(st.data())
def test_same_plan_same_costs(data):
    inst = data.draw(instances())
    p = data.draw(serial_plans(inst))
    assert evaluate(inst, p) == evaluate(inst, Plan(tuple(reversed(p.segments))))


@pytest.mark.parametrize("mode", ["WORST_CASE", "worst-case", "", "x"])
def test_a_tardiness_mode_not_known_is_refused_by_every_reader_of_it(mode):
    """Any string but 'worst_case' was read as 'expected' (a cost of 3.6 labelled
    WORST_CASE where worst case costs 4.8): refused, naming it, by the evaluator, the
    Monte Carlo replay and both exact solvers."""
    import milp
    from heuristic.core.registry import make_policy
    from instances import InstanceError
    from instances.bundled import bundled
    from milp import decomposition
    from validation.montecarlo import replay
    from validation.simulator import rollout

    inst = bundled("tiny")
    plan = rollout(inst, make_policy("sts"))
    for call in (
        lambda: evaluate(inst, plan, tardiness=mode),
        lambda: replay(inst, plan, samples=10, seed=0, tardiness=mode),
        lambda: milp.solve(inst, slots=20, time_limit=5, tardiness=mode),
        lambda: decomposition.solve(inst, plan, slots=20, time_limit=5, tardiness=mode),
    ):
        with pytest.raises(InstanceError, match=f"tardiness = {mode!r}: must be one of"):
            call()
    assert evaluate(inst, plan, tardiness="worst_case") == evaluate(inst, plan)


@pytest.mark.parametrize(
    ("stop", "error", "message"),
    [
        (math.nan, ValueError, r"epochs\['j0'\] = nan: must be a number of epochs in \[0, 22\]"),
        (-5.0, ValueError, r"epochs\['j0'\] = -5.0"),
        (1e6, ValueError, r"epochs\['j0'\] = 1000000.0"),
        ("3", ValueError, r"epochs\['j0'\] = '3'"),
    ],
)
def test_a_scenario_stop_that_is_no_number_of_epochs_is_refused(stop, error, message):
    """``scenario_costs`` billed a NaN stop as a whole run, a negative one as nothing run
    and one past the maximum as the maximum, and a stop given as text was a TypeError (a
    hunt of the library's arguments)."""
    from heuristic import make_policy
    from instances.bundled import bundled
    from validation import evaluate_scenario, rollout, scenario_costs

    tiny = bundled("tiny")
    plan = rollout(tiny, make_policy("fifo"))
    full = {j.id: j.max_epochs for j in tiny.jobs}
    with pytest.raises(error, match=message):
        scenario_costs(tiny, plan, {**full, "j0": stop})
    with pytest.raises(error, match=message):
        evaluate_scenario(tiny, plan, {**full, "j0": stop})


def test_a_scenario_of_a_plan_that_stops_short_of_a_jobs_stop_is_refused():
    """A plan that never runs a job cost an infinite tardiness; one that runs each job to
    its stop (as an online run's plan does) is costed."""
    from heuristic import make_policy
    from instances import PlanError
    from instances.bundled import bundled
    from validation import rollout, scenario_costs

    tiny = bundled("tiny")
    full = {j.id: j.max_epochs for j in tiny.jobs}
    with pytest.raises(PlanError, match="job 'j0' reaches 0 of the 22 epochs it runs"):
        scenario_costs(tiny, Plan(), full)
    plan = rollout(tiny, make_policy("fifo"))
    assert math.isfinite(scenario_costs(tiny, plan, full).total_cost)


@pytest.mark.parametrize(("due", "missed"), [(2.0, False), (2.0 - 1e-6, True)])
def test_a_job_done_on_its_due_date_is_on_time(due, missed):
    """Two epochs of an hour done at 2 h exactly: on time at a due date of 2 h, late a
    microhour before it (a mutant counting a completion on the due date as missed
    passed every test of the evaluator; only a MILP test caught it)."""
    from instances import GpuType, Instance, Job, Node

    c1 = Config("v100", 1)
    job = Job("a", 0.0, due, EpochDistribution.deterministic(2.0), {c1: 1.0}, 8.0)
    inst = Instance((GpuType("v100", 32.0, 300.0),), (Node("n", "v100", 1),), (job,))
    ev = evaluate(inst, Plan((Segment(0.0, 2.0, "a", c1, (("n", 0),)),)))
    (cost,) = ev.jobs
    assert cost.completion == 2.0 and cost.missed is missed
    assert ev.summary()["missed"] == int(missed)
    assert (cost.tardiness_cost > 0) is missed
