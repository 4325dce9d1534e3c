"""What-if runs from a decision point (validation.whatif): resumed from what a policy has
seen, they are the engine's own continuation, segment by segment."""

import dataclasses

import pytest
from hypothesis import given, settings

from heuristic.core.policy import Decision, SchedulerState
from heuristic.sts.policy import StsPolicy
from instances import Instance, Plan
from instances.bundled import bundled
from tests.strategies import instances, priced_instances
from validation.evaluate import evaluate
from validation.simulator import simulate
from validation.whatif import History, present_cost, what_if


class _Predicting:
    """Full STS in a worst-case rollout that, at every decision after the last arrival,
    predicts the rest of the run by a what-if run of a fork of itself."""

    name = "predicting"

    def __init__(self, inst: Instance) -> None:
        self.inner = StsPolicy()
        self.history = History()
        self.jobs = len(inst.jobs)
        self.seen: set[str] = set()
        self.predictions: list[tuple[SchedulerState, Plan]] = []

    def decide(self, state: SchedulerState) -> Decision:
        self.history.forget_ended(state)
        pristine = state.occupancy.copy()
        decision = self.inner.decide(state)
        self.seen.update(s.job.id for s in state.jobs)
        if len(self.seen) == self.jobs:  # every job has arrived
            here = dataclasses.replace(state, occupancy=pristine)
            plan = what_if(here, self.history, self.inner.fork(), decision)
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
    jobs = evaluate(inst, run.plan).jobs
    assert present_cost(pred.predictions[0][0], run.plan, [j.id for j in inst.jobs]) == (
        pytest.approx(sum(j.total_cost for j in jobs))
    )
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


def test_no_what_if_where_empty_nodes_power_off():
    from instances.power import PowerOff

    inst = bundled("small").replace(power_off=PowerOff(after_h=0.0, boot_h=0.2, boot_kwh=0.1))
    with pytest.raises(ValueError, match="powers empty nodes off"):
        _check(inst)
