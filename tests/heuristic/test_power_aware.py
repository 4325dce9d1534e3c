"""Placements that see power states (heuristic/core/power.py): best fit breaks its ties
by them where a policy sets them (STS does; the baselines stay blind), the engine tells
the policy which nodes are booting and off, and without them every choice is blind's."""

from __future__ import annotations

import pytest

from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.policy import Decision, SchedulerState
from heuristic.core.power import PowerStates
from heuristic.core.registry import make_policy
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from instances.power import PowerOff
from validation.evaluate import evaluate
from validation.simulator import simulate

C1 = Config("v100", 1)
C4 = Config("v100", 4)
WHOLE = Config("v100", 8, nodes=2)  # 4 GPUs on each of 2 whole nodes


def _cluster(nodes: int, gpus: int = 1, option: PowerOff | None = None) -> Instance:
    gpu = GpuType("v100", 32.0, 300.0, idle_w=45.0)
    job = Job("x", 0.0, 9.0, EpochDistribution.deterministic(1.0), {C1: 1.0}, 8.0)
    ids = [Node(f"n{k}", "v100", gpus, base_w=50.0 * gpus) for k in range(nodes)]
    return Instance((gpu,), tuple(ids), (job,), power_off=option)


def test_best_fit_ties_go_to_a_node_on_then_booting_then_off():
    inst = _cluster(4)
    occ = Occupancy(inst)
    job = inst.jobs[0]
    assert occ.find(job, C1) == Allocation(C1, (("n0", 0),))  # blind: the buckets' order
    occ.power = PowerStates({"n1": 0.05, "n2": 0.02}, frozenset({"n0"}))
    assert occ.find(job, C1) == Allocation(C1, (("n3", 0),))
    occ.power = PowerStates({"n1": 0.05, "n2": 0.02}, frozenset({"n0", "n3"}))
    assert occ.find(job, C1) == Allocation(C1, (("n2", 0),))  # the sooner up
    occ.power = PowerStates({}, frozenset({"n0", "n1", "n2", "n3"}))
    assert occ.find(job, C1) == Allocation(C1, (("n0", 0),))  # all off: as blind
    assert occ.copy().power == occ.power  # every search of a decision sees them


def test_the_tie_break_never_overrides_best_fit():
    """A node with fewer free GPUs that fits still wins over an emptier one that is on."""
    inst = _cluster(2, gpus=4)
    occ = Occupancy(inst)
    job = inst.jobs[0]
    occ.place(job, Allocation(C1, (("n1", 0),)))  # n1 has 3 free GPUs
    occ.power = PowerStates({}, frozenset({"n1"}))  # (a state only a test makes)
    other = Job("y", 0.0, 9.0, EpochDistribution.deterministic(1.0), {C1: 1.0}, 8.0)
    found = occ.find(other, C1)
    assert found is not None and found.gpus == (("n1", 1),)


def test_whole_nodes_prefer_nodes_on():
    inst = _cluster(3, gpus=4)
    job = Job("w", 0.0, 9.0, EpochDistribution.deterministic(1.0), {WHOLE: 1.0}, 8.0)
    inst = inst.replace(jobs=(job,))
    occ = Occupancy(inst)

    def nodes() -> set[str]:
        found = occ.find(job, WHOLE)
        assert found is not None
        return {n for n, _ in found.gpus}

    assert nodes() == {"n0", "n1"}
    occ.power = PowerStates({}, frozenset({"n0"}))
    assert nodes() == {"n1", "n2"}


def _released_later(option: PowerOff) -> Instance:
    """Two 1-GPU nodes; a runs 1 h from 0, b arrives at 1.2: n1 has been empty since 0
    (off since 0.5), n0 since 1 (on until 1.5)."""
    inst = _cluster(2, option=option)
    a = Job("a", 0.0, 9.0, EpochDistribution.deterministic(1.0), {C1: 1.0}, 8.0)
    b = Job("b", 1.2, 2.3, EpochDistribution.deterministic(1.0), {C1: 1.0}, 8.0)
    return inst.replace(jobs=(a, b))


@pytest.mark.parametrize("policy", ["sts", "sts-full"])
def test_sts_puts_work_on_the_node_still_on_and_blind_sts_boots_the_off_one(policy):
    inst = _released_later(PowerOff(0.5, 0.2, 0.3))
    aware = simulate(inst, make_policy(policy))
    blind = simulate(inst, make_policy(policy, power_states=False))
    (b_aware,) = [s for s in aware.plan.segments if s.job == "b"]
    (b_blind,) = [s for s in blind.plan.segments if s.job == "b"]
    assert b_aware.gpus == (("n0", 0),) and b_aware.start == pytest.approx(1.2)
    assert b_blind.gpus == (("n1", 0),) and b_blind.start == pytest.approx(1.4)  # a boot
    ev_aware, ev_blind = evaluate(inst, aware.plan), evaluate(inst, blind.plan)
    assert ev_aware.idle.boots == 0 and ev_blind.idle.boots == 1
    assert ev_aware.missed == 0 and ev_blind.missed == 1  # b due at 2.3, done at 2.4
    assert ev_aware.total_cost < ev_blind.total_cost


def test_the_baselines_stay_blind():
    inst = _released_later(PowerOff(0.5, 0.2, 0.3))
    (b,) = [s for s in simulate(inst, make_policy("fifo")).plan.segments if s.job == "b"]
    assert b.gpus == (("n1", 0),)


class _Recorder:
    """A policy that runs every job on the first free GPU (blind), records what it is
    told, and asks to decide again at 1.3 (while a boot is under way)."""

    name = "recorder"

    def __init__(self) -> None:
        self.seen: list[tuple[float, PowerStates | None]] = []

    def decide(self, state: SchedulerState) -> Decision:
        self.seen.append((state.time, state.power))
        assign = {}
        for s in state.jobs:
            if s.allocation is None:
                alloc = state.occupancy.find(s.job, C1)
                if alloc is not None:
                    state.occupancy.place(s.job, alloc)
                    assign[s.job.id] = alloc
        return Decision(assign, wake_at=1.3 if state.time < 1.3 else None)


def test_the_engine_tells_the_policy_the_nodes_off_and_booting():
    rec = _Recorder()
    inst = _released_later(PowerOff(0.5, 0.2, 0.3))
    c = Job("c", 2.6, 9.0, EpochDistribution.deterministic(1.0), {C1: 1.0}, 8.0)
    simulate(inst.replace(jobs=(*inst.jobs, c)), rec)
    states = dict(rec.seen)
    assert states[0.0] == PowerStates({}, frozenset())  # nodes start on
    assert states[1.2] == PowerStates({}, frozenset({"n1"}))
    # the recorder (blind) booted n1 for b at 1.2, up at 1.4; b ends at 2.4, and when
    # c arrives n1 is on, n0 off since 1.5
    assert states[1.3] == PowerStates({"n1": pytest.approx(0.1)}, frozenset())
    assert states[2.6] == PowerStates({}, frozenset({"n0"}))
    always = _Recorder()
    simulate(_released_later(PowerOff(0.5)).replace(power_off=None), always)
    assert all(power is None for _, power in always.seen)
