"""What displacing a running job costs it (heuristic/sts/displace.py): its relaunch's
energy, and the hours the relaunch takes out of its time left, as its own profile
prices them (``displace_cost = "profile"``; ``"wait"``, the default, also prices a
slot's wait where the displaced job fits nowhere else), or the energy alone
(``"relaunch"``, STS until 2026-11-27 and ``sts-greedy``)."""

from __future__ import annotations

import pytest

from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.policy import JobStatus, SchedulerState
from heuristic.core.registry import make_policy
from heuristic.sts.options import StsOptions
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node

V100, K80 = Config("v100", 1), Config("k80", 1)
ON_V100 = Allocation(V100, (("n0", 0),))
ON_K80 = Allocation(K80, (("n1", 0),))


def _state(k80_epoch_hours: float = 1.15, price: float | None = None) -> SchedulerState:
    """``running`` (3 of 4 epochs left, 0.35 h of slack) holds the only V100. ``urgent``
    arrives with 0.05 h of slack on that V100 (after its start's 0.5 h overhead) and is
    served first (its modified slack is the smaller); on the free K80 it ends 0.25 h
    late. Displaced, ``running`` pays its 0.5 h overhead again and can no longer be on
    time anywhere. Tardiness weighs 0.6 an hour, energy 0.2 a kWh (or ``price``)."""
    times = {V100: 1.0, K80: k80_epoch_hours}
    inst = Instance(
        gpu_types=(GpuType("v100", 16, 300), GpuType("k80", 12, 150)),
        nodes=(Node("n0", "v100", 1), Node("n1", "k80", 1)),
        jobs=(
            Job("running", 0.0, 4.35, EpochDistribution.deterministic(4), times, 4.0, 0.6),
            Job("urgent", 1.0, 3.55, EpochDistribution.deterministic(2), times, 4.0, 0.6),
        ),
        relaunch_hours=0.5,
        energy_price=0.2 if price is None else price,
    )
    occ = Occupancy(inst)
    occ.place(inst.jobs[0], ON_V100)
    jobs = (JobStatus(inst.jobs[0], 1.0, ON_V100), JobStatus(inst.jobs[1], 0.0, None))
    return SchedulerState(1.0, inst, jobs, occ)


def test_a_running_job_that_a_relaunch_would_make_late_keeps_its_gpu():
    """On the K80 ``urgent`` costs 0.234 against 0.15 on the V100: 0.084 more.
    Counted by energy only, the displacement costs 0.03 (0.5 h at 300 W): ``urgent``
    takes the V100 and ``running``, paused, ends late. Counted as ``running``'s profile
    prices it, it costs 0.12 (the relaunch's 0.03 and 0.15 h late, 0.09): ``urgent``
    takes the K80 and ``running`` keeps its V100."""
    profile = make_policy("sts").decide(_state())
    assert "running" not in profile.assign  # it keeps its V100
    assert profile.assign["urgent"] == ON_K80
    energy = make_policy("sts", displace_cost="relaunch").decide(_state())
    assert energy.assign["urgent"] == ON_V100
    assert energy.assign["running"] != ON_V100


def test_where_leaving_it_costs_more_the_running_job_is_still_displaced():
    # on a slow K80 ``urgent`` would be 1.15 h late: 0.65 more, above the 0.12
    decision = make_policy("sts").decide(_state(k80_epoch_hours=1.6))
    assert decision.assign["urgent"] == ON_V100


def test_a_relaunch_that_costs_no_energy_still_costs_its_hours():
    """With energy free, displacing ``running`` costs it 0.15 h late (0.09), and
    ``urgent`` on a K80 of 1.08 h an epoch ends 0.11 h late (0.066): it takes the K80.
    Counted by energy, the displacement costs nothing and ``urgent`` takes the V100."""
    state = _state(k80_epoch_hours=1.08, price=0.0)
    assert state.instance.tardiness_weight("running") == 0.6
    assert make_policy("sts").decide(state).assign["urgent"] == ON_K80
    energy = make_policy("sts", displace_cost="relaunch").decide(state)
    assert energy.assign["urgent"] == ON_V100


def test_sts_greedy_counts_the_energy_only():
    assert make_policy("sts-greedy").options.displace_cost == "relaunch"
    assert StsOptions().displace_cost == "wait"


def test_displace_cost_is_refused_by_name_when_unknown():
    with pytest.raises(ValueError, match="displace_cost"):
        make_policy("sts", displace_cost="hours")


def test_where_slotted_a_displaced_job_that_fits_nowhere_else_waits_a_slot():
    """The contended family's first 8 jobs (the Philly week from hour 24, load 0.6,
    seed 1) on one node of 4 P100s and one of 8 V100s, quarter-hour slots. At 1.25 h
    ph333 (10 epochs, due 1.5 h) is served first; its cheapest profile runs on the
    V100 x8 node (0.0295) where ph327 (due 1.95 h) and ph328 run, its next on the four
    free P100s (0.0368). Priced as restarts from now, displacing them costs less than
    the 0.0073 between the two, so ph333 takes the V100s; but neither displaced job's
    configuration fits anywhere else, and restarting at the next slot makes ph327 0.3 h
    late: 2.312 in all. Priced from the next slot (the default where the instance is
    slotted), ph333 takes the P100s and no due date is missed: 1.082 (the proved
    optimum 0.769, benchmarks/small_optimum.py)."""
    from benchmarks.small_optimum import CLUSTER, slice_instance
    from validation.evaluate import evaluate
    from validation.simulator import rollout

    inst = slice_instance(8, 0.6, 1, CLUSTER)

    def run(**options: object) -> tuple[float, str]:
        # backfill for late jobs only, as until 2026-11-29
        # (in one order: no what-if runs choose between STS's two, as until 2026-11-29)
        plan = rollout(inst, make_policy("sts", backfill_ahead=False, rollout_below=0, **options))
        at = [s for s in plan.for_job("ph333") if s.start <= 1.25 < s.end]
        return evaluate(inst, plan).total_cost, at[0].config.gpu_type

    assert run() == (pytest.approx(1.0820, abs=1e-4), "p100")
    assert run(displace_cost="profile") == (pytest.approx(2.3116, abs=1e-4), "v100")
    # unslotted, ``wait`` prices restarts from now, as ``profile`` does
    unslotted = inst.replace(slot=None)
    for options in ({}, {"displace_cost": "profile"}):
        assert rollout(unslotted, make_policy("sts", **options)) == rollout(
            unslotted, make_policy("sts", displace_cost="profile")
        )
