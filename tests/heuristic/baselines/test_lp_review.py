"""Gap tests from a mutation review of ``lp`` (heuristic/baselines/lp.py) and the
baselines' shared core: behaviours the suite did not pin."""

from __future__ import annotations

import numpy as np
import pytest

from heuristic.baselines.candidate import Search
from heuristic.baselines.edf import EdfPolicy
from heuristic.baselines.fifo import FifoPolicy
from heuristic.baselines.lp import LpPolicy, _solve, place_shares
from heuristic.baselines.pr import PrOptions, PrPolicy
from heuristic.baselines.rg import RgOptions, RgPolicy
from heuristic.baselines.static import StaticPolicy
from heuristic.core.choice import ranked_configs, worst_case_cost
from heuristic.core.holds import Holds
from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.policy import JobStatus, SchedulerState
from heuristic.core.registry import make_policy
from heuristic.core.urgency import slack
from instances import (
    Config,
    Domain,
    EpochDistribution,
    GpuType,
    Instance,
    Job,
    Node,
    Rack,
    Topology,
)
from instances.generators.suite import suite_specs
from instances.generators.synthetic import synthetic
from validation.simulator import rollout

K80, V100 = Config("k80", 1), Config("v100", 1)
V2 = Config("v100", 2)
FAR = 100.0  # a due date no configuration misses


def _two_types(jobs: tuple[Job, ...], *, relaunch_hours: float = 0.0) -> Instance:
    """One K80 (100 W) and one V100 (300 W), each on a node of its own."""
    return Instance(
        gpu_types=(GpuType("k80", 12, 100), GpuType("v100", 16, 300)),
        nodes=(Node("a", "k80", 1), Node("b", "v100", 1)),
        jobs=jobs,
        relaunch_hours=relaunch_hours,
    )


def _job(name: str, due: float, times: dict[Config, float], epochs: int = 4) -> Job:
    return Job(name, 0.0, due, EpochDistribution.deterministic(epochs), times, 4.0)


def test_the_lp_shares_never_over_commit_a_types_gpus():
    """The capacity row: two jobs that would each take half or more of the one V100
    on their own are given at most one V100 between them (the rest on the K80)."""
    times = {K80: 1.0, V100: 0.25}
    inst = _two_types((_job("urgent", 1.1, times), _job("second", 2.0, times)))
    jobs = [JobStatus(j, 0.0, None) for j in inst.jobs]
    shares, _, _ = _solve(inst, 0.0, jobs, [inst.allowed_configs(j) for j in inst.jobs])
    v100 = sum(
        s[inst.allowed_configs(j).index(V100)] for s, j in zip(shares, inst.jobs, strict=True)
    )
    assert v100 <= 1.0 + 1e-9
    assert shares[1][inst.allowed_configs(inst.jobs[1]).index(K80)] > 0.1


def test_of_two_shared_configurations_fast_enough_the_cheaper_per_epoch_is_taken():
    """Both configurations alone run fast enough (1 epoch an hour needed): the slower
    K80 (0.05 kWh an epoch) is taken before the faster V100 (0.075)."""
    inst = _two_types((_job("j", FAR, {K80: 0.5, V100: 0.25}),))
    s = JobStatus(inst.jobs[0], 0.0, None)
    configs = inst.allowed_configs(s.job)
    alloc = place_shares(inst, Occupancy(inst), s, 0.0, 1.0, configs, np.array([0.5, 0.5]))
    assert alloc is not None and alloc.config == K80


def _running_on_v100(
    times: dict[Config, float], overhead_left: float, relaunch: float
) -> tuple[Instance, Occupancy, JobStatus, Allocation]:
    inst = _two_types((_job("j", FAR, times),), relaunch_hours=relaunch)
    here = Allocation(V100, (("b", 0),))
    return inst, Occupancy(inst), JobStatus(inst.jobs[0], 0.0, here, overhead_left), here


def test_a_running_job_stays_where_a_move_costs_exactly_as_much():
    """A move only where it is cheaper than staying: the K80 made as dear as the V100
    in every respect (same power, epoch time, overhead), the LP's share on the K80
    alone, the job stays."""
    inst = Instance(
        gpu_types=(GpuType("k80", 12, 300), GpuType("v100", 16, 300)),
        nodes=(Node("a", "k80", 1), Node("b", "v100", 1)),
        jobs=(_job("j", FAR, {K80: 1.0, V100: 1.0}),),
        relaunch_hours=0.5,
    )
    here = Allocation(V100, (("b", 0),))
    s = JobStatus(inst.jobs[0], 0.0, here, 0.5)
    configs = inst.allowed_configs(s.job)
    share = np.array([1.0 if c == K80 else 0.0 for c in configs])
    assert place_shares(inst, Occupancy(inst), s, 0.0, 0.1, configs, share) == here


def test_staying_is_charged_what_is_left_of_the_overhead():
    """A job still inside its 1 h relaunch on the V100 (0.3 kWh an epoch, one epoch
    left): staying costs 0.3 + 0.3 kWh, moving to the K80 (4 h an epoch at 100 W)
    0.4 + 0.1 kWh: it moves (were staying charged the epoch alone, it would stay)."""
    inst, occ, s, here = _running_on_v100({K80: 4.0, V100: 1.0}, 1.0, 1.0)
    s = JobStatus(inst.jobs[0], 3.0, here, 1.0)  # one epoch left
    configs = inst.allowed_configs(s.job)
    share = np.array([1.0 if c == K80 else 0.0 for c in configs])
    alloc = place_shares(inst, occ, s, 0.0, 0.1, configs, share)
    assert alloc is not None and alloc.config == K80


def test_a_running_job_the_lp_keeps_on_its_configuration_stays_even_if_another_is_cheaper():
    """The LP's first choice is the configuration the job runs: it stays, though the K80
    (outside the LP's shares) would be cheaper in the worst case with the overhead
    paid."""
    inst, occ, s, here = _running_on_v100({K80: 1.0, V100: 1.0}, 0.0, 0.1)
    configs = inst.allowed_configs(s.job)
    share = np.array([1.0 if c == V100 else 0.0 for c in configs])
    assert place_shares(inst, occ, s, 0.0, 0.1, configs, share) == here


def test_a_moving_job_may_reuse_its_own_gpus_and_leaves_a_held_job_alone():
    """Relaunch overheads on: ``mover`` (urgent) leaves one V100 for two, cheaper and
    faster, on its own node (its old GPU and the free one); ``held`` runs on the other
    two-V100 node, released first (so first among the equally free nodes). The mover's
    own old GPU does not hold against it, so it stays on its node and ``held`` keeps
    its GPUs."""
    one = EpochDistribution.deterministic(8)
    mover = Job("mover", 0.0, 5.0, one, {V100: 1.0, V2: 0.4}, 4.0)
    held = Job("held", 0.0, FAR, one, {V2: 0.4}, 4.0)
    inst = Instance(
        gpu_types=(GpuType("v100", 16, 300),),
        nodes=(Node("n2", "v100", 2), Node("n1", "v100", 2)),
        jobs=(held, mover),
        relaunch_hours=0.01,
    )
    occ = Occupancy(inst)
    at_mover, at_held = Allocation(V100, (("n1", 0),)), Allocation(V2, (("n2", 0), ("n2", 1)))
    occ.place(mover, at_mover)
    occ.place(held, at_held)
    jobs = (JobStatus(held, 0.0, at_held), JobStatus(mover, 0.0, at_mover))
    decision = LpPolicy().decide(SchedulerState(0.0, inst, jobs, occ))
    assert decision.assign["mover"] == Allocation(V2, (("n1", 0), ("n1", 1)))
    assert "held" not in decision.assign


def test_a_configuration_exactly_fast_enough_counts_as_fast_enough():
    """4 epochs due in 4 h: the K80 (1 h an epoch, 0.1 kWh) meets the due date to the
    hour and is cheaper per epoch than the V100 (0.5 h, 0.15 kWh): it is taken."""
    inst = _two_types((_job("j", 4.0, {K80: 1.0, V100: 0.5}),))
    s = JobStatus(inst.jobs[0], 0.0, None)
    configs = inst.allowed_configs(s.job)
    need = s.remaining / 4.0
    alloc = place_shares(inst, Occupancy(inst), s, 0.0, need, configs, np.array([0.5, 0.5]))
    assert alloc is not None and alloc.config == K80


def test_the_worst_case_delays_the_end_by_the_overhead():
    """4 one-hour epochs due at 4 h, started now after a 0.5 h relaunch, end 0.5 h late:
    the worst case carries 0.5 h of tardiness beside the energy."""
    inst = _two_types((_job("j", 4.0, {K80: 1.0, V100: 1.0}),), relaunch_hours=0.5)
    on_time = _two_types((_job("j", 4.5, {K80: 1.0, V100: 1.0}),), relaunch_hours=0.5)
    late = worst_case_cost(inst, inst.jobs[0], V100, 4.0, 0.0)
    energy = worst_case_cost(on_time, on_time.jobs[0], V100, 4.0, 0.0)
    assert late - energy == pytest.approx(inst.tardiness_weight("j") * 0.5)


def test_the_worst_case_bills_the_overhead_hours_at_the_configurations_power():
    """A new placement runs its 0.5 h relaunch at the V100's 300 W before its 4 epochs
    (1 h each at 300 W): 4.5 h of energy; staying (overhead 0) bills the 4 epochs."""
    inst = _two_types((_job("j", FAR, {K80: 1.0, V100: 1.0}),), relaunch_hours=0.5)
    job = inst.jobs[0]
    assert worst_case_cost(inst, job, V100, 4.0, 0.0) == pytest.approx(
        inst.energy_price * 0.3 * 4.5
    )
    assert worst_case_cost(inst, job, V100, 4.0, 0.0, overhead=0.0) == pytest.approx(
        inst.energy_price * 0.3 * 4.0
    )


def test_the_fastest_rule_breaks_ties_in_epoch_time_by_cost():
    """Two configurations equally fast: the fastest rule takes the cheaper first (type
    ``b``, 100 W) though its name sorts after the dearer ``a`` (300 W)."""
    a, b = Config("a", 1), Config("b", 1)
    inst = Instance(
        gpu_types=(GpuType("a", 16, 300), GpuType("b", 16, 100)),
        nodes=(Node("na", "a", 1), Node("nb", "b", 1)),
        jobs=(_job("j", FAR, {a: 1.0, b: 1.0}),),
    )
    assert ranked_configs(inst, inst.jobs[0], 4.0, 0.0, "fastest") == [b, a]


def test_slack_is_the_time_to_the_due_date_less_the_fastest_worst_case_run():
    """Due at 10 h, seen at 2 h with 4 epochs left, the fastest 0.25 h an epoch: 7 h."""
    inst = _two_types((_job("j", 10.0, {K80: 1.0, V100: 0.25}),))
    assert slack(inst, JobStatus(inst.jobs[0], 0.0, None), 2.0) == pytest.approx(7.0)


def _search(inst: Instance, running: dict[str, Allocation] | None = None) -> Search:
    """The search baselines' decoder at time 0: the jobs in ``running`` on their
    allocations, the others waiting."""
    running = running or {}
    occ = Occupancy(inst)
    for j in inst.jobs:
        if j.id in running:
            occ.place(j, running[j.id])
    jobs = tuple(JobStatus(j, 0.0, running.get(j.id)) for j in inst.jobs)
    return Search(SchedulerState(0.0, inst, jobs, occ))


def test_a_decoded_job_takes_its_preferred_configuration_where_it_fits():
    """The candidate's preferred configuration is tried first, the dearer K80 here,
    before the cheapest (the V100)."""
    inst = _two_types((_job("j", FAR, {K80: 1.0, V100: 0.25}),))
    search = _search(inst)
    decoded = search.decode(search.candidate(["j"], {"j": K80}))
    assert decoded.assign["j"].config == K80


def test_a_waiting_job_is_charged_from_the_first_gpus_to_free_up():
    """Two running jobs end at 1 h and 5 h in the worst case; the waiting job (one
    1-hour epoch, due at 2 h) is charged as if started at 1 h: on time, its energy
    alone."""
    one = EpochDistribution.deterministic(1)
    times = {V100: 1.0}
    inst = Instance(
        gpu_types=(GpuType("v100", 16, 300),),
        nodes=(Node("b", "v100", 2),),
        jobs=(
            Job("r1", 0.0, FAR, one, times, 4.0),
            Job("r5", 0.0, FAR, EpochDistribution.deterministic(5), times, 4.0),
            Job("w", 0.0, 2.0, one, times, 4.0),
        ),
    )
    search = _search(
        inst, {"r1": Allocation(V100, (("b", 0),)), "r5": Allocation(V100, (("b", 1),))}
    )
    decoded = search.decode(search.candidate(["w"], {"w": V100}))
    assert decoded.assign == {}
    assert decoded.cost == pytest.approx(inst.epoch_cost("w", V100))


def test_a_placed_job_is_charged_its_worst_case_cost():
    """One job placed on the V100: the candidate's cost is its worst-case cost there."""
    inst = _two_types((_job("j", 1.5, {K80: 1.0, V100: 0.5}),))
    search = _search(inst)
    decoded = search.decode(search.candidate(["j"], {"j": V100}))
    assert decoded.cost == pytest.approx(worst_case_cost(inst, inst.jobs[0], V100, 4.0, 0.0))
    assert decoded.cost > 0


def test_rg_without_randomness_repeats_its_greedy_start():
    """With no swaps and no bias, every randomised start is the deterministic greedy:
    pressure order, cheapest configurations."""
    times = {K80: 1.0, V100: 0.25}
    inst = _two_types(tuple(_job(n, d, times) for n, d in (("x", 9.0), ("y", 6.0), ("z", 30.0))))
    rg = RgPolicy(RgOptions(starts=5, swap=0.0, bias=0.0))
    search = _search(inst)
    greedy = rg.greedy(search)
    assert {d.candidate for d in rg.solutions(search)} == {greedy}


def test_pr_improves_a_poor_start_by_local_search():
    """A lone elite solution on the dear K80 (nothing to relink with): the local search
    moves it to the V100, cheaper in the worst case."""
    inst = _two_types((_job("j", FAR, {K80: 1.0, V100: 0.25}),))
    search = _search(inst)
    poor = search.decode(search.candidate(["j"], {"j": K80}))
    good = search.decode(search.candidate(["j"], {"j": V100}))
    assert PrPolicy().improve(search, [poor]).cost == pytest.approx(good.cost)


def test_a_path_keeps_the_best_solution_it_meets():
    """The path from the K80 solution to the V100 one meets the V100 one, the cheaper:
    it is what the path returns."""
    inst = _two_types((_job("j", FAR, {K80: 1.0, V100: 0.25}),))
    search = _search(inst)
    poor = search.decode(search.candidate(["j"], {"j": K80}))
    good = search.decode(search.candidate(["j"], {"j": V100}))
    assert good.cost < poor.cost
    assert PrPolicy().relink(search, poor, good).cost == pytest.approx(good.cost)


def test_static_tries_the_requested_size_in_the_instances_order_of_gpu_types():
    """No request: one GPU of any type. The instance lists the V100 before the K80, so
    ``static`` takes the V100 though ``k80`` sorts first by name."""
    inst = Instance(
        gpu_types=(GpuType("v100", 16, 300), GpuType("k80", 12, 100)),
        nodes=(Node("b", "v100", 1), Node("a", "k80", 1)),
        jobs=(_job("j", FAR, {K80: 1.0, V100: 0.25}),),
    )
    state = SchedulerState(0.0, inst, (JobStatus(inst.jobs[0], 0.0, None),), Occupancy(inst))
    assert StaticPolicy().decide(state).assign["j"].config == V100


def test_static_runs_a_job_with_only_shared_slots_on_one():
    """No request and no exclusive configuration: the job asks for its shared slots."""
    slot = Config("v100", 1, shared=True)
    inst = _two_types((_job("j", FAR, {slot: 0.5}),))
    state = SchedulerState(0.0, inst, (JobStatus(inst.jobs[0], 0.0, None),), Occupancy(inst))
    assert StaticPolicy().decide(state).assign["j"].config == slot


V100_T = GpuType("v100", 32.0, 300.0)


def _racks(nodes: dict[str, tuple[str, int]], cfg: Config) -> Instance:
    """Two racks in one domain, nodes ``name: (rack, gpus)``; one job that runs ``cfg``."""
    topo = Topology(25.0, (Rack("r0", 30.0, "d0"), Rack("r1", 30.0, "d0")), (Domain("d0", 12.0),))
    return Instance(
        (V100_T,),
        tuple(Node(n, "v100", g, rack=r) for n, (r, g) in nodes.items()),
        (_job("j", FAR, {cfg: 1.0}), _job("other", FAR, {V100: 1.0})),
        topology=topo,
    )


def test_a_distributed_placement_fills_the_nodes_with_most_free_gpus_first():
    """Four GPUs within a rack whose three nodes have 1, 2 and 2 free: the two whole
    nodes, not three nodes."""
    four = Config("v100", 4, span="rack", net_gbps=1.0)
    inst = _racks({"a": ("r0", 2), "b": ("r0", 2), "c": ("r0", 2)}, four)
    occ = Occupancy(inst)
    occ.place(inst.jobs[1], Allocation(V100, (("a", 0),)))
    found = occ.find(inst.jobs[0], four)
    assert found is not None and {n for n, _ in found.gpus} == {"b", "c"}


def test_a_distributed_placement_takes_the_rack_with_fewest_free_gpus_that_holds_it():
    """Three GPUs within a rack: rack r0 has 4 free, r1 3 (one taken); best fit keeps
    r0 whole and takes r1."""
    three = Config("v100", 3, span="rack", net_gbps=1.0)
    inst = _racks({"a": ("r0", 2), "b": ("r0", 2), "c": ("r1", 2), "d": ("r1", 2)}, three)
    occ = Occupancy(inst)
    occ.place(inst.jobs[1], Allocation(V100, (("c", 0),)))
    found = occ.find(inst.jobs[0], three)
    assert found is not None and {n for n, _ in found.gpus} == {"c", "d"}


def test_best_fit_over_racks_counts_free_gpus_before_nodes():
    """Three GPUs within a rack: r0 has two 2-GPU nodes (4 free, two nodes used), r1
    three 1-GPU nodes (3 free, three nodes used): the group with fewest free GPUs, r1."""
    three = Config("v100", 3, span="rack", net_gbps=1.0)
    nodes = {"a": ("r0", 2), "b": ("r0", 2), "c": ("r1", 1), "d": ("r1", 1), "e": ("r1", 1)}
    inst = _racks(nodes, three)
    found = Occupancy(inst).find(inst.jobs[0], three)
    assert found is not None and {n for n, _ in found.gpus} == {"c", "d", "e"}


def test_a_distributed_placement_takes_the_lowest_numbered_free_gpus():
    """Three GPUs on two 2-GPU nodes: both of ``a`` and GPU 0 of ``b``."""
    three = Config("v100", 3, span="rack", net_gbps=1.0)
    inst = _racks({"a": ("r0", 2), "b": ("r0", 2)}, three)
    found = Occupancy(inst).find(inst.jobs[0], three)
    assert found is not None and sorted(found.gpus) == [("a", 0), ("a", 1), ("b", 0)]


def test_a_distributed_placement_passes_over_a_group_whose_links_are_full():
    """Two GPUs within a rack, one free on each node: r0's node links (25 Gb/s) carry
    20 for a running job, too little for 10 more, so r1's two nodes are taken."""
    two = Config("v100", 2, span="rack", net_gbps=10.0)
    wide = Config("v100", 2, span="rack", net_gbps=20.0)
    nodes = {"a": ("r0", 2), "b": ("r0", 2), "c": ("r1", 2), "d": ("r1", 2)}
    inst = _racks(nodes, two)
    extra = (_job("wide", FAR, {wide: 1.0}), _job("other2", FAR, {V100: 1.0}))
    inst = inst.replace(jobs=(*inst.jobs, *extra))
    occ = Occupancy(inst)
    occ.place(inst.jobs[2], Allocation(wide, (("a", 0), ("b", 0))))
    occ.place(inst.jobs[1], Allocation(V100, (("c", 0),)))
    occ.place(inst.jobs[3], Allocation(V100, (("d", 0),)))
    found = occ.find(inst.jobs[0], two)
    assert found is not None and {n for n, _ in found.gpus} == {"c", "d"}


def test_a_placement_on_held_gpus_releases_only_the_holds_it_needs():
    """Two running jobs hold GPUs 0 and 1 of a three-GPU node; a placement on GPU 0
    ends the first job's hold, and the second keeps its own."""
    inst = Instance(
        gpu_types=(GpuType("v100", 16, 300),),
        nodes=(Node("n", "v100", 3),),
        jobs=tuple(_job(n, FAR, {V100: 1.0}) for n in ("r1", "r2", "new")),
        relaunch_hours=0.1,
    )
    r1, r2, new = inst.jobs
    occ = Occupancy(inst)
    at = {"r1": Allocation(V100, (("n", 0),)), "r2": Allocation(V100, (("n", 1),))}
    for j in (r1, r2):
        occ.place(j, at[j.id])
    holds = Holds(occ, [JobStatus(r1, 0.0, at["r1"]), JobStatus(r2, 0.0, at["r2"])])
    holds.take(new, Allocation(V100, (("n", 0),)))
    assert list(holds.pending) == ["r2"]


def _one_gpu_free() -> SchedulerState:
    """A two-GPU node with one GPU taken by a running job; ``big`` (released first, due
    first) needs both GPUs, ``small`` (released later, due later) one."""
    one = EpochDistribution.deterministic(4)
    inst = Instance(
        gpu_types=(GpuType("v100", 16, 300),),
        nodes=(Node("n", "v100", 2),),
        jobs=(
            Job("running", 0.0, FAR, one, {V100: 1.0}, 4.0),
            Job("big", 0.0, 10.0, one, {V2: 0.5}, 4.0),
            Job("small", 0.5, 20.0, one, {V100: 1.0}, 4.0),
        ),
    )
    occ = Occupancy(inst)
    at = Allocation(V100, (("n", 0),))
    occ.place(inst.jobs[0], at)
    jobs = (JobStatus(inst.jobs[0], 0.0, at), *(JobStatus(j, 0.0, None) for j in inst.jobs[1:]))
    return SchedulerState(1.0, inst, jobs, occ)


def test_edf_starts_a_later_due_job_that_fits_while_the_first_due_cannot():
    """EDF schedules by list: ``big`` does not fit, ``small`` takes the free GPU."""
    assert set(EdfPolicy().decide(_one_gpu_free()).assign) == {"small"}


def test_fifo_starts_no_later_job_while_the_oldest_cannot_be_placed():
    """FIFO's head-of-line blocking: ``big`` does not fit, so ``small`` waits too."""
    assert FifoPolicy().decide(_one_gpu_free()).assign == {}


def test_rg_run_twice_gives_the_same_plan():
    """A policy object that has run once draws the same starts when run again: each
    run begins its decision count afresh."""
    name, spec, seed = next(x for x in suite_specs() if x[0] == "suite-excl-3n8j-s2")
    inst = synthetic(spec, seed, name)  # where the starts drawn change the plan
    rg = make_policy("rg", seed=3)
    assert rollout(inst, rg) == rollout(inst, rg)


def test_a_path_stops_when_its_decodes_are_spent():
    """``max_moves = 2``: two jobs differ between the start (both on K80s) and the guide
    (both on V100s); the first step decodes two moves and spends the budget, so the
    path ends half-way, dearer than the guide and cheaper than the start."""
    times = {K80: 1.0, V100: 0.25}
    inst = Instance(
        gpu_types=(GpuType("k80", 12, 100), GpuType("v100", 16, 300)),
        nodes=(Node("a", "k80", 2), Node("b", "v100", 2)),
        jobs=(_job("x", FAR, times), _job("y", FAR, times)),
    )
    search = _search(inst)
    poor = search.decode(search.candidate(["x", "y"], {"x": K80, "y": K80}))
    good = search.decode(search.candidate(["x", "y"], {"x": V100, "y": V100}))
    half = PrPolicy(PrOptions(max_moves=2)).relink(search, poor, good)
    assert good.cost < half.cost < poor.cost


def test_edf_breaks_ties_in_due_date_by_release():
    """Equal due dates, one free GPU: the job released first (``b``) starts, though
    ``a`` comes first by id."""
    one = EpochDistribution.deterministic(4)
    inst = Instance(
        gpu_types=(GpuType("v100", 16, 300),),
        nodes=(Node("n", "v100", 1),),
        jobs=(
            Job("b", 0.0, 10.0, one, {V100: 1.0}, 4.0),
            Job("a", 0.5, 10.0, one, {V100: 1.0}, 4.0),
        ),
    )
    jobs = tuple(JobStatus(j, 0.0, None) for j in inst.jobs)
    state = SchedulerState(1.0, inst, jobs, Occupancy(inst))
    assert set(EdfPolicy().decide(state).assign) == {"b"}


def test_lp_leaves_out_a_job_that_has_run_its_maximum_epochs():
    """A job at its maximum epochs (done, still listed) gets no share and no GPU; the
    other job is placed."""
    times = {K80: 1.0, V100: 0.25}
    inst = _two_types((_job("done", FAR, times), _job("j", FAR, times)))
    jobs = (JobStatus(inst.jobs[0], 4.0, None), JobStatus(inst.jobs[1], 0.0, None))
    decision = LpPolicy().decide(SchedulerState(0.0, inst, jobs, Occupancy(inst)))
    assert set(decision.assign) == {"j"}
