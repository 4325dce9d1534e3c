"""STS's incremental form's cases a mutation test found untested (2026-12-07): when a
running job has passed a stopping point (the stop's tolerance, as ``block_of`` reads
it), a wake-up due exactly now, the last block's edge, an event decided in full where a
re-planned job waits by choice or every job is re-planned, the partial decision's
population for the rule for the last job, a booked profile forgotten, the last-step
check only where STS pulls, a kept last step of one bin, and the kept spans' memo
keyed by the distribution too; the calm to the instant."""

from __future__ import annotations

import math

from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.policy import Decision, JobStatus, SchedulerState
from heuristic.sts.incremental import IncrementalOptions, IncrementalStsPolicy, _edge
from heuristic.sts.kept import KeptBookings
from heuristic.sts.ledger import Ledger
from heuristic.sts.profile import Profile, Step
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from instances.distribution import stop_tolerance
from instances.energy import Series
from tests.heuristic.sts.test_kept import _instance
from validation.simulator import simulate

ONE = Config("v100", 1)
DIST = EpochDistribution((4.0, 10.0, 20.0), (0.5, 0.3, 0.2))
JOB = Job("j", 0.0, 100.0, DIST, {ONE: 1.0}, 4.0)
RUNNING = Allocation(ONE, (("n", 0),))


def _planned(progress: float, due: float = math.inf) -> IncrementalStsPolicy:
    """A policy that planned ``JOB`` (running, on its cheapest type) at ``progress``,
    asking to be woken at ``due``."""
    policy = IncrementalStsPolicy()
    policy._due[JOB.id] = due
    policy._edge[JOB.id] = _edge(DIST, progress)
    return policy


def test_a_job_is_dirty_just_past_its_stop_as_block_of_reads_it():
    """(mutant M1: the stop's tolerance taken 10 times) planned at 2 epochs, ``j`` is
    in the first block, which ends at 4. At 4 + 2 tolerances ``block_of`` has moved to
    the next block: the job's distribution changed, it is re-planned; at 4 + half a
    tolerance it is still at the stop, and kept."""
    tol = stop_tolerance(4.0)
    policy = _planned(2.0)
    past, at = 4.0 + 2 * tol, 4.0 + 0.5 * tol
    assert DIST.block_of(past) == 1 and DIST.block_of(at) == 0
    assert policy._dirty(JobStatus(JOB, past, RUNNING), 1.0)
    assert not policy._dirty(JobStatus(JOB, at, RUNNING), 1.0)


def test_a_job_is_dirty_at_its_wake_up_to_the_instant():
    """(mutant M2: the wake-up compared strictly, with a tolerance of 1e-3 h) ``j``
    asked to be re-planned at 3 h: at 3 h it is, a second before it is not."""
    policy = _planned(2.0, due=3.0)
    status = JobStatus(JOB, 2.5, RUNNING)
    assert policy._dirty(status, 3.0)
    assert not policy._dirty(status, 3.0 - 1 / 3600)


def test_the_last_block_never_ends_and_the_one_before_it_does():
    """(mutant M11: the last two blocks taken as never ending) planned in the second to
    last block (4-10 epochs), the job's edge is the stop at 10 and its tolerance; in
    the last (10-20 epochs), none."""
    assert _edge(DIST, 2.0) == (4.0, stop_tolerance(4.0))
    assert _edge(DIST, 5.0) == (10.0, stop_tolerance(10.0))
    assert _edge(DIST, 12.0) == (math.inf, 0.0)


def _waits_for_cheaper_hours(idle_w: float) -> list[tuple[float, int, list[float], list[str]]]:
    """``a`` runs on the one-GPU node, due with no time to idle; ``tight`` arrives at
    0.9 h, when the price is ten times what it is from 1.0 h, and waits for 1.0 h. Each
    event's time, whether it was decided in full, and the sojourns and jobs the rule for
    the last job counts (where the GPUs draw ``idle_w`` idle)."""
    v1, v4 = Config("v100", 1), Config("v100", 4)
    dist = EpochDistribution.deterministic
    a = Job("a", 0.0, 2.05, dist(8), {v1: 0.25}, 4.0, weight=1000.0)
    tight = Job("tight", 0.9, 1.6, dist(2), {v4: 0.25}, 4.0)
    prices = Series.regular(0.25, [1.0, 1.0, 1.0, 10.0] + [1.0] * 8)
    nodes = (Node("n", "v100", 4), Node("m", "v100", 1))
    v100 = GpuType("v100", 16.0, 300.0, idle_w=idle_w)
    inst = Instance((v100,), nodes, (a, tight), prices=prices)
    log: list[tuple[float, int, list[float], list[str]]] = []

    class Recording(IncrementalStsPolicy):
        def decide(self, state):
            before = self.full_decisions
            decision = super().decide(state)
            full = self.full_decisions - before
            log.append((round(state.time, 2), full, list(self._sojourns), sorted(self._live)))
            return decision

    plan = simulate(inst, Recording(IncrementalOptions(full_below=0, calm_hours=0.0))).plan
    assert [(s.job, s.start) for s in plan] == [("a", 0.0), ("tight", 1.0)]
    return log


def test_a_job_that_waits_for_cheaper_hours_makes_the_event_decided_in_full():
    """(mutant M6: a partial decision kept though it leaves a re-planned job without
    GPUs; mutant M13: a partial decision tried where every job is re-planned) at 0.9 h
    the partial decision leaves ``tight`` without GPUs (by its profile's choice, not
    contention), so the event is decided in full, which also leaves it waiting. At
    1.0 h it starts, beside ``a``, in a partial decision. The first event, where ``a``
    is the only job and re-planned, is decided in full."""
    log = _waits_for_cheaper_hours(0.0)
    assert [(t, full) for t, full, _, _ in log[:3]] == [(0.0, 1), (0.9, 1), (1.0, 0)]


def test_a_partial_decision_counts_every_present_job_for_the_last_job_rule():
    """(mutant M16: the partial decision's population its re-planned jobs only) where
    idle power is charged, the rule for the last job counts sojourns: the partial
    decision at 1.0 h re-plans ``tight`` only, but ``a`` is still present, not gone
    after 1 h; ``tight``'s 0.6 h is counted when it completes."""
    log = _waits_for_cheaper_hours(50.0)
    assert log[:4] == [
        (0.0, 1, [], ["a"]),
        (0.9, 1, [], ["a", "tight"]),
        (1.0, 0, [], ["a", "tight"]),
        (1.5, 0, [0.6], ["a"]),
    ]


def _one_bin_last_steps(jobs: int) -> tuple[KeptBookings, Ledger]:
    """``jobs`` kept jobs (one or two) that run 8 V100s in their last step, 1.0-1.25 h
    from now: one bin of a quarter hour, booked."""
    inst = _instance()
    job = inst.jobs[0]
    other = Job("k", 0.0, 10.0, job.distribution, job.epoch_times, 4.0)
    steps = (Step(Config("v100", 1), 0.0, 10.0), Step(Config("v100", 8), 10.0, 12.5))
    profile = Profile(steps, 1.0, 0.0, 0.0, 10.0)
    sure = EpochDistribution((70.0,), (1.0,))
    ledger = Ledger(inst, 10.0, 8.0, 0.25)
    kept = [(j, profile, sure, 10.0) for j in (job, other)[:jobs]]
    booked = KeptBookings(ledger, kept, {})
    booked.book()
    return booked, ledger


def test_a_kept_last_step_of_one_bin_on_a_full_class_is_seen():
    """(mutant K8: the prefix counts of full bins read one bin short, so a span's last
    bin is never checked) two kept jobs' one-bin last steps book both 8-GPU nodes full
    in that bin. One job alone leaves room."""
    both, ledger = _one_bin_last_steps(2)
    assert ledger.load["v100"][3:6].tolist() == [2.0, 16.0, 0.0]
    assert both.last_step_full()
    alone, _ = _one_bin_last_steps(1)
    assert not alone.last_step_full()


def test_a_kept_last_step_booked_full_is_weighed_only_where_sts_pulls():
    """(mutant M17: the check made whatever ``pull`` says) the partial decision's kept
    jobs' last step finds its class full: with STS's last-step pull that decision is
    not kept (``_kept_full``); without the pull, STS would not weigh it, nor does the
    partial decision."""
    for pull in (True, False):
        policy = IncrementalStsPolicy(IncrementalOptions(pull=pull))
        policy.kept_bookings = _one_bin_last_steps(2)[0]
        assert policy._kept_full() is pull
    assert IncrementalStsPolicy()._kept_full() is False  # no partial decision booked


def test_a_kept_profile_memoised_with_another_distribution_is_booked_anew():
    """(mutant K10: the memo reused for the same profile whatever its distribution) a
    job's spans memoised when it was as likely to stop at 3 epochs as to run 70 (half
    of its 8-GPU step from 5 epochs booked) are not those of the same profile once it
    surely runs 70: booked with that memo, the loads are those booked without one, the
    whole eight GPUs from 0.5 h."""
    inst = _instance()
    job = inst.jobs[0]
    profile = Profile(
        (Step(Config("v100", 1), 0.0, 5.0), Step(Config("v100", 8), 5.0, 60.0)), 1.0, 0.0, 0.0, 10.0
    )
    early = EpochDistribution((3.0, 70.0), (0.5, 0.5))
    sure = EpochDistribution((70.0,), (1.0,))
    memo = KeptBookings(Ledger(inst, 10.0, 8.0, 0.25), [(job, profile, early, 10.0)], {}).memo
    ledger = Ledger(inst, 10.0, 8.0, 0.25)
    KeptBookings(ledger, [(job, profile, sure, 10.0)], memo).book()
    stale = Ledger(inst, 10.0, 8.0, 0.25)
    KeptBookings(stale, [(job, profile, early, 10.0)], memo).book()
    assert stale.load["v100"][:6].tolist() == [1.0, 1.0, 4.0, 4.0, 4.0, 4.0]
    assert ledger.load["v100"][:6].tolist() == [1.0, 1.0, 8.0, 8.0, 8.0, 8.0]


def test_a_replanned_job_given_no_profile_forgets_its_booked_one():
    """(mutant M14: the booked profile kept when the job's re-planning chose none) ``j``
    was booked a profile at 0 h; re-planned at 1 h it is given none (left where it is,
    or waiting): its earlier profile is no longer booked for it in later partial
    decisions, and one it is given again is."""
    v1 = Config("v100", 1)
    job = Job("j", 0.0, 50.0, EpochDistribution.deterministic(4), {v1: 1.0}, 4.0)
    inst = Instance((GpuType("v100", 32.0, 300.0),), (Node("n", "v100", 1),), (job,))
    status = JobStatus(job, 0.0, Allocation(v1, (("n", 0),)))
    policy = IncrementalStsPolicy()
    policy._begin(SchedulerState(1.0, inst, (status,), Occupancy(inst)))
    profile = Profile((Step(v1, 0.0, 4.0),), 1.0, 0.0, 0.0, 10.0)
    policy._booked["j"] = (job, profile, job.distribution, 0.0)
    policy.chosen = {}
    policy._remember((status,), Decision({}), 1.0)
    assert "j" not in policy._booked
    assert "j" not in policy._restless  # on its cheapest (only) type
    policy.chosen = {"j": (profile, job.distribution)}
    policy._remember((status,), Decision({}), 1.0)
    assert policy._booked["j"] == (job, profile, job.distribution, 1.0)


def test_the_calm_starts_two_hours_after_capacity_bound_to_the_instant():
    """(mutant M22: the calm compared strictly, with a tolerance of 1e-3 h) capacity
    bound at a decision at 1 h: an event at 3 h may be decided partially, one a second
    earlier may not; nor may any while the last decision found capacity binding."""
    policy = IncrementalStsPolicy()
    policy._bound_at = 1.0
    assert policy.calm(3.0)
    assert not policy.calm(3.0 - 1 / 3600)
    policy.contended = True
    assert not policy.calm(10.0)
