"""E3: CPU cores and DRAM on nodes and configurations, in the model, the files, the
checker and the engine's occupancy; absent or ample, they change no figure."""

from __future__ import annotations

import dataclasses
import json

import pytest

from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.registry import make_policy
from instances import (
    Config,
    EpochDistribution,
    GpuType,
    Instance,
    InstanceError,
    Job,
    Node,
    Plan,
    Segment,
    instance_from_dict,
    instance_to_dict,
    plan_from_dict,
    plan_to_dict,
)
from instances.bundled import bundled
from tests.delta0_golden import POLICIES
from tests.plans import plain_rollout
from validation.check import check_plan
from validation.evaluate import evaluate
from validation.simulator import simulate

V100 = GpuType("v100", 32.0, 300.0)
FAST = Config("v100", 1, cpus=4, dram_gb=60.0)
SLOW = Config("v100", 1, cpus=2, dram_gb=30.0)


def _job(i: int, times: dict[Config, float]) -> Job:
    return Job(f"j{i}", 0.0, 10.0, EpochDistribution.deterministic(4.0), times, 8.0)


def _cluster(cores: int | None = 6, dram: float | None = 100.0, jobs: int = 2) -> Instance:
    return Instance(
        (V100,),
        (Node("a", "v100", 2, cpu_cores=cores, dram_gb=dram), Node("b", "v100", 2)),
        tuple(_job(i, {FAST: 0.5, SLOW: 1.0}) for i in range(jobs)),
    )


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"cpus": 0}, "cpus"),
        ({"cpus": 2.5}, "cpus"),
        ({"cpus": 3, "gpus": 4, "nodes": 2}, "cpus"),
        ({"dram_gb": -1.0}, "dram_gb"),
        ({"dram_gb": float("nan")}, "dram_gb"),
    ],
)
def test_bad_cpu_or_dram_is_refused_naming_the_field(fields, path):
    with pytest.raises(InstanceError) as err:
        Config("v100", **fields)
    assert err.value.path == path


def test_a_job_whose_cores_fit_no_node_is_refused_naming_the_shapes():
    with pytest.raises(InstanceError, match="CPU cores and DRAM") as err:
        Instance(
            (V100,),
            (Node("a", "v100", 2, cpu_cores=8),),
            (_job(0, {Config("v100", 1, cpus=12): 1.0}),),
        )
    assert err.value.path == "jobs[0].configs"


def test_only_configurations_some_node_can_feed_are_allowed():
    inst = Instance(
        (V100,),
        (Node("a", "v100", 2, cpu_cores=3),),
        (_job(0, {FAST: 0.5, SLOW: 1.0}),),
    )
    assert inst.allowed_configs("j0") == (SLOW,)


def test_files_round_trip_and_old_files_keep_their_form():
    inst = _cluster().replace(cpu_power_w=10.0)
    doc = instance_to_dict(inst)
    assert doc["jobs"][0]["configs"][0]["cpus"] == 2  # sorted: SLOW (2 cores) first
    assert doc["cpu_power_w"] == 10.0
    assert instance_from_dict(json.loads(json.dumps(doc))) == inst
    plain = instance_to_dict(bundled("small"))
    assert "cpu_power_w" not in plain
    assert all("cpus" not in c for j in plain["jobs"] for c in j["configs"])
    plan = Plan.of([Segment(0.0, 2.0, "j0", FAST, (("a", 0),))])
    assert plan_from_dict(json.loads(json.dumps(plan_to_dict(plan)))) == plan


def test_cpu_power_is_charged_only_when_asked():
    inst = _cluster()
    plan = Plan.of(
        [
            Segment(0.0, 2.0, "j0", FAST, (("a", 0),)),
            Segment(0.0, 4.0, "j1", SLOW, (("a", 1),)),
        ]
    )
    base = evaluate(inst, plan).expected_energy_kwh
    assert base == pytest.approx(0.3 * 2 + 0.3 * 4)
    charged = evaluate(inst.replace(cpu_power_w=10.0), plan).expected_energy_kwh
    assert charged == pytest.approx(base + (4 * 2 + 2 * 4) * 10.0 / 1000)


def test_the_checker_counts_cores_and_dram_per_node():
    inst = _cluster(cores=6, dram=100.0)
    both_fast = Plan.of(
        [
            Segment(0.0, 2.0, "j0", FAST, (("a", 0),)),
            Segment(0.0, 2.0, "j1", FAST, (("a", 1),)),
        ]
    )
    (v,) = check_plan(inst, both_fast)
    assert v.kind == "host-capacity" and "8 CPU cores, it has 6" in v.detail
    tight_dram = _cluster(cores=None, dram=100.0)
    (v,) = check_plan(tight_dram, both_fast)
    assert "120 GB of DRAM, it has 100" in v.detail
    # one after the other, or on the node that states no limits: fine
    serial = Plan.of(
        [
            Segment(0.0, 2.0, "j0", FAST, (("a", 0),)),
            Segment(2.0, 4.0, "j1", FAST, (("a", 1),)),
        ]
    )
    assert check_plan(inst, serial) == []
    apart = Plan.of(
        [
            Segment(0.0, 2.0, "j0", FAST, (("a", 0),)),
            Segment(0.0, 2.0, "j1", FAST, (("b", 0),)),
        ]
    )
    assert check_plan(inst, apart) == []


def test_occupancy_refuses_a_node_short_of_cores():
    inst = _cluster(cores=6, dram=100.0)
    occ = Occupancy(inst)
    j0, j1 = inst.jobs
    occ.place(j0, Allocation(FAST, (("a", 0),)))
    assert occ.cpus_free["a"] == 2 and occ.dram_free["a"] == 40.0
    assert "CPU cores or DRAM" in (occ.why_not(j1, Allocation(FAST, (("a", 1),))) or "")
    assert occ.why_not(j1, Allocation(SLOW, (("a", 1),))) is None
    assert occ.find(j1, FAST) == Allocation(FAST, (("b", 0),))
    copy = occ.copy()
    occ.release(j0.id)
    assert occ.cpus_free == {"a": 6} and occ.dram_free == {"a": 100.0}
    assert copy.cpus_free == {"a": 2}  # a copy keeps its own count


def test_every_policy_respects_the_cores():
    inst = _cluster(cores=6, dram=100.0, jobs=5)
    for name in (*POLICIES, "optimus", "gandiva"):
        plan = simulate(inst, make_policy(name, seed=0), mode="rollout").plan
        assert check_plan(inst, plan) == [], name


def _ample(inst: Instance) -> Instance:
    """Every configuration states a core and a GB; every node has plenty of both."""
    jobs = tuple(
        dataclasses.replace(
            j,
            epoch_times={
                dataclasses.replace(c, cpus=c.nodes, dram_gb=float(c.nodes)): t
                for c, t in j.epoch_times.items()
            },
        )
        for j in inst.jobs
    )
    nodes = tuple(dataclasses.replace(n, cpu_cores=4096, dram_gb=1e5) for n in inst.nodes)
    return inst.replace(jobs=jobs, nodes=nodes)


@pytest.mark.parametrize("policy", (*POLICIES, "optimus", "gandiva"))
@pytest.mark.parametrize("name", ["tiny", "small", "medium"])
def test_ample_cores_and_dram_change_no_figure(name, policy):
    inst = bundled(name)
    rich = _ample(inst)
    a = evaluate(inst, plain_rollout(inst, policy))
    b = evaluate(rich, simulate(rich, make_policy(policy, seed=0), mode="rollout").plan)
    assert (a.energy_cost, a.tardiness_cost) == (b.energy_cost, b.tardiness_cost)
