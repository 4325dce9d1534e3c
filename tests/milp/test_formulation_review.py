"""Formulation rows of the time-indexed MILP that the brute-force tests do not reach:
a job complete in its first slot, multi-node configurations (whole nodes, cores per
node), K_max on a GPU three tenants want, a shared tenant's cores, free jobs beside a
tenant from outside the model, shared labels first used in the same slot under relaunch
overheads, the power-off bound at plans with no delay or long boots, and two argument
checks."""

from __future__ import annotations

import pytest

from instances import Config, EpochDistribution, GpuType, Instance, Job, Node, Plan, Segment
from milp import SolutionStatus, solve
from milp.data import milp_data
from milp.model import model_of_data
from milp.plan_io import start_values
from tests.milp.brute_force import solved_at_brute_force
from tests.milp.test_milp import start_violation
from validation.check import check_plan
from validation.evaluate import evaluate

SLOT = 0.5
V100 = GpuType("v100", 16.0, 300.0)


def _job(job_id: str, epochs: float, due: float, times: dict, memory: float = 6.0, **kw) -> Job:
    return Job(job_id, 0.0, due, EpochDistribution.deterministic(epochs), times, memory, **kw)


def _values_of(inst: Instance, plan: Plan, slots: int):
    """The model of ``inst`` on ``slots`` slots with ``plan`` set as its MIP start."""
    d = milp_data(inst, slots)
    m = model_of_data(d)
    start_values(m, d, plan)
    return m, d


def test_a_job_complete_in_its_first_slot_does_not_run_in_the_next():
    """One configuration per slot, none once complete, also in the slot right after
    the job's first: a job done at the end of slot 0 that still 'runs' in slot 1 breaks
    a row (the plan read from such a solution would hold GPUs it does not use)."""
    one = Config("v100", 1)
    inst = Instance(
        (V100,),
        (Node("n", "v100", 1),),
        (_job("j0", 1.0, 5.0, {one: 0.4}),),
        slot=SLOT,
        name="done-in-slot-0",
    )
    plan = Plan.of([Segment(0.0, SLOT, "j0", one, (("n", 0),))])
    m, _ = _values_of(inst, plan, 3)
    assert start_violation(m)[0] <= 1e-9  # the plan itself meets every row
    m.run["j0", 0, 1].set_value(1)
    m.place["j0", 0, "n", 1].set_value(1)
    assert start_violation(m)[0] >= 1 - 1e-9


def _multi_node(epochs: float = 2.0) -> Instance:
    """Two nodes of four v100s; job ``big`` runs only on one GPU of each node (a
    two-node configuration, which takes both nodes whole), job ``small`` on one GPU.
    Both are due at 0.5 h and fit it only running in the first slot."""
    big = _job("big", epochs, 0.5, {Config("v100", 2, nodes=2): 0.25 / epochs * 2}, weight=10.0)
    small = _job("small", 1.0, 0.5, {Config("v100", 1): 0.5}, weight=1.0)
    return Instance(
        (V100,),
        (Node("a", "v100", 4), Node("b", "v100", 4)),
        (big, small),
        slot=SLOT,
        name="multi-node",
    )


def test_a_multi_node_configuration_takes_its_nodes_whole_in_the_milp():
    """A node of a multi-node configuration hosts nothing else: the optimum runs
    ``big`` on both nodes first and ``small`` after it, late, and the plan read from
    the solution is feasible and costs the MILP's objective."""
    inst = _multi_node()
    res = solve(inst, slots=4, time_limit=60)
    assert res.status is SolutionStatus.OPTIMAL and res.plan is not None
    assert check_plan(inst, res.plan) == []
    assert res.objective == pytest.approx(evaluate(inst, res.plan).total_cost, rel=1e-9)
    (seg,) = [s for s in res.plan if s.job == "big"]
    assert {n for n, _ in seg.gpus} == {"a", "b"}
    (late,) = [s for s in res.plan if s.job == "small"]
    assert late.start >= seg.end - 1e-9


def test_a_running_multi_node_configuration_sits_on_exactly_its_nodes():
    """``place`` sums to the configuration's node count while it runs: a third, empty
    node placed beside a running two-node configuration breaks a row (the plan read
    from such a solution would hold GPUs on three nodes)."""
    inst = _multi_node()
    inst = inst.replace(
        nodes=(Node("a", "v100", 4), Node("b", "v100", 4), Node("c", "v100", 4)),
        jobs=(inst.job("big"),),
    )
    two = Config("v100", 2, nodes=2)
    plan = Plan.of([Segment(0.0, SLOT, "big", two, (("a", 0), ("b", 0)))])
    m, _ = _values_of(inst, plan, 3)
    assert start_violation(m)[0] <= 1e-9
    m.place["big", 0, "c", 0].set_value(1)
    assert start_violation(m)[0] >= 1 - 1e-9


def _three_tenants(seed: int) -> Instance:
    """One node with one v100 and three 4-GB jobs of one epoch that run only shared,
    due so that all three at once would be on time; ``K_max`` = 2 lets two at a time."""
    shared = Config("v100", 1, shared=True)
    jobs = tuple(
        _job(f"j{i}", 1.0, 0.5, {shared: 0.45 + 0.01 * seed}, memory=4.0, weight=5.0 + i)
        for i in range(3)
    )
    return Instance(
        (V100,), (Node("n", "v100", 1),), jobs, slot=SLOT, max_share=2, name=f"three-tenants-{seed}"
    )


@pytest.mark.parametrize("seed", range(2))
def test_a_shared_gpu_hosts_at_most_k_max_tenants(seed):
    """Three jobs wanting one shared GPU at once, ``K_max`` = 2: the MILP's optimum is
    the brute force's (one job waits), and its plan is feasible."""
    inst = _three_tenants(seed)
    best, res = solved_at_brute_force(inst, 4)
    assert res.objective == pytest.approx(best, rel=1e-9)
    assert res.plan is not None and check_plan(inst, res.plan) == []


def test_two_shared_gpus_first_used_in_the_same_slot_meet_the_label_order():
    """With relaunch overheads, labels are ordered by first use up to and including the
    slot: two tenants that cannot share one GPU (10 GB each on 16 GB), both starting in
    slot 0 on GPUs 0 and 1, meet every row and are valued at the evaluator's cost."""
    shared = Config("v100", 1, shared=True)
    jobs = tuple(_job(f"j{i}", 1.0, 2.0, {shared: 0.3}, memory=10.0) for i in range(2))
    inst = Instance(
        (V100,),
        (Node("n", "v100", 2),),
        jobs,
        slot=SLOT,
        relaunch_hours=0.1,
        name="two-labels-at-once",
    )
    plan = Plan.of(
        [
            Segment(0.0, SLOT, "j0", shared, (("n", 0),)),
            Segment(0.0, SLOT, "j1", shared, (("n", 1),)),
        ]
    )
    m, _ = _values_of(inst, plan, 3)
    worst, objective = start_violation(m)
    assert worst <= 1e-9
    assert objective == pytest.approx(evaluate(inst, plan).total_cost, rel=1e-9)


def _beside_outside(memory: float, max_share: int, slots: int = 3):
    """One v100 node whose only GPU holds a shared tenant from outside the model (6 GB)
    in every slot, two free one-epoch jobs of ``memory`` GB that run only shared, and
    the model's values of the plan that puts both beside that tenant in slot 0."""
    from milp.data import Outside

    shared = Config("v100", 1, shared=True)
    jobs = tuple(_job(f"j{i}", 1.0, 2.0, {shared: 0.4}, memory=memory) for i in range(2))
    inst = Instance(
        (V100,),
        (Node("n", "v100", 1),),
        jobs,
        slot=SLOT,
        max_share=max_share,
        name="beside-outside",
    )
    held = Outside(
        gpus={("n", t): frozenset({0}) for t in range(slots)},
        tenants={("n", t): {0: (1, 6.0)} for t in range(slots)},
    )
    d = milp_data(inst, slots, outside=held)
    m = model_of_data(d)
    plan = Plan.of([Segment(0.0, SLOT, f"j{i}", shared, (("n", 0),)) for i in range(2)])
    start_values(m, d, plan)
    return m


def test_free_jobs_beside_an_outside_tenant_fit_in_what_memory_it_leaves():
    """Two 6-GB jobs each fit beside a 6-GB outside tenant on a 16-GB GPU, but not
    both (18 GB): the shared memory row counts the outside tenant's memory."""
    assert start_violation(_beside_outside(6.0, 3))[0] > 1e-6
    assert start_violation(_beside_outside(4.0, 3))[0] <= 1e-9  # 14 GB: they fit


def test_free_jobs_beside_an_outside_tenant_fit_in_the_places_it_leaves():
    """With ``K_max`` = 2, one 4-GB job may join an outside tenant's GPU, two may not:
    the shared slots row counts the outside tenant."""
    assert start_violation(_beside_outside(4.0, 2))[0] > 1e-6
    assert start_violation(_beside_outside(4.0, 3))[0] <= 1e-9


def test_a_shared_tenant_holds_its_own_cpu_cores():
    """E3: two tenants of one GPU hold 4 cores each on a node of 6: they cannot run
    together, so one waits; the MILP's optimum is the brute force's."""
    shared = Config("v100", 1, shared=True, cpus=4)
    jobs = tuple(
        _job(f"j{i}", 1.0, 0.5, {shared: 0.45}, memory=4.0, weight=4.0 + i) for i in range(2)
    )
    inst = Instance(
        (V100,), (Node("n", "v100", 1, cpu_cores=6),), jobs, slot=SLOT, name="tenant-cores"
    )
    best, res = solved_at_brute_force(inst, 4)
    assert res.objective == pytest.approx(best, rel=1e-9)
    assert res.plan is not None and check_plan(inst, res.plan) == []


def test_a_multi_node_configuration_holds_its_cores_split_over_its_nodes():
    """E3: a two-node configuration of 8 cores holds 4 on each node, which nodes of 4
    cores allow: the MILP runs it and its plan passes the checker."""
    two = Config("v100", 2, nodes=2, cpus=8)
    inst = Instance(
        (V100,),
        (Node("a", "v100", 4, cpu_cores=4), Node("b", "v100", 4, cpu_cores=4)),
        (_job("big", 2.0, 0.5, {two: 0.25}, weight=10.0),),
        slot=SLOT,
        name="multi-node-cores",
    )
    res = solve(inst, slots=3, time_limit=60)
    assert res.status is SolutionStatus.OPTIMAL and res.plan is not None
    assert check_plan(inst, res.plan) == []
    assert res.objective == pytest.approx(evaluate(inst, res.plan).total_cost, rel=1e-9)


def test_a_relative_gap_of_one_is_refused():
    """``mip_gap`` is a relative gap in [0, 1): a gap of 1 would call any plan optimal."""
    from milp import MilpError
    from tests.milp.test_milp import _tiny

    with pytest.raises(MilpError, match="mip_gap = 1"):
        solve(_tiny(0), slots=7, mip_gap=1)


def test_an_infinite_cutoff_is_refused():
    """A cutoff is the cost of a plan, a finite number: infinity is refused by name."""
    from milp import MilpError
    from tests.milp.test_milp import _tiny

    with pytest.raises(MilpError, match="cutoff = inf"):
        milp_data(_tiny(0), 7, cutoff=float("inf"))


@pytest.mark.parametrize(
    ("power_off", "priced"),
    [
        ("0,0.45,0.5", False),  # no delay after work: a boot ahead of a start that may not come
        ("0.1,0.9,1.0", True),  # boots longer than a slot, at prices that change within them
    ],
)
@pytest.mark.parametrize("policy", ["sts", "fifo"])
def test_powered_off_the_model_values_a_plan_at_most_at_its_cost(power_off, priced, policy):
    """Nodes powered off when empty: at a plan's values the model is a lower bound on
    the plan's cost. The boot ahead of a slot counts the job busy only if it has not
    completed by the slot before (not two before), and a boot is priced at the cheapest
    slot of its hours (not the dearest)."""
    from heuristic.core.registry import make_policy
    from tests.milp.test_idle import _off
    from validation.simulator import rollout

    inst = _off(0, "expected", power_off, priced=priced)
    plan = rollout(inst, make_policy(policy), slot=SLOT)
    slots = round(max(s.end for s in plan) / SLOT)  # the plan's own horizon
    d = milp_data(inst, slots, idle_bound=True)
    m = model_of_data(d)
    start_values(m, d, plan)
    worst, value = start_violation(m)
    assert worst <= 1e-9
    assert value <= evaluate(inst, plan).total_cost + 1e-9
