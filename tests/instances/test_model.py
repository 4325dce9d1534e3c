import dataclasses

import pytest

from instances import Config, InstanceError


def test_cost_primitives(base):
    job = base.job("a")
    v1 = Config("v100", 1)
    sh = Config("v100", 1, shared=True)
    assert base.power_w(v1) == 300.0
    assert base.power_w(sh) == 150.0  # a shared GPU's power split over K_max = 2 slots
    assert base.epoch_energy(job, v1) == pytest.approx(0.06)
    assert base.epoch_cost(job, v1) == pytest.approx(0.015)


def test_config_shapes_are_checked():
    with pytest.raises(InstanceError, match="divisible"):
        Config("v100", 6, nodes=4)
    with pytest.raises(InstanceError, match="one slot of one GPU"):
        Config("v100", 2, shared=True)
    assert Config("v100", 8, nodes=2).kind == "multi_node"
    # built directly, not read: "no" was truthy (a shared slot at 150 W), and a job
    # type of 5 was written into a file the reader then refused
    with pytest.raises(InstanceError, match="shared = 'no': must be true or false"):
        Config("v100", shared="no")  # type: ignore[arg-type]


def test_a_job_type_that_is_not_text_is_refused(base):
    job = base.jobs[0]
    with pytest.raises(InstanceError, match="job_type = 5: must be text"):
        dataclasses.replace(job, job_type=5)


def test_replace_revalidates(base):
    with pytest.raises(InstanceError, match="slot"):
        base.replace(slot=-1.0)
    assert base.replace(slot=0.5).slot == 0.5


def test_a_pinned_job_keeps_its_tardiness_weight_in_a_derived_instance(base):
    # job a has the default weight (10x its dearest hourly energy); dropping its dearest
    # configuration would lower the default, the pinned copy keeps the original
    omega = base.tardiness_weight("a")
    times = {c: t for c, t in base.job("a").epoch_times.items() if c != Config("v100", 2)}
    job = base.pinned_job("a", epoch_times=times, release=0.5)
    assert job.weight == omega and job.priority == 1.0 and job.release == 0.5
    derived = base.replace(jobs=(job, base.job("b")))
    assert derived.tardiness_weight("a") == omega
    unpinned = base.replace(jobs=(dataclasses.replace(job, weight=None), base.job("b")))
    assert unpinned.tardiness_weight("a") < omega
    with pytest.raises(InstanceError, match="due"):
        base.pinned_job("a", due=0.0)


def test_a_weight_times_priority_above_the_bound_is_refused_at_once(base):
    """Each within its bound, a weight of 1e30 and a priority of 2 passed the reader and
    the evaluator, then a derived instance (online, the bounds, improve) pinned their
    product as the weight and refused 2e30 without naming the job (a hostile-input
    hunt)."""
    job = dataclasses.replace(base.job("a"), weight=1e30, priority=2.0)
    with pytest.raises(InstanceError) as err:
        base.replace(jobs=(job, base.job("b")))
    assert err.value.path == "jobs[0].priority" and "2e+30" in str(err.value)
    ok = dataclasses.replace(base.job("a"), weight=1e30, priority=1.0)
    assert base.replace(jobs=(ok, base.job("b"))).pinned_job("a").weight == 1e30


def test_a_job_too_large_to_share_a_gpu_names_both_memories(base):
    """Either the job's memory or the GPU type's may be the wrong figure (the fuzz
    harness found a GPU type of 5e-324 GB refused as the job's fault alone)."""
    assert any(c.shared for c in base.job("a").epoch_times)
    types = tuple(
        dataclasses.replace(g, memory_gb=5e-324) if g.name == "v100" else g for g in base.gpu_types
    )
    g = next(k for k, t in enumerate(types) if t.name == "v100")
    with pytest.raises(InstanceError) as err:
        base.replace(gpu_types=types)
    assert "memory_gb" in err.value.path and f"gpu_types[{g}].memory_gb = 5e-324" in str(err.value)


def test_the_default_tardiness_weight_ignores_configurations_no_node_can_host(base):
    """docs/model.md: a configuration no node can host is ignored, by the default
    tardiness weight too (10 x the dearest hourly energy of the job's *allowed*
    configurations). An 8-GPU configuration on a cluster of 2- and 4-GPU nodes would
    otherwise double job a's weight (2,400 W against 600 W on two V100s)."""
    job = base.job("a")
    wide = dataclasses.replace(job, epoch_times={**job.epoch_times, Config("v100", 8): 0.04})
    inst = base.replace(jobs=(wide, base.job("b")))
    assert Config("v100", 8) not in inst.allowed_configs("a")
    assert inst.tardiness_weight("a") == base.tardiness_weight("a")
    assert base.tardiness_weight("a") == pytest.approx(10 * 0.25 * 600 / 1000)


def test_a_configuration_hashes_as_its_fields_and_anew_in_another_process():
    """Its hash is kept from construction: equal to the dataclass's (the hash of its
    fields), and a copy pickled in a process of another string hash seed is hashed
    there anew (else a dict built here would not find it)."""
    import pickle
    import subprocess
    import sys

    cfg = Config("v100", 4, cpus=8, dram_gb=64)
    assert hash(cfg) == hash(dataclasses.astuple(cfg))
    assert [f.name for f in dataclasses.fields(cfg)][-1] == "net_gbps"  # no new field
    code = (
        "import pickle, sys; from instances import Config; "
        "sys.stdout.buffer.write(pickle.dumps(Config('v100', 4, cpus=8, dram_gb=64)))"
    )
    for seed in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            check=True,
            env={**__import__("os").environ, "PYTHONHASHSEED": seed},
        ).stdout
        other = pickle.loads(out)
        assert other == cfg and hash(other) == hash(cfg)
        assert {cfg: 1}[other] == 1


def test_a_jobs_configurations_are_in_the_order_of_config_comparison(small):
    for job in small.jobs:
        assert list(job.epoch_times) == sorted(job.epoch_times)
    cfgs = [Config("v100", 2), Config("k80", 4, nodes=2), Config("v100", 1, shared=True)]
    assert sorted(cfgs) == sorted(cfgs, key=lambda c: c._key())
