"""STS's contention rules' cases a mutation test found untested (2026-12-07): a job
with no slack left counted as late in the share that scales the work, the GPU types a
backfill and an unstick keep to, the strict comparisons of ``needs_last_step``, a pull
of a job on its last step already or that fits nowhere, its finish and its default,
unstick's price of staying and its ties, which running jobs a placement displaces
(itself, a multi-node one's whole nodes, two shared slots), a restart's loss floored at
0, and the boundaries and ties of the rules that spare running jobs."""

from __future__ import annotations

import dataclasses

from heuristic.core.holds import Holds
from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.policy import JobStatus
from heuristic.sts.contention import (
    backfill,
    late_share,
    needs_last_step,
    pull_forward,
    unstick,
)
from heuristic.sts.displace import displaced, restart_loss
from heuristic.sts.ledger import Ledger
from heuristic.sts.profile import Profile, Step
from heuristic.sts.spare import LateRun, Standing, spared, standing
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node

V1, V2, V4 = Config("v100", 1), Config("v100", 2), Config("v100", 4)
GPU = GpuType("v100", 16.0, 300.0)
DIST4 = EpochDistribution((4.0,), (1.0,))  # no early stop


def _job(name: str, due: float, epochs: int = 2, times: dict | None = None) -> Job:
    times = times or {V1: 1.0, V2: 1.0, V4: 1.0}
    return Job(name, 0.0, due, EpochDistribution.deterministic(epochs), times, 4.0)


def _on(config: Config, *gpus: tuple[str, int]) -> Allocation:
    return Allocation(config, tuple(gpus))


def test_a_job_with_no_slack_left_counts_as_late_in_the_share():
    """(mutant C01: the share counts only ``slack < 0``) two epochs of an hour each:
    due at 2 h the job has no slack at 0 h and is late whatever it runs on, as the
    docstring says (``slack <= 0``); due at 1 h it is late by an hour, due at 10 h on
    time. Two of three are late."""
    jobs = [_job("zero", 2.0), _job("late", 1.0), _job("loose", 10.0)]
    inst = Instance((GPU,), (Node("n", "v100", 4),), tuple(jobs))
    statuses = [JobStatus(j, 0.0, None) for j in jobs]
    assert late_share(inst, statuses, 0.0, lambda j: 1.0) == 2 / 3
    assert late_share(inst, [], 0.0, lambda j: 1.0) == 0.0


def _holds(*running: tuple[Job, Allocation]) -> Holds:
    """Two 4-GPU V100 nodes ``n`` and ``m`` with ``running`` placed on them."""
    jobs = (*(j for j, _ in running), _job("new", 5.0))
    inst = Instance((GPU,), (Node("n", "v100", 4), Node("m", "v100", 4)), jobs, max_share=2)
    occ = Occupancy(inst)
    for job, alloc in running:
        occ.place(job, alloc)
    return Holds(occ, [JobStatus(j, 0.0, a) for j, a in running])


def test_a_placement_displaces_the_jobs_whose_gpus_it_takes_but_not_its_own_job():
    """(mutant D01: the placing job counted among those it displaces) ``a`` runs on
    GPUs 0-1 of ``n``: four GPUs there displace it, GPUs 2-3 do not, and ``a`` itself
    re-placed over its old GPUs displaces no one."""
    a = _job("a", 5.0)
    holds = _holds((a, _on(V2, ("n", 0), ("n", 1))))
    assert displaced(_on(V4, *(("n", g) for g in range(4))), holds, "new") == ["a"]
    assert displaced(_on(V2, ("n", 2), ("n", 3)), holds, "new") == []
    assert displaced(_on(V4, *(("n", g) for g in range(4))), holds, "a") == []


def test_a_multi_node_job_is_displaced_by_any_placement_on_its_nodes():
    """(mutant D02: only where both are multi-node) ``a`` runs on both nodes, two GPUs
    on each (a multi-node configuration holds its nodes whole): two GPUs of ``n`` that
    it does not use still displace it; a multi-node placement over its nodes too."""
    m4 = Config("v100", 4, nodes=2)
    a = _job("a", 5.0, times={m4: 1.0, V2: 1.0})
    holds = _holds((a, _on(m4, ("n", 0), ("n", 1), ("m", 0), ("m", 1))))
    assert displaced(_on(V2, ("n", 2), ("n", 3)), holds, "new") == ["a"]
    assert displaced(_on(m4, ("n", 2), ("n", 3), ("m", 2), ("m", 3)), holds, "new") == ["a"]


def test_two_shared_slots_do_not_collide_but_a_whole_gpu_takes_a_slot_s_gpu():
    """(mutant D03: a shared slot beside any placement spared) ``a`` holds a shared slot
    of GPU 0 of ``n``: another slot of that GPU leaves it be, the whole GPU displaces
    it."""
    slot = Config("v100", 1, shared=True)
    a = _job("a", 5.0, times={slot: 1.0, V1: 1.0})
    holds = _holds((a, _on(slot, ("n", 0))))
    assert displaced(_on(slot, ("n", 0)), holds, "new") == []
    assert displaced(_on(V1, ("n", 0)), holds, "new") == ["a"]
    assert displaced(_on(V1, ("n", 1)), holds, "new") == []


V8 = Config("v100", 8)
QUARTER = 0.25  # hours: every job's relaunch, and an epoch on eight GPUs


def _spare_state(
    runner_due: float, late_due: float = 1.0, overhead_left: float = 0.0
) -> tuple[Instance, list[JobStatus]]:
    """One V100 x8 node at 1 h; ``runner`` runs there with 2 epochs left (0.5 h);
    ``late`` waits with 2 epochs (0.5 h on eight GPUs)."""
    times = {V8: QUARTER}
    runner = _job("runner", runner_due, times=times)
    late = _job("late", late_due, times=times)
    inst = Instance((GPU,), (Node("n", "v100", 8),), (runner, late), relaunch_hours=QUARTER)
    alloc = _on(V8, *(("n", g) for g in range(8)))
    return inst, [JobStatus(runner, 0.0, alloc, overhead_left), JobStatus(late, 0.0, None)]


def test_a_runner_with_no_slack_left_is_late_and_one_three_overheads_on_time_is_not_fragile():
    """(mutants S01, S03: a slack of 0 fragile, or neither; S02: the fragile bound
    inclusive) at 1 h with 0.5 h of work: due at 1.5 h the runner is late, due at 2.25 h
    it is on time by exactly three relaunches and neither fragile nor late."""
    inst, jobs = _spare_state(1.5)
    found = standing(inst, jobs, 1.0, lambda j: QUARTER)
    assert found.fragile == {} and set(found.late) == {"runner"}
    inst, jobs = _spare_state(2.25)
    found = standing(inst, jobs, 1.0, lambda j: QUARTER)
    assert found.fragile == {} and found.late == {}
    inst, jobs = _spare_state(2.0)
    assert set(standing(inst, jobs, 1.0, lambda j: QUARTER).fragile) == {"runner"}


def test_a_late_runner_s_hours_count_the_overhead_it_has_left():
    """(mutant S04: the overhead left dropped) two epochs of 0.25 h and 0.125 h of its
    relaunch still to pay: 0.625 h where it runs."""
    inst, jobs = _spare_state(1.5, overhead_left=0.125)
    run = standing(inst, jobs, 1.0, lambda j: QUARTER).late["runner"]
    assert run == LateRun(inst.tardiness_weight("runner"), 0.625, QUARTER)


def test_a_job_late_by_exactly_the_overhead_it_pays_spares_the_fragile():
    """(mutant S05: slack less the overhead at 0 counted on time; S06: the overhead it
    pays left out) ``late`` due at 1.75 h has 0.25 h of slack at 1 h, all of it the
    relaunch it pays to start: late whatever it runs on, it spares the fragile
    runner (on time by 0.5 h, less than three relaunches)."""
    inst, jobs = _spare_state(2.0, late_due=1.75)
    found = standing(inst, jobs, 1.0, lambda j: QUARTER)
    assert spared(inst, jobs[1], V8, 1.0, QUARTER, found) == {"runner"}
    inst, jobs = _spare_state(2.0, late_due=1.875)  # on time by 0.125 h after it
    found = standing(inst, jobs, 1.0, lambda j: QUARTER)
    assert spared(inst, jobs[1], V8, 1.0, QUARTER, found) == frozenset()


def test_ties_spare_the_running_job():
    """(mutant S07: a fragile job of equal weight not spared; S08: a tied exchange
    made) ``late`` needs 0.5 h on eight GPUs and its 0.25-h relaunch, 0.75 h; a late
    runner of the same weight with 1 h left and a relaunch of 0.25 h: the exchange adds
    1 x (0.75 + 0.25) - 1 x 1 = 0, and the runner is spared; with 1.125 h left it is
    not."""
    inst, jobs = _spare_state(2.0)
    w = inst.tardiness_weight("late")
    assert spared(inst, jobs[1], V8, 1.0, QUARTER, Standing({"runner": w}, {})) == {"runner"}
    for hours, kept in ((1.0, True), (1.125, False)):
        running = Standing({}, {"runner": LateRun(w, hours, QUARTER)})
        assert ("runner" in spared(inst, jobs[1], V8, 1.0, QUARTER, running)) is kept, hours


def test_a_backfill_keeps_to_the_gpu_types_the_job_may_use():
    """(mutant C07: the backfill blind to the types) a late job may run on one V100
    (300 W) or one P100 (400 W), an hour an epoch on either: the V100 is the cheaper,
    but where the job may use P100s only (a tuning's types) it takes the P100."""
    p1 = Config("p100", 1)
    job = _job("late", 1.0, times={V1: 1.0, p1: 1.0})
    gpus = (GPU, GpuType("p100", 16.0, 400.0))
    inst = Instance(gpus, (Node("n", "v100", 1), Node("p", "p100", 1)), (job,))
    status = JobStatus(job, 0.0, None)
    assert backfill(inst, Occupancy(inst), status, 0.0, ("v100", "p100")).config == V1
    occ = Occupancy(inst)
    alloc = backfill(inst, occ, status, 0.0, ("p100",))
    assert alloc == _on(p1, ("p", 0))
    assert occ.why_not(job, _on(p1, ("p", 0))) is not None  # placed


def test_the_pull_is_needed_unless_a_strictly_cheaper_configuration_is_on_time():
    """(mutant C10: a configuration as dear per epoch as the last step counted; C11: a
    finish at the due date counted late) the last step is four V100s (0.5 h an epoch,
    1,200 W: 0.6 kWh). Two V100s at 1 h an epoch cost the same per epoch: on time or
    not, they are no reason to stay off the last step. One V100 at 1.5 h an epoch (0.45
    kWh) with a relaunch of 0.5 h ends two epochs at 3.5 h: due then, it is on time and
    the pull is not needed; due 0.25 h earlier, it is."""
    wait = {V4: 0.5, V2: 1.0}
    job = Job("j", 0.0, 9.0, EpochDistribution.deterministic(2), wait, 4.0, relaunch_hours=0.5)
    inst = Instance((GPU,), (Node("n", "v100", 4),), (job,))
    assert needs_last_step(inst, JobStatus(job, 0.0, None), V4, 0.0)
    for due, needed in ((3.5, False), (3.25, True)):
        times = {V4: 0.5, V1: 1.5}
        job = Job("j", 0.0, due, EpochDistribution.deterministic(2), times, 4.0, relaunch_hours=0.5)
        inst = Instance((GPU,), (Node("n", "v100", 4),), (job,))
        assert needs_last_step(inst, JobStatus(job, 0.0, None), V4, 0.0) is needed, due


def _pull_case(
    current: Config, busy: bool = False
) -> tuple[Instance, Occupancy, Ledger, JobStatus, Profile]:
    """Two 8-GPU V100 nodes and a relaunch of 0.25 h; ``j0`` (4 epochs due at 3 h: 1 h
    each on one GPU, too slow to be on time, 0.25 h on eight) runs ``current`` on
    ``n0``, its profile one slow hour then an hour on eight GPUs; ``j1`` and ``j2``
    are booked on eight GPUs at the same hour, and the ledger has the 8-GPU class
    full. With ``busy``, ``j1`` and ``j2`` run on one GPU of each node."""
    times = {V1: 1.0, V8: 0.25}
    jobs = tuple(
        Job(f"j{i}", 0.0, 3.0, EpochDistribution.deterministic(4), times, 4.0) for i in range(3)
    )
    nodes = (Node("n0", "v100", 8), Node("n1", "v100", 8))
    inst = Instance((GPU,), nodes, jobs, relaunch_hours=QUARTER)
    profile = Profile((Step(V1, 0.0, 1.0), Step(V8, 1.0, 4.0)), 2.0, 0.0, 0.0, 10.0)
    ledger = Ledger(inst, 0.0, 10.0, 0.25)
    for job in jobs[:2]:
        ledger.book(job, profile, DIST4)
    occ = Occupancy(inst)
    alloc = _on(current, *(("n0", g) for g in range(current.gpus)))
    occ.place(jobs[0], alloc)
    if busy:
        occ.place(jobs[1], _on(V1, ("n0", 7)))
        occ.place(jobs[2], _on(V1, ("n1", 0)))
    return inst, occ, ledger, JobStatus(jobs[0], 0.0, alloc, 0.0), profile


def test_a_pulled_job_runs_its_last_step_at_once_and_finishes_after_its_relaunch():
    """(mutant C16: the relaunch left out of the finish) the ledger has the 8-GPU class
    full while ``j0``'s last step would run: it is pulled onto eight GPUs now, and
    finishes its 4 epochs (1 h) after a relaunch of 0.25 h, at 1.25 h."""
    inst, occ, ledger, status, profile = _pull_case(V1)
    assert ledger.last_step_full(status.job, profile, DIST4)
    alloc, finish = pull_forward(
        inst, occ, ledger, status, status.allocation, (profile, DIST4), 0.0
    )
    assert alloc.config == V8 and finish == 1.25


def test_a_job_already_on_its_last_step_is_not_pulled():
    """(mutant C13: the pull blind to where the job runs) ``j0`` runs eight GPUs
    already: the pull leaves it be rather than relaunch it there."""
    inst, occ, ledger, status, profile = _pull_case(V8)
    assert pull_forward(inst, occ, ledger, status, status.allocation, (profile, DIST4), 0.0) is None


def test_a_pull_that_fits_nowhere_leaves_the_job_where_it_runs():
    """(mutant C15: the job left unplaced) ``j0`` runs on four GPUs of ``n0`` and a
    GPU of each node is taken: eight GPUs fit nowhere, even with ``j0``'s own released,
    and ``j0`` keeps its four."""
    inst, occ, ledger, status, profile = _pull_case(V4, busy=True)
    assert pull_forward(inst, occ, ledger, status, status.allocation, (profile, DIST4), 0.0) is None
    assert occ.why_not(status.job, status.allocation) is not None  # its GPUs still held


def _stuck(v2_epoch: float, relaunch: float = 0.5) -> tuple[Instance, Occupancy, JobStatus]:
    """``j`` runs one V100 (1 h an epoch, 300 W) of a 2-GPU node with two epochs left,
    nothing of its relaunch left to pay, due in ten hours; it may run two V100s (600
    W) at ``v2_epoch`` h an epoch, or a P100 (0.1 h, 150 W: the cheapest); ``other``
    is present, not running."""
    p1 = Config("p100", 1)
    times = {V1: 1.0, V2: v2_epoch, p1: 0.1}
    job = Job("j", 0.0, 10.0, EpochDistribution.deterministic(2), times, 4.0)
    other = _job("other", 10.0, times={V1: 1.0})
    gpus = (GPU, GpuType("p100", 16.0, 150.0))
    nodes = (Node("n", "v100", 2), Node("p", "p100", 1))
    inst = Instance(gpus, nodes, (job, other), relaunch_hours=relaunch)
    occ = Occupancy(inst)
    alloc = _on(V1, ("n", 0))
    occ.place(job, alloc)
    return inst, occ, JobStatus(job, 0.0, alloc, 0.0)


def test_unstick_prices_staying_with_the_overhead_left_not_a_relaunch():
    """(mutant C20: staying priced with a full relaunch) staying costs two epochs of
    300 Wh; two V100s at 0.3 h an epoch, 360 Wh, and a relaunch of 0.5 h at 600 W,
    300 Wh: dearer than staying, though cheaper than staying after a relaunch. It
    stays. At 0.1 h an epoch (120 Wh and the relaunch) it moves, and its old GPU is
    not held any more: ``other`` finds no GPU of ``n``."""
    inst, occ, status = _stuck(0.3)
    assert unstick(inst, occ, status, 0.0, ("v100",)) is None
    assert occ.why_not(status.job, status.allocation) is not None  # it stays placed
    inst, occ, status = _stuck(0.1)
    alloc = unstick(inst, occ, status, 0.0, ("v100",))
    assert alloc == _on(V2, ("n", 0), ("n", 1))
    assert occ.find(inst.jobs[1], V1) is None  # (mutant C21: the job put back where it ran)


def test_unstick_keeps_to_the_gpu_types_the_job_may_use():
    """(mutant C22: blind to the types) the P100 is the cheapest by far, but where the
    job may use V100s only it stays."""
    inst, occ, status = _stuck(0.3)
    assert unstick(inst, occ, status, 0.0, ("v100", "p100")) == _on(Config("p100", 1), ("p", 0))
    inst, occ, status = _stuck(0.3)
    assert unstick(inst, occ, status, 0.0, ("v100",)) is None


def test_unstick_does_not_move_a_job_for_a_configuration_that_costs_the_same():
    """(mutant C19: a move that costs as much as staying made) no relaunch: its own
    configuration re-placed costs exactly what staying does, and it stays."""
    inst, occ, status = _stuck(0.5 + 0.25, relaunch=0.0)  # two V100s: 900 Wh
    assert unstick(inst, occ, status, 0.0, ("v100",)) is None


def test_a_restart_that_prices_lower_than_running_on_costs_nothing():
    """(mutant D05: the loss not floored at 0) a pause priced below running on (a later
    restart in cheaper hours) is no gain of the displacement: the loss is 0; priced 2
    above, the loss is 2. The paused job is priced with no allocation and no overhead
    left."""
    job = _job("a", 5.0)
    status = JobStatus(job, 0.0, _on(V1, ("n", 0)), 0.125)
    seen: list[JobStatus] = []

    def cheapest(s: JobStatus) -> float:
        seen.append(s)
        return 5.0 if s.allocation is not None else 3.0

    assert restart_loss(status, cheapest) == 0.0
    assert (seen[0].allocation, seen[0].overhead_left) == (None, 0.0)
    assert restart_loss(status, cheapest, lambda s: 7.0) == 2.0


def test_by_default_a_job_on_time_on_a_cheaper_configuration_is_not_pulled():
    """(mutant C23: ``needed`` off by default) due at 10 h, ``j0`` finishes its four
    epochs on the one GPU it runs (300 Wh an epoch, 600 Wh on eight) by 4 h: the class
    booked full later is no reason to pull it, unless ``needed`` is off."""
    inst, occ, ledger, status, profile = _pull_case(V1)
    job = dataclasses.replace(status.job, due=10.0)
    status = dataclasses.replace(status, job=job)
    booked = (profile, DIST4)
    assert pull_forward(inst, occ, ledger, status, status.allocation, booked, 0.0) is None
    moved = pull_forward(inst, occ, ledger, status, status.allocation, booked, 0.0, False)
    assert moved is not None and moved[0].config == V8


def test_a_job_does_not_spare_itself():
    """(mutants S13, S14: the placing job among those it spares) ``late`` listed among
    the fragile or the late running jobs (as where it runs and is re-placed) is never
    spared from itself; the runner of at least its weight is."""
    inst, jobs = _spare_state(2.0)
    w = inst.tardiness_weight("late")
    fragile = Standing({"late": w, "runner": w}, {})
    assert spared(inst, jobs[1], V8, 1.0, QUARTER, fragile) == {"runner"}
    late = Standing({}, {"late": LateRun(w, 0.5, QUARTER)})
    assert spared(inst, jobs[1], V8, 1.0, QUARTER, late) == frozenset()
