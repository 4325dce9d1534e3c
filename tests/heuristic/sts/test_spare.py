"""A late job does not displace a running job that the displacement would make late
(heuristic/sts/spare.py): the rule on a small cluster, and on the Philly week's window
where it was found (docs/model.md, 'STS under contention')."""

from __future__ import annotations

import pytest

from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.policy import JobStatus, SchedulerState
from heuristic.sts.options import StsOptions
from heuristic.sts.policy import StsPolicy
from heuristic.sts.spare import LateRun, Standing, spared, standing
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from instances.generators import RealDataSpec, real_data
from instances.generators.realdata import cluster_mix
from validation.online import run_online

V4, V8 = Config("v100", 4), Config("v100", 8)
OVERHEAD = 0.1  # hours, every job's relaunch


def _state(runner_due: float) -> SchedulerState:
    """One V100 x8 node; ``runner`` runs there with 5 epochs left (0.5 h on it);
    ``late`` waits, past its due date, with 2 epochs (0.2 h on eight GPUs, 0.4 h on
    four). The order serves ``late`` first (shortest work among late jobs)."""
    times = {V8: 0.1, V4: 0.2}
    dist = EpochDistribution.deterministic(5)
    runner = Job("runner", 0.0, runner_due, dist, times, 4.0)
    late = Job("late", 0.0, 0.5, EpochDistribution.deterministic(2), times, 4.0)
    inst = Instance(
        (GpuType("v100", 32.0, 300.0),),
        (Node("n", "v100", 8),),
        (runner, late),
        relaunch_hours=OVERHEAD,
    )
    occ = Occupancy(inst)
    alloc = Allocation(V8, tuple(("n", k) for k in range(8)))
    occ.place(runner, alloc)
    statuses = (JobStatus(runner, 0.0, alloc), JobStatus(late, 0.0, None))
    return SchedulerState(1.0, inst, statuses, occ)


def test_a_running_job_on_time_by_less_than_three_overheads_is_fragile():
    for due, fragile, late in (
        (1.55, True, False),
        (1.75, True, False),
        (1.85, False, False),
        (1.45, False, True),
    ):
        state = _state(due)  # slack: due - 1.0 - 0.5
        found = standing(state.instance, state.jobs, state.time, lambda j: 0.1)
        assert ("runner" in found.fragile) is fragile, due
        assert ("runner" in found.late) is late, due
    late_run = standing(state.instance, state.jobs, state.time, lambda j: 0.1).late["runner"]
    assert late_run == LateRun(state.instance.tardiness_weight("runner"), 0.5, OVERHEAD)


def test_only_a_job_late_whatever_it_runs_on_spares_them():
    state = _state(1.6)
    inst, late = state.instance, state.jobs[1]
    found = standing(inst, state.jobs, state.time, lambda j: 0.1)
    assert spared(inst, late, V8, state.time, 0.1, found) == {"runner"}
    assert spared(inst, late, V8, 0.1, 0.1, found) == frozenset()  # on time at 0.1 h
    assert spared(inst, late, V8, state.time, 0.1, None) == frozenset()


def test_a_late_runner_is_spared_unless_the_exchange_pays():
    """Two late jobs of one weight: ``late`` needs 0.2 h on eight GPUs and its 0.1 h
    overhead, 0.3 h. Displacing a runner with ``h`` hours left adds 0.3 + 0.1 - h to
    their tardiness: worth it only where the runner has more than 0.4 h left."""
    state = _state(1.6)
    inst, late = state.instance, state.jobs[1]
    w = inst.tardiness_weight("runner")
    for hours, kept in ((0.39, True), (0.41, False)):
        running = Standing({}, {"runner": LateRun(w, hours, OVERHEAD)})
        assert ("runner" in spared(inst, late, V8, state.time, 0.1, running)) is kept, hours
    heavy = Standing({}, {"runner": LateRun(w / 4, 0.39, OVERHEAD)})
    assert spared(inst, late, V8, state.time, 0.1, heavy) == frozenset()  # it weighs less


@pytest.mark.parametrize(("due", "displaced"), [(1.6, False), (2.0, True)])
def test_a_late_job_leaves_a_fragile_runner_be(due, displaced):
    """On time by 0.1 h (one overhead), the runner keeps its node: a displacement would
    make it late by its relaunch, to hurry a job late anyway. On time by 0.5 h, it can
    absorb one, and is displaced as before."""
    decision = StsPolicy().decide(_state(due))
    assert ("runner" in decision.assign) is displaced
    if not displaced:
        assert decision.assign.get("late") is None or decision.assign["late"].config != V8
    before = StsPolicy(StsOptions(spare=0.0)).decide(_state(due))
    assert before.assign["runner"] is None  # without the rule: displaced either way


def test_spare_must_be_a_finite_count_of_overheads():
    for bad in (-1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="spare"):
            StsOptions(spare=bad)


def _week(jobs: int, nodes: int, start: int) -> Instance:
    """As `gpusched generate realdata --source week --jobs J --nodes N --start S`."""
    spec = RealDataSpec(
        jobs=jobs, start=start, nodes=cluster_mix(nodes), source="week", early_stopping="uniform"
    )
    return real_data(spec, 0)


def test_the_burst_of_the_weeks_worst_window_stops_displacing_itself():
    """The Philly week's 30 usable jobs from index 750 on 8 nodes (seed 0), where STS
    cost 1.57 times `lp` (docs/contended.md): at 1.54 h five jobs are released, each due
    0.2-0.3 h later, with a relaunch of 0.069 h against 0.12-0.17 h of work on its
    fastest configuration. p772 (late) and p779 take the two P100 nodes from each other
    twice, and p779 then displaces p776 at 27 of its 45 epochs: 2.82 in all. With the
    rule the on-time jobs keep their GPUs: 1.83 (`lp` 1.79). With wake-ups restated
    (2026-11-30, docs/model.md 'The event engine'), 2.61 without the rule."""
    inst = _week(30, 8, 750)
    # backfill for late jobs only, and STS in one order, as until 2026-11-29
    rules = {"backfill_ahead": False, "rollout_below": 0}
    now = run_online(inst, "sts", seed=0, options=rules)
    then = run_online(inst, "sts", seed=0, options={"spare": 0.0, **rules})
    assert now.summary()["total_cost"] == pytest.approx(1.83, abs=0.01)
    assert then.summary()["total_cost"] == pytest.approx(2.61, abs=0.01)
    burst = ["p772", "p776", "p777", "p778", "p779"]
    assert now.summary()["relaunches"] < then.summary()["relaunches"]
    assert sum(now.by_job().loc[burst, "late_h"]) < sum(then.by_job().loc[burst, "late_h"])


def test_late_jobs_of_a_burst_on_four_nodes_stop_trading_places():
    """The same burst with 50 jobs on 4 nodes (seed 0): every job of it is late, and
    each one shorter than another took its GPUs, paying both relaunches (0.069 h each
    against 0.1-0.2 h of work): 12.01 in all, 14 missed due dates (`lp` 9.71, 15).
    Displacing a late job only where the exchange pays: 8.04, 13. Displacements
    otherwise counted by their energy, as when it was measured. With wake-ups restated
    (2026-11-30), 10.49 and 14 without the rule."""
    energy = {"displace_cost": "relaunch", "pull_needed": False, "backfill_ahead": False}
    energy["rollout_below"] = 0  # STS in one order, as until 2026-11-29
    now = run_online(_week(50, 4, 750), "sts", seed=0, options=energy).summary()
    then = run_online(_week(50, 4, 750), "sts", seed=0, options={"spare": 0.0, **energy})
    then = then.summary()
    assert now["total_cost"] == pytest.approx(8.04, abs=0.01)
    assert then["total_cost"] == pytest.approx(10.49, abs=0.01)
    assert now["missed"] <= then["missed"]
