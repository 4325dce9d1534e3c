"""The online fluid plan realised on whole GPUs (benchmarks/when_realised.py)."""

from __future__ import annotations

import pytest

from benchmarks.when_realised import RealisedPlan, realised_run
from instances import EpochDistribution, Instance, Job
from instances.energy import Series
from tests.benchmarks.test_when_fluid import FOUR, ONE
from tests.benchmarks.test_when_fluid import _cluster as _fluid_cluster
from validation.simulator import simulate

# a day of dear hours (1.0 a kWh) and two cheap spells, 0.1 in hours 6-11 and 0.2 in
# 18-23, repeating: no two cheap cells tie
DAY = Series.regular(1.0, [1.0] * 6 + [0.1] * 6 + [1.0] * 6 + [0.2] * 6)


def _cluster(jobs: list[Job], gpus: int) -> Instance:
    """``jobs`` on one V100 node of ``gpus`` GPUs (300 W a GPU), priced by ``DAY``."""
    return _fluid_cluster(jobs, gpus).replace(prices=DAY)


def _job(name: str, release: float, due: float, epochs: float) -> Job:
    times = {ONE: 1.0, FOUR: 0.4}
    return Job(name, release, due, EpochDistribution.deterministic(epochs), times, 4.0)


def _starts(inst, blind: bool) -> dict[str, float]:
    result = simulate(inst, RealisedPlan(blind=blind), mode="sampled", seed=0)
    starts: dict[str, float] = {}
    for seg in result.plan.segments:
        starts[seg.job] = min(starts.get(seg.job, seg.start), seg.start)
    return starts


def test_a_job_with_slack_waits_for_the_cheap_hours_and_its_blind_twin_does_not():
    """Six epochs on one GPU (6 h) due at 24 h: hours 6-11 are the cheapest, a tenth of
    the price of hours 0-5, so the plan runs it there; the blind twin runs it at once.
    Both on time; the bill ten times smaller."""
    inst = _cluster([_job("a", 0.0, 24.0, 6.0)], 1)
    assert _starts(inst, blind=False) == {"a": pytest.approx(6.0)}
    assert _starts(inst, blind=True) == {"a": 0.0}
    aware, blind = realised_run(inst, 0), realised_run(inst, 0, blind=True)
    assert aware.missed == blind.missed == 0
    assert aware.bill == pytest.approx(blind.bill / 10)


def test_the_cheap_hours_go_to_the_job_that_can_wait_for_them():
    """One GPU. ``u`` (3 epochs, due at 3 h) must run now in the dear hours; ``w`` (6
    epochs, due at 24 h) gets the cheap hours 6-11. Joint planning: ``w`` does not start
    at 3 h when ``u`` ends, though the GPU is free."""
    inst = _cluster([_job("u", 0.0, 3.0, 3.0), _job("w", 0.0, 24.0, 6.0)], 1)
    starts = _starts(inst, blind=False)
    assert starts == {"u": 0.0, "w": pytest.approx(6.0)}
    run = realised_run(inst, 0)
    assert run.missed == 0
    # u: 0.3 kW for 3 h at 1.0; w: 0.3 kW for 6 h at 0.1
    assert run.bill == pytest.approx(0.3 * 3 * 1.0 + 0.3 * 6 * 0.1)


def test_where_the_cheapest_hours_cannot_hold_both_the_later_due_date_waits_longer():
    """One GPU, two jobs of 6 epochs due at 24 h (``a``) and 30 h (``b``): one takes
    hours 6-11 at 0.1, the other hours 18-23 at 0.2 (both on time; 12-17 and 0-5 cost
    1.0). Either order bills the same; both are cheaper than anything dearer."""
    inst = _cluster([_job("a", 0.0, 24.0, 6.0), _job("b", 0.0, 30.0, 6.0)], 1)
    assert sorted(_starts(inst, blind=False).values()) == [pytest.approx(6.0), 18.0]
    run = realised_run(inst, 0)
    assert run.missed == 0
    assert run.bill == pytest.approx(0.3 * 6 * 0.1 + 0.3 * 6 * 0.2)


def test_same_seed_same_run_and_bad_options_are_refused():
    inst = _cluster([_job("a", 0.0, 24.0, 6.0), _job("b", 1.0, 9.0, 4.0)], 4)
    one, two = realised_run(inst, 3), realised_run(inst, 3)
    assert one.bill == two.bill and one.total == two.total and one.relaunches == two.relaunches
    with pytest.raises(ValueError, match=r"keep=0\.8, start=0\.5"):
        RealisedPlan(start=0.5, keep=0.8)


def test_a_job_the_lp_ends_now_runs_fast_enough_to_pay_its_start():
    """Two epochs due at 2.2 h, each start paying half an hour. The LP, blind to the
    overhead, runs them on one GPU (2 h, the least energy); started there the job would
    end at 2.5 h. The plan places it on four GPUs (0.5 + 0.8 h) and it is on time."""
    inst = _cluster([_job("a", 0.0, 2.2, 2.0)], 4).replace(relaunch_hours=0.5)
    result = simulate(inst, RealisedPlan(), mode="sampled", seed=0)
    assert {seg.config for seg in result.plan.segments} == {FOUR}
    assert realised_run(inst, 0).missed == 0
