"""The kept jobs' bookings all at once (heuristic.sts.kept) against the ledger's own
one-by-one methods: the same loads, the same answer on a kept job's last step."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristic.sts.kept import KeptBookings, KeptSpans
from heuristic.sts.ledger import Ledger
from heuristic.sts.profile import Profile, Step
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node

CONFIGS = (
    Config("v100", 1),
    Config("v100", 1, shared=True),
    Config("v100", 4),
    Config("v100", 8),
    Config("v100", 16, nodes=2),
    Config("k80", 1),
    Config("k80", 4),
)


def _instance() -> Instance:
    job = Job("j", 0.0, 10.0, EpochDistribution((4.0,), (1.0,)), {c: 0.1 for c in CONFIGS}, 4.0)
    nodes = (("v100", 8), ("v100", 8), ("v100", 4), ("k80", 4), ("k80", 2))
    return Instance(
        (GpuType("v100", 16.0, 300.0), GpuType("k80", 12.0, 150.0)),
        tuple(Node(f"n{k}", t, g) for k, (t, g) in enumerate(nodes)),
        (job,),
        max_share=2,
    )


INST = _instance()


@st.composite
def _kept(draw: st.DrawFn) -> tuple[Job, Profile, EpochDistribution, float]:
    """A profile of 1-3 steps chosen up to 6 hours before now (1,000 epochs at most)."""
    n = draw(st.integers(1, 3))
    cuts = sorted(draw(st.lists(st.integers(1, 60), min_size=n, max_size=n, unique=True)))
    steps, start = [], 0.0
    for end in cuts:
        cfg = draw(st.sampled_from(CONFIGS))
        lost = draw(st.sampled_from((0.0, 0.05, 0.3)))
        steps.append(Step(cfg, start, float(end), lost))
        start = float(end)
    job = Job(
        f"k{draw(st.integers(0, 10**6))}",
        0.0,
        10.0,
        INST.jobs[0].distribution,
        INST.jobs[0].epoch_times,
        4.0,
    )
    dist = draw(
        st.sampled_from(
            (
                EpochDistribution((70.0,), (1.0,)),
                EpochDistribution((5.0, 70.0), (0.6, 0.4)),
                # several stops inside one step: booked in parts (Ledger.unclipped)
                EpochDistribution((3.0, 12.0, 12.5, 30.0, 70.0), (0.3, 0.2, 0.1, 0.1, 0.3)),
            )
        )
    )
    since = draw(st.floats(0.0, 6.0))
    return job, Profile(tuple(steps), 1.0, 0.0, 0.0, 10.0), dist, 10.0 - since


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_kept(), max_size=12, unique_by=lambda k: k[0].id),
    st.floats(0.5, 8.0),
    st.booleans(),
    st.booleans(),
)
def test_kept_bookings_match_the_ledger_one_by_one(kept, horizon, memo_first, parts):
    """With steps booked whole or in parts where the job may stop (``book_parts``)."""
    now = 10.0
    one = Ledger(INST, now, horizon, 0.25, parts=parts)
    for job, profile, dist, at in kept:
        one.book_since(job, profile, dist, now - at)
    many = Ledger(INST, now, horizon, 0.25, parts=parts)
    memo: dict[str, KeptSpans] = {}
    if memo_first:  # spans memoised on an earlier decision's ledger serve a later one
        memo = KeptBookings(Ledger(INST, 7.5, 30.0, 0.25, parts=parts), kept, {}).memo
    booked = KeptBookings(many, kept, memo)
    booked.book()
    for t in one.load:
        np.testing.assert_allclose(many.load[t], one.load[t], rtol=0, atol=1e-9)
    for key in one.large:
        np.testing.assert_allclose(many.large[key], one.large[key], rtol=0, atol=1e-9)
    expected = any(
        len(p.steps) > 1 and not p.runs and one.last_step_full(job, p, d, now - at)
        for job, p, d, at in kept
    )
    assert booked.last_step_full() == expected


def test_a_kept_last_step_on_a_full_class_is_seen_and_one_with_room_is_not():
    """Two kept jobs end on an 8-GPU V100 step at the same time: the cluster's two 8-GPU
    nodes are booked full. One such job alone leaves room."""
    job = INST.jobs[0]
    dist = EpochDistribution((70.0,), (1.0,))
    steps = (Step(Config("v100", 1), 0.0, 10.0), Step(Config("v100", 8), 10.0, 40.0))
    profile = Profile(steps, 1.0, 0.0, 0.0, 10.0)
    other = Job("k", 0.0, 10.0, job.distribution, job.epoch_times, 4.0)
    both = KeptBookings(
        Ledger(INST, 10.0, 8.0, 0.25), [(job, profile, dist, 9.0), (other, profile, dist, 9.5)], {}
    )
    both.book()
    assert both.last_step_full()
    alone = KeptBookings(Ledger(INST, 10.0, 8.0, 0.25), [(job, profile, dist, 9.0)], {})
    alone.book()
    assert not alone.last_step_full()


def test_a_kept_last_step_booked_in_parts_is_full_where_any_part_is():
    """Booked in parts (``book_parts``), a kept job's last 8-GPU step finds its class
    full in its first part (surely running, beside a one-step job on the other 8-GPU
    node) though not in the part after the job's likely stop: the step is full, as
    :meth:`Ledger.last_step_full` says."""
    job = INST.jobs[0]
    other = Job("k", 0.0, 10.0, job.distribution, job.epoch_times, 4.0)
    early = EpochDistribution((8.0, 70.0), (0.5, 0.5))
    # 0.1 h per epoch: 0.5 h on one GPU, then eight from 0.5 h (surely to 0.8 h)
    two = Profile(
        (Step(Config("v100", 1), 0.0, 5.0), Step(Config("v100", 8), 5.0, 60.0)),
        1.0,
        0.0,
        0.0,
        10.0,
    )
    one = Profile((Step(Config("v100", 8), 0.0, 8.0),), 1.0, 0.0, 0.0, 10.0)  # to 0.8 h
    sure = EpochDistribution((70.0,), (1.0,))
    ledger = Ledger(INST, 10.0, 8.0, 0.25, parts=True)
    booked = KeptBookings(ledger, [(job, two, early, 10.0), (other, one, sure, 10.0)], {})
    booked.book()
    assert ledger.last_step_full(job, two, early)
    assert booked.last_step_full()
