"""A trace's jobs on a cluster of the user's choice, at an offered load of the user's
choice (instances/generators/clusters.py), and real-data windows from the whole week."""

from __future__ import annotations

import hashlib
import json

import pytest

from instances import InstanceError
from instances.generators import GENERATORS, RealDataSpec, real_data
from instances.generators.clusters import (
    Machine,
    cycled,
    instance_load,
    named,
    parse_cluster,
)
from instances.generators.realdata import cluster_mix
from instances.generators.traces import PHILLY_MACHINES
from instances.io import instance_to_dict

SMALL = "k80x4:2,p100x4:2,v100x8:2"
WINDOW = {"start": 24.0, "hours": 6.0}


def _digest(inst) -> str:
    return hashlib.sha256(json.dumps(instance_to_dict(inst), sort_keys=True).encode()).hexdigest()


def test_without_the_new_fields_the_instances_are_those_of_before():
    """Digests of instances from the commit before the cluster and load fields (and the
    week source) existed: absent fields change nothing. (Re-taken there with the fitted
    stops' sums off BLAS, instances/sums.py: they had depended on the CPU.)"""
    trace = GENERATORS["philly-week"].instance({"start": 24.0, "hours": 1.0}, 0)
    assert _digest(trace)[:16] == "0a1990cef5489d6a"
    ali = GENERATORS["alibaba"].instance({"start": 3200.0, "hours": 2.0}, 0)
    assert _digest(ali)[:16] == "4a88a5d7a2c5bb37"
    assert _digest(real_data(RealDataSpec(jobs=20), 0))[:16] == "1a14475890b1475f"


def test_nodes_cycle_the_traces_own_mix_in_proportion():
    # Philly: 321 servers of 2 GPUs, 231 of 8 (58% and 42%)
    mix = cycled(PHILLY_MACHINES, 8)
    assert [(m.gpu_type, m.gpus, m.count) for m in mix] == [("p100", 2, 5), ("p40", 8, 3)]
    assert sum(m.count for m in cycled(PHILLY_MACHINES, 31)) == 31
    inst = GENERATORS["philly-week"].instance({**WINDOW, "nodes": 8}, 0)
    assert len(inst.nodes) == 8 and sum(n.num_gpus for n in inst.nodes) == 34


def test_named_kinds_take_the_traces_types_or_gavels():
    mix = named((("v100", 8, 2), ("p40", 8, 1)), PHILLY_MACHINES)
    v100, p40 = mix
    assert (v100.measured_as, v100.gpus, v100.count) == ("v100", 8, 2)
    assert v100.power_w == 300.0  # the vendor figure of a Gavel type
    assert (p40.measured_as, p40.memory_gb) == ("p100", 24.0)  # Philly's reading of it
    with pytest.raises(InstanceError, match=r"cluster\[0\] = 'a100'"):
        named((("a100", 8, 1),), PHILLY_MACHINES)


def test_the_cluster_string_form():
    assert parse_cluster(SMALL) == (("k80", 4, 2), ("p100", 4, 2), ("v100", 8, 2))
    for bad in ("v100x8", "v100:2", "x8:2", "v100xa:2", ""):
        with pytest.raises(InstanceError, match="TYPExGPUS:NODES"):
            parse_cluster(bad)


def test_a_load_scales_the_same_jobs_to_it():
    gen = GENERATORS["philly-week"]
    light = gen.instance({**WINDOW, "cluster": SMALL, "load": 0.3}, 0)
    heavy = gen.instance({**WINDOW, "cluster": SMALL, "load": 1.2}, 0)
    assert instance_load(light) == pytest.approx(0.3, rel=1e-4)
    assert instance_load(heavy) == pytest.approx(1.2, rel=1e-4)
    assert [j.id for j in light.jobs] == [j.id for j in heavy.jobs]
    assert [j.epoch_times for j in light.jobs] == [j.epoch_times for j in heavy.jobs]
    # four times the load: the arrivals four times as dense
    last = max(j.release for j in light.jobs) / max(j.release for j in heavy.jobs)
    assert last == pytest.approx(4.0, rel=1e-4)
    # a due date keeps the job's drawn tightness: release + factor x fastest time
    for a, b in zip(light.jobs, heavy.jobs, strict=True):
        assert a.due - a.release == pytest.approx(b.due - b.release, abs=2e-4)


@pytest.mark.parametrize(
    ("trace", "window"),
    [("philly-week", WINDOW), ("alibaba", {"start": 3200.0, "hours": 2.0})],
)
def test_forbidding_sharing_at_a_load_keeps_the_jobs_and_their_times(trace, window):
    """Sharing allowed against forbidden at one offered load compares the same jobs:
    the same releases, due dates and stops, only the shared configurations removed. (The
    load's scale once counted a shared slot only where sharing was allowed, so that the
    instance without it arrived about 15% more spread at the "same" load.)"""
    gen = GENERATORS[trace]
    params = {**window, "cluster": SMALL, "load": 0.9}
    shared = gen.instance(params, 3)
    alone = gen.instance({**params, "sharing": False}, 3)
    assert any(c.shared for j in shared.jobs for c in j.epoch_times)
    assert not any(c.shared for j in alone.jobs for c in j.epoch_times)
    for a, b in zip(shared.jobs, alone.jobs, strict=True):
        assert (a.id, a.release, a.due, a.distribution) == (b.id, b.release, b.due, b.distribution)
        assert b.epoch_times == {c: t for c, t in a.epoch_times.items() if not c.shared}
    assert shared.nodes == alone.nodes
    # the load is the jobs' with sharing allowed: without it each epoch's least GPU-hours
    # are whole GPUs, so the same arrivals load the cluster more
    assert instance_load(shared) == pytest.approx(0.9, rel=1e-4)
    assert instance_load(alone) > 0.9


def test_a_time_scale_spreads_the_arrivals():
    gen = GENERATORS["philly-week"]
    plain = gen.instance({**WINDOW, "cluster": SMALL}, 0)
    spread = gen.instance({**WINDOW, "cluster": SMALL, "time_scale": 3.0}, 0)
    for a, b in zip(plain.jobs, spread.jobs, strict=True):
        assert b.release == pytest.approx(3 * a.release, abs=2e-4)  # each to 4 decimals
    assert instance_load(spread) == pytest.approx(instance_load(plain) / 3, rel=1e-3)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"nodes": 4, "cluster": [["v100", 8, 1]]}, "cluster"),
        ({"load": 0.5, "time_scale": 2.0}, "load"),
        ({"load": 5e-324}, "load"),  # the arrivals past the bound on times
        ({"hours": 24.0, "time_scale": 1e4}, "time_scale"),
        ({"cluster": [["v100", 0, 1]]}, "cluster[0]"),
        ({"cluster": [["v100", 8, 0]]}, "cluster[0]"),
        ({"jobs": 0}, "jobs"),
        ({"load": 0}, "load"),
        # a kind twice: its nodes' names would clash
        ({"cluster": [["k80", 4, 2], ["k80", 4, 1]]}, "cluster[1]"),
        # the reading of the bundled fit, where no bundled fit is read
        ({"early_stopping": "uniform", "running": "stopped"}, "running"),
    ],
)
def test_bad_cluster_and_load_fields_are_refused_by_name(params, field):
    with pytest.raises(InstanceError) as err:
        GENERATORS["philly-week"].instance({**WINDOW, **params}, 0)
    assert str(err.value).startswith(field + " = ") or err.value.path == field


def test_jobs_takes_the_windows_first_jobs():
    inst = GENERATORS["philly-week"].instance({**WINDOW, "jobs": 10, "cluster": SMALL}, 0)
    assert len(inst.jobs) == 10
    whole = GENERATORS["philly-week"].instance({**WINDOW, "cluster": SMALL}, 0)
    assert [j.id for j in inst.jobs] == [j.id for j in whole.jobs[:10]]


def test_real_data_windows_from_the_whole_week():
    inst = real_data(RealDataSpec(jobs=50, start=3000, nodes=cluster_mix(6), source="week"), 0)
    assert len(inst.jobs) == 50 and inst.jobs[0].id == "p3000"
    assert inst.name == "gavel-philly-week-6n50j-s0"
    # the day is the week's first day: the same first jobs
    day = real_data(RealDataSpec(jobs=10, nodes=cluster_mix(6)), 0)
    week = real_data(RealDataSpec(jobs=10, nodes=cluster_mix(6), source="week"), 0)
    assert [j.release for j in day.jobs] == [j.release for j in week.jobs]
    with pytest.raises(InstanceError, match="source = 'month'"):
        RealDataSpec(source="month")


def test_machine_counts_are_kept_out_of_the_mix_when_none():
    kinds = (Machine("a", "p100", 12.0, 250.0, 2, 1), Machine("b", "p100", 24.0, 250.0, 8, 99))
    assert [m.gpu_type for m in cycled(kinds, 3)] == ["b"]
