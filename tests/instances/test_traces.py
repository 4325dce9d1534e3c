"""Whole-trace instances: the Philly week and the Alibaba GPU trace."""

import pytest

from instances import InstanceError, instance_to_dict, read_instance, write_instance
from instances.generators.realdata import family
from instances.generators.stops_fit import bundled_fit
from instances.generators.traces import (
    LONG_FAMILIES,
    SHORT_FAMILIES,
    TraceSpec,
    alibaba_jobs,
    philly_week,
    trace_instance,
)


def window(trace="philly-week", **kw):
    return trace_instance(TraceSpec(trace=trace, **kw), seed=1)


def test_the_philly_week_and_its_cluster():
    week = philly_week()
    assert len(week) == 6391
    inst = window(hours=3.0)
    assert len(inst.nodes) == 552 and sum(n.num_gpus for n in inst.nodes) == 2490
    shapes = {(n.gpu_type, n.num_gpus) for n in inst.nodes}
    assert shapes == {("p100", 2), ("p40", 8)}
    assert [j.id for j in inst.jobs] == [tj.key for tj in week if tj.submit < 3.0]
    assert instance_to_dict(inst) == instance_to_dict(window(hours=3.0))  # same seed
    assert instance_to_dict(inst) != instance_to_dict(trace_instance(TraceSpec(hours=3.0), seed=2))


def test_a_job_keeps_its_trace_run_as_its_work():
    """A job's maximum epochs on its trace GPU count, on the reference GPU (P100), take
    its trace run time (P40s run at a P100's speed)."""
    inst = window(hours=6.0, relaunch="none")
    trace = {tj.key: tj for tj in philly_week()}
    checked = 0
    for j in inst.jobs:
        tj = trace[j.id]
        if tj.gpus > 8:
            continue
        t = {
            c: h
            for c, h in j.epoch_times.items()
            if c.gpu_type == "p40" and c.gpus == tj.gpus and not c.shared
        }
        (hours,) = t.values()
        assert j.max_epochs * hours == pytest.approx(tj.hours, rel=1e-9)
        checked += 1
    assert checked > 50


def test_a_job_wider_than_eight_gpus_keeps_its_gpu_time():
    wide = next(tj for tj in philly_week() if tj.gpus > 8)
    inst = window(start=wide.submit, hours=1e-6)
    (j,) = inst.jobs
    (eight,) = [h for c, h in j.epoch_times.items() if c.gpu_type == "p40" and c.gpus == 8]
    assert j.max_epochs * eight == pytest.approx(wide.hours * wide.gpus / 8, rel=1e-9)
    assert j.requested is not None and j.requested.gpus == 8


def test_job_types_follow_the_duration_class():
    inst = window(hours=24.0)
    trace = {tj.key: tj for tj in philly_week()}
    for j in inst.jobs:
        hours = trace[j.id].hours
        if hours < 1.0:
            assert family(j.job_type) in SHORT_FAMILIES
        elif hours >= 10.0 and trace[j.id].gpus == 1:
            assert family(j.job_type) in LONG_FAMILIES


def test_fitted_stops_are_the_alibaba_fit_by_gpu_class():
    inst = window(hours=2.0)
    fit = bundled_fit()
    trace = {tj.key: tj for tj in philly_week()}
    for j in inst.jobs:
        want = fit.for_gpus(trace[j.id].gpus).distribution(int(j.max_epochs), 5)
        assert j.distribution == want
    helios = window(hours=2.0, early_stopping="helios")
    assert [j.distribution for j in helios.jobs] != [j.distribution for j in inst.jobs]


def test_the_alibaba_trace_and_its_cluster():
    inst = window("alibaba", start=3200.0, hours=6.0)
    assert len(inst.nodes) == 1213 and sum(n.num_gpus for n in inst.nodes) == 6212
    assert {g.name for g in inst.gpu_types} == {"a10", "g2", "g3", "p100", "t4", "v100", "v100m32"}
    pods = {tj.key: tj for tj in alibaba_jobs()}
    part = [j for j in inst.jobs if pods[j.id].share < 1]
    assert part, "the window has pods asking for a fraction of a GPU"
    for j in part:  # a fractional pod did that fraction of a V100's work per hour
        (v,) = [
            h
            for c, h in j.epoch_times.items()
            if c.gpu_type == "v100" and c.gpus == 1 and not c.shared
        ]
        assert j.max_epochs * v == pytest.approx(pods[j.id].hours * pods[j.id].share, rel=1e-9)


def test_a_window_written_gzipped_reads_back(tmp_path):
    inst = window(hours=1.0)
    write_instance(inst, tmp_path / "w.json.gz")
    assert instance_to_dict(read_instance(tmp_path / "w.json.gz")) == instance_to_dict(inst)


@pytest.mark.parametrize(
    "kw, field",
    [
        ({"trace": "philly-month"}, "trace"),
        ({"start": -1.0}, "start"),
        ({"hours": 0.0}, "hours"),
        ({"start": 1e6}, "start"),  # no job in the window
        ({"early_stopping": "fitted-elsewhere"}, "early_stopping"),
        ({"running": "maybe"}, "running"),
        ({"epochs": (5, 2)}, "epochs"),
        ({"hours": float("nan")}, "hours"),
        ({"start": 10**400}, "start"),  # an integer too large for a float (campaign fuzz)
        ({"stops": "fit.json", "early_stopping": "helios"}, "stops"),
    ],
)
def test_a_bad_trace_spec_is_refused_naming_the_field(kw, field):
    with pytest.raises(InstanceError, match=field):
        trace_instance(TraceSpec(**kw))
