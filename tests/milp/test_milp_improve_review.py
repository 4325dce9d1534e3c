"""What a mutation review of milp/overhead.py, milp/improve.py, milp/neighbourhood.py and
milp/rolling.py found the other tests free to move: the relaunch rows that only an
optimum which relaunches mid-job would test (a pause, a move to another node, a change of
configuration, under a price series), the GPUs and host resources a fixed job holds in a
sub-MILP, the LP bound the relaunch cuts hold, `improve`'s bound, stops and sizes, which
jobs and nodes a neighbourhood frees, and the rolling MILP's kept GPUs (2026-12-08: 74
mutants, 37 killed before, 26 of the others killed here, 8 equivalent, 3 left: a
sub-MILP finding nothing, which job seeds an `excess` neighbourhood, and a sub-MILP's
time limit capped by the time left)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from heuristic.core.occupancy import Allocation
from heuristic.core.policy import JobStatus, SchedulerState
from heuristic.sts.policy import StsPolicy
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node, Plan, Segment
from instances.energy import Series
from milp import SolutionStatus, Termination, solve
from milp.data import milp_data
from milp.highs import compile_model, run_highs
from milp.improve import MIN_SIZE, _Sizes, improve
from milp.model import model_of_data
from milp.neighbourhood import Chooser, outside
from milp.plan_io import start_values
from milp.rolling import keep_gpus
from tests.milp.test_milp import _tiny
from validation.evaluate import evaluate
from validation.simulator import rollout

SLOT = 0.5
V100 = GpuType("v100", 16.0, 300.0)
ONE, TWO, SHARED = Config("v100", 1), Config("v100", 2), Config("v100", 1, shared=True)
A0, B0 = ("a", 0), ("b", 0)


def _mover(relaunch: float, prices: Series | None = None) -> Instance:
    """One job of up to 3 epochs (stops after 1 or 2 possible) on two nodes of two
    v100s, on one GPU, two GPUs or a shared GPU."""
    job = Job(
        "j",
        0.0,
        2.0,
        EpochDistribution((1.0, 2.0, 3.0), (0.2, 0.3, 0.5)),
        {ONE: 0.4, TWO: 0.25, SHARED: 0.5},
        6.0,
    )
    return Instance(
        (V100,),
        (Node("a", "v100", 2), Node("b", "v100", 2)),
        (job,),
        slot=SLOT,
        relaunch_hours=relaunch,
        prices=prices,
        name="mover",
    )


def _plan(*runs: tuple[int, int, Config, tuple]) -> Plan:
    return Plan.of(Segment(a * SLOT, b * SLOT, "j", c, gpus) for a, b, c, gpus in runs)


# relaunches of every kind: a first start, a resume after a pause on the same GPU, a
# move to another node on the same configuration, a change to two GPUs
_MOVES = _plan(
    (0, 2, ONE, (A0,)), (3, 5, ONE, (A0,)), (5, 7, ONE, (B0,)), (7, 9, TWO, (B0, ("b", 1)))
)
_SHORT_MOVES = _plan(
    (0, 1, ONE, (A0,)), (2, 3, ONE, (A0,)), (3, 4, ONE, (B0,)), (4, 5, TWO, (B0, ("b", 1)))
)
_PRICES = Series.regular(SLOT, (0.1, 0.9, 0.3, 0.7, 0.2, 0.5, 0.8, 0.05, 0.6, 0.4, 0.3))


def _highs(mats, log):
    """HiGHS to optimality (a gap of 1e-9) on one thread, no start, within 60 s."""
    return run_highs(
        mats, start=None, time_limit=60, mip_gap=1e-9, threads=1, log_file=log, stream=False
    )


@pytest.mark.parametrize(
    ("relaunch", "prices", "plan"),
    [
        (0.7, None, _MOVES),
        (0.2, None, _SHORT_MOVES),
        (0.7, None, _plan((0, 2, SHARED, (A0,)), (2, 4, SHARED, (B0,)), (4, 7, ONE, (B0,)))),
        (0.7, _PRICES, _MOVES),
    ],
    ids=["overhead-past-a-slot", "overhead-within-a-slot", "shared-moves", "priced"],
)
def test_the_model_with_a_plans_placements_fixed_costs_what_the_evaluator_says(
    relaunch, prices, plan, tmp_path
):
    """The placements (run, place, share) of a plan that relaunches in every way fixed,
    the MILP's least objective over the rest (begin, relaunched, lost, overhead cost,
    work, done, lateness) is the evaluator's cost of the plan: no row that pins the
    overhead may be missing. An optimum rarely relaunches mid-job, so the brute-force
    tests never asked: without the ``new`` row of ``relaunch_begin`` a move to another
    node went free (3.1958 against 3.2171); under prices, without an upper row on
    ``lost`` (``on``, ``was``, ``only``, ``relaunched``) the model called slack in a dear
    slot overhead and moved the work to a cheap one (3.5013 against 3.5087)."""
    inst = _mover(relaunch, prices)
    d = milp_data(inst, 10)
    m = model_of_data(d)
    start_values(m, d, plan)
    for family in (m.run, m.place, m.share):
        for var in family.values():
            var.fix()
    answer = _highs(compile_model(m), tmp_path / "highs.log")
    assert answer.termination is Termination.OPTIMAL and answer.objective is not None
    assert answer.objective == pytest.approx(evaluate(inst, plan).total_cost, rel=1e-9)


@pytest.mark.parametrize(
    ("seed", "relaunch", "measured"),
    [
        (0, 0.7, 1.645135758470126),
        (1, 0.7, 1.8441847152515316),
        (2, 0.2, 0.7410817281440426),
        (3, 0.2, 0.4939486109536703),
    ],
)
def test_the_relaunch_cuts_hold_the_lp_bound_of_tiny_instances(seed, relaunch, measured, tmp_path):
    """The cuts of milp.overhead are what the LP relaxation sees of the overhead, and the
    integer solutions do not need them, so no brute-force test misses one: ``relaunched``
    at least each new placement, ``lost`` at least ``λ_0`` of a relaunch, the first
    start's energy, the work beside the overhead summed over configurations and on a
    configuration just relaunched, the start split by block, a change of ``run`` as a new
    placement, ``ever`` (0 before the first slot, at least ``run``, 1 in the last slot).
    Measured on `_tiny` with overheads longer and shorter than a slot (8 slots, HiGHS's
    LP optimum, 2026-12-07): dropping any one of them lowered at least one of these
    bounds, by 0.01% to 20%."""
    inst = _tiny(seed).replace(relaunch_hours=relaunch)
    mats = compile_model(model_of_data(milp_data(inst, 8)))
    relaxed = replace(mats, integer=np.zeros_like(mats.integer))
    answer = _highs(relaxed, tmp_path / "lp.log")
    assert answer.termination is Termination.OPTIMAL and answer.objective is not None
    assert answer.objective >= measured * (1 - 1e-7)


def test_a_fixed_multi_node_job_holds_its_nodes_whole_and_its_cores_on_each():
    """A fixed two-node job on one GPU of each node holds every GPU of both (the model
    reserves them whole) and half its cores on each node; two fixed jobs on one node add
    up their cores and DRAM."""
    big = Config("v100", 2, nodes=2, cpus=8, dram_gb=20.0)
    small = Config("v100", 1, cpus=3, dram_gb=5.0)
    jobs = (
        Job("big", 0.0, 1.0, EpochDistribution.deterministic(1.0), {big: 0.5}, 6.0),
        Job("s0", 0.0, 1.0, EpochDistribution.deterministic(1.0), {small: 0.5}, 6.0),
        Job("s1", 0.0, 1.0, EpochDistribution.deterministic(1.0), {small: 0.5}, 6.0),
    )
    nodes = (
        Node("a", "v100", 4, cpu_cores=16, dram_gb=64.0),
        Node("b", "v100", 4, cpu_cores=16, dram_gb=64.0),
        Node("c", "v100", 4, cpu_cores=16, dram_gb=64.0),
    )
    inst = Instance((V100,), nodes, jobs, slot=SLOT, name="held")
    plan = Plan.of(
        [
            Segment(0.0, SLOT, "big", big, (("a", 0), ("b", 0))),
            Segment(0.0, SLOT, "s0", small, (("c", 0),)),
            Segment(0.0, SLOT, "s1", small, (("c", 1),)),
        ]
    )
    held = outside(inst, plan, {"big", "s0", "s1"})
    assert held.gpus["a", 0] == held.gpus["b", 0] == frozenset(range(4))
    assert held.gpus["c", 0] == frozenset({0, 1})
    assert held.host["a", 0] == held.host["b", 0] == (4, 10.0)
    assert held.host["c", 0] == (6, 10.0)
    assert ("a", 1) not in held.gpus  # nothing is held past the segments' end


def test_two_fixed_tenants_of_a_gpu_count_both_and_their_memory():
    two_tenants = tuple(
        Job(f"t{i}", 0.0, 1.0, EpochDistribution.deterministic(1.0), {SHARED: 0.5}, 4.0 + i)
        for i in range(2)
    )
    inst = Instance((V100,), (Node("a", "v100", 1),), two_tenants, slot=SLOT, name="tenants")
    plan = Plan.of(Segment(0.0, SLOT, f"t{i}", SHARED, (A0,)) for i in range(2))
    assert outside(inst, plan, {"t0", "t1"}).tenants["a", 0] == {0: (2, 9.0)}
    assert outside(inst, plan, {"t0", "t1"}, nodes=()).tenants == {}


def _spread() -> Instance:
    """Four one-slot jobs due in the first slot and five nodes of one v100: all are on
    time only on four nodes at once."""
    jobs = tuple(
        Job(f"j{i}", 0.0, 0.5, EpochDistribution.deterministic(1.0), {ONE: 0.5}, 6.0)
        for i in range(4)
    )
    nodes = tuple(Node(n, "v100", 1) for n in "abcde")
    return Instance((V100,), nodes, jobs, slot=SLOT, name="spread")


def test_a_sub_milp_of_every_job_on_some_nodes_bounds_nothing():
    """Started with all four jobs in a row on node ``a``, the first neighbourhood frees
    every job but only on ``a`` and two spare nodes: its optimum (one job late, 0.42) is
    no bound of the instance (all on time, 0.12). Taken as one, `improve` called 0.42
    optimal."""
    inst = _spread()
    start = Plan.of(Segment(i * SLOT, (i + 1) * SLOT, f"j{i}", ONE, (A0,)) for i in range(4))
    best = solve(inst, time_limit=30, threads=1)
    assert best.status is SolutionStatus.OPTIMAL and best.objective is not None
    res = improve(inst, initial_plan=start, iterations=1, lagrangian=False, size=4)
    assert res.history[1].jobs == 4 and res.history[1].improved
    assert res.start_cost == evaluate(inst, start).total_cost == res.history[0].incumbent
    assert res.bound <= best.objective + 1e-9
    assert res.objective > best.objective + 0.1
    assert res.status is SolutionStatus.FEASIBLE


def _crowd() -> Instance:
    """Three one-slot jobs due in the first slot on one v100: two are late whatever the
    plan, which the capacity relaxation does not see."""
    jobs = tuple(
        Job(
            f"j{i}", 0.0, 0.5, EpochDistribution.deterministic(1.0), {ONE: 0.5}, 6.0, weight=1.0 + i
        )
        for i in range(3)
    )
    return Instance((V100,), (Node("a", "v100", 1),), jobs, slot=SLOT, name="crowd")


def test_a_whole_sub_milp_stopped_at_its_gap_does_not_lower_the_bound():
    """A neighbourhood of every job on every node is the whole MILP, so its dual bound
    joins the best bound, as a maximum: on `_tiny` 0 with a 0.7 h overhead (optimum
    3.1042), a caller's bound of 3 stays when the sub-MILP, stopped at a 90% gap,
    bounds 1.79."""
    inst = _tiny(0).replace(relaunch_hours=0.7)
    start = rollout(inst, StsPolicy())
    res = improve(
        inst, initial_plan=start, iterations=1, lagrangian=False, size=2, sub_gap=0.9, bound=3.0
    )
    assert res.history[1].jobs == len(inst.jobs) and res.history[1].proved
    assert res.bound == res.history[1].bound == res.history[0].bound == 3.0


def test_an_optimal_start_a_hair_above_the_bound_is_not_called_optimal():
    """The bound is met within 1e-9, not within a percent: from the optimal plan, a
    caller's bound 0.5% below its cost leaves the search FEASIBLE after its one
    neighbourhood (of two jobs: none frees them all)."""
    inst = _crowd()
    best = solve(inst, time_limit=30, threads=1)
    assert best.plan is not None and best.objective is not None
    res = improve(
        inst, initial_plan=best.plan, iterations=1, lagrangian=False, size=2,
        bound=0.995 * best.objective,
    )  # fmt: skip
    assert res.status is SolutionStatus.FEASIBLE
    assert res.termination is Termination.OTHER_LIMIT
    assert res.gap == pytest.approx(0.005, rel=1e-6)


@pytest.mark.parametrize("iterations", [1, 2])
def test_the_search_tries_as_many_neighbourhoods_as_asked(iterations):
    inst = _crowd()
    best = solve(inst, time_limit=30, threads=1)
    assert best.plan is not None
    res = improve(
        inst, initial_plan=best.plan, iterations=iterations, lagrangian=False, size=2,
        max_size=2,
    )  # fmt: skip
    assert res.termination is Termination.OTHER_LIMIT
    assert res.history[0].kind == "start" and len(res.history) == iterations + 1


def test_neighbourhood_sizes_grow_after_a_quick_proof_and_shrink_after_a_limit():
    sizes = _Sizes(4, 7, 10.0, jobs=20)
    sizes.adapt(True, 1.0)  # proved within a quarter of the limit: two more
    assert sizes.size == 6
    sizes.adapt(True, 1.0)  # at most max_size
    assert sizes.size == 7
    sizes.adapt(True, 5.0)  # proved, but slowly: kept
    assert sizes.size == 7
    sizes.adapt(False, 10.0)  # stopped by the limit: two fewer
    assert sizes.size == 5
    for _ in range(5):
        sizes.adapt(False, 10.0)
    assert sizes.size == MIN_SIZE
    few = _Sizes(4, 40, 10.0, jobs=5)
    few.adapt(True, 0.1)
    assert few.size == 5  # at most every job


def test_a_shared_tenant_is_not_kept_on_its_gpu_by_the_rolling_milp():
    """`keep_gpus` keeps only exclusive placements: a shared tenant that the plan labels
    beside another tenant on GPU 0 moves there, while the exclusive job the plan puts on
    GPU 1, where the tenant sat, keeps it. Keeping the tenant on GPU 1 left the exclusive
    job no GPU."""
    jobs = tuple(
        Job(f"j{i}", 0.0, 2.0, EpochDistribution.deterministic(2.0), {ONE: 0.5, SHARED: 0.6}, 4.0)
        for i in range(3)
    )
    inst = Instance((V100,), (Node("a", "v100", 2),), jobs, slot=SLOT, name="keep")
    tenant, other, exclusive = jobs
    held = Allocation(SHARED, (("a", 1),))
    state = SchedulerState(
        0.5,
        inst,
        (
            JobStatus(tenant, 0.5, held),
            JobStatus(other, 0.0, None),
            JobStatus(exclusive, 0.0, None),
        ),
        None,
    )
    first = {
        "j0": Allocation(SHARED, (("a", 0),)),
        "j1": Allocation(SHARED, (("a", 0),)),
        "j2": Allocation(ONE, (("a", 1),)),
    }
    out = keep_gpus(state, first)
    assert out == first


def test_a_job_the_plan_moves_to_another_node_is_not_kept_on_its_old_gpus():
    """Same configuration, other node: the plan's allocation stands (kept on node
    ``a``, it would run where the MILP placed nothing)."""
    jobs = tuple(
        Job(f"j{i}", 0.0, 2.0, EpochDistribution.deterministic(2.0), {ONE: 0.5}, 4.0)
        for i in range(2)
    )
    inst = Instance(
        (V100,), (Node("a", "v100", 1), Node("b", "v100", 1)), jobs, slot=SLOT, name="node-move"
    )
    held = Allocation(ONE, (A0,))
    state = SchedulerState(
        0.5,
        inst,
        (JobStatus(jobs[0], 0.5, held), JobStatus(jobs[1], 0.0, None)),
        None,
    )
    first = {"j0": Allocation(ONE, (B0,)), "j1": Allocation(ONE, (A0,))}
    assert keep_gpus(state, first) == first


def test_the_rolling_milp_keeps_a_running_job_on_its_very_gpu_under_overheads():
    """With a relaunch overhead, a job running on GPU 1 that the MILP's plan keeps on its
    configuration and node stays on GPU 1, whatever GPU id the plan wrote; one job
    present is within a limit of one."""
    from milp.rolling import RollingMilpOptions, RollingMilpPolicy

    job = Job("j", 0.0, 2.0, EpochDistribution.deterministic(2.0), {ONE: 0.5}, 4.0)
    inst = Instance(
        (V100,), (Node("a", "v100", 2),), (job,), slot=SLOT, relaunch_hours=0.2, name="stay"
    )
    held = Allocation(ONE, (("a", 1),))
    state = SchedulerState(0.5, inst, (JobStatus(job, 0.5, held),), None)
    decision = RollingMilpPolicy(RollingMilpOptions(max_jobs=1)).decide(state)
    assert decision.assign["j"] == held


def test_a_neighbourhood_frees_at_most_its_size_and_no_late_kind_without_a_late_job():
    """Every kind of draw frees at most ``size`` distinct jobs; with no job late, no
    neighbourhood is drawn around one."""
    inst = _spread()
    plan = Plan.of(Segment(i * SLOT, (i + 1) * SLOT, f"j{i}", ONE, (A0,)) for i in range(4))
    excess = {f"j{i}": 1.0 + i for i in range(4)}
    kinds = set()
    for seed in range(40):
        hood = Chooser(inst, seed).draw(plan, excess, dict.fromkeys(excess, 0.0), 2)
        kinds.add(hood.kind)
        assert 1 <= len(hood.jobs) <= 2 and len(set(hood.jobs)) == len(hood.jobs)
    assert kinds == {"excess", "window", "random"}


def test_the_spare_nodes_of_a_neighbourhood_are_the_least_busy():
    """Freeing ``j0`` (on node ``a``) adds the two nodes of its GPU type with the most
    GPU-hours free over its span: ``c`` and ``d``, not ``b``, which ``j1`` holds."""
    jobs = tuple(
        Job(f"j{i}", 0.0, 1.0, EpochDistribution.deterministic(1.0), {ONE: 0.5}, 6.0)
        for i in range(2)
    )
    nodes = tuple(Node(n, "v100", 1) for n in "abcd")
    inst = Instance((V100,), nodes, jobs, slot=SLOT, name="spare")
    plan = Plan.of([Segment(0.0, SLOT, "j0", ONE, (A0,)), Segment(0.0, SLOT, "j1", ONE, (B0,))])
    assert Chooser(inst, 0)._nodes(plan, ["j0"]) == ("a", "c", "d")


def test_nodes_a_fixed_multi_node_job_holds_whole_are_no_spare_nodes():
    """Docs: the freed jobs get, per GPU type, the two nodes with the most GPU-hours free
    over their span. A fixed two-node job holds nodes ``b`` and ``c`` whole (0 free), a
    three-GPU job holds 3 of ``d``'s 4 (1 free): freeing ``f`` on ``a`` adds ``d``. (Each
    whole node was counted half busy, and ``b`` and ``c`` were added: a defect this
    review found, 2026-12-08.)"""
    big, three = Config("v100", 2, nodes=2), Config("v100", 3)
    jobs = (
        Job("f", 0.0, 1.0, EpochDistribution.deterministic(1.0), {ONE: 0.5}, 6.0),
        Job("m", 0.0, 1.0, EpochDistribution.deterministic(1.0), {big: 0.5}, 6.0),
        Job("t", 0.0, 1.0, EpochDistribution.deterministic(1.0), {three: 0.5}, 6.0),
    )
    inst = Instance((V100,), tuple(Node(n, "v100", 4) for n in "abcd"), jobs, slot=SLOT, name="m")
    plan = Plan.of(
        [
            Segment(0.0, SLOT, "f", ONE, (A0,)),
            Segment(0.0, SLOT, "m", big, (B0, ("c", 0))),
            Segment(0.0, SLOT, "t", three, (("d", 0), ("d", 1), ("d", 2))),
        ]
    )
    assert "d" in Chooser(inst, 0)._nodes(plan, ["f"])
