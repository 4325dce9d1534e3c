"""Review tests for the seed systems (heuristic/seeds/): decision rules that
docs/optimus.md, docs/gandiva.md, docs/synergy.md and docs/liquid.md state and the
existing tests did not pin (a mutation review, 2026-12-07)."""

from __future__ import annotations

import dataclasses

import numpy as np

from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.policy import JobStatus, SchedulerState
from heuristic.seeds.gandiva import GandivaOptions, GandivaPolicy
from heuristic.seeds.liquid import LiquidOptions, LiquidPolicy, _utilisation
from heuristic.seeds.liquid_estimate import KneeForest, features
from heuristic.seeds.liquid_ga import GroupGA, Task
from heuristic.seeds.liquid_place import Sizes, best_fit_nodes, network_cost, score, sized_configs
from heuristic.seeds.optimus import OptimusOptions, OptimusPolicy
from heuristic.seeds.synergy import SynergyOptions, SynergyPolicy
from heuristic.seeds.synergy_levels import best_case, lp1_levels, proportional_config
from heuristic.seeds.synergy_place import Round, candidate_nodes, revert_peers
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node, Requested
from instances.generators.liquid import LiquidSpec, liquid
from tests.heuristic.seeds.test_gandiva import _job as _gandiva_job

V100, K80 = GpuType("v100", 32, 300), GpuType("k80", 12, 150)


def _v(g: int) -> Config:
    return Config("v100", g)


def _job(job_id: str, times: dict, epochs: float = 10.0, release: float = 0.0) -> Job:
    return Job(job_id, release, 100.0, EpochDistribution.deterministic(epochs), times, 4.0)


def _state(inst: Instance, statuses: list[JobStatus], t: float = 0.0) -> SchedulerState:
    occ = Occupancy(inst)
    for s in statuses:
        if s.allocation is not None:
            occ.place(s.job, s.allocation)
    return SchedulerState(t, inst, tuple(statuses), occ)


def _waiting(inst: Instance, t: float = 0.0) -> SchedulerState:
    return _state(inst, [JobStatus(j, 0.0, None) for j in inst.jobs], t)


def _oracle() -> OptimusPolicy:
    return OptimusPolicy(OptimusOptions(oracle_speed=True))


# -- Optimus ----------------------------------------------------------------------------


def test_optimus_first_stage_serves_jobs_in_arrival_order():
    """Every job first gets its smallest configuration in arrival order while GPUs last:
    on two GPUs the two earliest of three one-GPU jobs run (kills O1)."""
    jobs = tuple(_job(f"j{i}", {_v(1): 1.0}, release=r) for i, r in enumerate([0.2, 0.0, 0.1]))
    inst = Instance((V100,), (Node("n0", "v100", 2),), jobs)
    decision = _oracle().decide(_waiting(inst, t=0.3))
    assert {k for k, a in decision.assign.items() if a is not None} == {"j1", "j2"}


def test_optimus_waiting_job_takes_the_fastest_type_and_running_job_keeps_its_type():
    """A waiting job takes the type with the highest predicted speed (kills O2); a
    running job stays on its type even where a faster one is free (kills O11)."""
    job = _job("a", {_v(1): 1.0, Config("k80", 1): 3.0})
    nodes = (Node("n0", "k80", 1), Node("n1", "v100", 1))
    inst = Instance((V100, K80), nodes, (job,))
    assert _oracle().decide(_waiting(inst)).assign["a"].config == _v(1)
    on_k80 = Allocation(Config("k80", 1), (("n0", 0),))
    decision = _oracle().decide(_state(inst, [JobStatus(job, 0.0, on_k80)]))
    assert "a" not in decision.assign  # kept: no move to the faster type


def test_optimus_a_step_that_no_longer_fits_is_replaced_by_one_that_does():
    """a's best step (1 -> 4 GPUs) no longer fits once b has grown to 6 of 8 GPUs; a
    then takes its best step that fits (2 GPUs) rather than stopping (kills O6)."""
    a = _job("a", {_v(1): 1.0, _v(2): 0.9, _v(4): 0.3}, epochs=1)
    b = _job("b", {_v(1): 1.0, _v(6): 0.1}, epochs=10)
    inst = Instance((V100,), (Node("n0", "v100", 8),), (a, b))
    got = {k: al.config.gpus for k, al in _oracle().decide(_waiting(inst)).assign.items()}
    assert got == {"a": 2, "b": 6}


def test_optimus_gains_weigh_the_expected_remaining_epochs():
    """The work is E[N - w | N > w]: of two equal jobs the one with 10 epochs left gets
    the spare GPU, not the one with 1 left (kills O7)."""
    times = {_v(1): 1.0, _v(2): 0.6}
    a, b = _job("a", times), _job("b", times)
    inst = Instance((V100,), (Node("n0", "v100", 3),), (a, b))
    statuses = [JobStatus(a, 9.0, None), JobStatus(b, 0.0, None)]
    got = {k: al.config.gpus for k, al in _oracle().decide(_state(inst, statuses)).assign.items()}
    assert got == {"a": 1, "b": 2}


def _inverse_job() -> tuple[Instance, Job]:
    job = _job("a", {_v(g): 1.0 / g for g in (1, 2, 4, 8)})
    return Instance((V100,), (Node("n0", "v100", 8),), (job,)), job


def test_optimus_prerun_samples_two_sizes():
    """Without pre-run noise the fit passes through the pre-run's two smallest
    configurations (1.5 h and 1.0 h, ``1/g + 0.5``); one sample cannot (kills O9)."""
    job = _job("a", {_v(g): 1.0 / g + 0.5 for g in (1, 2, 4, 8)})
    inst = Instance((V100,), (Node("n0", "v100", 8),), (job,))
    hours = OptimusPolicy(OptimusOptions(prerun_noise=0.0)).ladder(inst, job, "v100").hours
    assert abs(hours[0] - 1.5) < 1e-9 and abs(hours[1] - 1.0) < 1e-9


def test_optimus_prerun_error_is_seeded():
    """The pre-run's relative error is drawn per seed: two seeds fit different ladders,
    one seed the same one twice (kills O12: a constant error)."""
    inst, job = _inverse_job()

    def hours(seed: int) -> list[float]:
        return (
            OptimusPolicy(OptimusOptions(prerun_noise=0.2), seed=seed)
            .ladder(inst, job, "v100")
            .hours
        )

    assert hours(0) == hours(0)
    assert hours(0) != hours(1)


def test_optimus_a_configuration_run_replaces_its_prerun_sample():
    """A job that has run on 2 GPUs is measured there exactly: its sample is the true
    epoch time, no longer the pre-run's noisy one (kills O8)."""
    inst, job = _inverse_job()
    policy = OptimusPolicy(OptimusOptions(prerun_noise=0.2))
    before = policy.ladder(inst, job, "v100").hours
    on_two = Allocation(_v(2), (("n0", 0), ("n0", 1)))
    policy.decide(_state(inst, [JobStatus(job, 0.0, on_two)]))
    assert policy._samples[("a", "v100")][2] == 0.5
    assert policy.ladder(inst, job, "v100").hours != before


def test_optimus_places_the_largest_configurations_first():
    """Jobs of 4, 3 and 2 GPUs on nodes of 5 and 4 fit only largest first, best fit
    (4 on the 4-GPU node); smallest first strands the 4-GPU job (kills O10)."""
    jobs = (_job("big", {_v(4): 1.0}), _job("mid", {_v(3): 1.0}), _job("small", {_v(2): 1.0}))
    inst = Instance((V100,), (Node("n0", "v100", 5), Node("n1", "v100", 4)), jobs)
    decision = _oracle().decide(_waiting(inst))
    assert all(decision.assign.get(j.id) is not None for j in jobs)


# -- Gandiva ----------------------------------------------------------------------------


def _gjob(i: int, gpus: int = 1, memory: float = 4.0) -> Job:
    """test_gandiva's job, forty epochs long."""
    return _gandiva_job(i, gpus, epochs=40, memory=memory)


def _gstate(inst: Instance, running: dict[str, Allocation], t: float = 0.0) -> SchedulerState:
    return _state(inst, [JobStatus(j, 0.0, running.get(j.id)) for j in inst.jobs], t)


def _on(node: str, *gpus: int) -> Allocation:
    return Allocation(_v(len(gpus)), tuple((node, g) for g in gpus))


def test_gandiva_affinity_step_takes_the_least_loaded_node():
    """Of two nodes of affinity 1, a one-GPU job goes to the one with the most free
    GPUs (least loaded), not the fuller one (kills G1)."""
    nodes = (Node("a", "v100", 4), Node("b", "v100", 4))
    inst = Instance((V100,), nodes, tuple(_gjob(i) for i in range(5)), max_share=1)
    running = {"j0": _on("a", 0), "j1": _on("b", 0), "j2": _on("b", 1), "j3": _on("b", 2)}
    policy = GandivaPolicy(GandivaOptions(grow=False))
    policy._instance = inst
    policy._affinity.update({"a": 1, "b": 1})
    assert policy.decide(_gstate(inst, running)).assign["j4"].gpus[0][0] == "a"


def test_gandiva_empty_step_takes_the_smallest_empty_node():
    """With no node of its affinity, a one-GPU job takes the smallest empty node that
    fits, leaving the large one whole (kills G3)."""
    nodes = (Node("big", "v100", 8), Node("small", "v100", 2))
    inst = Instance((V100,), nodes, (_gjob(0),), max_share=1)
    decision = GandivaPolicy(GandivaOptions(grow=False)).decide(_gstate(inst, {}))
    assert decision.assign["j0"].gpus[0][0] == "small"


def test_gandiva_defragments_the_node_closest_to_fitting():
    """A 4-GPU job, no node with 4 free: the node with 3 free (one resident) is
    emptied, moving one job, not the node with 1 free (three residents) (kills G8)."""
    nodes = (Node("a", "v100", 4), Node("b", "v100", 4), Node("c", "v100", 4))
    jobs = (*(_gjob(i) for i in range(6)), _gjob(6, gpus=4))
    inst = Instance((V100,), nodes, jobs, max_share=1)
    running = {
        "j0": _on("a", 0), "j1": _on("a", 1), "j2": _on("a", 2),
        "j3": _on("b", 0),
        "j4": _on("c", 0), "j5": _on("c", 1),
    }  # fmt: skip
    decision = GandivaPolicy(GandivaOptions(grow=False)).decide(_gstate(inst, running))
    assert decision.assign["j6"].gpus[0][0] == "b"
    assert set(decision.assign) == {"j3", "j6"}


def test_gandiva_grows_only_where_the_time_saved_beats_the_relaunch():
    """Alone on a 4-GPU node, a job whose relaunch (100 h) exceeds what growing saves
    (40 epochs x 0.7 h) stays at its requested size (kills G9)."""
    inst = Instance(
        (V100,), (Node("a", "v100", 4),), (_gjob(0),), max_share=1, relaunch_hours=100.0
    )
    decision = GandivaPolicy().decide(_gstate(inst, {"j0": _on("a", 0)}, t=0.5))
    assert "j0" not in decision.assign


def test_gandiva_packs_with_a_partner_whose_memory_fits():
    """All pairs gain alike (0.625 + 0.625 > 1); j0 comes first but its 20 GB and the
    newcomer's 20 GB exceed a 32 GB V100, so the newcomer packs with j2 (4 GB) instead
    of giving up on packing (kills G12)."""
    jobs = (_gjob(0, memory=20.0), _gjob(1, memory=20.0), _gjob(2))
    inst = Instance((V100,), (Node("n", "v100", 2),), jobs, max_share=2)
    policy = GandivaPolicy()
    decision = policy.decide(_gstate(inst, {"j0": _on("n", 0), "j2": _on("n", 1)}))
    assert decision.assign["j1"] == Allocation(Config("v100", 1, shared=True), (("n", 1),))
    assert set(policy.packs.values()) == {("j2", "j1")}


def test_gandiva_does_not_grow_while_jobs_are_time_sliced():
    """A 2-GPU job time-slices with another on node a; on node b a one-GPU job has an
    idle GPU beside it: while anything is time-sliced nothing grows (kills G14)."""
    nodes = (Node("a", "v100", 2), Node("b", "v100", 2))
    jobs = (_gjob(0, gpus=2), _gjob(1, gpus=2), _gjob(2))
    inst = Instance((V100,), nodes, jobs, max_share=1)
    policy = GandivaPolicy(GandivaOptions(packing=False))
    running = {"j0": _on("a", 0, 1), "j2": _on("b", 0)}
    assert "j1" not in policy.decide(_gstate(inst, running)).assign  # joins j0's turns
    assert any("j1" in g.jobs for g in policy._groups)
    later = policy.decide(_gstate(inst, running, t=0.005))
    assert "j2" not in later.assign


# -- Synergy ----------------------------------------------------------------------------


def _lvl(cpus: int, dram: float = 62.5, gpus: int = 1) -> Config:
    return Config("v100", gpus, cpus=cpus, dram_gb=dram)


def _sjob(job_id: str, levels: dict[Config, float], gpus: int = 1, epochs: float = 10.0) -> Job:
    return Job(
        job_id,
        0.0,
        100.0,
        EpochDistribution.deterministic(epochs),
        levels,
        4.0,
        requested=Requested(gpus, "v100"),
    )


def _server(node_id: str = "s0", gpus: int = 8, cores: int = 24) -> Node:
    return Node(node_id, "v100", gpus, cpu_cores=cores, dram_gb=500.0)


CPU_HUNGRY = {_lvl(3): 1.0, _lvl(9): 0.5, _lvl(12): 0.4}  # share, then faster levels


def test_synergy_share_is_the_fastest_level_within_the_proportional_cores():
    """On 24 cores and 8 GPUs a one-GPU job's share is 3 cores: the 3-core level, not the
    leaner 1-core one below it (kills S1)."""
    job = _sjob("a", {_lvl(1, 20.83): 2.0, _lvl(3): 1.0, _lvl(9): 0.5})
    inst = Instance((V100,), (_server(),), (job,))
    assert proportional_config(inst, job, inst.nodes[0]) == _lvl(3)


def test_synergy_share_on_a_tie_hands_out_the_most_resources_and_best_case_the_fewest():
    """A language model runs as fast on 1 core and 20.83 GB as on the share: the share is
    the 3-core level (what the share hands out, kills S2); the best case, the demand
    vector, the 1-core one (kills S3)."""
    job = _sjob("lm", {_lvl(1, 20.83): 1.0, _lvl(3): 1.0})
    inst = Instance((V100,), (_server(),), (job,))
    assert proportional_config(inst, job, inst.nodes[0]) == _lvl(3)
    assert best_case(inst, job) == _lvl(1, 20.83)


def test_synergy_consolidates_on_the_node_with_the_fewest_free_gpus():
    """Candidate nodes come fewest free GPUs first (kills S4)."""
    jobs = (_sjob("busy", {_lvl(3, gpus=6): 1.0}, gpus=6),)
    inst = Instance((V100,), (_server("a"), _server("b")), jobs)
    occ = Occupancy(inst)
    occ.place(jobs[0], Allocation(_lvl(3, gpus=6), tuple(("b", g) for g in range(6))))
    r = Round(inst, occ, {})
    assert [n.id for n in candidate_nodes(r, "v100", 1)] == ["b", "a"]


def test_synergy_reverts_the_peer_with_most_cores_per_gpu_and_only_as_needed():
    """A node's 24 cores are held by peers at 12, 9 and 3 cores: a newcomer needing its
    3-core share reverts the 12-core peer only (kills S5, most cores first, and S6,
    reverting only until it fits)."""
    peers = [_sjob(f"p{c}", CPU_HUNGRY) for c in (12, 9, 3)]
    new = _sjob("new", CPU_HUNGRY)
    inst = Instance((V100,), (_server(),), (*peers, new))
    r = Round(inst, Occupancy(inst), {})
    for k, (job, c) in enumerate(zip(peers, (12, 9, 3), strict=True)):
        alloc = Allocation(_lvl(c), (("s0", k),))
        r.occ.place(job, alloc)
        r.placed[job.id] = alloc
    got = revert_peers(r, new)
    assert got is not None and got.config == _lvl(3)
    assert {j: a.config.cpus for j, a in r.placed.items()} == {"p12": 3, "p9": 9, "p3": 3}


def test_synergy_lp1_never_puts_a_job_below_its_share():
    """On 2 GPUs and 4 cores (2 cores a GPU), LP1 would gain by giving b 1 core so that
    a runs on 3, but no job goes below its proportional share (kills S7)."""
    a = _sjob("a", {_lvl(1, 20.0): 2.0, _lvl(2, 20.0): 1.0, _lvl(3, 20.0): 1.0 / 3})
    b = _sjob("b", {_lvl(1, 20.0): 2.0, _lvl(2, 20.0): 1.0})
    inst = Instance((V100,), (_server(gpus=2, cores=4),), (a, b))
    got = lp1_levels(inst, [a, b], Occupancy(inst))
    assert got["b"].cpus == 2 and got["a"].cpus == 2


def test_synergy_a_job_that_does_not_fit_lets_later_ones_in():
    """FIFO over 8 GPUs: 6, then 4 (does not fit), then 2 GPUs: the round takes 6 and 2
    (kills S8)."""
    jobs = [_sjob(f"g{g}", {_lvl(3 * g, 62.5 * g, gpus=g): 1.0}, gpus=g) for g in (6, 4, 2)]
    jobs = [Job(j.id, float(k), *(j.due, j.distribution, j.epoch_times, j.memory_gb),
                requested=j.requested) for k, j in enumerate(jobs)]  # fmt: skip
    inst = Instance((V100,), (_server(),), tuple(jobs))
    chosen = SynergyPolicy().select(inst, [JobStatus(j, 0.0, None) for j in jobs])
    assert [s.job.id for s in chosen] == ["g6", "g2"]


def test_synergy_las_serves_the_least_attained_service_first():
    """LAS: of two 8-GPU jobs on 8 GPUs, the one with less attained service runs
    (kills S11)."""
    jobs = tuple(_sjob(i, {_lvl(24, 500.0, gpus=8): 1.0}, gpus=8) for i in ("a", "b"))
    inst = Instance((V100,), (_server(),), jobs)
    policy = SynergyPolicy(SynergyOptions(order="las"))
    policy._attained = {"a": 5.0, "b": 1.0}
    chosen = policy.select(inst, [JobStatus(j, 0.0, None) for j in jobs])
    assert [s.job.id for s in chosen] == ["b"]


def test_synergy_tune_keeps_a_job_at_its_share_when_raising_does_not_pay():
    """A job running at its share, its best case free on its node, but a 100 h relaunch
    against 10 epochs x 0.6 h saved: it keeps its allocation (kills S9, S10)."""
    job = _sjob("a", CPU_HUNGRY)
    inst = Instance((V100,), (_server(),), (job,), relaunch_hours=100.0)
    at_share = Allocation(_lvl(3), (("s0", 0),))
    decision = SynergyPolicy().decide(_state(inst, [JobStatus(job, 0.0, at_share)]))
    assert "a" not in decision.assign


def test_synergy_tune_tries_the_share_before_reverting_peers():
    """The best case (12 cores) fits no node; the share (3 cores) fits node b as it is:
    TUNE places it there and reverts no peer on node a (kills S13)."""
    peers = {"p1": ("a", 0, 12), "p2": ("a", 1, 12), "p3": ("b", 0, 12), "p4": ("b", 1, 9)}
    jobs = [_sjob(p, CPU_HUNGRY) for p in peers] + [_sjob("new", CPU_HUNGRY)]
    inst = Instance((V100,), (_server("a"), _server("b")), tuple(jobs), relaunch_hours=100.0)
    statuses = [
        JobStatus(j, 0.0, Allocation(_lvl(peers[j.id][2]), ((peers[j.id][0], peers[j.id][1]),)))
        if j.id in peers
        else JobStatus(j, 0.0, None)
        for j in jobs
    ]
    decision = SynergyPolicy().decide(_state(inst, statuses))
    assert set(decision.assign) == {"new"}
    assert decision.assign["new"].gpus[0][0] == "b"
    assert decision.assign["new"].config == _lvl(3)


def test_synergy_tune_raises_a_job_at_its_share_when_its_node_has_room_and_it_pays():
    """The same job with no relaunch overhead: its node has the cores, so TUNE raises
    it on its own GPU to its best case (kills S15)."""
    job = _sjob("a", CPU_HUNGRY)
    inst = Instance((V100,), (_server(),), (job,))
    at_share = Allocation(_lvl(3), (("s0", 0),))
    decision = SynergyPolicy().decide(_state(inst, [JobStatus(job, 0.0, at_share)]))
    assert decision.assign["a"] == Allocation(_lvl(12), (("s0", 0),))


def test_synergy_lp1_keeps_the_current_level_among_equals():
    """Two levels of equal throughput: LP1 keeps whichever the job runs on (the 1e-6
    tie-break; kills S14)."""
    lean, share = _lvl(1, 20.83), _lvl(3)
    job = _sjob("lm", {lean: 1.0, share: 1.0})
    inst = Instance((V100,), (_server(),), (job,))
    for current in (lean, share):
        assert lp1_levels(inst, [job], Occupancy(inst), {"lm": current}) == {"lm": current}


# -- Liquid -----------------------------------------------------------------------------


SMALL_LIQUID = LiquidSpec(jobs=16, racks=2, nodes_per_rack=3, domains=2, burst=4)


def _liquid(**changes) -> Instance:
    return liquid(dataclasses.replace(SMALL_LIQUID, **changes), seed=0)


def test_liquid_cost_across_racks_of_one_domain_is_the_domains_node_count():
    """Two racks of 3 nodes in one domain: a pair in one rack costs the rack's 3 nodes,
    a pair across the racks the domain's 6 (kills L4; the other tests' racks are
    domains of their own, where the two coincide)."""
    inst = _liquid(domains=1)
    net = inst.network
    assert net is not None
    sizes = Sizes.of(net)
    assert network_cost(net, sizes, ["r0n0", "r0n1"]) == 3
    assert network_cost(net, sizes, ["r0n0", "r1n0"]) == 6


def _one_task_ga(inst: Instance) -> GroupGA:
    job = next(j for j in inst.jobs if sized_configs(inst, j, 2))
    task = Task(job, 2, "v100", tuple(sized_configs(inst, job, 2)))
    assert inst.network is not None
    return GroupGA(Occupancy(inst), Sizes.of(inst.network), [task], np.random.default_rng(0))


def test_liquid_ga_fitness_counts_the_nodes_used():
    """A genome's fitness is the jobs' scores plus the nodes the burst uses: one 2-GPU
    job on an empty 2-GPU node scores 0.5 x -1, plus 1 node (kills L7)."""
    ga = _one_task_ga(_liquid())
    assert ga.fitness(["r0n0", "r0n0"]) == -0.5 + 1


def test_liquid_a_burst_of_four_containers_goes_to_the_ga():
    """More than three containers released at once are placed by the group GA: four
    one-GPU jobs make a burst (kills L6)."""
    inst = _liquid()
    jobs = tuple(dataclasses.replace(j, release=0.0) for j in inst.jobs[:4])
    inst = inst.replace(jobs=jobs)
    policy = LiquidPolicy()
    for j in jobs:
        policy._size[j.id] = 1
    policy.decide(_waiting(inst))
    assert len(policy.ga_log) == 1


def _sharer(job_id: str, shared_hours: float) -> Job:
    times = {_v(1): 1.0, Config("v100", 1, shared=True): shared_hours}
    return _job(job_id, times)


def test_liquid_predicted_utilisation_is_one_over_twice_the_shared_speed():
    """A job at half its speed when shared (rho = 1/2) is predicted to fill the GPU
    (1 / (2 rho) = 1), so a pair of them fills it (kills L9)."""
    job = _sharer("a", 2.0)
    inst = Instance((V100,), (Node("n", "v100", 1),), (job,))
    assert _utilisation(inst, job, Config("v100", 1, shared=True)) == 1.0


def test_liquid_joins_a_shared_gpu_only_below_the_utilisation_cap():
    """Predicted utilisations 0.8 (rho = 0.625) each: a tenant and the newcomer sum to
    1.6, over 1.3, so the newcomer opens a GPU of its own (kills L14); it opens one on
    the fullest node (kills L10)."""
    shared = Config("v100", 1, shared=True)
    tenant, new, busy = _sharer("t", 1.6), _sharer("new", 1.6), _job("busy", {_v(1): 1.0})
    nodes = (Node("a", "v100", 2), Node("b", "v100", 2), Node("c", "v100", 2))
    inst = Instance((V100,), nodes, (tenant, new, busy), max_share=2)
    occ = Occupancy(inst)
    occ.place(tenant, Allocation(shared, (("a", 0),)))
    occ.place(busy, Allocation(_v(1), (("c", 0),)))
    policy = LiquidPolicy(LiquidOptions(share_ratio=0.5))
    assert policy._shared(inst, occ, new, load=1.0) == Allocation(shared, (("a", 1),))


def test_liquid_forest_rounds_log2_to_the_nearest_power_of_two():
    """A raw estimate of log2 = 1.6 rounds to 4 GPUs, 1.4 to 2: the nearest power of
    two in log space, not the floor (kills L13)."""

    class Stub:
        def __init__(self, y: float) -> None:
            self.y = y

        def predict(self, rows):
            return np.array([self.y] * len(rows))

    job = next(j for j in _liquid().jobs if features(j) is not None)
    assert KneeForest(Stub(1.6)).predict(job) == 4
    assert KneeForest(Stub(1.4)).predict(job) == 2


def test_gandiva_over_subscribes_onto_the_least_loaded_gpus_of_the_size():
    """Two one-GPU nodes each running a job, three more waiting: they take turns two and
    one with the two running jobs (the paper's least loaded node of the affinity), not
    all three with the first (a review of 2026-12-07: a group of four beside a job
    alone)."""
    one = Config("v100", 1)
    jobs = tuple(
        dataclasses.replace(_job(f"j{i}", {one: 1.0}), requested=Requested(1)) for i in range(5)
    )
    inst = Instance((V100,), (Node("a", "v100", 1), Node("b", "v100", 1)), jobs, max_share=1)
    running = {"j0": Allocation(one, (("a", 0),)), "j1": Allocation(one, (("b", 0),))}
    policy = GandivaPolicy(GandivaOptions(packing=False))
    policy.decide(_gstate(inst, running))
    groups = {g.alloc.gpus[0][0]: g.jobs for g in policy._groups}
    assert groups == {"a": ["j0", "j2", "j4"], "b": ["j1", "j3"]}


def test_gandiva_moves_a_later_member_of_a_group_to_gpus_that_free_up():
    """j2 (V100 only) and j3 (V100 or K80) take turns with j0 on the one V100 while a
    two-GPU K80 job holds the K80 node; once it ends, j3 moves to a free K80 though j2,
    before it in the group, finds nothing free (a review of 2026-12-07: the search
    stopped at j2)."""
    vc, kc, k2 = Config("v100", 1), Config("k80", 1), Config("k80", 2)

    def one(job_id: str, times: dict) -> Job:
        return dataclasses.replace(_job(job_id, times), requested=Requested(1))

    big = dataclasses.replace(_job("big", {k2: 1.0}), requested=Requested(2))
    jobs = (one("j0", {vc: 1.0}), one("j2", {vc: 1.0}), one("j3", {vc: 1.0, kc: 2.0}), big)
    inst = Instance((V100, K80), (Node("v", "v100", 1), Node("k", "k80", 2)), jobs, max_share=1)
    policy = GandivaPolicy(GandivaOptions(packing=False, grow=False))
    running = {"j0": Allocation(vc, (("v", 0),)), "big": Allocation(k2, (("k", 0), ("k", 1)))}
    policy.decide(_gstate(inst, running))
    assert [g.jobs for g in policy._groups] == [["j0", "j2", "j3"]]
    occ = Occupancy(inst)
    occ.place(inst.job("j0"), running["j0"])
    present = tuple(JobStatus(inst.job(j), 0.0, running.get(j)) for j in ("j0", "j2", "j3"))
    decision = policy.decide(SchedulerState(0.01, inst, present, occ))
    assert decision.assign["j3"].config == kc
    assert [g.jobs for g in policy._groups] == [["j0", "j2"]]


def test_gandiva_an_over_subscribed_job_joins_the_smallest_group():
    """A V100 group of three and a K80 group of two: a one-GPU job that runs on either
    type joins the K80 group, the smaller (kills G5)."""
    vc, kc = _v(1), Config("k80", 1)

    def one(job_id: str, times: dict) -> Job:
        return dataclasses.replace(_job(job_id, times), requested=Requested(1))

    jobs = (
        one("j0", {vc: 1.0}), one("j1", {kc: 1.0}), one("j2", {vc: 1.0}),
        one("j3", {kc: 1.0}), one("j4", {vc: 1.0}), one("j5", {vc: 1.0, kc: 2.0}),
    )  # fmt: skip
    inst = Instance((V100, K80), (Node("v", "v100", 1), Node("k", "k80", 1)), jobs, max_share=1)
    running = {"j0": Allocation(vc, (("v", 0),)), "j1": Allocation(kc, (("k", 0),))}
    policy = GandivaPolicy(GandivaOptions(packing=False, grow=False))
    policy.decide(_gstate(inst, running))
    groups = {g.alloc.gpus[0][0]: g.jobs for g in policy._groups}
    assert groups == {"v": ["j0", "j2", "j4"], "k": ["j1", "j3", "j5"]}


def test_liquid_best_fit_breaks_an_exact_tie_toward_the_later_node():
    """On an empty cluster every node scores alike: a job goes to the last node of the
    type, as the convolution keeps the placement it meets first (the fewest containers
    on earlier nodes; the docstrings said "first" until a review of 2026-12-07)."""
    inst = _liquid()
    sizes, occ = Sizes.of(inst.network), Occupancy(inst)
    last = inst.nodes_by_type["v100"][-1].id
    first = inst.nodes_by_type["v100"][0].id
    assert best_fit_nodes(occ, sizes, "v100", 2) == [last, last]
    assert score(occ, sizes, [last] * 2) == score(occ, sizes, [first] * 2)
