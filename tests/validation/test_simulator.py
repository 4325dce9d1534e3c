import pytest
from hypothesis import given
from hypothesis import strategies as st

from heuristic.baselines.fifo import FifoPolicy
from heuristic.core.occupancy import Allocation
from heuristic.core.policy import Decision, SchedulerState
from heuristic.core.registry import make_policy, policy_names
from instances import Config
from instances.bundled import bundled
from instances.generators.liquid import LiquidSpec, liquid
from tests.strategies import instances
from validation.check import check_plan
from validation.evaluate import evaluate
from validation.simulator import SimulationError, simulate


@given(instances(max_jobs=6))
def test_fifo_rollout_plans_are_feasible(inst):
    res = simulate(inst, FifoPolicy())
    assert check_plan(inst, res.plan) == []
    ev = evaluate(inst, res.plan)
    for j in ev.jobs:  # the engine's completion times agree with the evaluator's
        assert j.completion == pytest.approx(res.completions[j.job], abs=1e-6)


@given(instances(max_jobs=5, slot=True))
def test_slotted_rollout_is_slot_aligned(inst):
    res = simulate(inst, FifoPolicy())
    assert check_plan(inst, res.plan) == []
    for s in res.plan:
        assert s.start / inst.slot == pytest.approx(round(s.start / inst.slot), abs=1e-6)


@given(instances(max_jobs=5), st.integers(0, 100))
def test_sampled_mode_same_seed_same_result(inst, seed):
    a = simulate(inst, FifoPolicy(), mode="sampled", seed=seed)
    b = simulate(inst, FifoPolicy(), mode="sampled", seed=seed)
    assert a.plan == b.plan and a.epochs == b.epochs and a.completions == b.completions
    for job in inst.jobs:  # each job stops at its sampled epochs, a stopping point
        assert a.epochs[job.id] in job.distribution.stops


def test_sampled_run_stops_jobs_early_and_costs_less():
    inst = bundled("medium")
    full = simulate(inst, FifoPolicy())
    short = simulate(inst, FifoPolicy(), mode="sampled", seed=1)
    assert sum(short.epochs.values()) < sum(j.max_epochs for j in inst.jobs)
    worked = sum(s.duration for s in short.plan)
    assert worked < sum(s.duration for s in full.plan)


class Greedy:
    """Misbehaving policy: puts every waiting job on GPU 0 of the first node."""

    name = "greedy"

    def decide(self, state: SchedulerState) -> Decision:
        node = state.instance.nodes[0]
        assign = {}
        for s in state.jobs:
            cfg = next(
                c
                for c in state.instance.allowed_configs(s.job)
                if c.gpu_type == node.gpu_type and c.gpus == 1 and not c.shared
            )
            assign[s.job.id] = Allocation(cfg, ((node.id, 0),))
        return Decision(assign)


class Idle:
    name = "idle"

    def decide(self, state: SchedulerState) -> Decision:
        return Decision()


def test_engine_rejects_oversubscription(base):
    inst = base.replace(
        jobs=tuple(
            j.__class__(**{**j.__dict__, "release": 0.0, "epoch_times": {Config("v100", 1): 0.2}})
            for j in base.jobs
        ),
        nodes=base.nodes[1:],
        gpu_types=base.gpu_types[1:],
    )
    with pytest.raises(SimulationError, match="GPU 0 of node 'n1' is not free"):
        simulate(inst, Greedy())


def test_engine_reports_stuck_jobs(base):
    with pytest.raises(SimulationError, match="left jobs \\['a', 'b'\\] waiting at t=1"):
        simulate(base, Idle())


class Hopper:
    """Moves every present job to the other v100 GPU at each decision and wakes again
    after 0.01 h: with a 0.5 h relaunch overhead no epoch is ever run."""

    name = "hopper"

    def decide(self, state: SchedulerState) -> Decision:
        assign = {}
        for k, s in enumerate(state.jobs):
            gpu = 2 * k + (0 if s.allocation is None or s.allocation.gpus[0][1] else 1)
            assign[s.job.id] = Allocation(Config("v100", 1), (("n1", gpu),))
        return Decision(assign, wake_at=state.time + 0.01)


def test_engine_stops_a_run_in_which_nothing_progresses(base, monkeypatch):
    """A policy whose events never run an epoch, admit or end a job fails after
    STALL_EVENTS events in a row, naming itself, instead of after max_events; the same
    moves with an overhead shorter than the wake-up finish."""
    import validation.simulator as sim

    monkeypatch.setattr(sim, "STALL_EVENTS", 500)
    with pytest.raises(SimulationError, match="'hopper' ran 500 events in a row"):
        simulate(base.replace(relaunch_hours=0.5), Hopper())
    run = simulate(base.replace(relaunch_hours=0.001), Hopper())
    assert set(run.completions) == {"a", "b"}


@pytest.mark.parametrize("policy", ["fifo", "edf", "sts", "lp", "gandiva"])
def test_a_stop_within_the_clocks_tolerance_after_an_event_completes_the_job(policy):
    """B, released at 1e-9 h, finishes its three 0.3-h epochs at 0.900000001 h; A ends
    at 0.9 h. The engine ended B at A's end event, 1e-9 h (3.3e-9 epochs) short, and the
    checker refused every policy's plan (a fuzz of valid instances): B's segment now
    ends at its stop, overlapping nothing beyond the checker's tolerance."""
    from heuristic.core.registry import make_policy
    from instances import EpochDistribution, GpuType, Instance, Job, Node
    from validation.simulator import rollout

    one = Config("a", 1)
    jobs = (
        Job("A", 0.2, 10.0, EpochDistribution((2.0,), (1.0,)), {one: 0.3}, 1.0, relaunch_hours=0.1),
        Job("B", 1e-9, 10.0, EpochDistribution((3.0,), (1.0,)), {one: 0.3}, 1.0),
    )
    inst = Instance((GpuType("a", 32.0, 400.0),), (Node("n0", "a", 2),), jobs)
    plan = rollout(inst, make_policy(policy))
    assert check_plan(inst, plan) == []
    assert max(s.end for s in plan if s.job == "B") == pytest.approx(0.9 + 1e-9, abs=1e-15)


def _reuse_pair():
    """Two instances with the same job ids: Liquid's network (its GA's bursts) and RG's,
    PR's and Gandiva's memory all show in a second run."""
    spec = LiquidSpec(jobs=16, racks=2, nodes_per_rack=3, domains=2, burst=4)
    return liquid(spec, seed=0), liquid(spec, seed=1)


@pytest.mark.parametrize("name", policy_names())
def test_a_policy_object_run_again_decides_as_a_new_one(name):
    """Same seed, same result, for a policy object run more than once: on the same
    instance again, and after a run on another instance with the same job ids (RG and
    PR drew a reused run's starts from where the last run stopped, Gandiva kept its
    groups on the same instance, Liquid the sizes of the other instance's jobs; the
    engine now calls the policy's ``begin``)."""
    first, other = _reuse_pair()
    fresh = simulate(first, make_policy(name), mode="sampled", seed=0).plan
    policy = make_policy(name)
    simulate(first, policy, mode="sampled", seed=0)
    assert simulate(first, policy, mode="sampled", seed=0).plan == fresh
    policy = make_policy(name)
    simulate(other, policy, mode="sampled", seed=0)
    assert simulate(first, policy, mode="sampled", seed=0).plan == fresh
