"""Synergy (heuristic/seeds/synergy.py) and its setting (instances/generators/synergy.py)."""

from __future__ import annotations

import math

import pytest

from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.policy import JobStatus, SchedulerState
from heuristic.core.registry import make_policy
from heuristic.seeds.synergy import SynergyOptions, SynergyPolicy
from heuristic.seeds.synergy_levels import (
    lp1_objective,
    normalised_throughput,
    proportional_config,
)
from instances import Config, EpochDistribution, InstanceError, Job, Requested
from instances.generators.synergy import SynergySpec, levels, profiles, synergy
from validation.check import check_plan
from validation.simulator import simulate

VARIANTS = ("synergy", "synergy-greedy", "synergy-proportional", "synergy-opt")


def _small(seed: int = 0, **kw) -> object:
    return synergy(SynergySpec(**{"jobs": 30, "nodes": 2, "rate": 4.0, **kw}), seed)


def test_profiles_are_monotone_in_cores_and_dram():
    for model, prof in profiles().items():
        for (c, m), w in prof.items():
            for (c2, m2), w2 in prof.items():
                if c2 >= c and m2 >= m:
                    assert w2 >= w - 1e-12, (model, (c, m), (c2, m2))


def test_levels_read_the_profile_and_fit_the_server():
    # res18 on one GPU of Synergy's server: the share (3 cores, 62.5 GB, W = 1) and
    # its best case, 9 cores at 2.4x; on 8 GPUs only the share fits 24 cores
    assert levels("res18", 1, 24, 500.0) == {(3, 62.5): 1.0, (9, 62.5): 2.4}
    assert levels("res18", 8, 24, 500.0) == {(3, 62.5): 1.0}
    # a language model runs as fast on one core and the least DRAM level
    assert levels("transformer", 1, 24, 500.0) == {(1, 20.83): 1.0, (3, 62.5): 1.0}


@pytest.mark.parametrize(
    ("field", "value"), [("shape", "huge"), ("split", (-1.0, 1.0, 1.0)), ("rate", 0.0)]
)
def test_bad_specs_are_refused_naming_the_field(field, value):
    with pytest.raises(InstanceError) as err:
        SynergySpec(**{field: value})
    assert err.value.path == field


def test_the_generator_is_seeded_and_states_cores_everywhere():
    a, b = _small(3), _small(3)
    assert a == b
    assert all(n.cpu_cores == 24 and n.dram_gb == 500.0 for n in a.nodes)
    assert all(c.cpus and c.dram_gb for j in a.jobs for c in j.epoch_times)
    assert all(j.requested is not None for j in a.jobs)


@pytest.mark.parametrize("name", VARIANTS)
def test_every_variant_respects_every_capacity_and_is_deterministic(name):
    inst = _small(1)
    runs = [simulate(inst, make_policy(name, seed=0), mode="sampled", seed=2) for _ in range(2)]
    assert runs[0].plan == runs[1].plan
    assert check_plan(inst, runs[0].plan) == []
    # every job keeps its requested GPU count
    for s in runs[0].plan:
        req = inst.job(s.job).requested
        assert req is not None and s.config.gpus == req.gpus


@pytest.mark.parametrize("name", ["synergy", "synergy-opt", "synergy-proportional"])
def test_no_job_ever_runs_below_its_proportional_share(name):
    inst = _small(2, rate=8.0)
    plan = simulate(inst, make_policy(name, seed=0), mode="rollout").plan
    for s in plan:
        share = proportional_config(inst, inst.job(s.job), inst.node(s.gpus[0][0]))
        assert share is not None
        assert inst.epoch_time(s.job, s.config) <= inst.epoch_time(s.job, share) + 1e-12


def test_tune_places_at_the_share_where_greedy_waits():
    # three CPU-hungry one-GPU jobs on one 8-GPU server of 24 cores: two best cases
    # (12 cores each) fill it; greedy leaves the third waiting with GPUs free, TUNE
    # reverts a peer to its share and runs all three
    inst = synergy(SynergySpec(jobs=1, nodes=1, rate=1.0), 0)
    alexnet = levels("alexnet", 1, 24, 500.0)
    assert max(alexnet, key=alexnet.get) == (12, 125.0)
    template = inst.jobs[0]

    times = {Config("v100", 1, cpus=c, dram_gb=m): 1.0 / w for (c, m), w in alexnet.items()}
    jobs = tuple(
        Job(
            f"a{i}",
            0.0,
            100.0,
            EpochDistribution.deterministic(5.0),
            times,
            template.memory_gb,
            requested=Requested(1, "v100"),
        )
        for i in range(3)
    )
    three = inst.replace(jobs=jobs)
    state = SchedulerState(
        0.0, three, tuple(JobStatus(j, 0.0, None) for j in jobs), Occupancy(three)
    )
    greedy = make_policy("synergy-greedy").decide(state).assign
    state = SchedulerState(
        0.0, three, tuple(JobStatus(j, 0.0, None) for j in jobs), Occupancy(three)
    )
    tune = SynergyPolicy().decide(state).assign
    assert sum(a is not None for a in greedy.values()) == 2
    assert sum(a is not None for a in tune.values()) == 3
    assert sorted(a.config.cpus for a in tune.values() if a) == [3, 3, 12]
    # LP1 bounds TUNE's normalised throughput on the same round
    placed = sum(normalised_throughput(three, three.job(j), a.config) for j, a in tune.items() if a)
    assert lp1_objective(three, jobs, Occupancy(three)) >= placed - 1e-9


def test_with_no_cpu_sensitivity_tune_runs_as_proportional():
    # language models only: every level runs at the share's speed, so TUNE's jobs
    # start and end as the proportional allocation's (only their cores differ)
    inst = _small(4, split=(0.0, 100.0, 0.0), rate=8.0)

    def timing(name):
        plan = simulate(inst, make_policy(name, seed=0), mode="rollout").plan
        return sorted((s.job, s.start, s.end, s.gpus) for s in plan)

    assert timing("synergy") == timing("synergy-proportional")


@pytest.mark.parametrize("name", VARIANTS)
def test_jobs_synergy_has_no_rule_for_still_run(name):
    # a job with only shared slots, one with only whole nodes, and one whose every
    # level holds more than its node's share: each runs (the engine would otherwise
    # wake every round for ever)
    from instances import GpuType, Instance, Node

    v100 = GpuType("v100", 32.0, 300.0)
    nodes = (
        Node("a", "v100", 4, cpu_cores=4, dram_gb=100.0),
        Node("b", "v100", 4, cpu_cores=4, dram_gb=100.0),
    )

    def job(i: str, times: dict) -> Job:
        return Job(i, 0.0, 10.0, EpochDistribution.deterministic(2.0), times, 4.0)

    inst = Instance(
        (v100,),
        nodes,
        (
            job("shared", {Config("v100", 1, shared=True): 0.5}),
            job("whole", {Config("v100", 8, nodes=2): 0.2}),
            job("hungry", {Config("v100", 1, cpus=3, dram_gb=60.0): 0.4}),
        ),
    )
    run = simulate(inst, make_policy(name, seed=0), mode="rollout")
    assert set(run.completions) == {"shared", "whole", "hungry"}
    assert check_plan(inst, run.plan) == []


def _job(i: str, release: float, gpus: int, epochs: int, *, model="transformer", relaunch=0.0):
    """A job of a zoo model on Synergy's server, one epoch an hour at its share."""
    times = {
        Config("v100", gpus, cpus=c * gpus, dram_gb=round(m * gpus, 4)): 1.0 / w
        for (c, m), w in levels(model, gpus, 24, 500.0).items()
    }
    return Job(
        i,
        release,
        release + 100.0,
        EpochDistribution.deterministic(float(epochs)),
        times,
        8.0,
        requested=Requested(gpus, "v100"),
        relaunch_hours=relaunch,
    )


def _scattered_instance():
    # two 8-GPU servers filled by sixteen one-GPU jobs at 0 h (consolidated: v100-0
    # first); four on each server end at 1 h, the others at 10 h. An 8-GPU job arrives
    # at 0.5 h: from 1 h the cluster has 8 GPUs free, four on each server
    inst = synergy(SynergySpec(jobs=1, nodes=2, rate=1.0), 0)
    jobs = [_job(f"o{k}", 0.0, 1, 1 if k % 8 < 4 else 10) for k in range(16)]
    jobs.append(_job("big", 0.5, 8, 2))
    return inst.replace(jobs=tuple(jobs))


@pytest.mark.parametrize("name", VARIANTS)
def test_repack_gives_a_job_the_gpus_scattered_over_servers(name):
    inst = _scattered_instance()

    def run(repack: bool):
        r = simulate(inst, make_policy(name, seed=0, repack=repack), mode="rollout")
        assert check_plan(inst, r.plan) == []
        return r

    before, after = run(False), run(True)
    # without the repack the 8-GPU job waits for a whole server (10 h); with it, it
    # starts at the first round after 1 h, on the server whose four jobs moved
    assert min(s.start for s in before.plan if s.job == "big") == pytest.approx(10.0)
    assert min(s.start for s in after.plan if s.job == "big") == pytest.approx(1.0)
    moved = {s.job for s in after.plan if s.start == pytest.approx(1.0) and s.job != "big"}
    assert len(moved) == 4
    (server,) = {s.gpus[0][0] for s in after.plan if s.job == "big"}
    assert all(s.gpus[0][0] != server for s in after.plan if s.job in moved and s.start >= 1.0)


def test_repack_moves_the_fewest_relaunch_hours():
    # the same cluster at 1 h: the four jobs left on v100-0 pay 250 s to relaunch, the
    # four on v100-1 25 s; the 8-GPU job gets v100-1's GPUs, v100-1's four jobs move to
    # v100-0, and no other job changes
    inst = _scattered_instance()
    slow = {f"o{k}" for k in range(4, 8)}
    jobs = tuple(
        _job(j.id, 0.0, 1, 10, relaunch=(250.0 if j.id in slow else 25.0) / 3600.0)
        if j.id.startswith("o")
        else j
        for j in inst.jobs
    )
    inst = inst.replace(jobs=jobs)

    def state() -> SchedulerState:
        occ = Occupancy(inst)
        statuses = []
        for k, job in enumerate(jobs):
            if job.id == "big":
                statuses.append(JobStatus(job, 0.0, None))
            elif k % 8 >= 4:  # still running, at its share, on its GPU
                node = inst.nodes[k // 8]
                cfg = proportional_config(inst, job, node)
                assert cfg is not None
                alloc = Allocation(cfg, ((node.id, k % 8),))
                occ.place(job, alloc)
                statuses.append(JobStatus(job, 0.5, alloc))
        return SchedulerState(1.0, inst, tuple(statuses), occ)

    for repack, changed in ((False, set()), (True, {"big", "o12", "o13", "o14", "o15"})):
        assign = SynergyPolicy(SynergyOptions(repack=repack)).decide(state()).assign
        assert set(assign) == changed
    assert {n for n, _ in assign["big"].gpus} == {"v100-1"}
    assert all(assign[j].gpus[0][0] == "v100-0" for j in changed - {"big"})


def test_the_benchmarks_utilisation_while_jobs_wait_counts_only_those_times():
    from benchmarks.synergy_scenario import busy_while_waiting
    from instances import GpuType, Instance, Node, Plan, Segment

    def job(i: str, release: float) -> Job:
        return Job(
            i, release, 50.0, EpochDistribution.deterministic(1.0), {Config("v100", 1): 1.0}, 4.0
        )

    inst = Instance(
        (GpuType("v100", 32.0, 300.0),),
        (Node("n", "v100", 4),),
        (job("a", 0.0), job("b", 0.0), job("c", 7.0)),
    )
    plan = Plan.of(
        [
            Segment(0.0, 4.0, "a", Config("v100", 2), (("n", 0), ("n", 1))),
            Segment(2.0, 6.0, "b", Config("v100", 1), (("n", 2),)),
            Segment(7.0, 8.0, "c", Config("v100", 1), (("n", 0),)),
        ]
    )
    # b waits during [0, 2) while a holds 2 of the 4 GPUs; nobody waits afterwards
    done = {"a": 4.0, "b": 6.0, "c": 8.0}
    assert busy_while_waiting(inst, plan, done, 4) == pytest.approx(0.5)
    # with b released at 2 h, no job ever waits
    late = inst.replace(jobs=(job("a", 0.0), job("b", 2.0), job("c", 7.0)))
    assert math.isnan(busy_while_waiting(late, plan, done, 4))


def test_the_capacity_bound_gains_only_where_cores_can_move():
    from benchmarks.synergy_limit import capacity, fluid_wait_ratio, offered_load
    from instances.generators.realdata import philly_jobs

    def spec(split, shape="synergy"):
        return SynergySpec(jobs=1000, split=split, rate=9.0, shape=shape)

    # language models run at their share's speed on any level: nothing to gain
    assert capacity(spec((0.0, 100.0, 0.0))) == pytest.approx(1.0, abs=1e-9)
    # the CPU-heavy mix on 3 cores per GPU: under 2% (every level above the share
    # needs cores only idle GPUs or language jobs free); language jobs give cores away
    heavy, default = capacity(spec((50.0, 0.0, 50.0))), capacity(spec((20.0, 70.0, 10.0)))
    assert 1.0 < heavy < 1.02 < default
    # Alibaba's 12 cores per GPU already run the mix faster at the share: the same
    # arrivals load it less, and the levels add less over the share
    ali = spec((50.0, 0.0, 50.0), "alibaba")
    assert offered_load(ali) < 1.0 < offered_load(spec((50.0, 0.0, 50.0)))
    assert 1.02 < capacity(ali) < 1.2
    pairs = [(h, g) for _, h, g in philly_jobs() if 0.25 <= h <= 48.0 and g <= 8]
    mean_work = sum(h * g for h, g in pairs) / len(pairs)
    assert offered_load(spec((50.0, 0.0, 50.0))) == pytest.approx(9.0 * mean_work / 128)
    # twice the load the share serves: at the share the wait grows at 1 t, at a
    # capacity of 1.5 at (0.5 / 1.5) t
    assert fluid_wait_ratio(2.0, 1.0) == pytest.approx(1.0)
    assert fluid_wait_ratio(2.0, 1.5) == pytest.approx(1 / 3)


def test_served_share_hours_are_busy_gpu_hours_at_the_share():
    from benchmarks.synergy_limit import served_per_hour
    from validation.online import run_online

    inst = _small(5, rate=8.0)
    prop, tune = (run_online(inst, p, seed=0) for p in ("synergy-proportional", "synergy"))
    end = max(j.release for j in inst.jobs)
    busy = sum((min(s.end, end) - s.start) * len(s.gpus) for s in prop.result.plan if s.start < end)
    assert served_per_hour(prop, 0.0, end) == pytest.approx(busy / end)
    # TUNE runs some jobs above their share: more work per busy GPU-hour
    tune_busy = sum(
        (min(s.end, end) - s.start) * len(s.gpus) for s in tune.result.plan if s.start < end
    )
    assert served_per_hour(tune, 0.0, end) > tune_busy / end


def test_lp1s_level_of_another_type_goes_to_a_node_of_its_type():
    """LP1's target level is of type a, the job's best case of type b (fewer cores on a
    tie): the target was put on the b node, a plan the checker refused (a fuzz of valid
    instances); now on the a node."""
    from heuristic.core.registry import make_policy
    from tests.heuristic.core.test_occupancy import _two_types
    from validation.check import check_plan
    from validation.simulator import rollout

    inst = _two_types()
    plan = rollout(inst, make_policy("synergy-opt"))
    assert check_plan(inst, plan) == []
    assert {(s.config.gpu_type, s.gpus[0][0]) for s in plan} == {("a", "n1")}
