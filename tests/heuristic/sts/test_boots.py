"""STS planning the boot's wait (heuristic/sts/boots.py): by hand, a job STS seeing power
states but not planning boots (``plan_boots = false``) makes late by a boot, and STS
planning them makes on time; a job waiting for its boot kept there; the waits read."""

from __future__ import annotations

import pytest

from heuristic.core.holds import Holds
from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.policy import JobStatus, SchedulerState
from heuristic.core.power import PowerStates
from heuristic.core.registry import make_policy
from heuristic.sts.boots import MOMENT, Boots, Settled, settle
from heuristic.sts.hulls import TypeProfile
from heuristic.sts.profile import Profile, Step
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from instances.power import PowerOff
from validation.evaluate import evaluate
from validation.simulator import simulate

C1 = Config("v100", 1)
C4 = Config("v100", 4)
ONE = EpochDistribution.deterministic(1.0)
BOOT = PowerOff(0.5, 0.2, 0.3)


def _instance(nodes: dict[str, int], jobs: tuple[Job, ...], option: PowerOff | None) -> Instance:
    gpu = GpuType("v100", 32.0, 300.0, idle_w=45.0)
    ids = tuple(Node(n, "v100", k, base_w=50.0 * k) for n, k in nodes.items())
    return Instance((gpu,), ids, jobs, power_off=option)


def _runs(inst: Instance, **options: object) -> tuple[dict[str, object], float, int, int]:
    """Job b's segments (start, nodes, config) and its completion, the missed due dates
    and the boots of STS with ``options``."""
    result = simulate(inst, make_policy("sts", **options))
    ev = evaluate(inst, result.plan)
    segs = [s for s in result.plan.segments if s.job == "b"]
    first = {"start": segs[0].start, "nodes": {n for n, _ in segs[0].gpus}}
    first["config"] = segs[0].config
    return first, result.completions["b"], ev.missed, ev.idle.boots


def test_a_tight_job_takes_a_node_on_where_best_fit_would_boot_one():
    """a holds the 4-GPU node n0 from 0 to 1; the 1-GPU node n1 is off from 0.5. b (one
    GPU, 0.5 h, due 0.6 h after its release at 1.2) fits n1 best, which boots 0.2 h:
    done at 1.9, late. n0 is empty and still on: done at 1.7."""
    a = Job("a", 0.0, 9.0, ONE, {C4: 1.0}, 8.0)
    b = Job("b", 1.2, 1.8, ONE, {C1: 0.5}, 8.0)
    inst = _instance({"n0": 4, "n1": 1}, (a, b), BOOT)
    seg, done, missed, boots = _runs(inst, plan_boots=False)
    assert seg["nodes"] == {"n1"} and seg["start"] == pytest.approx(1.4)
    assert done == pytest.approx(1.9) and missed == 1
    seg, done, missed, boots = _runs(inst)
    assert seg["nodes"] == {"n0"} and seg["start"] == pytest.approx(1.2)
    assert done == pytest.approx(1.7) and missed == 0 and boots == 0


def test_the_profile_plans_the_wait_of_a_boot():
    """One 4-GPU node, off from 0.5; b (an epoch in 1 h on one GPU, 0.4 h on four, 1.6
    GPU-hours) is released at 1.0, due 1.85. Planned from 1.0 it runs one GPU until 1.75
    by its plan, but starts at 1.2: woken at 1.75 with 0.45 epochs left, done at 1.93.
    Planned from 1.2 it switches to four GPUs at 1.62 and is done by its due date."""
    b = Job("b", 1.0, 1.85, ONE, {C1: 1.0, C4: 0.4}, 8.0)
    inst = _instance({"n0": 4}, (b,), BOOT)
    seg, done, missed, _ = _runs(inst, plan_boots=False)
    assert seg["start"] == pytest.approx(1.2) and missed == 1
    assert done == pytest.approx(1.75 + 0.45 * 0.4)
    seg, done, missed, _ = _runs(inst)
    assert seg["start"] == pytest.approx(1.2) and seg["config"] == C1
    assert done <= 1.85 + 1e-9 and missed == 0


def test_without_power_off_planning_boots_changes_nothing():
    a = Job("a", 0.0, 9.0, ONE, {C4: 1.0}, 8.0)
    b = Job("b", 1.2, 1.8, ONE, {C1: 0.5, C4: 0.2}, 8.0)
    inst = _instance({"n0": 4, "n1": 1}, (a, b), None)
    planned = simulate(inst, make_policy("sts")).plan
    assert planned == simulate(inst, make_policy("sts", plan_boots=False)).plan


def _waiting_for_its_boot() -> SchedulerState:
    """b runs four GPUs of n0 (booting 0.15 h more), with slack enough for one GPU; n1
    is off. The decision at 1.1."""
    b = Job("b", 1.0, 9.0, ONE, {C1: 1.0, C4: 0.4}, 8.0)
    inst = _instance({"n0": 4, "n1": 4}, (b,), BOOT)
    occ = Occupancy(inst)
    on_n0 = Allocation(C4, tuple(("n0", g) for g in range(4)))
    occ.place(b, on_n0)
    power = PowerStates({"n0": 0.15}, frozenset({"n1"}))
    return SchedulerState(1.1, inst, (JobStatus(b, 0.0, on_n0, 0.15),), occ, power)


def test_a_job_waiting_for_its_boot_stays_rather_than_boot_again():
    """Blind to the boot, STS moves b to one GPU of n0 (the engine cancels the boot and
    boots n0 again); planning it, b stays and is re-planned a moment after the boot."""
    moved = make_policy("sts", plan_boots=False).decide(_waiting_for_its_boot())
    assert moved.assign["b"] is not None and moved.assign["b"].config == C1
    kept = make_policy("sts").decide(_waiting_for_its_boot())
    assert "b" not in kept.assign
    assert kept.wake_at == pytest.approx(1.1 + 0.15 + MOMENT)


def test_the_waits_read_from_the_power_states():
    state = _waiting_for_its_boot()
    boots = Boots.of(state, aware=True)
    assert boots is not None and boots.boot == pytest.approx(0.2)
    (status,) = state.jobs
    own = status.allocation
    assert own is not None and boots.wait(status, own) == 0.0  # its wait is overhead left
    assert boots.wait(status, Allocation(C1, (("n1", 0),))) == pytest.approx(0.2)  # off
    # n0 booting for b alone: moving there cancels that boot, a whole boot again
    assert boots.wait(status, Allocation(C1, (("n0", 0),))) == pytest.approx(0.2)
    other = JobStatus(Job("c", 1.1, 9.0, ONE, {C1: 1.0}, 8.0), 0.0, None)
    assert boots.wait(other, Allocation(C1, (("n0", 0),))) == pytest.approx(0.15)
    assert boots.booting(status) and not boots.booting(other)
    assert Boots.of(state, aware=False) is None
    assert Boots.of(state.__class__(1.1, state.instance, state.jobs, state.occupancy), True) is None


def test_slotted_the_wait_of_a_boot_is_up_to_the_grid():
    state = _waiting_for_its_boot()
    inst = state.instance.replace(slot=0.25)
    boots = Boots.of(SchedulerState(1.1, inst, state.jobs, state.occupancy, state.power), True)
    assert boots is not None and boots.boot == pytest.approx(1.5 - 1.1)


def _settling(replanned: Profile) -> tuple[Settled, Allocation]:
    """:func:`settle` for a job placed at 1.0 on one GPU of n0, off (a boot of 0.2 h),
    its profile planned from now one epoch on one GPU, and ``replanned`` its profile
    planned from when n0 is up."""
    b = Job("b", 1.0, 9.0, ONE, {C1: 1.0, C4: 0.4}, 8.0)
    inst = _instance({"n0": 4}, (b,), BOOT)
    occ = Occupancy(inst)
    occ.power = PowerStates({}, frozenset({"n0"}))
    status = JobStatus(b, 0.0, None)
    state = SchedulerState(1.0, inst, (status,), occ, occ.power)
    boots = Boots.of(state, aware=True)
    assert boots is not None
    alloc = Allocation(C1, (("n0", 0),))
    occ.place(b, alloc)
    plan = TypeProfile("v100", Profile((Step(C1, 0.0, 1.0),), 1.0, 1.0, 0.0, 8.0))
    found = (alloc, (plan, plan.profile.first, 2.0, True))
    asked: list[float] = []

    def again(p: TypeProfile, wait: float) -> TypeProfile:
        asked.append(wait)
        return TypeProfile(p.gpu_type, replanned)

    settled = settle(boots, occ, None, status, found, ("v100",), True, again)
    assert asked == [pytest.approx(0.2)] and "b" not in occ.owner  # the caller places it
    return settled, alloc


def test_a_wait_that_costs_nothing_keeps_best_fit_and_times_the_step_from_the_boot():
    same = Profile((Step(C1, 0.0, 1.0),), 1.0, 1.0, 0.0, 7.8)
    settled, alloc = _settling(same)
    assert settled.final and settled.alloc == alloc and settled.cost == 1.0
    assert settled.booked[0].profile is same and settled.booked[2] == pytest.approx(2.2)


def test_a_replanned_profile_that_waits_for_cheap_hours_is_placed_later():
    timed = Profile((Step(C1, 0.0, 1.0),), 1.0, 0.8, 0.0, 7.8, runs=((3.0, 4.0),))
    settled, _ = _settling(timed)
    assert settled.final and settled.alloc is None
    assert settled.booked[2] == pytest.approx(1.0 + 3.0)


def test_a_wait_that_costs_is_set_aside_where_no_node_is_on():
    dearer = Profile((Step(C1, 0.0, 0.5), Step(C4, 0.5, 1.0)), 0.7, 1.3, 0.0, 7.8)
    settled, alloc = _settling(dearer)
    assert not settled.final and settled.cost == pytest.approx(1.3)
    assert settled.alloc == alloc  # its first step is the same, on the node booting


def test_a_job_waiting_for_its_boot_moves_to_a_node_already_on():
    """As above, with a third node n2, of 8 GPUs, on and empty: best fit takes n0 again
    (the fewest free GPUs), which would wait for a whole boot; b does not stay for its
    boot either, but moves to n2, where its work starts now."""
    b = Job("b", 1.0, 9.0, ONE, {C1: 1.0, C4: 0.4}, 8.0)
    inst = _instance({"n0": 4, "n1": 4, "n2": 8}, (b,), BOOT)
    occ = Occupancy(inst)
    on_n0 = Allocation(C4, tuple(("n0", g) for g in range(4)))
    occ.place(b, on_n0)
    power = PowerStates({"n0": 0.15}, frozenset({"n1"}))
    state = SchedulerState(1.1, inst, (JobStatus(b, 0.0, on_n0, 0.15),), occ, power)
    moved = make_policy("sts").decide(state)
    assert moved.assign["b"] is not None
    assert {n for n, _ in moved.assign["b"].gpus} == {"n2"}


def _on_n2_held() -> tuple[Boots, Occupancy, Holds, JobStatus]:
    """n0 (4 GPUs) off, n2 (one GPU) on, held by c, running there and not yet re-placed
    at the decision (``occ`` no longer holds it); b is placed now."""
    b = Job("b", 1.0, 9.0, ONE, {C1: 1.0}, 8.0)
    c = Job("c", 0.0, 9.0, ONE, {C1: 1.0}, 8.0)
    inst = _instance({"n0": 4, "n2": 1}, (b, c), BOOT)
    occ = Occupancy(inst)
    occ.power = PowerStates({}, frozenset({"n0"}))
    on_n2 = Allocation(C1, (("n2", 0),))
    occ.place(c, on_n2)
    running = JobStatus(c, 0.0, on_n2)
    holds = Holds(occ, (running,))
    occ.release("c")
    state = SchedulerState(1.0, inst, (JobStatus(b, 0.0, None), running), occ, occ.power)
    boots = Boots.of(state, aware=True)
    assert boots is not None
    return boots, occ, holds, state.jobs[0]


def test_on_nodes_takes_a_held_gpu_only_where_it_may_displace():
    """The search on nodes on passes over GPUs no running job holds, then, with
    ``displace``, over every free one: c's GPU on n2 (the only node on)."""
    boots, occ, holds, b = _on_n2_held()
    assert boots.on_nodes(occ, b, C1, holds, displace=False) is None
    assert boots.on_nodes(occ, b, C1, holds, displace=True) == Allocation(C1, (("n2", 0),))
    assert boots.on_nodes(occ, b, C1, None, displace=False) == Allocation(C1, (("n2", 0),))


def test_a_shared_slot_stays_with_a_tenant_on_a_booting_node():
    """c shares n0's one GPU, n0 still booting; n1 is on and empty. The shared slot's best
    fit is n0's GPU, shared already: the search on nodes on finds none (b stays with c,
    for whom n0 boots anyway) rather than open n1's GPU; where c's GPU is on, it takes it."""
    s = Config("v100", 1, shared=True)
    b = Job("b", 1.0, 9.0, ONE, {s: 1.0}, 4.0)
    c = Job("c", 0.0, 9.0, ONE, {s: 1.0}, 4.0)
    inst = _instance({"n0": 1, "n1": 1}, (b, c), BOOT)
    occ = Occupancy(inst)
    occ.place(c, Allocation(s, (("n0", 0),)))
    status = JobStatus(b, 0.0, None)
    for booting, found in (({"n0": 0.1}, None), ({}, Allocation(s, (("n0", 0),)))):
        occ.power = PowerStates(booting, frozenset())
        state = SchedulerState(1.0, inst, (status,), occ, occ.power)
        boots = Boots.of(state, aware=True)
        assert boots is not None
        assert boots.on_nodes(occ, status, s, None, displace=True) == found


def test_a_wait_a_hair_dearer_is_set_aside_where_no_node_is_on():
    """A re-planned profile 0.5% dearer than the plan from now: the wait costs, and with
    no node on the candidate is kept aside (only a rounding error passes as free)."""
    settled, _ = _settling(Profile((Step(C1, 0.0, 1.0),), 1.0, 1.005, 0.0, 7.8))
    assert not settled.final and settled.cost == pytest.approx(1.005)


def test_a_faster_step_placed_on_a_node_on_is_timed_from_now():
    """b is placed on n0's one GPU, off (a boot of 0.2 h); planned from when n0 is up,
    its profile runs four GPUs, which fit n1 only, on: the step starts now, done at 1.4
    (timed from n0's boot, 1.6)."""
    b = Job("b", 1.0, 9.0, ONE, {C1: 1.0, C4: 0.4}, 8.0)
    inst = _instance({"n0": 1, "n1": 4}, (b,), BOOT)
    occ = Occupancy(inst)
    occ.power = PowerStates({}, frozenset({"n0"}))
    status = JobStatus(b, 0.0, None)
    boots = Boots.of(SchedulerState(1.0, inst, (status,), occ, occ.power), aware=True)
    assert boots is not None
    alloc = Allocation(C1, (("n0", 0),))
    occ.place(b, alloc)
    plan = TypeProfile("v100", Profile((Step(C1, 0.0, 1.0),), 1.0, 1.0, 0.0, 8.0))
    fast = Profile((Step(C4, 0.0, 1.0),), 0.4, 1.0, 0.0, 7.8)
    found = (alloc, (plan, plan.profile.first, 2.0, True))
    settled = settle(
        boots, occ, None, status, found, ("v100",), True, lambda p, w: TypeProfile("v100", fast)
    )
    assert settled.final and settled.alloc == Allocation(C4, tuple(("n1", g) for g in range(4)))
    assert settled.booked[1].config == C4 and settled.booked[2] == pytest.approx(1.4)
