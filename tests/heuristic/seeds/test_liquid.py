"""Liquid: its score by hand, best fit against random fit, the GA's elitism and
reproducibility, the oracle estimator, the sharing gate, and every variant within
GPUs, spans and links on its generator's instances."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.registry import make_policy
from heuristic.seeds.liquid import LiquidOptions, LiquidPolicy
from heuristic.seeds.liquid_estimate import knee_gpus
from heuristic.seeds.liquid_ga import GroupGA, Task
from heuristic.seeds.liquid_place import (
    Sizes,
    allocation_on,
    best_fit_nodes,
    first_fit_nodes,
    network_cost,
    score,
    sized_configs,
)
from instances import InstanceError
from instances.generators.liquid import LiquidSpec, epoch_seconds, knee, liquid
from validation.check import check_plan
from validation.scenario import scenario_instance
from validation.simulator import simulate

SMALL = LiquidSpec(jobs=16, racks=2, nodes_per_rack=3, domains=2, burst=4)


def _inst(seed: int = 0, **changes):
    return liquid(dataclasses.replace(SMALL, **changes), seed=seed)


def test_the_network_cost_is_the_papers():
    inst = _inst()  # racks of 3 nodes, one rack per domain, 6 nodes
    net = inst.network
    assert net is not None
    sizes = Sizes.of(net)
    assert network_cost(net, sizes, ["r0n0", "r0n0"]) == 0  # one node
    assert network_cost(net, sizes, ["r0n0", "r0n1"]) == 3  # one rack: its 3 nodes
    # across domains, every pair costs the cluster's 6; three containers, two apart
    assert network_cost(net, sizes, ["r0n0", "r0n0", "r1n0"]) == 0 + 6 + 6


def test_the_score_weighs_cost_against_packing():
    inst = _inst()
    occ = Occupancy(inst)
    sizes = Sizes.of(inst.network)
    # an empty 2-GPU node taken whole: fitness -(2 + 0)/2 = -1, no cost
    assert score(occ, sizes, ["r0n0", "r0n0"], lam=0.5) == pytest.approx(0.5 * -1.0)
    # split over two empty nodes of a rack: cost 3, fitness -1/2 each
    assert score(occ, sizes, ["r0n0", "r0n1"], lam=0.5) == pytest.approx(0.5 * 3 + 0.5 * -1.0)


def _busy(inst, rng: np.random.Generator) -> Occupancy:
    """A random state: some GPUs of some nodes held by one-GPU jobs."""
    occ = Occupancy(inst)
    single = [j for j in inst.jobs if any(c.one_node and c.gpus == 1 for c in j.epoch_times)]
    k = 0
    for n in inst.nodes:
        for g in range(n.num_gpus):
            if rng.random() < 0.4 and k < len(single):
                cfg = next(c for c in single[k].epoch_times if c.one_node and c.gpus == 1)
                occ.place(single[k], Allocation(cfg, ((n.id, g),)))
                k += 1
    return occ


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), gpus=st.sampled_from([2, 4]))
def test_best_fit_never_scores_worse_than_random_fit(seed, gpus):
    inst = _inst()
    rng = np.random.default_rng(seed)
    occ = _busy(inst, rng)
    sizes = Sizes.of(inst.network)
    best = best_fit_nodes(occ, sizes, "v100", gpus)
    free = [n for n, f in occ.free.items() for _ in f]
    if best is None:
        assert len(free) < gpus
        return
    for _ in range(20):
        pick = [free[i] for i in rng.choice(len(free), size=gpus, replace=False)]
        assert score(occ, sizes, best) <= score(occ, sizes, pick) + 1e-9


def _tasks(inst, occ):
    out = []
    for j in inst.jobs[:5]:
        g = j.requested.gpus
        out.append(Task(j, g, "v100", tuple(sized_configs(inst, j, g))))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_ga_keeps_its_best_fit_seed_and_repeats_itself(seed):
    inst = _inst(seed)
    occ = _busy(inst, np.random.default_rng(seed))
    sizes = Sizes.of(inst.network)
    tasks = _tasks(inst, occ)

    def run():
        ga = GroupGA(occ, sizes, tasks, np.random.default_rng([seed, 1]), max_generations=30)
        return ga, ga.run()

    ga, (genome, best, start) = run()
    assert best <= start + 1e-9  # elitism: never worse than the best-fit genome
    assert best == ga.fitness(genome)
    assert run()[1] == (genome, best, start)  # same seed, same result
    # the GA's placements respect the cluster: placed one after another, all legal
    trial = occ.copy()
    for t, alloc in zip(tasks, ga.placements(genome)[1], strict=True):
        if alloc is not None:
            assert trial.why_not(t.job, alloc) is None
            trial.place(t.job, alloc)


def test_the_oracle_estimate_is_the_knee():
    inst = _inst()
    for job in inst.jobs:
        best: dict[int, float] = {}
        for c, t in job.epoch_times.items():
            if not c.shared:
                best[c.gpus] = min(t, best.get(c.gpus, t))
        fastest = min(best.values())
        want = min(g for g, t in best.items() if t <= 1.1 * fastest)
        assert knee_gpus(inst, job, 0.1, 0.0, seed=0) == want == knee(best, 0.1)
        # the user asked for the knee or twice it (at most 8)
        assert job.requested.gpus in {want, min(max(best), 2 * want)}


def test_strong_scaling_slows_down_off_the_node():
    # ResNet-50's 25.6 M parameters: 0.82 Gb of gradient per iteration
    one = epoch_seconds(0.4, 25.6, 1, 25.0)
    assert one == pytest.approx(0.4)
    in_node = epoch_seconds(0.4, 25.6, 2, 96.0)
    spread = epoch_seconds(0.4, 25.6, 2, 25.0)
    assert in_node == pytest.approx(0.2 + 0.8192 / 96) and in_node < spread < one


def test_first_fit_takes_gpus_in_node_order():
    inst = _inst()
    occ = Occupancy(inst)
    assert first_fit_nodes(occ, "v100", 3) == ["r0n0", "r0n0", "r0n1"]
    assert first_fit_nodes(occ, "v100", 3, start=4) == ["r1n1", "r1n1", "r1n2"]
    assert first_fit_nodes(occ, "v100", 13) is None


def test_allocation_on_picks_the_narrowest_span():
    inst = _inst()
    occ = Occupancy(inst)
    job = next(j for j in inst.jobs if any(c.gpus == 4 for c in j.epoch_times))
    cfgs = sized_configs(inst, job, 4)
    alloc = allocation_on(occ, job, ["r0n0", "r0n0", "r0n1", "r0n1"], cfgs)
    assert alloc is not None and alloc.config.span == "rack"
    alloc = allocation_on(occ, job, ["r0n0", "r0n0", "r1n1", "r1n1"], cfgs)
    assert alloc is not None and alloc.config.span in ("domain", "cluster")


def test_the_sharing_gate_opens_with_load():
    inst = _inst()
    job = next(j for j in inst.jobs if any(c.shared for c in j.epoch_times))
    occ = Occupancy(inst)
    pol = LiquidPolicy(LiquidOptions(share_ratio=0.75))
    pol._size[job.id] = 1
    assert pol._shared(inst, occ, job, load=0.5) is None
    alloc = pol._shared(inst, occ, job, load=0.9)
    assert alloc is not None and alloc.config.shared


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({}, "liquid"),
        ({"share_ratio": 0.5}, "liquid"),
        ({"batch": False}, "liquid"),
        ({"placement": "first-fit"}, "liquid"),
        ({"estimate": "request"}, "liquid"),
        ({}, "liquid-forest"),
        ({}, "first-fit"),
    ],
)
def test_every_variant_keeps_within_gpus_spans_and_links_and_repeats_itself(options, name):
    for seed in (0, 1):
        inst = _inst(seed)
        runs = [
            simulate(inst, make_policy(name, seed=seed, **options), mode="sampled", seed=seed)
            for _ in range(2)
        ]
        assert runs[0].plan == runs[1].plan
        assert check_plan(scenario_instance(inst, runs[0].epochs), runs[0].plan) == []


def test_liquid_sizes_jobs_by_estimate_and_first_fit_by_request():
    inst = _inst(3)
    liq = simulate(inst, make_policy("liquid", seed=0), mode="rollout").plan
    ff = simulate(inst, make_policy("first-fit", seed=0), mode="rollout").plan
    for job in inst.jobs:
        assert {s.config.gpus for s in ff.for_job(job.id)} == {job.requested.gpus}
        sizes = {s.config.gpus for s in liq.for_job(job.id)}
        assert sizes <= {knee_gpus(inst, job, 0.1, 0.1, 0), 1}


@pytest.mark.parametrize(
    ("field", "value"),
    [("domains", 9), ("oversubscription", 0.5), ("inflated", 1.5), ("nic_gbps", 0.0)],
)
def test_bad_specs_are_refused_naming_the_field(field, value):
    with pytest.raises(InstanceError) as err:
        dataclasses.replace(SMALL, **{field: value})
    assert err.value.path == field


def test_the_generator_is_seeded():
    assert _inst(5) == _inst(5)
    assert _inst(5) != _inst(6)


def test_jobs_outside_liquids_world_still_run_under_every_variant():
    """Regression (the online hypothesis test found the first): a job with shared slots
    only, one with whole nodes only, and a rack-span job on a cluster whose node order
    interleaves the racks, so that blind first fit never finds one rack: all finish."""
    from instances import (
        Config,
        EpochDistribution,
        GpuType,
        Instance,
        Job,
        Node,
        Rack,
        Topology,
    )

    gpu = GpuType("v100", 32.0, 300.0)
    nodes = tuple(Node(f"n{i}", "v100", 2, rack=f"r{i % 2}") for i in range(4))
    topo = Topology(25.0, (Rack("r0", 30.0), Rack("r1", 30.0)))
    dist = EpochDistribution.deterministic(2.0)
    jobs = (
        Job("shared", 0.0, 9.0, dist, {Config("v100", 1, shared=True): 1.0}, 4.0),
        Job("whole", 0.0, 9.0, dist, {Config("v100", 4, nodes=2): 1.0}, 4.0),
        Job("rack", 0.0, 9.0, dist, {Config("v100", 4, span="rack", net_gbps=10.0): 1.0}, 4.0),
    )
    inst = Instance((gpu,), nodes, jobs, topology=topo)
    variants = [({}, "liquid"), ({"share_ratio": 0.0}, "liquid"), ({}, "liquid-forest")]
    for options, name in [*variants, ({}, "first-fit")]:
        run = simulate(inst, make_policy(name, seed=0, **options), mode="rollout")
        assert set(run.completions) == {"shared", "whole", "rack"}, (name, options)
        assert check_plan(inst, run.plan) == []
