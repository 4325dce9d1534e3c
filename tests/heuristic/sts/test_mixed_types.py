"""Profiles over every GPU type at once (``mixed_types``, heuristic/sts/hulls.py): a job
whose cheapest slow configuration is on one type and whose cheapest fast one is on
another starts on the first and finishes on the second."""

from __future__ import annotations

import itertools
import random

import pytest

from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.policy import JobStatus, SchedulerState
from heuristic.sts.hulls import MIXED, HullTable, JobProfiles, TypeProfile
from heuristic.sts.options import StsOptions
from heuristic.sts.policy import StsPolicy
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from instances.generators import SyntheticSpec, synthetic
from validation.evaluate import evaluate
from validation.simulator import rollout

P1, P4 = Config("p100", 1), Config("p100", 4)
V1, V4 = Config("v100", 1), Config("v100", 4)


def _instance(gpu_type_names: tuple[str, str] = ("p100", "v100")) -> Instance:
    """Ten epochs due in 11 h, no relaunch overhead. Per epoch (hours, kWh): P100 x1
    (2, 0.5) and x4 (1, 1.0); V100 x1 (3, 0.9) and x4 (0.5, 0.6). On the P100s alone
    the job needs nine epochs on x4 (9.5 kWh), on the V100s it runs all ten on x4
    (6 kWh); four epochs on one P100 and six on four V100s take 11 h and 5.6 kWh."""
    p, v = gpu_type_names
    times = {
        Config(p, 1): 2.0,
        Config(p, 4): 1.0,
        Config(v, 1): 3.0,
        Config(v, 4): 0.5,
    }
    job = Job("j", 0.0, 11.0, EpochDistribution.deterministic(10), times, 4.0, relaunch_hours=0.0)
    return Instance(
        (GpuType(p, 16.0, 250.0), GpuType(v, 16.0, 300.0)),
        (Node("np", p, 4), Node("nv", v, 4)),
        (job,),
    )


def _profiles(inst: Instance, mixed: bool) -> JobProfiles:
    table = HullTable(inst, mixed=mixed)
    status = JobStatus(inst.jobs[0], 0.0, None)
    return JobProfiles(inst, status, 0.0, tuple(g.name for g in inst.gpu_types), table)


def test_the_mixed_profile_runs_slow_on_one_type_and_fast_on_the_other():
    inst = _instance()
    best = next(iter(_profiles(inst, mixed=True).in_order()))
    assert best.gpu_type == MIXED
    steps = [(s.config, s.epochs) for s in best.profile.steps]
    assert steps == [(P1, pytest.approx(4.0)), (V4, pytest.approx(6.0))]
    assert best.profile.worst_time == pytest.approx(11.0)
    assert best.profile.tardiness_cost == 0
    # without it the cheapest profile keeps to the V100s: 6 kWh against 5.6
    single = next(iter(_profiles(inst, mixed=False).in_order()))
    assert single.gpu_type == "v100"
    assert best.profile.energy_cost == pytest.approx(single.profile.energy_cost * 5.6 / 6.0)


def test_sts_with_mixed_types_starts_on_the_slow_type_and_costs_less():
    inst = _instance()
    state = SchedulerState(0.0, inst, (JobStatus(inst.jobs[0], 0.0, None),), Occupancy(inst))
    mixed = StsPolicy(StsOptions(mixed_types=True)).decide(state)
    single = StsPolicy(StsOptions()).decide(state)
    assert mixed.assign["j"] is not None and mixed.assign["j"].config == P1
    assert single.assign["j"] is not None and single.assign["j"].config == V4
    cost = {
        m: evaluate(inst, rollout(inst, StsPolicy(StsOptions(mixed_types=m)))).total_cost
        for m in (True, False)
    }
    assert cost[True] == pytest.approx(cost[False] * 5.6 / 6.0)


def test_a_real_gpu_type_of_the_pseudo_type_name_turns_mixing_off():
    inst = _instance(("p100", MIXED))
    mixed, single = _profiles(inst, mixed=True), _profiles(inst, mixed=False)
    assert not mixed.table.mixed
    assert mixed.bounds == single.bounds  # no profile over both types
    best = next(iter(mixed.in_order()))
    assert [s.config.gpu_type for s in best.profile.steps] == [MIXED]


def test_a_job_kept_to_some_types_gets_no_profile_over_the_others():
    inst = _instance()
    table = HullTable(inst, mixed=True)
    status = JobStatus(inst.jobs[0], 0.0, None)
    only_p100 = JobProfiles(inst, status, 0.0, ("p100",), table)
    assert [t for _, t in only_p100.bounds] == ["p100"]


def test_without_a_series_the_mixed_profile_is_tried_before_any_type_is_solved(monkeypatch):
    inst = _instance()
    jp = _profiles(inst, mixed=True)
    solved: list[str] = []
    solve = JobProfiles.solve

    def counting(self: JobProfiles, gpu_type: str) -> TypeProfile:
        solved.append(gpu_type)
        return solve(self, gpu_type)

    monkeypatch.setattr(JobProfiles, "solve", counting)
    order = jp.in_order()
    assert next(order).gpu_type == MIXED
    assert solved == [MIXED]
    # the types' own profiles follow, cheapest first, if it is not placed
    assert [p.gpu_type for p in order] == ["v100", "p100"]


@pytest.mark.parametrize("relaunch", ["none", "measured"])
def test_the_mixed_profile_never_costs_more_than_a_type_s(relaunch):
    # without overheads its options hold every type's: the same exact program over more
    # options; with them its chains hold every type's own chains as well (without those,
    # 66 of 10,800 such states cost more, by up to 96%: docs/model.md)
    rng = random.Random(7)
    checked = 0
    for seed, slot in itertools.product(range(6), (None, 0.25)):
        spec = SyntheticSpec(nodes=4, jobs=12, relaunch=relaunch, slot=slot)
        inst = synthetic(spec, seed=seed)
        table = HullTable(inst, mixed=True, timing=False)
        types = tuple(g.name for g in inst.gpu_types)
        for job in inst.jobs:
            configs = list(inst.allowed_configs(job))
            overhead = inst.relaunch(job)
            for _ in range(4):
                progress = min(rng.uniform(0.0, job.max_epochs), job.max_epochs - 1e-6)
                running = Allocation(rng.choice(configs), ()) if rng.random() < 0.6 else None
                left = rng.uniform(0.0, overhead) if running is not None else 0.0
                now = job.release + rng.uniform(0.0, 1.3) * (job.due - job.release)
                status = JobStatus(job, progress, running, left)
                jp = JobProfiles(inst, status, now, types, table)
                if all(t != MIXED for _, t in jp.bounds):
                    continue
                mixed = jp.solve(MIXED).profile.objective
                single = min(jp.solve(t).profile.objective for _, t in jp.bounds if t != MIXED)
                assert mixed <= single * (1 + 1e-9) + 1e-12
                checked += 1
    assert checked > 300
