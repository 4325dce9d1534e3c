"""Capped profiles (STS's ``capped``, heuristic.sts.candidates): where a job's profile
collides with the booked ones on a large configuration, its type's profile without
large configurations is tried before the colliding one."""

from __future__ import annotations

import math

import pytest

from benchmarks.contention_rules import instance
from heuristic.core.occupancy import Allocation
from heuristic.core.policy import JobStatus
from heuristic.core.registry import make_policy
from heuristic.sts.candidates import booked_first, candidates
from heuristic.sts.hulls import HullTable, large_configs
from heuristic.sts.ledger import Ledger
from heuristic.sts.profile import Profile, Step
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from validation.online import run_online
from validation.simulator import rollout

V1, V4, V8 = Config("v100", 1), Config("v100", 4), Config("v100", 8)
K2, K4 = Config("k80", 2), Config("k80", 4)
DIST = EpochDistribution((10.0,), (1.0,))  # ten epochs, no early stop


def _instance(due: float = 2.0) -> Instance:
    """One 8-GPU and one 4-GPU V100 node; ten epochs in 2 h need the 8 GPUs at the end
    (four GPUs take 2.8 h)."""
    jobs = tuple(Job(f"j{i}", 0.0, due, DIST, {V1: 1.0, V4: 0.28, V8: 0.15}, 4.0) for i in range(2))
    nodes = (Node("n0", "v100", 8), Node("n1", "v100", 4))
    return Instance((GpuType("v100", 16.0, 300.0),), nodes, jobs)


def _tried(inst: Instance, status: JobStatus, capped: bool) -> list[Profile]:
    """The profiles STS tries for the second job, in order, while the first job's
    profile holds the 8-GPU node for the whole horizon in the ledger."""
    table = HullTable(inst)
    ledger = Ledger(inst, 0.0, 10.0, 0.25)
    ledger.book(inst.jobs[0], Profile((Step(V8, 0.0, 10.0),), 1.5, 0.0, 0.0, 2.0), DIST)
    cands = candidates(inst, status, 0.0, ("v100",), table, 0.0)
    tried = booked_first(inst, status, 0.0, cands, ledger, 0.0, DIST, table, 0.0, capped)
    return [p.profile for p in tried]


def _configs(p: Profile) -> set[Config]:
    return {s.config for s in p.steps}


def test_large_means_more_than_half_of_the_types_largest_node_or_several_nodes():
    inst = Instance(
        (GpuType("v100", 16.0, 300.0), GpuType("k80", 12.0, 150.0)),
        (Node("v", "v100", 8), Node("w", "v100", 4), Node("k", "k80", 4)),
        (Job("j", 0.0, 2.0, DIST, {V1: 1.0}, 4.0),),
    )
    large = large_configs(inst)
    assert large(V8) and large(Config("v100", 5)) and not large(V4) and not large(V1)
    assert large(K4) and not large(K2)  # the k80 nodes hold 4
    assert large(Config("k80", 8, nodes=2))
    assert not large(Config("v100", 1, shared=True))


def test_capped_runs_where_a_gpu_type_has_no_nodes():
    """A GPU type named with no node of it (a job's configurations on it are allowed
    nowhere) stopped ``capped`` STS with ``max() arg is an empty sequence`` (a review
    of 2026-12-07); the type is now left out of the sizes."""
    inst = Instance(
        (GpuType("v100", 16.0, 300.0), GpuType("k80", 12.0, 150.0)),
        (Node("n0", "v100", 8), Node("n1", "v100", 4)),
        tuple(Job(f"j{i}", 0.0, 2.0, DIST, {V1: 1.0, V8: 0.15, K2: 0.6}, 4.0) for i in range(3)),
    )
    assert large_configs(inst)(V8) and not large_configs(inst)(V1)
    plan = rollout(inst, make_policy("sts", capped=True))
    assert {s.config.gpu_type for s in plan.segments} == {"v100"}


def test_the_capped_table_holds_no_large_configuration():
    inst = _instance()
    table = HullTable(inst)
    job = inst.jobs[0]
    assert {o.config for o in table.capped().options(job, "v100")} == {V1, V4}
    assert {o.config for o in table.options(job, "v100")} == {V1, V4, V8}
    assert table.capped().fastest(job) == 0.28
    only_large = Job("big", 0.0, 2.0, DIST, {V8: 0.15}, 4.0)
    solo = Instance(inst.gpu_types, inst.nodes, (only_large,))
    # a job with nothing but large configurations has no capped option at all
    assert HullTable(solo).capped().options(only_large, "v100") == []
    assert math.isinf(HullTable(solo).capped().fastest(only_large))


def test_a_colliding_profile_is_preceded_by_its_capped_one():
    inst = _instance()
    waiting = JobStatus(inst.jobs[1], 0.0, None)
    without = _tried(inst, waiting, capped=False)
    with_cap = _tried(inst, waiting, capped=True)
    colliding = without[-1]  # STS's own choice, tried last: 4 GPUs, then the 8
    assert _configs(colliding) == {V4, V8} and colliding.tardiness_cost == 0
    assert not any(_configs(p) <= {V1, V4} for p in without)
    capped = [p for p in with_cap if _configs(p) <= {V1, V4}]
    assert len(capped) == 1 and with_cap.index(capped[0]) == len(with_cap) - 2
    # steadily on four GPUs: 2.8 h for the ten epochs, late by 0.8 h
    assert capped[0].worst_time == 10 * 0.28
    assert with_cap[-1] == colliding


def test_a_job_running_a_large_configuration_is_not_capped():
    inst = _instance()
    on_large = JobStatus(inst.jobs[1], 1.0, Allocation(V8, tuple(("n0", g) for g in range(8))))
    tried = _tried(inst, on_large, capped=True)
    assert not any(_configs(p) <= {V1, V4} for p in tried)


def test_on_a_burst_of_short_jobs_capping_is_measured():
    """The week's 30 jobs on 8 nodes from 3000 (seed 0, online): a burst of jobs due
    within minutes all book the 8-GPU V100 nodes for their last steps (docs/contended.md,
    'Five seeds per window'); with capped profiles some run steadily on fewer GPUs.
    The figures measured: capping cost less here (6.5725 against 6.6654) until wake-ups
    were restated (2026-11-30, docs/model.md 'The event engine'); now it costs more, and
    it stays off by default. Since shared slots are weighed by the rollout (2026-12-01,
    ``weigh_sharing``): 6.8738 against 7.3302 (6.6654 and 7.5425 without them weighed,
    tests/heuristic/sts/test_decisions_pinned.py keeping that form's decisions); since
    no copy without them is weighed in a burst of arrivals (``burst_jobs``, later that
    day), 6.9284 against 7.5425; since a greedy copy is weighed where capacity binds
    (``weigh_greedy``, late that day), 6.9284 against 6.9333."""
    case = ("week", 30, 8, 3000, 0)
    inst = instance(case, "uniform")
    cost = {
        c: run_online(inst, "sts", seed=0, options={"capped": c}).summary()["total_cost"]
        for c in (False, True)
    }
    assert cost[False] == pytest.approx(6.9284, abs=1e-4)
    assert cost[True] == pytest.approx(6.9333, abs=1e-4)
