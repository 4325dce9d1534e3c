"""The requested size (instances.Requested, E0) and the `static` policy that runs each job
on it: read and written exactly, refused with the field named when no configuration
matches, filled by the real-data generator, and changing no other figure."""

from __future__ import annotations

import dataclasses

import pytest

from heuristic.core.registry import make_policy
from heuristic.sts.policy import StsPolicy
from instances import (
    Config,
    EpochDistribution,
    GpuType,
    Instance,
    InstanceError,
    Job,
    Node,
    Requested,
    instance_from_dict,
    instance_to_dict,
)
from instances.generators import RealDataSpec, real_data
from instances.generators.realdata import cluster_mix
from validation.evaluate import evaluate
from validation.simulator import rollout


def _instance(requests: list[Requested | None]) -> Instance:
    times = {Config("k80", 1): 1.0, Config("v100", 1): 0.4, Config("v100", 4): 0.12}
    jobs = tuple(
        Job(
            f"j{k}",
            0.1 * k,
            20.0,
            EpochDistribution((2.0, 5.0), (0.5, 0.5)),
            times,
            4.0,
            requested=r,
        )
        for k, r in enumerate(requests)
    )
    return Instance(
        (GpuType("k80", 12.0, 150.0), GpuType("v100", 16.0, 300.0)),
        (Node("k", "k80", 2), Node("v", "v100", 4)),
        jobs,
    )


def test_the_request_is_read_and_written_exactly_and_absent_when_not_given():
    inst = _instance([Requested(4, "v100"), None, Requested(1)])
    doc = instance_to_dict(inst)
    assert doc["jobs"][0]["requested"] == {"gpus": 4, "gpu_type": "v100"}
    assert "requested" not in doc["jobs"][1]
    assert instance_from_dict(doc) == inst


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        ({"gpus": 2}, "jobs[0].requested"),  # no 2-GPU configuration
        ({"gpus": 4, "gpu_type": "k80"}, "jobs[0].requested"),  # none of that type
        ({"gpus": 0}, "jobs[0].requested.gpus"),
    ],
)
def test_a_request_no_configuration_matches_is_refused_naming_the_field(request_, field):
    doc = instance_to_dict(_instance([None]))
    doc["jobs"][0]["requested"] = request_
    with pytest.raises(InstanceError) as exc:
        instance_from_dict(doc)
    assert field in str(exc.value)


def test_static_runs_each_job_on_its_requested_size_for_its_whole_life():
    inst = _instance([Requested(4, "v100"), Requested(1), None, Requested(1, "v100")])
    plan = rollout(inst, make_policy("static"))
    for job in inst.jobs:
        segs = plan.for_job(job.id)
        assert len({(s.config, s.gpus) for s in segs}) == 1  # never moved or resized
        assert all(s.start == segs[k - 1].end for k, s in enumerate(segs) if k)  # never paused
        assert (job.requested or Requested(1)).matches(segs[0].config)  # fewest: one GPU
    # j0 takes the whole V100 node; j1 and j2 (any type) start at once on the K80s, in
    # arrival order; j3 wants a V100 and waits for j0 to finish (work-conserving: it
    # blocks nobody)
    assert plan.for_job("j1")[0].config.gpu_type == "k80"
    assert plan.for_job("j3")[0].start == pytest.approx(plan.for_job("j0")[-1].end)


@pytest.mark.parametrize(("nodes", "jobs"), [(3, 10), (6, 20)])
def test_the_generator_fills_the_philly_request_and_no_other_figure_moves(nodes, jobs):
    """On 3 nodes (K80x4, P100x4, V100x4) no 8-GPU configuration can be hosted: the
    Philly 8-GPU job of this window asks for the 4 the cluster can give."""
    inst = real_data(RealDataSpec(jobs=jobs, nodes=cluster_mix(nodes)), seed=1)
    for job in inst.jobs:
        assert job.requested is not None
        assert any(job.requested.matches(c) for c in inst.allowed_configs(job))
    top = max(j.requested.gpus for j in inst.jobs if j.requested)
    assert top == (4 if nodes == 3 else 8)
    bare = inst.replace(jobs=tuple(dataclasses.replace(j, requested=None) for j in inst.jobs))
    for policy in (StsPolicy(), make_policy("edf")):
        assert (
            evaluate(inst, rollout(inst, policy)).total_cost
            == evaluate(bare, rollout(bare, policy)).total_cost
        )
