"""Relaunch overheads drawn by the generators from published measurements."""

import dataclasses

import pytest

from instances import InstanceError
from instances.generators.measured_overheads import MEASURED_SECONDS, family_relaunch_hours
from instances.generators.realdata import RealDataSpec, family, real_data
from instances.generators.suite import milp_suite
from instances.generators.synthetic import SyntheticSpec, synthetic

MEASURED_HOURS = {s / 3600.0 for s in MEASURED_SECONDS.values()}


def test_synthetic_jobs_get_a_measured_overhead_and_nothing_else_changes():
    spec = SyntheticSpec(nodes=3, jobs=12, slot=0.25)
    paid = synthetic(spec, seed=4)
    plain = synthetic(dataclasses.replace(spec, relaunch="none"), seed=4)
    assert {j.relaunch_hours for j in paid.jobs} <= MEASURED_HOURS
    assert all(j.relaunch_hours is None for j in plain.jobs) and not plain.has_relaunch
    for a, b in zip(paid.jobs, plain.jobs, strict=True):
        assert a.epoch_times == b.epoch_times and a.release == b.release
        assert a.distribution == b.distribution and a.memory_gb == b.memory_gb
        # a due date moves only where the overhead would otherwise make it unreachable
        assert a.due >= b.due


def test_real_data_jobs_get_their_familys_measured_overhead():
    inst = real_data(RealDataSpec(jobs=20), seed=1)
    for j in inst.jobs:
        assert j.job_type is not None
        assert inst.relaunch(j) == family_relaunch_hours(family(j.job_type))
    # ResNet-50 on ImageNet restarts slowest, the recommendation model fastest
    assert family_relaunch_hours("ResNet-50") == 250 / 3600
    assert family_relaunch_hours("Recommendation") == 15 / 3600


def test_every_due_date_can_be_met_alone_with_the_first_starts_overhead():
    for inst in milp_suite():
        assert inst.slot is not None
        for j in inst.jobs:
            fastest = min(j.epoch_times.values()) * j.max_epochs
            start = -(-j.release // inst.slot) * inst.slot
            assert j.due >= start + fastest + inst.relaunch(j) - 1e-9


def test_the_suite_has_a_half_without_and_a_half_with_overheads():
    suite = milp_suite()
    paid = [i.name for i in suite if i.has_relaunch]
    assert len(paid) == len(suite) // 2 and all(n.endswith("-s2") for n in paid)


@pytest.mark.parametrize("bad", ["sometimes", 3, None])
def test_an_unknown_relaunch_option_is_refused_naming_it(bad):
    with pytest.raises(InstanceError, match="relaunch"):
        SyntheticSpec(relaunch=bad)
    with pytest.raises(InstanceError, match="relaunch"):
        RealDataSpec(relaunch=bad)
