"""STS's rules where capacity binds (heuristic/sts/contention.py): the order, the
backfill of late waiting jobs, and the pull of a last step onto an idle bottleneck;
each measured on the real-data window where it was found (docs/contended.md)."""

from __future__ import annotations

import pytest

from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.policy import JobStatus, SchedulerState
from heuristic.sts.contention import needs_last_step, urgency_key
from heuristic.sts.options import StsOptions
from heuristic.sts.policy import StsPolicy
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from instances.energy import Series
from instances.generators import GENERATORS, RealDataSpec, real_data
from instances.generators.realdata import cluster_mix
from validation.online import run_online

V1, V2, V4 = Config("v100", 1), Config("v100", 2), Config("v100", 4)
# each rule as measured: STS in one order, without the what-if runs that choose between
# its two orders (validation.rollout_choice, since 2026-11-29)
ALONE = {"rollout_below": 0}


def _status(job: Job, progress: float = 0.0) -> JobStatus:
    return JobStatus(job, progress, None)


def test_the_order_serves_late_jobs_shortest_first_and_the_others_by_slack():
    one = {V1: 1.0}
    inst = Instance(
        (GpuType("v100", 16.0, 300.0),),
        (Node("n", "v100", 1),),
        (
            Job("late-long", 0.0, 1.0, EpochDistribution.deterministic(10), one, 4.0),
            Job("late-short", 0.0, 1.0, EpochDistribution.deterministic(2), one, 4.0),
            Job("tight", 0.0, 4.5, EpochDistribution.deterministic(4), one, 4.0),
            Job("loose", 0.0, 50.0, EpochDistribution.deterministic(4), one, 4.0),
        ),
    )

    def key(job_id: str) -> tuple[int, float]:
        job = next(j for j in inst.jobs if j.id == job_id)
        slack = job.due - job.max_epochs
        return urgency_key(inst, _status(job), slack, 1.0, 0.5)

    order = sorted(("loose", "tight", "late-long", "late-short"), key=key)
    # least slack would serve late-long first (slack -9), then late-short (-1)
    assert order == ["late-short", "tight", "late-long", "loose"]


def test_a_job_whose_lateness_costs_nothing_comes_last():
    job = Job("free", 0.0, 1.0, EpochDistribution.deterministic(10), {V1: 1.0}, 4.0)
    gpu, node = GpuType("v100", 16.0, 300.0), Node("n", "v100", 1)
    inst = Instance((gpu,), (node,), (job,), energy_price=0.0)  # the default weight: 0
    assert inst.tardiness_weight("free") == 0
    assert urgency_key(inst, _status(job), -9.0, 1.0, 0.5)[0] == 1


def _beside_urgent(other: Job, urgent_due: float) -> SchedulerState:
    """Four V100s at 1 h; ``urgent`` (two epochs on two GPUs) runs on two of them and
    ``other`` waits."""
    urgent = Job("urgent", 0.0, urgent_due, EpochDistribution.deterministic(2), {V2: 0.55}, 4.0)
    inst = Instance((GpuType("v100", 16.0, 300.0),), (Node("n", "v100", 4),), (urgent, other))
    occ = Occupancy(inst)
    running = Allocation(V2, (("n", 0), ("n", 1)))
    occ.place(urgent, running)
    return SchedulerState(1.0, inst, (JobStatus(urgent, 0.0, running), _status(other)), occ)


def _backfill_state() -> SchedulerState:
    """``late`` is past its due date: its profile runs all its epochs on four GPUs,
    which do not fit beside ``urgent``; two are free."""
    times = {V1: 1.0, V2: 0.55, V4: 0.3}
    late = Job("late", 0.0, 0.5, EpochDistribution.deterministic(10), times, 4.0)
    return _beside_urgent(late, 2.2)


def test_a_late_waiting_job_takes_the_gpus_left_free():
    # the order is not under test: at work_share 0.5 ``urgent`` is served first (at the
    # default 0.25 ``late``, of the larger weight, displaces it)
    with_rule = StsPolicy(StsOptions(work_share=0.5)).decide(_backfill_state())
    assert with_rule.assign["late"] is not None
    assert with_rule.assign["late"].config == V2  # the cheapest that fits, lateness counted
    without = StsPolicy(StsOptions(work_share=0.5, backfill=False)).decide(_backfill_state())
    assert without.assign.get("late") is None  # it waits for four GPUs


def _tight_state(slack_h: float) -> SchedulerState:
    """``urgent`` has no slack. ``tight`` has ``slack_h`` hours of slack on four GPUs,
    also its cheapest configuration per epoch (0.36 kWh against 0.39), so its profiles
    run only there and none fits beside ``urgent``."""
    times = {V1: 1.3, V2: 0.65, V4: 0.3}
    due = 1.0 + 10 * 0.3 + slack_h
    tight = Job("tight", 0.0, due, EpochDistribution.deterministic(10), times, 4.0)
    return _beside_urgent(tight, 2.1)


def test_a_job_late_by_its_next_replan_if_it_idles_takes_the_gpus_left_free():
    # 0.1 h of slack, less than the quarter hour to the next re-plan: idle until then,
    # it would be late whatever it runs on; it runs on the two free GPUs instead
    decision = StsPolicy().decide(_tight_state(0.1))
    assert "urgent" not in decision.assign  # it keeps its GPUs
    assert decision.assign["tight"] is not None and decision.assign["tight"].config == V2
    assert decision.wake_at is not None and decision.wake_at <= 1.25 + 1e-9  # re-planned
    # as until 2026-11-29 (backfill for late jobs only), or with more slack, it waits
    before = StsPolicy(StsOptions(backfill_ahead=False)).decide(_tight_state(0.1))
    assert before.assign.get("tight") is None
    assert StsPolicy().decide(_tight_state(0.3)).assign.get("tight") is None


def _cheap_soon_state() -> SchedulerState:
    """One job alone at 0.9 h, 0.2 h of slack on its one configuration (two epochs of
    0.25 h on four V100s); the price is ten times dearer until 1.0 h."""
    v4 = Config("v100", 4)
    job = Job("tight", 0.0, 1.6, EpochDistribution.deterministic(2), {v4: 0.25}, 4.0)
    prices = Series.regular(0.25, [1.0, 1.0, 1.0, 10.0] + [1.0] * 44)
    node = Node("n", "v100", 4)
    inst = Instance((GpuType("v100", 16.0, 300.0),), (node,), (job,), prices=prices)
    return SchedulerState(0.9, inst, (_status(job),), Occupancy(inst))


def test_a_job_timed_to_wait_for_cheaper_hours_is_not_backfilled():
    # within the re-plan interval of late, but its timed profile waits for 1.0 h: the
    # backfill leaves it waiting (without the exemption it would run now, at ten times
    # the price); blind to the series, it runs now
    for options in (StsOptions(), StsOptions(backfill_ahead=False)):
        decision = StsPolicy(options).decide(_cheap_soon_state())
        assert decision.assign.get("tight") is None and decision.wake_at == pytest.approx(1.0)
    blind = StsPolicy(StsOptions(timing=False)).decide(_cheap_soon_state())
    assert blind.assign["tight"] is not None


def test_the_order_cuts_the_cost_of_an_overloaded_window():
    """The bundled Philly day's first 50 usable jobs on 6 nodes (K80, P100 and V100 x4,
    one V100 x8; seed 0, sampled stops): least slack first costs 469.1 (30 missed due
    dates), the weighted modified slack 191.8 (14); `lp` costs 292.6. Without
    ``unstick`` and ``spare``, displacements counted by their energy, as measured when
    the order was chosen (with both, 202.0; with ``unstick`` alone 207.9). With
    wake-ups restated (2026-11-30, docs/model.md 'The event engine'): 517.0 (27) against
    202.3 (15)."""
    inst = real_data(RealDataSpec(jobs=50, start=0, nodes=cluster_mix(6)), 0)
    then = {"unstick": False, "spare": 0.0, "displace_cost": "relaunch", "pull_needed": False}
    then["backfill_ahead"] = False  # backfill for late jobs only, as until 2026-11-29
    then.update(ALONE)
    new = run_online(inst, "sts", seed=0, options=then).summary()
    old = run_online(inst, "sts", seed=0, options={"urgency": "slack", **then}).summary()
    assert new["total_cost"] == pytest.approx(202.33, abs=0.01)
    assert old["total_cost"] == pytest.approx(517.04, abs=0.01)
    assert new["missed"] < old["missed"]


def test_an_idle_bottleneck_is_used_at_once():
    """The Philly day's jobs 38- on 6 nodes, seed 0: every job's last step wants the one
    8-GPU V100 node. Without the pull, their slow starts leave it idle in the first
    three hours (2.4, 2.8 and 3.8 of its 8 GPU-hours an hour) and overbooked later: 48.9
    with 10 missed due dates; with it, 32.7 with 5 (`lp`: 30.4). Without ``unstick`` and
    ``spare``, displacements counted by their energy, every booked-full job pulled, as
    measured when the pull was chosen (with ``unstick``, 32.6). With wake-ups restated
    (2026-11-30): 49.2 (10) without the pull, 35.3 (5) with it."""
    inst = real_data(RealDataSpec(jobs=40, start=38, nodes=cluster_mix(6)), 0)

    def first_hours(options: dict[str, object]) -> tuple[float, list[float]]:
        then = {"unstick": False, "spare": 0.0, "displace_cost": "relaunch", "pull_needed": False}
        then["backfill_ahead"] = False  # as until 2026-11-29
        then.update(ALONE)
        run = run_online(inst, "sts", seed=0, options={**options, **then})
        use = [0.0, 0.0, 0.0]
        for s in run.result.plan:
            gpus = sum(1 for node, _ in s.gpus if node == "v100-3")
            for h in range(3):
                use[h] += gpus * max(0.0, min(s.end, h + 1) - max(s.start, h))
        return run.summary()["total_cost"], use

    pulled, use = first_hours({})
    idle, before = first_hours({"pull": False})
    assert pulled == pytest.approx(35.33, abs=0.01) and idle == pytest.approx(49.25, abs=0.01)
    assert min(use) > 5 and max(before) < 4


def test_on_a_quiet_cluster_the_rules_change_nothing():
    """Two jobs with days of slack on an idle node: STS's plan is the thesis's."""
    times = {V1: 1.0, V4: 0.3}
    jobs = tuple(
        Job(f"j{k}", 0.0, 100.0, EpochDistribution((2.0, 8.0), (0.5, 0.5)), times, 4.0)
        for k in range(2)
    )
    inst = Instance((GpuType("v100", 16.0, 300.0),), (Node("n", "v100", 8),), jobs)
    from validation.simulator import rollout

    thesis = StsOptions(urgency="slack", backfill=False, pull=False)
    assert rollout(inst, StsPolicy()) == rollout(inst, StsPolicy(thesis))


def test_work_counted_only_as_far_as_jobs_are_late_serves_a_long_job_by_its_slack():
    """``scale_work`` (off by default; docs/model.md has why). The contended 32-GPU
    scenario at load 0.3, seed 2 (104 Philly-week jobs on two nodes each of K80 x4, P100
    x4 and V100 x8): few jobs are late at a time, and with work weighed at 0.25 whatever
    the share of late jobs, ph364 (16 h of work on a V100 x8 node, 10 h of slack on
    arrival) keeps yielding to shorter jobs with more slack and ends 1.76 h late: 54.69
    in all. With work weighed by the share of jobs late it ends 0.62 h late: 49.51 in
    all (sts-greedy 50.03, `lp` 76.78). Displacements counted by their energy, and every
    job whose last step's class is booked full pulled, as when it was measured. With
    wake-ups restated (2026-11-30): 54.64 and 49.54, ph364 as late."""

    spec = {"start": 24.0, "hours": 6.0, "cluster": "k80x4:2,p100x4:2,v100x8:2", "load": 0.3}
    inst = GENERATORS["philly-week"].instance(spec, 2)
    then = {"displace_cost": "relaunch", "pull_needed": False, "backfill_ahead": False, **ALONE}
    scaled = run_online(inst, "sts", seed=2, options={"scale_work": True, **then})
    flat = run_online(inst, "sts", seed=2, options=then)
    assert scaled.summary()["total_cost"] == pytest.approx(49.54, abs=0.01)
    assert flat.summary()["total_cost"] == pytest.approx(54.64, abs=0.01)
    assert flat.by_job().loc["ph364", "late_h"] == pytest.approx(1.76, abs=0.01)
    assert scaled.by_job().loc["ph364", "late_h"] == pytest.approx(0.62, abs=0.01)


def test_a_running_job_late_whatever_it_does_leaves_a_slow_slot():
    """``unstick``. Found on the Philly week's 50 usable jobs from index 2,250 on 8 nodes
    (seed 0): p2278 (due 10.17 h) sat on a shared V100 slot, no step of its profiles
    fitting, until past its due date, 1.52 h late (31.10 in all); with the rule it moved
    to the free configuration cheapest in the worst case and ended 0.25 h late (26.69).
    With wake-ups restated (2026-11-30, docs/model.md 'The event engine') that window no
    longer shows it: p2278 is on time without the rule, and the rule costs more there
    (31.26 against 30.34). Here: the contended replay of the decision pins (the Philly
    week's first six hours at 120% offered load on 2 nodes each of K80 x4, P100 x4 and
    V100 x8; sampled stops, seed 0), STS in one order, every event partial. Without the
    rule ph29 (due 21.42 h) runs on one V100 until 20.46 h, then on eight, and ends
    2.63 h late: 28.71 in all. With it, it moves to the eight at 17.34 h and ends on
    time: 16.07."""
    spec = {"cluster": "k80x4:2,p100x4:2,v100x8:2", "load": 1.2, "hours": 6.0}
    inst = GENERATORS["philly-week"].instance(spec, 0)
    then = {"displace_cost": "relaunch", "pull_needed": False, "backfill_ahead": False}

    def run(unstick: bool) -> tuple[float, float, list[tuple[float, str]]]:
        options = {**ALONE, "full_below": 0, "unstick": unstick, **then}
        r = run_online(inst, "sts", seed=0, options=options)
        last = [(round(x.start, 2), x.config.label) for x in r.result.plan.for_job("ph29")][-2:]
        return r.summary()["total_cost"], r.by_job().loc["ph29", "late_h"], last

    moved, late, last = run(True)
    kept, late_kept, last_kept = run(False)
    assert (moved, kept) == (pytest.approx(16.07, abs=0.01), pytest.approx(28.71, abs=0.01))
    assert late == pytest.approx(0.0, abs=1e-6) and late_kept == pytest.approx(2.63, abs=0.01)
    assert last == [(6.17, "v100x1"), (17.34, "v100x8")]
    assert last_kept == [(6.17, "v100x1"), (20.46, "v100x8")]


def test_a_job_with_a_cheaper_way_to_finish_on_time_is_not_pulled():
    """``pull_needed``. The bundled day's last 40 usable jobs (from job 157) on 6 nodes,
    seed 0, uniform stops: p157 (36 epochs, due 50.05 h) runs slow configurations for
    twelve hours; at 12.06 h its last step's class (the V100 x8 node) is booked full
    later, and the pull moves it there with 38 h to its due date: 18.8 h on eight
    V100s, 9.80 of energy, 30.65 in all (`lp` 24.55). Eight P100s (1.69 kWh an epoch
    against 1.75) would still finish it on time, so it is not pulled: no hour on the
    V100 x8 node (it ends on the P100s), 9.08, and 30.01 in all, the same 5 missed due
    dates. With wake-ups restated (2026-11-30, docs/model.md 'The event engine'): pulled,
    18.8 h on the V100 x8 node, 9.79 of energy, 34.33 in all; not pulled, 6.1 h there,
    8.35, 32.49 in all, 4 missed due dates either way."""
    inst = real_data(
        RealDataSpec(jobs=40, start=157, nodes=cluster_mix(6), early_stopping="uniform"), 0
    )

    def run(options: dict[str, object]) -> tuple[float, float, float]:
        # as measured: before a job moved off GPUs that end the decision free goes back
        r = run_online(inst, "sts", seed=0, options={**options, "stay_put": False, **ALONE})
        on_v100x8 = sum(
            s.end - s.start
            for s in r.result.plan.for_job("p157")
            if s.config.gpu_type == "v100" and s.config.gpus == 8
        )
        return r.summary()["total_cost"], r.by_job().loc["p157", "energy_cost"], on_v100x8

    # backfill for late jobs only, as until 2026-11-29
    total, energy, hours = run({"backfill_ahead": False})
    total_then, energy_then, hours_then = run({"pull_needed": False, "backfill_ahead": False})
    assert (total, total_then) == (pytest.approx(32.49, abs=0.01), pytest.approx(34.33, abs=0.01))
    assert energy == pytest.approx(8.35, abs=0.01) and energy_then == pytest.approx(9.79, abs=0.01)
    assert hours == pytest.approx(6.1, abs=0.1) and hours_then == pytest.approx(18.8, abs=0.1)


def test_the_pull_counts_the_overhead_from_where_the_job_runs():
    """``needs_last_step``: going on with the configuration the job runs pays only the
    overhead it has left, any other a relaunch (as ``overhead_to_run`` everywhere in
    STS), whatever this decision has the job run. One V100 (1 h an epoch, 300 W, the
    cheaper per epoch) or four (0.3 h, 1,200 W): two epochs left, due at 2.5 h, a
    relaunch of 0.6 h. Running on one GPU with nothing left to pay, the job is on time
    there (2 h), so its dear last step is not needed; waiting, or running on four GPUs,
    the relaunch to one GPU makes it late (2.6 h)."""
    times = {V1: 1.0, V4: 0.3}
    dist = EpochDistribution.deterministic(2)
    job = Job("j", 0.0, 2.5, dist, times, 4.0, relaunch_hours=0.6)
    inst = Instance((GpuType("v100", 16.0, 300.0),), (Node("n", "v100", 4),), (job,))
    on_one = JobStatus(job, 0.0, Allocation(V1, (("n", 0),)), overhead_left=0.0)
    on_four = JobStatus(job, 0.0, Allocation(V4, tuple(("n", g) for g in range(4))), 0.0)
    assert not needs_last_step(inst, on_one, V4, 0.0)
    assert needs_last_step(inst, _status(job), V4, 0.0)
    assert needs_last_step(inst, on_four, V4, 0.0)
    # the overhead the job has left where it runs counts: 0.6 h of it is late again
    assert needs_last_step(inst, JobStatus(job, 0.0, on_one.allocation, 0.6), V4, 0.0)


def test_the_pull_counts_only_configurations_the_cluster_hosts():
    """``needs_last_step`` on the week window where it was found (30 jobs on 4 nodes
    from job 5,250, one P100 node): at 7.78 h p5267 had 29.7 epochs left, due 3.95 h
    later, and the only configuration cheaper per epoch than its V100 x8 last step that
    finished in time was P100 x8 over two nodes, which the cluster cannot host, so the
    pull was judged not needed. Here the same shape: one epoch due in 1.5 h; V100 x8
    (0.5 h, 2,400 W: 1.2 kWh) is the last step; P100 x8 over two nodes (0.8 h, 1,200 W:
    0.96 kWh) is cheaper and on time, P100 x4 (1.6 h, 600 W: 0.96 kWh) is late. With
    two P100 nodes the last step is not needed; with one it is."""
    v8, p4, p8 = Config("v100", 8), Config("p100", 4), Config("p100", 8, nodes=2)
    job = Job("j", 0.0, 1.5, EpochDistribution.deterministic(1), {v8: 0.5, p4: 1.6, p8: 0.8}, 4.0)
    gpus = (GpuType("v100", 16.0, 300.0), GpuType("p100", 16.0, 150.0))
    v100 = Node("v", "v100", 8)
    two = Instance(gpus, (v100, Node("p", "p100", 4), Node("q", "p100", 4)), (job,))
    one = Instance(gpus, (v100, Node("p", "p100", 4)), (job,))
    assert p8 in two.allowed_configs(job) and p8 not in one.allowed_configs(job)
    assert not needs_last_step(two, _status(job), v8, 0.0)
    assert needs_last_step(one, _status(job), v8, 0.0)


def test_a_pulled_job_stays_on_its_last_step_when_slotted():
    """The pull's planned finish on the slot grid. The contended family's first 8 jobs
    (the Philly week from hour 24, load 0.6, seed 0) on one node of 4 P100s and one of
    8 V100s, quarter-hour slots: at 0.25 h ph327 (30 epochs, due 3.49 h) is pulled onto
    the P100 x4 node, to finish at 2.92 h. Its budget is cut down to a slot end (2.75
    h), so staying there read as 0.17 h late against that finish (0.8 at 4.8 an hour),
    and it moved five times between the two nodes (V100 x2, P100 x4, V100 x8, each
    paying its relaunch again): 1.463, no due date missed. With the finish on the grid
    (3.0 h) it stays on the P100s to its end: 1.129 (`sts-greedy` 1.054, the proved
    optimum 1.047, benchmarks/small_optimum.py). Pinned without the greedy copy weighed
    where capacity binds (``weigh_greedy``), whose plan wins here: 1.0535."""
    from benchmarks.small_optimum import CLUSTER, slice_instance
    from heuristic.core.registry import make_policy
    from validation.evaluate import evaluate
    from validation.simulator import rollout

    inst = slice_instance(8, 0.6, 0, CLUSTER)
    plan = rollout(inst, make_policy("sts", weigh_greedy=False))
    ph327 = sorted(plan.for_job("ph327"), key=lambda s: s.start)
    assert [(s.start, s.end, s.config.gpu_type, s.config.gpus) for s in ph327] == [
        (0.25, 3.0, "p100", 4)
    ]
    assert evaluate(inst, plan).total_cost == pytest.approx(1.1291, abs=1e-4)


def test_a_running_job_moved_for_nothing_stays_put():
    """``stay_put``. The same window, at 6.77 h, when ``p184`` arrives: placed first in
    the order, it takes ``p183``'s two V100s (the 8-GPU node is held by ``p172``), and
    ``p183`` moves to two GPUs of that node; then ``p172`` is paused and ``p184`` takes
    four GPUs of the node instead. ``p183``'s own GPUs end the decision free, so it goes
    back to them rather than relaunch on the same configuration elsewhere; the window
    costs 30.98 instead of 31.54 (with the rollout, 26.23 against 29.65; `lp` 24.55).
    With wake-ups restated (2026-11-30, docs/model.md 'The event engine') ``p183`` moves
    the same, and the window costs more with the rule: 35.23 against 33.14 (with the
    rollout, 25.98 against 25.90)."""
    inst = real_data(
        RealDataSpec(jobs=40, start=157, nodes=cluster_mix(6), early_stopping="uniform"), 0
    )

    def run(stay_put: bool) -> tuple[float, list[tuple[float, float, str, str]]]:
        r = run_online(inst, "sts", seed=0, options={"stay_put": stay_put, **ALONE})
        segs = [
            (s.start, s.end, s.config.label, s.gpus[0][0]) for s in r.result.plan.for_job("p183")
        ]
        return r.summary()["total_cost"], segs

    total, segs = run(True)
    total_then, segs_then = run(False)
    assert segs[0][2:] == ("v100x2", "v100-2") and segs[0][1] > 7.4
    assert [s[2:] for s in segs_then[:2]] == [("v100x2", "v100-2"), ("v100x2", "v100-3")]
    assert segs_then[0][1] == pytest.approx(6.768, abs=1e-3)  # moved at the arrival
    assert (total, total_then) == (pytest.approx(35.23, abs=0.01), pytest.approx(33.14, abs=0.01))


def test_under_a_series_a_pulled_job_is_not_held_to_its_pulled_finish():
    """``pull_holds``. The contended family's first 8 jobs (the Philly week from hour
    24, load 0.6, seed 0) on one node of 4 P100s and one of 8 V100s, billed by the
    au-nsw-2023 series from hour 840 with carbon at 100 a tonne: at 0.21 h ph327 (30
    epochs at most, due 3.49 h) is pulled from a shared P100 slot onto the 4 P100s,
    planned to finish by 2.87 h. At 1.23 h ph330 (due 1.35 h) takes the P100s for four
    minutes. Held to 2.87 h, ph327 then moves to two V100s, eight, the P100s and eight
    V100s again, each paying its relaunch: 1.094 in all. Not held under the series, it
    waits on a shared slot, is pulled back onto the P100s and ends at 2.50 h, on time:
    0.872. Without the series the option changes nothing (1.028 either way: the hold
    is kept under a flat bill)."""
    spec = {"start": 24.0, "hours": 6.0, "jobs": 8, "cluster": "p100x4:1,v100x8:1", "load": 0.6}
    priced = {**spec, "prices": "au-nsw-2023:840", "carbon_price": 100.0}

    def run(params: dict[str, object], holds: str) -> tuple[float, list[str]]:
        inst = GENERATORS["philly-week"].instance(params, 0)
        r = run_online(inst, "sts", seed=0, options={"pull_holds": holds})
        assert r.summary()["missed"] == 0
        segs = sorted(r.result.plan.for_job("ph327"), key=lambda s: s.start)
        return r.summary()["total_cost"], [s.config.label for s in segs]

    free, free_segs = run(priced, "flat")
    held, held_segs = run(priced, "always")
    assert (free, held) == (pytest.approx(0.8720, abs=1e-4), pytest.approx(1.0940, abs=1e-4))
    assert free_segs == ["p100:shared", "p100x4", "p100:shared", "p100x4"]
    assert held_segs == ["p100:shared", "p100x4", "v100x2", "v100x8", "p100x4", "v100x8"]
    flat_bill = run(spec, "flat")
    assert flat_bill == run(spec, "always")
    assert flat_bill[0] == pytest.approx(1.0276, abs=1e-4) and flat_bill[1] == held_segs
