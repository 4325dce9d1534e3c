"""Plans by exact re-insertion (milp.decomposition.reinsert): where one more job fits
beside a plan's columns is the master's integer rows read for that job, and the plans
re-insertion makes pass the checker at the evaluator's cost, never above the plan they
start from nor below the optimum."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from heuristic.sts.policy import StsPolicy
from instances.generators.suite import milp_suite
from milp.data import milp_data
from milp.decomposition import solve
from milp.decomposition.colgen import CgOptions
from milp.decomposition.columns import Column, columns_of_plan
from milp.decomposition.oracle import Oracle
from milp.decomposition.plans import assemble
from milp.decomposition.reinsert import Room, eject, improve_by_reinsertion, reinsert
from milp.decomposition.search import Incumbent
from milp.decomposition.space import Space, build_space
from milp.solve import default_slots
from tests.milp.decomposition.instances import two_nodes
from validation.check import check_plan
from validation.evaluate import evaluate
from validation.simulator import rollout


def _space(inst, slots: int) -> Space:
    return build_space(milp_data(inst, slots, None, None, check_size=False))


def _choice(space: Space, j: int, gpus: int, node: str, label: int = -1, shared=False) -> int:
    """The index of job ``j``'s choice of ``gpus`` GPUs (shared or not) on ``node``."""
    js = space.jobs[j]
    for c, ch in enumerate(js.choices):
        cfg = js.jd.configs[ch.k]
        if (cfg.gpus, cfg.shared, ch.nodes[0], ch.label) == (gpus, shared, node, label):
            return c
    raise AssertionError((j, gpus, node, label, shared))


def test_where_a_job_fits_beside_the_others():
    """Two nodes of two V100s. j0 (6 GB) holds both GPUs of ``a`` in slots 0-1: none of
    j1's choices on ``a`` fits there, every one on ``b`` does, and from slot 2 on ``a``
    is free again. Then j0 is a tenant of label 0 of ``a``: j1 (11 GB; 17 GB together
    overflow a 16 GB GPU) may not join it but may take label 1 (a GPU is free), and an
    exclusive GPU of ``a`` as well; with j2 on ``a``'s other GPU, label 1 needs a GPU
    that is not there."""
    inst = two_nodes(0, jobs=3, shared=True, multi=True)
    space = _space(inst, 6)
    both_a = _choice(space, 0, 2, "a")
    room = Room(space, [Column(0, 0, (both_a, both_a), 0.0)])
    fits = room.fits(1, 0, 5)
    on_a = [c for c, ch in enumerate(space.jobs[1].choices) if "a" in ch.nodes]
    on_b_only = [c for c, ch in enumerate(space.jobs[1].choices) if ch.nodes == ("b",)]
    assert not fits[on_a][:, :2].any() and fits[on_a][:, 2:].all()
    assert fits[on_b_only].all()

    tenant = _choice(space, 0, 1, "a", label=0, shared=True)
    room = Room(space, [Column(0, 0, (tenant,), 0.0)])
    fits = room.fits(1, 0, 0)[:, 0]
    assert not fits[_choice(space, 1, 1, "a", label=0, shared=True)]  # memory
    assert fits[_choice(space, 1, 1, "a", label=1, shared=True)]
    assert fits[_choice(space, 1, 1, "a")]  # the GPU label 0 leaves
    assert not fits[_choice(space, 1, 2, "a")]  # label 0 holds one of the two
    exclusive = _choice(space, 2, 1, "a")
    room.add(Column(2, 0, (exclusive,), 0.0))
    fits = room.fits(1, 0, 0)[:, 0]
    assert not fits[_choice(space, 1, 1, "a", label=1, shared=True)]
    assert fits[_choice(space, 1, 1, "b", label=0, shared=True)]
    room.remove(Column(2, 0, (exclusive,), 0.0))
    assert room.fits(1, 0, 0)[_choice(space, 1, 1, "a", label=1, shared=True), 0]


def _plans(relaunch: bool):
    for inst in milp_suite():
        if relaunch:
            inst = inst.replace(relaunch_hours=0.05)
        yield inst


@pytest.mark.parametrize("relaunch", [False, True])
def test_reinsertion_makes_checked_plans_between_the_start_and_the_optimum(relaunch):
    """Every suite instance (sharing, exclusive GPUs, multi-node; with and without a
    relaunch overhead) from the STS plan: best responses and ejections make a plan
    that passes the checker, costs what the evaluator says, no more than STS's and no
    less than the optimum (branch-and-price's, on the instances of up to six jobs)."""
    gained = 0
    for inst in _plans(relaunch):
        plan = rollout(inst, StsPolicy())
        slots = default_slots(inst, plan)
        space = _space(inst, slots)
        oracle = Oracle(space, CgOptions().grid)
        columns = columns_of_plan(space, plan)
        start = math.fsum(c.cost for c in columns)
        incumbent = Incumbent(columns, start)
        improve_by_reinsertion(oracle, incumbent, math.inf)
        assert incumbent.columns is not None
        got = assemble(space, incumbent.columns)
        assert check_plan(inst, got) == [], inst.name
        cost = evaluate(inst, got).total_cost
        assert cost == pytest.approx(incumbent.cost, rel=1e-9, abs=1e-9), inst.name
        assert incumbent.cost <= start + 1e-9
        gained += incumbent.cost < start - 1e-9
        if len(inst.jobs) <= 6:  # branch-and-price proves these within seconds
            exact = solve(inst, initial_plan=plan, slots=slots, time_limit=60)
            assert exact.optimal and exact.objective is not None
            assert incumbent.cost >= exact.objective - 1e-6 * max(1.0, exact.objective)
    assert gained >= 3  # (a check that cannot fail otherwise: STS's plans are improved)


def test_no_job_gains_alone_after_the_passes_and_ejection_is_seeded():
    """After :func:`reinsert` no job's best response is cheaper than its column (a pass
    changes nothing); ejections from the same plan with the same seed end alike."""
    (inst,) = [i for i in milp_suite() if i.name == "suite-share-4n10j-s2"]
    plan = rollout(inst, StsPolicy())
    space = _space(inst, default_slots(inst, plan))
    oracle = Oracle(space, CgOptions().grid)
    columns = columns_of_plan(space, plan)
    incumbent = Incumbent(columns, math.fsum(c.cost for c in columns))
    reinsert(oracle, incumbent, None)
    assert reinsert(oracle, incumbent, None) == 0
    ends = []
    for _ in range(2):
        again = Incumbent(list(incumbent.columns or ()), incumbent.cost)
        eject(oracle, again, time.perf_counter() + 1e6, seed=3)
        ends.append((again.cost, [(c.start, c.choices) for c in again.columns or ()]))
    assert ends[0] == ends[1]
    assert np.isfinite(ends[0][0]) and ends[0][0] <= incumbent.cost
