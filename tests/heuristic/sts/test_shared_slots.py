"""STS with ``shared_slots`` off (heuristic.sts.hulls.HullTable.unshared): its profiles
leave a job's shared slots out on every type where it may run on whole GPUs."""

from __future__ import annotations

from heuristic.core.occupancy import Occupancy
from heuristic.core.policy import JobStatus, SchedulerState
from heuristic.sts.hulls import HullTable
from heuristic.sts.options import StsOptions
from heuristic.sts.policy import StsPolicy
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node

VS, V1 = Config("v100", 1, shared=True), Config("v100", 1)
KS = Config("k80", 1, shared=True)
DIST = EpochDistribution((10.0,), (1.0,))


def _instance(k80: bool = True) -> Instance:
    """A job that may share a V100 or run on one whole, or (with ``k80``) share a K80
    only; ten epochs due in 40 h, so the slow shared V100 slot is on time and the
    cheapest on a V100."""
    times = {VS: 1.5, V1: 1.0, KS: 3.0} if k80 else {VS: 1.5, V1: 1.0}
    job = Job("j0", 0.0, 40.0, DIST, times, 4.0)
    v100 = (GpuType("v100", 16.0, 300.0), Node("n0", "v100", 1))
    k = (GpuType("k80", 12.0, 150.0), Node("n1", "k80", 1)) if k80 else None
    types, nodes = zip(*(x for x in (v100, k) if x is not None), strict=True)
    return Instance(tuple(types), tuple(nodes), (job,))


def test_the_table_keeps_a_type_the_job_may_only_share():
    inst = _instance()
    job = inst.jobs[0]
    table = HullTable(inst)
    whole = table.unshared()
    assert whole is table.unshared()  # built once
    assert {o.config for o in table.options(job, "v100")} == {VS, V1}
    assert [o.config for o in whole.options(job, "v100")] == [V1]
    assert [o.config for o in whole.options(job, "k80")] == [KS]  # nothing else there
    assert whole.capped().whole  # the capped table of it keeps the rule


def test_sts_without_shared_slots_starts_on_a_whole_gpu():
    inst = _instance(k80=False)

    def state() -> SchedulerState:  # a decision places on the state's occupancy
        return SchedulerState(0.0, inst, (JobStatus(inst.jobs[0], 0.0, None),), Occupancy(inst))

    shared = StsPolicy().decide(state()).assign["j0"]
    whole = StsPolicy(StsOptions(shared_slots=False)).decide(state()).assign["j0"]
    assert shared is not None and shared.config == VS
    assert whole is not None and whole.config == V1
