"""The event engine's cases a mutation test found untested (2026-12-07), and an
allocation of the wrong shape a policy may give it."""

import pytest

from heuristic.core.occupancy import Allocation
from heuristic.core.policy import Decision, SchedulerState
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from validation.check import check_plan
from validation.evaluate import evaluate
from validation.simulator import SimulationError, simulate

TWO = Config("a", 2)


def _one_job(relaunch=0.5, epochs=4.0, tau=0.25, release=0.0, slot=None):
    job = Job(
        "A",
        release,
        50.0,
        EpochDistribution((epochs,), (1.0,)),
        {TWO: tau},
        1.0,
        relaunch_hours=relaunch,
    )
    return Instance((GpuType("a", 32.0, 400.0),), (Node("n0", "a", 2),), (job,), slot=slot)


class Reorder:
    """Places A on both GPUs of n0, then at every wake-up (each 0.1 h) names the same
    GPUs in the other order: the same place, a continuation, not a relaunch."""

    name = "reorder"

    def decide(self, state: SchedulerState) -> Decision:
        (s,) = state.jobs
        gpus = (("n0", 0), ("n0", 1))
        if s.allocation is not None and s.allocation.gpus == gpus:
            gpus = gpus[::-1]
        return Decision({"A": Allocation(TWO, gpus)}, wake_at=state.time + 0.1)


def test_a_continuation_on_reordered_gpus_carries_what_is_left_of_the_overhead():
    """(mutant S05: a continuation starts with no overhead left) A's 0.5-h relaunch is
    cut into 0.1-h segments; the engine must still pay all of it once: 4 epochs of
    0.25 h after 0.5 h of overhead end at 1.5 h, as the evaluator reads the plan."""
    inst = _one_job()
    res = simulate(inst, Reorder())
    assert check_plan(inst, res.plan) == []
    assert res.completions["A"] == pytest.approx(1.5, abs=1e-9)
    (j,) = evaluate(inst, res.plan).jobs
    assert j.completion == pytest.approx(1.5, abs=1e-9)


class Restate:
    """Restates A's allocation as a new but equal object at every wake-up."""

    name = "restate"

    def decide(self, state: SchedulerState) -> Decision:
        return Decision({"A": Allocation(TWO, (("n0", 0), ("n0", 1)))}, wake_at=state.time + 0.1)


def test_an_unchanged_allocation_restated_is_one_segment():
    """(mutant S07: `alloc != ...` turned `is not`) an equal allocation is no change:
    the job keeps one segment, not one per decision."""
    inst = _one_job()
    res = simulate(inst, Restate())
    assert len(res.plan.segments) == 1
    assert res.completions["A"] == pytest.approx(1.5, abs=1e-9)


class _AskWhatIf:
    """FIFO that, at its first decision, asks what happens if it waited 1 h instead."""

    name = "ask"

    def __init__(self) -> None:
        from heuristic.baselines.fifo import FifoPolicy

        self.inner = FifoPolicy()
        self.plans = []

    def decide(self, state: SchedulerState) -> Decision:
        from heuristic.baselines.fifo import FifoPolicy
        from validation.whatif import History, what_if

        if not self.plans:
            wait = Decision({}, wake_at=state.time + 1.0)
            self.plans.append(what_if(state, History(), FifoPolicy(), wait))
        return self.inner.decide(state)


def test_a_what_if_run_applies_the_first_decision_given_not_the_policys_own():
    """(mutant S17: `run(decided=True)` decides again at once) the what-if of waiting
    an hour starts the job at 1 h; deciding again at 0 h would start it at once."""
    inst = _one_job(relaunch=0.0)
    ask = _AskWhatIf()
    simulate(inst, ask)
    (plan,) = ask.plans
    assert min(s.start for s in plan) == pytest.approx(1.0)


class _Given:
    """A policy that gives each waiting job the allocation in ``plan`` (a misbehaving
    one: the engine must refuse what no GPU count or node split allows)."""

    name = "given"

    def __init__(self, plan: dict[str, Allocation]) -> None:
        self.plan = plan

    def decide(self, state: SchedulerState) -> Decision:
        return Decision({s.job.id: self.plan[s.job.id] for s in state.jobs if s.allocation is None})


def _two_nodes() -> Instance:
    one, d = Config("a", 1), EpochDistribution.deterministic(2)
    jobs = (Job("A", 0.0, 10.0, d, {TWO: 0.5}, 1.0), Job("B", 0.0, 10.0, d, {one: 1.0}, 1.0))
    return Instance((GpuType("a", 32.0, 400.0),), (Node("n0", "a", 2), Node("n1", "a", 2)), jobs)


@pytest.mark.parametrize(
    ("gpus", "why"),
    [
        ((("n0", 0), ("n1", 0)), "needs 1 node"),  # a single-node configuration split
        ((("n0", 0), ("n0", 0)), "names a GPU twice"),
        ((("n0", 0),), "needs 2 GPU"),
    ],
)
def test_the_engine_refuses_an_allocation_of_the_wrong_shape(gpus, why):
    """The occupancy books the GPUs it is given: A's two-GPU configuration named on one
    GPU of each node booked n0's alone, and B then ran on n1's GPU 0 beside A, with no
    error until the checker read the plan (a review of 2026-12-07)."""
    inst = _two_nodes()
    plan = {"A": Allocation(TWO, gpus), "B": Allocation(Config("a", 1), (("n1", 0),))}
    with pytest.raises(SimulationError, match=why):
        simulate(inst, _Given(plan))
    fine = {"A": Allocation(TWO, (("n0", 0), ("n0", 1))), "B": plan["B"]}
    assert not check_plan(inst, simulate(inst, _Given(fine)).plan)
