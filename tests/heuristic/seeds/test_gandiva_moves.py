"""Gandiva's cheap moves (heuristic/seeds/gandiva_moves.py) by hand on one 4-GPU V100
node: unpacking a job whose partner left, shrinking a grown job, growing onto idle GPUs,
and the rule that a move must save more than its relaunch. Cases a mutation review
found free to move (2026-12-07: 19 mutants, 5 killed by test_gandiva.py and the seeds'
review; these tests kill 12 of the 14 left, and 2 are equivalent: a lone job of a pack
always runs a shared slot, so the check that it does cannot fail, and a job of a pack
runs a shared slot, never grown, so the check that it is not in one cannot either)"""

from __future__ import annotations

import pytest

from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.policy import JobStatus
from heuristic.seeds.gandiva_moves import (
    Now,
    _moved,
    grow_idle,
    own_configs,
    saves,
    shrink,
    unpack_lone,
)
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node

SLOT = Config("v100", 1, shared=True)
C1, C2, C3, C4 = (Config("v100", g) for g in (1, 2, 3, 4))
TEN = EpochDistribution.deterministic(10.0)


def _job(i: str, times: dict[Config, float], relaunch: float = 0.1, dist=TEN) -> Job:
    return Job(i, 0.0, 100.0, dist, times, 4.0, relaunch_hours=relaunch)


def _now(running: dict[Job, Allocation], k80: bool = False) -> Now:
    """Node ``n`` of 4 V100s (and ``k``, 4 K80s, with ``k80``) running ``running``."""
    nodes = [Node("n", "v100", 4)] + ([Node("k", "k80", 4)] if k80 else [])
    types = [GpuType("v100", 32.0, 300.0)] + ([GpuType("k80", 12.0, 150.0)] if k80 else [])
    inst = Instance(tuple(types), tuple(nodes), tuple(running))
    occ = Occupancy(inst)
    present = {}
    for job, alloc in running.items():
        occ.place(job, alloc)
        present[job.id] = JobStatus(job, 0.0, alloc)
    return Now(inst, occ, present, {})


def _on(cfg: Config, *gpus: int) -> Allocation:
    return Allocation(cfg, tuple(("n", g) for g in gpus))


@pytest.mark.parametrize(("relaunch", "alone"), [(0.1, True), (9.0, False)])
def test_a_packed_job_whose_partner_left_runs_alone_where_that_saves_time(relaunch, alone):
    """a shared GPU 0 with b, which has left; alone on it a runs 10 epochs in 5 h rather
    than 10 h: it unpacks unless its relaunch costs more than that. The pack is gone
    either way."""
    a = _job("a", {SLOT: 1.0, C1: 0.5}, relaunch)
    d = _now({a: _on(SLOT, 0)})
    packs = {("n", 0): ("a", "b")}
    unpack_lone(d, packs)
    assert packs == {}
    assert d.assign == ({"a": _on(C1, 0)} if alone else {})
    assert d.occ.owner["a"] == (_on(C1, 0) if alone else _on(SLOT, 0))


def test_a_grown_job_shrinks_back_onto_its_first_gpus():
    g = _job("g", {C1: 1.0, C4: 0.3})
    d = _now({g: _on(C4, 0, 1, 2, 3)})
    grown = {"g": 1}
    shrink(d, grown)
    assert d.assign == {"g": _on(C1, 0)} and grown == {}
    assert d.occ.free["n"] == frozenset({1, 2, 3})


def test_growing_again_remembers_the_size_it_was_asked_for():
    """g, grown from one GPU to two, grows onto the other two: it shrinks to one."""
    g = _job("g", {C1: 1.0, C2: 0.55, C4: 0.3})
    d = _now({g: _on(C2, 0, 1)})
    grown = {"g": 1}
    grow_idle(d, {}, grown)
    assert d.assign == {"g": _on(C4, 0, 1, 2, 3)} and grown == {"g": 1}


def test_growing_means_more_gpus_of_the_jobs_own_type():
    """g runs two V100s; a faster two-GPU configuration (more cores) is no growth, and a
    K80 configuration of four is not on its node: it grows to three V100s."""
    c2fast = Config("v100", 2, cpus=8)
    g = _job("g", {C2: 0.55, c2fast: 0.2, C3: 0.4, Config("k80", 4): 0.1})
    d = _now({g: _on(C2, 0, 1)}, k80=True)
    grown: dict[str, int] = {}
    grow_idle(d, {}, grown)
    assert d.assign == {"g": _on(C3, 0, 1, 2)} and grown == {"g": 2}


def test_a_faster_configuration_of_the_same_size_is_no_growth():
    g = _job("g", {C2: 0.55, Config("v100", 2, cpus=8): 0.2})
    d = _now({g: _on(C2, 0, 1)})
    grown: dict[str, int] = {}
    grow_idle(d, {}, grown)
    assert d.assign == {} and grown == {}


def test_a_move_that_does_not_fit_leaves_the_job_where_it_was():
    a = _job("a", {C1: 1.0, C2: 0.55})
    b = _job("b", {C1: 1.0})
    d = _now({a: _on(C1, 0), b: _on(C1, 1)})
    assert not _moved(d.occ, a, _on(C1, 0), _on(C2, 0, 1))
    assert d.occ.owner["a"] == _on(C1, 0) and d.occ.owner["b"] == _on(C1, 1)
    assert _moved(d.occ, a, _on(C1, 0), _on(C2, 0, 2))
    assert d.occ.owner["a"] == _on(C2, 0, 2)


def test_own_configs_are_the_exclusive_ones_or_else_the_shared_slots():
    both = _job("both", {SLOT: 2.0, C1: 1.0})
    slots = _job("slots", {SLOT: 2.0})
    d = _now({both: _on(C1, 0), slots: _on(SLOT, 1)})
    assert own_configs(d.inst, both) == [C1]
    assert own_configs(d.inst, slots) == [SLOT]


def test_a_move_saves_time_only_beyond_its_relaunch():
    """10 epochs left, 0.1 h saved on each: 1 h saved, against a relaunch of 1 h (no)
    or a little under it (yes)."""
    at = _job("at", {C1: 1.0, C2: 0.9}, relaunch=1.0)
    under = _job("under", {C1: 1.0, C2: 0.9}, relaunch=0.999)
    d = _now({at: _on(C1, 0), under: _on(C1, 1)})
    assert not saves(d.inst, d.present["at"], C1, C2)
    assert saves(d.inst, d.present["under"], C1, C2)


def test_a_move_counts_the_epochs_a_running_job_still_expects():
    """Stops at 2 or 10 epochs, even odds, after 1 epoch: 5 epochs expected to remain
    (not its 6 in all, nor the 9 left at most); 0.1 h an epoch saved: 0.5 h, against a
    relaunch of 0.55 h (no) or 0.45 h (yes)."""
    dist = EpochDistribution((2.0, 10.0), (0.5, 0.5))
    slow = _job("slow", {C1: 1.0, C2: 0.9}, relaunch=0.55, dist=dist)
    quick = _job("quick", {C1: 1.0, C2: 0.9}, relaunch=0.45, dist=dist)
    d = _now({slow: _on(C1, 0), quick: _on(C1, 1)})
    assert not saves(d.inst, JobStatus(slow, 1.0, _on(C1, 0)), C1, C2)
    assert saves(d.inst, JobStatus(quick, 1.0, _on(C1, 1)), C1, C2)
