"""The ledger's cases a mutation test found untested (2026-12-07): the grid's last,
partial bin, the lead time's first bin, the reserve's floor of one node and its reach
over a step that starts past the lead time, the reserve in ``room`` and in the digest,
a cell starting inside a bin, a multi-node step's GPUs, a distributed configuration's
classes, the spans kept for the last profile, and what ``last_step_full`` reads."""

from __future__ import annotations

import numpy as np

from heuristic.sts.ledger import Ledger
from heuristic.sts.profile import Profile, Step
from instances import Config, GpuType, Instance, Job, Node
from tests.heuristic.sts.test_ledger import DIST, V1, V8, V16, _instance, _profile

LARGE = ("v100", 8)


def test_the_grid_covers_a_horizon_that_ends_inside_a_bin():
    """(mutant L02: the bins floored) a 1.1-h horizon on a 0.25-h grid has five bins:
    the 8-GPU step from 1 h is booked in the last, partial one."""
    inst = _instance((8, 8))
    ledger = Ledger(inst, 0.0, 1.1, 0.25)
    assert ledger.bins == 5
    ledger.book(inst.jobs[0], _profile(1.0, 1.0), DIST)
    assert ledger.load["v100"].tolist() == [1.0, 1.0, 1.0, 1.0, 8.0]
    assert ledger.large[LARGE].tolist() == [0.0, 0.0, 0.0, 0.0, 1.0]


def test_the_reserve_applies_from_the_bin_at_the_lead_time():
    """(mutant L01: the lead's tolerance turned the wrong way, one bin later) a lead of
    3 h on a 0.25-h grid is 12 bins: a step from 3 h to 3.25 h is past it, and three
    of four 8-GPU nodes are all it may use; 15 minutes earlier it may use all four."""
    inst = _instance((8, 8, 8, 8))
    job = inst.jobs[0]
    for first, fits in ((3.0, False), (2.75, True)):
        ledger = Ledger(inst, 0.0, 10.0, 0.25, reserve=0.25, lead=3.0)
        assert ledger.lead == 12
        for _ in range(3):
            ledger.book(job, _profile(first, 0.25), DIST)
        assert ledger.fits(job, _profile(first, 0.25), DIST) is fits


def test_the_reserve_holds_throughout_a_step_that_starts_past_the_lead_time():
    """(mutant L27: the bins before the reserve not floored at 0, a negative slice) the
    lead is 1 h; three 8-GPU steps fill 2-3 h, three of the four nodes the reserve of
    a quarter leaves. A fourth step from 2 h to 4 h does not fit: its first hour is
    past the lead time as much as its second."""
    inst = _instance((8, 8, 8, 8))
    job = inst.jobs[0]
    ledger = Ledger(inst, 0.0, 10.0, 0.25, reserve=0.25, lead=1.0)
    for _ in range(3):
        ledger.book(job, _profile(2.0, 1.0), DIST)  # 8 GPUs from 2 h to 3 h
    assert not ledger.fits(job, _profile(2.0, 2.0), DIST)  # 8 GPUs from 2 h to 4 h
    assert ledger.fits(job, _profile(3.0, 1.0), DIST)  # 3 h to 4 h: beside none


def test_the_digest_tells_ledgers_apart_by_their_reserve():
    """(mutant L22: ``room`` blind to the reserve; mutant L26: the reserve left out of
    the digest) two ledgers alike but for the reserve answer ``room`` differently, so
    their digests differ."""
    inst = _instance((8, 8, 8, 8))
    job = inst.jobs[0]
    ledgers = [Ledger(inst, 0.0, 10.0, 0.25, reserve=r) for r in (0.0, 0.25)]
    for ledger in ledgers:
        for _ in range(3):
            ledger.book(job, _profile(1.0, 1.0), DIST)
    edges = np.array([1.0, 2.0])
    assert [ledger.room(V8, edges).tolist() for ledger in ledgers] == [[True], [False]]
    assert ledgers[0].state(["v100"]) != ledgers[1].state(["v100"])


def test_a_last_step_is_on_a_full_class_by_the_true_count_of_nodes():
    """(mutant L36: ``last_step_full`` counted against the reserve) three 8-GPU steps on
    four nodes fill what the reserve leaves but not the class: not full; a fourth
    fills it."""
    inst = _instance((8, 8, 8, 8))
    job = inst.jobs[0]
    ledger = Ledger(inst, 0.0, 10.0, 0.25, reserve=0.25)
    for _ in range(3):
        ledger.book(job, _profile(1.0, 1.0), DIST)
    assert not ledger.last_step_full(job, _profile(1.0, 1.0), DIST)
    ledger.book(job, _profile(1.0, 1.0), DIST)
    assert ledger.last_step_full(job, _profile(1.0, 1.0), DIST)


def test_a_last_step_is_on_a_full_class_when_its_type_s_gpus_are_all_booked():
    """(mutant L35: the GPU count's tolerance turned the wrong way) one-GPU steps hold
    no large node: eight of them on two 4-GPU nodes book the type exactly full."""
    inst = _instance((4, 4))
    job = inst.jobs[0]
    one = Profile((Step(V1, 0.0, 1.0),), 1.0, 0.0, 0.0, 10.0)
    ledger = Ledger(inst, 0.0, 10.0, 0.25)
    assert ledger.holds(V1) == ()
    for _ in range(7):
        ledger.book(job, one, DIST)
    assert not ledger.last_step_full(job, one, DIST)
    ledger.book(job, one, DIST)
    assert ledger.last_step_full(job, one, DIST)


def test_the_spans_kept_for_the_last_profile_are_the_job_s():
    """(mutant L10: the spans kept for the profile just checked are reused for another
    job) the same profile takes a job twice as slow twice as long."""
    fast = _instance((8, 8)).jobs[0]
    slow = Job("slow", 0.0, 10.0, fast.distribution, {V1: 2.0, V8: 0.5, V16: 0.25}, 4.0)
    inst = Instance((GpuType("v100", 16.0, 300.0),), (Node("n0", "v100", 8),), (fast, slow))
    one = Profile((Step(V1, 0.0, 1.0),), 1.0, 0.0, 0.0, 10.0)
    ledger = Ledger(inst, 0.0, 10.0, 0.25)
    assert ledger.fits(fast, one, DIST)
    ledger.book(slow, one, DIST)
    assert ledger.load["v100"].tolist()[:10] == [1.0] * 8 + [0.0] * 2


def test_a_multi_node_step_books_the_gpus_of_all_its_nodes():
    """(mutant L06: a multi-node step booked as one node's GPUs) the step on two whole
    8-GPU nodes books 16 of the type's GPUs, and two of its large nodes."""
    inst = _instance((8, 8, 8))
    job = inst.jobs[0]
    wide = Profile((Step(V1, 0.0, 1.0), Step(V16, 1.0, 9.0)), 2.0, 0.0, 0.0, 10.0)
    ledger = Ledger(inst, 0.0, 10.0, 0.25)
    ledger.book(job, wide, DIST)
    np.testing.assert_allclose(ledger.load["v100"][4:8], 16.0)
    np.testing.assert_allclose(ledger.large[LARGE][4:8], 2.0)


def test_room_reads_the_bin_a_cell_starts_inside():
    """(mutant L23: a cell's first bin rounded up) both 8-GPU nodes are booked from 1 h
    to 2 h: a cell from 1.9 h starts inside the last full bin (1.75-2 h), so it does
    not fit; one from 2 h does."""
    inst = _instance((8, 8))
    ledger = Ledger(inst, 0.0, 10.0, 0.25)
    for _ in range(2):
        ledger.book(inst.jobs[0], _profile(1.0, 1.0), DIST)
    assert ledger.room(V8, np.array([1.9, 2.5])).tolist() == [False]
    assert ledger.room(V8, np.array([2.0, 2.5])).tolist() == [True]


def test_a_distributed_configuration_holds_the_class_of_its_own_size():
    """(mutant L30: a distributed configuration held only classes smaller than its
    GPUs) 8 GPUs spread over a rack count once against the 8-GPU nodes as well as the
    nodes of at least 6."""
    mixed = Ledger(_instance((8, 8, 6, 4, 4)), 0.0, 10.0, 0.25)
    spread = Config("v100", 8, span="rack", net_gbps=10.0)
    assert mixed.holds(spread) == ((("v100", 6), 1), (("v100", 8), 1))
    assert mixed.holds(Config("v100", 6, span="rack", net_gbps=10.0)) == ((("v100", 6), 1),)


def test_a_last_step_starting_at_the_horizon_is_off_the_grid():
    """(mutant L11: an empty span kept where a step starts at the horizon) on a 1-h
    grid the 8-GPU step from 1 h is off it, as any step past the horizon: the last step
    read is the one-GPU step, on a type sixteen such steps fill. On a 2-h grid the
    8-GPU step is read, and its nodes are free."""
    inst = _instance((8, 8))
    job = inst.jobs[0]
    one = Profile((Step(V1, 0.0, 1.0),), 1.0, 0.0, 0.0, 10.0)
    for horizon, full in ((1.0, True), (2.0, False)):
        ledger = Ledger(inst, 0.0, horizon, 0.25)
        for _ in range(16):
            ledger.book(job, one, DIST)
        assert [s[1:3] for s in ledger.unclipped(job, _profile(1.0, 1.0), DIST)] == [
            (0, 4),
            (4, 8),
        ]
        assert ledger.last_step_full(job, _profile(1.0, 1.0), DIST) is full


def test_a_reserve_that_rounds_to_no_node_leaves_one():
    """(mutant L29: the floor of one node dropped) a reserve of 0.6 on a type of one
    large node rounds to none in use; at least one is kept, and a lone step fits."""
    inst = _instance((8,))
    for reserve in (0.6, 1.0):
        ledger = Ledger(inst, 0.0, 10.0, 0.25, reserve=reserve)
        assert ledger.fits(inst.jobs[0], _profile(1.0, 1.0), DIST)
        ledger.book(inst.jobs[0], _profile(1.0, 1.0), DIST)
        assert not ledger.fits(inst.jobs[0], _profile(1.0, 1.0), DIST)
