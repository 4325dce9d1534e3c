"""What-if runs from a decision point (validation.whatif): resumed from what a policy has
seen, they are the engine's own continuation, segment by segment."""

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristic.core.occupancy import Occupancy
from heuristic.core.policy import Decision, JobStatus, SchedulerState
from heuristic.sts.policy import StsPolicy
from heuristic.sts.tail import Arrivals, charges_tail
from instances import EpochDistribution, Instance, Plan
from instances.bundled import bundled
from instances.energy import Carbon, Series
from instances.generators.power import lay_idle
from tests.strategies import instances, priced_instances
from validation.evaluate import evaluate
from validation.scenario import scenario_epochs, scenario_instance
from validation.simulator import simulate
from validation.whatif import (
    Ahead,
    History,
    key_of,
    present_cost,
    quantile_epochs,
    resumes_exactly,
    what_if,
)


class _Predicting:
    """Full STS in a run that, at every decision after the last arrival, predicts the
    rest of the run by a what-if run of a fork of itself: every job to its maximum
    epochs (a worst-case rollout), or to ``epochs`` (the run's sampled stops)."""

    name = "predicting"

    def __init__(self, inst: Instance, epochs: dict[str, float] | None = None) -> None:
        self.inner = StsPolicy()
        self.history = History()
        self.jobs = len(inst.jobs)
        self.epochs = epochs
        self.seen: set[str] = set()
        self.predictions: list[tuple[SchedulerState, Plan]] = []

    def decide(self, state: SchedulerState) -> Decision:
        self.history.forget_ended(state)
        pristine = state.occupancy.copy()
        decision = self.inner.decide(state)
        self.seen.update(s.job.id for s in state.jobs)
        if len(self.seen) == self.jobs:  # every job has arrived
            here = dataclasses.replace(state, occupancy=pristine)
            plan = what_if(here, self.history, self.inner.fork(), decision, self.epochs)
            self.predictions.append((here, plan))
        self.history.record(state, decision)
        return decision


def _same_segments(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert (x.job, x.config, sorted(x.gpus)) == (y.job, y.config, sorted(y.gpus))
        assert x.start == pytest.approx(y.start, abs=1e-9)
        assert x.end == pytest.approx(y.end, abs=1e-9)


def _check(inst: Instance) -> int:
    pred = _Predicting(inst)
    run = simulate(inst, pred)
    # forking and what-if runs leave the policy's own run as it would be without them
    assert run.plan == simulate(inst, StsPolicy()).plan
    for state, plan in pred.predictions:
        for s in state.jobs:  # past and future segments of every present job
            _same_segments(plan.for_job(s.job.id), run.plan.for_job(s.job.id))
        assert present_cost(state, plan) == pytest.approx(present_cost(state, run.plan))
    # summed over every job, the evaluator's costs of the jobs (not the cluster's power)
    whole = evaluate(inst, run.plan)
    first, ids = pred.predictions[0][0], [j.id for j in inst.jobs]
    assert present_cost(first, run.plan, ids) == pytest.approx(
        sum(j.total_cost for j in whole.jobs)
    )
    # with the cluster's own power at an arrival rate of 0, the evaluator's whole bill;
    # the hours from now count less the sooner a job would arrive
    charged = [
        present_cost(first, run.plan, ids, powered=Arrivals(r)) for r in (0.0, 0.5, math.inf)
    ]
    if charges_tail(inst):
        assert charged[0] == pytest.approx(whole.total_cost, rel=1e-9)
        assert charged[0] >= charged[1] - 1e-9 and charged[1] >= charged[2] - 1e-9
    else:
        assert charged == [present_cost(first, run.plan, ids)] * 3
    return len(pred.predictions)


def test_what_if_is_the_engines_continuation_on_medium():
    # 60 jobs on 12 nodes with measured relaunch overheads: pauses, moves and relaunches
    assert _check(bundled("medium")) > 10


@settings(max_examples=25, deadline=None)
@given(instances(max_jobs=5, relaunch=True))
def test_what_if_is_the_engines_continuation(inst):
    _check(inst)


@settings(max_examples=10, deadline=None)
@given(instances(max_jobs=4, slot=True))
def test_what_if_is_the_engines_continuation_slotted(inst):
    _check(inst)


@settings(max_examples=10, deadline=None)
@given(priced_instances(max_jobs=4, relaunch=True, idle=True))
def test_what_if_is_the_engines_continuation_under_prices_and_idle_power(inst):
    # STS times its steps by the series and keeps the hours each job has run
    _check(inst)


def _check_sampled(inst: Instance, seed: int) -> int:
    # told the run's own stops, a what-if run is the rest of the online run, and costs
    # what the present jobs realise
    epochs = scenario_epochs(inst, seed)
    pred = _Predicting(inst, epochs)
    run = simulate(inst, pred, mode="sampled", seed=seed)
    assert run.epochs == epochs
    realised = {
        j.job: j.total_cost for j in evaluate(scenario_instance(inst, epochs), run.plan).jobs
    }
    for state, plan in pred.predictions:
        present = [s.job.id for s in state.jobs]
        for j in present:
            _same_segments(plan.for_job(j), run.plan.for_job(j))
        assert present_cost(state, plan, epochs=epochs) == pytest.approx(
            sum(realised[j] for j in present)
        )
    return len(pred.predictions)


def test_what_if_to_the_sampled_stops_is_the_online_run_on_medium():
    assert _check_sampled(bundled("medium"), 3) > 10


@settings(max_examples=20, deadline=None)
@given(instances(max_jobs=5, relaunch=True), st.integers(0, 3))
def test_what_if_to_the_sampled_stops_is_the_online_run(inst, seed):
    _check_sampled(inst, seed)


def test_quantile_epochs():
    # stops 2, 4, 6, 8 with probabilities 0.1, 0.3, 0.4, 0.2
    inst = bundled("small")
    dist = EpochDistribution((2.0, 4.0, 6.0, 8.0), (0.1, 0.3, 0.4, 0.2))
    job = inst.pinned_job(inst.jobs[0].id, distribution=dist)
    inst = inst.replace(jobs=(job,))

    def at(progress: float, q: float) -> float:
        state = SchedulerState(0.0, inst, (JobStatus(job, progress, None),), Occupancy(inst))
        return quantile_epochs(state, q)[job.id]

    assert [at(0.0, q) for q in (0.05, 0.1, 0.5, 0.8, 0.81, 1.0)] == [2, 2, 6, 6, 8, 8]
    # past the stop at 2: 4, 6, 8 with 1/3, 4/9, 2/9
    assert [at(3.0, q) for q in (0.3, 0.5, 0.8)] == [4, 6, 8]
    # at a stop the job has gone past it: 6, 8 with 2/3, 1/3
    assert [at(4.0, q) for q in (0.5, 0.7, 1.0)] == [6, 8, 8]


def test_no_what_if_where_empty_nodes_power_off():
    from instances.power import PowerOff

    inst = bundled("small").replace(power_off=PowerOff(after_h=0.0, boot_h=0.2, boot_kwh=0.1))
    with pytest.raises(ValueError, match="powers empty nodes off"):
        _check(inst)


def test_the_discounted_hours_are_billed_with_a_flat_carbon_price():
    # the hours the discount takes off are billed as the evaluator bills them: a flat
    # carbon price makes each kWh dearer, as folding it into the energy price does
    base = lay_idle(bundled("small"), "low")
    grams, per_tonne = 300.0, 90.0
    priced = base.replace(carbon=Carbon(Series.flat(grams, upper=1e5), per_tonne))
    folded = base.replace(energy_price=base.energy_price + per_tonne * grams / 1e6)
    pred = _Predicting(priced)
    simulate(priced, pred)
    assert pred.predictions
    for state, plan in pred.predictions:
        for rate in (0.0, 0.5, math.inf):
            seen = Arrivals.seen(rate, [0.5, 2.0], [1.0])  # a sojourn's bends billed too
            got = present_cost(state, plan, powered=seen)
            want = present_cost(dataclasses.replace(state, instance=folded), plan, powered=seen)
            assert got == pytest.approx(want, rel=1e-9)


def _states_of(inst: Instance):
    """The states full STS met in its worst-case rollout of ``inst``, and the run."""
    states: list[SchedulerState] = []

    class Seeing:
        name = "seeing"

        def __init__(self) -> None:
            self.inner = StsPolicy()

        def decide(self, state: SchedulerState) -> Decision:
            states.append(state)
            return self.inner.decide(state)

    return states, simulate(inst, Seeing(), mode="rollout")


def test_a_foreseen_run_is_taken_only_for_the_state_options_and_decision_it_recorded():
    # Ahead.follows: the rest of a run only where the event's state (time, each job's
    # progress, allocation and overhead left), the copy's options and its decision are
    # those recorded; its plan then holds the segments of the jobs present, no other
    from heuristic.sts.options import StsOptions

    inst = bundled("tiny")
    states, run = _states_of(inst)
    state = next(s for s in states if len(s.jobs) >= 2 and any(j.progress > 0 for j in s.jobs))
    ids = frozenset(s.job.id for s in state.jobs)
    gone = next(j.id for j in inst.jobs if j.id not in ids)
    decision = Decision({state.jobs[0].job.id: None}, state.time + 1.0)
    options = StsOptions()
    plan = Plan(tuple(s for s in run.plan.segments if s.job in ids | {gone}))
    ahead = Ahead(plan, ((key_of(state), decision),), options, ids | {gone})

    taken = ahead.follows(state, options, decision)
    assert taken is not None and taken.at == len(taken.seen) and taken.jobs == ids
    assert taken.plan.segments == tuple(s for s in run.plan.segments if s.job in ids)
    other = dataclasses.replace(options, shared_slots=not options.shared_slots)
    assert ahead.follows(state, other, decision) is None
    assert ahead.follows(state, options, dataclasses.replace(decision, wake_at=None)) is None
    assert ahead.follows(state, options, Decision({}, decision.wake_at)) is None
    later = dataclasses.replace(state, time=state.time + 1e-9)
    assert ahead.follows(later, options, decision) is None
    jobs = list(state.jobs)
    jobs[0] = dataclasses.replace(jobs[0], progress=jobs[0].progress + 1e-12)
    assert ahead.follows(dataclasses.replace(state, jobs=tuple(jobs)), options, decision) is None
    fewer = dataclasses.replace(state, jobs=state.jobs[1:])
    assert ahead.follows(fewer, options, decision) is None
    assert taken.follows(state, options, decision) is None  # nothing more foreseen


def test_a_run_resumes_exactly_where_no_overhead_outlasts_the_hours_since_0():
    # what_if ends a job's overhead at time + overhead_left; the engine, where it began:
    # the same float where nothing is left or the overhead is at most the time; a
    # foreseen run is not taken from a state past that (its overheads may end an ulp off)
    from heuristic.sts.options import StsOptions

    states, _ = _states_of(bundled("tiny"))
    state = next(s for s in states if s.time > 0 and s.jobs)
    job = state.jobs[0]
    # as the engine makes them: an overhead ending at b leaves b - time
    t = state.time
    for left, exact in ((0.0, True), (t * 1.37 - t, True), (2 * t - t, True)):
        jobs = (dataclasses.replace(job, overhead_left=left), *state.jobs[1:])
        assert resumes_exactly(dataclasses.replace(state, jobs=jobs)) is exact
    at_zero = dataclasses.replace(
        state, time=0.0, jobs=(dataclasses.replace(job, overhead_left=0.1),)
    )
    assert not resumes_exactly(at_zero)
    longer = (dataclasses.replace(job, overhead_left=state.time * 2 + 0.1), *state.jobs[1:])
    late = dataclasses.replace(state, jobs=longer)
    assert not resumes_exactly(late)
    decision = Decision({}, None)
    options = StsOptions()
    ids = frozenset(s.job.id for s in late.jobs)
    ahead = Ahead(Plan(()), ((key_of(late), decision),), options, ids)
    assert ahead.follows(late, options, decision) is None
