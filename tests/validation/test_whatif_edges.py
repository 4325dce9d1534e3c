"""What-if runs' cases a mutation test found untested (2026-12-07): the state a foreseen
run is keyed by, a resume that is not exact, the segments and overhead left that
:class:`History` records, a running job's overhead left, and the quantile at 1 (and,
below 1, a defect: a stop an ulp past the job's maximum)."""

from __future__ import annotations

import pytest

from heuristic.baselines.fifo import FifoPolicy
from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.policy import Decision, JobStatus, SchedulerState
from heuristic.sts.options import StsOptions
from instances import EpochDistribution, Instance, Plan
from tests.validation.test_simulator_edges import TWO, _one_job
from validation.whatif import (
    Ahead,
    History,
    key_of,
    quantile_epochs,
    resumes_exactly,
    what_if,
)

ON = Allocation(TWO, (("n0", 0), ("n0", 1)))
FLIPPED = Allocation(TWO, (("n0", 1), ("n0", 0)))


def _running(inst: Instance, time: float, left: float, done: float = 1.0) -> SchedulerState:
    """A at ``time``, ``done`` epochs done, on both GPUs of n0 with ``left`` hours of
    overhead."""
    occ = Occupancy(inst)
    occ.place(inst.job("A"), ON)
    return SchedulerState(time, inst, (JobStatus(inst.job("A"), done, ON, left),), occ)


def test_a_foreseen_run_is_not_taken_where_the_overhead_left_differs():
    """(mutant W05: the overhead left not in the key) at 1 h, A with half an hour of its
    overhead left is not the state the run recorded with a quarter left."""
    inst = _one_job()
    seen, other = _running(inst, 1.0, 0.25), _running(inst, 1.0, 0.5)
    assert resumes_exactly(seen) and resumes_exactly(other)
    decision = Decision({}, 2.0)
    ahead = Ahead(Plan(()), ((key_of(seen), decision),), StsOptions(), frozenset({"A"}))
    assert ahead.follows(seen, StsOptions(), decision) is not None
    assert ahead.follows(other, StsOptions(), decision) is None


def test_an_overhead_whose_end_rounds_does_not_resume_exactly():
    """(mutant W07: only ``overhead_left <= time`` checked) 0.1 h left at 1 h ends at
    1.1, and ``1.1 - 1.0`` is not 0.1 in floats; half an hour left is exact."""
    inst = _one_job()
    assert (1.0 + 0.1) - 1.0 != 0.1
    assert not resumes_exactly(_running(inst, 1.0, 0.1))
    assert resumes_exactly(_running(inst, 1.0, 0.5))


def test_a_segment_that_lasted_no_time_is_not_recorded():
    """(mutant W03: ``now > since + EPS`` turned ``now >= since``) A placed and moved at
    the same time (and again within the engine's tolerance) leaves no segment, as the
    engine records none; one moved later does."""
    inst = _one_job()
    history = History()
    job = inst.job("A")
    waiting = SchedulerState(1.0, inst, (JobStatus(job, 0.0, None),), Occupancy(inst))
    history.record(waiting, Decision({"A": ON}))
    on = SchedulerState(1.0, inst, (JobStatus(job, 0.0, ON, 0.5),), Occupancy(inst))
    history.record(on, Decision({"A": FLIPPED}))
    flipped = SchedulerState(1.0 + 1e-10, inst, (JobStatus(job, 0.0, FLIPPED, 0.5),), on.occupancy)
    history.record(flipped, Decision({"A": ON}))
    assert history.past == {} and history.open == {"A": (1.0 + 1e-10, ON)}
    later = SchedulerState(2.0, inst, (JobStatus(job, 2.0, ON, 0.0),), on.occupancy)
    history.record(later, Decision({"A": None}))
    (seg,) = history.past["A"]
    assert (seg.start, seg.end, seg.config) == (1.0 + 1e-10, 2.0, TWO)
    assert history.left["A"] == 0.0 and history.open == {}


def test_the_quantile_1_is_the_maximum_to_the_last_bit():
    """(mutant W14: ``q = 1`` read off the conditional distribution) the last stop
    shifted back by the progress is not always the maximum in floats (9.9 - 1.056 +
    1.056 is 9.900000000000002): at ``q = 1`` each job runs to its maximum exactly."""
    inst = _one_job()
    job = inst.pinned_job("A", distribution=EpochDistribution((2.0, 9.9), (0.5, 0.5)))
    inst = inst.replace(jobs=(job,))
    state = SchedulerState(1.0, inst, (JobStatus(job, 1.056, None),), Occupancy(inst))
    assert (9.9 - 1.056) + 1.056 != 9.9
    assert quantile_epochs(state, 1.0) == {"A": 9.9}


def test_an_allocation_restated_as_an_equal_object_keeps_its_segment_open():
    """(mutant W02: ``==`` turned ``is``) a decision naming A's allocation anew, equal to
    the one it runs on, is no change to the engine: no segment is closed, the open one
    still starts when A was placed."""
    inst = _one_job()
    history = History()
    history.open["A"] = (0.0, ON)
    state = _running(inst, 1.0, 0.0)
    same = Allocation(TWO, (("n0", 0), ("n0", 1)))
    assert same == ON and same is not ON
    history.record(state, Decision({"A": same}))
    assert history.past == {} and history.open["A"][0] == 0.0


def test_a_continuation_after_the_recorded_segment_carries_its_overhead_left():
    """(mutant W04: the overhead left when a segment closed recorded as none) A, placed
    at 0 h with a 0.5-h relaunch, is named on its GPUs in the other order at 0.2 h (a
    continuation: the segment closes with 0.3 h of overhead left), then back at once
    by the what-if run's first decision: its 4 epochs of 0.25 h still start at 0.5 h
    and end at 1.5 h, as the engine runs them."""
    inst = _one_job()
    job = inst.job("A")
    history = History()
    history.record(
        SchedulerState(0.0, inst, (JobStatus(job, 0.0, None),), Occupancy(inst)),
        Decision({"A": ON}),
    )
    history.record(_running(inst, 0.2, 0.3, done=0.0), Decision({"A": FLIPPED}))
    assert history.left == {"A": pytest.approx(0.3)}
    occ = Occupancy(inst)
    occ.place(job, FLIPPED)
    state = SchedulerState(0.2, inst, (JobStatus(job, 0.0, FLIPPED, 0.3),), occ)
    plan = what_if(state, history, FifoPolicy(), Decision({"A": ON}))
    assert max(s.end for s in plan) == pytest.approx(1.5, abs=1e-9)


def test_a_quantile_below_1_is_one_of_the_job_s_stops():
    """The least stop with ``P(N <= s | N > progress) >= q``: at ``q = 0.9`` the stop at
    9.9, the job's maximum, not an ulp past it ((9.9 - 1.056) + 1.056 is
    9.900000000000002, which the scenario then took as the job's maximum; a review,
    2026-12-07)."""
    inst = _one_job()
    job = inst.pinned_job("A", distribution=EpochDistribution((2.0, 9.9), (0.5, 0.5)))
    inst = inst.replace(jobs=(job,))
    state = SchedulerState(1.0, inst, (JobStatus(job, 1.056, None),), Occupancy(inst))
    assert quantile_epochs(state, 0.9) == {"A": 9.9}


def test_a_running_job_s_overhead_left_delays_its_epochs():
    """(mutant W24: a running job resumed with no overhead left) A, at 0.2 h on n0 with
    0.3 h of its relaunch still to run and no epoch done, runs its 4 epochs of 0.25 h
    from 0.5 h: it ends at 1.5 h, not 1.2 h."""
    inst = _one_job()
    history = History()
    history.open["A"] = (0.0, ON)
    plan = what_if(_running(inst, 0.2, 0.3, done=0.0), history, FifoPolicy(), Decision({}))
    (seg,) = plan.segments
    assert (seg.start, seg.end) == (0.0, pytest.approx(1.5, abs=1e-9))
