"""The fluid plan re-made online, knowing neither the arrivals nor the stops
(benchmarks/when_online.py)."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings

from benchmarks.when_fluid import fluid_plan
from benchmarks.when_online import main_types, online_fluid
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node, Plan, Segment
from instances.energy import Series
from tests.benchmarks.test_when_fluid import FOUR, ONE, PRICES, _cluster
from tests.strategies import priced_instances
from validation.online import run_online

# _cluster: one V100 node of the given GPUs (300 W a GPU), priced 1.0 a kWh in hours
# 0-5 of every 12 and 0.1 in hours 6-11 (test_when_fluid's)


def _job(name: str, release: float, due: float, epochs: float = 12.0) -> Job:
    times = {ONE: 1.0, FOUR: 0.4}
    return Job(name, release, due, EpochDistribution.deterministic(epochs), times, 4.0)


def test_without_stops_or_later_arrivals_it_is_the_whole_runs_fluid_plan():
    """Every job released at once and run to its maximum: re-planning at each end
    changes nothing (the rest of an optimal plan is optimal for the rest), so the bill
    is fluid_plan's."""
    jobs = [_job("a", 0.0, 24.0, 10.0), _job("b", 0.0, 18.0, 6.0), _job("c", 0.0, 30.0, 4.0)]
    inst = _cluster(jobs, 4)
    ran = {j.id: j.max_epochs for j in jobs}
    online = online_fluid(inst, ran)
    assert online.bill == pytest.approx(fluid_plan(inst, ran).bill, rel=1e-6)
    assert online.missed == 0 and online.tardiness == 0.0
    assert online.solves == 3  # at the release, then at each of the first two ends


def test_a_job_that_stops_early_pays_for_the_epochs_it_ran_in_the_hours_planned():
    """Twelve one-hour epochs planned in the cheap hours (6-11 and 18-23 on one GPU);
    the job stops after six, so it pays six cheap hours. Blind to the price it runs its
    six from its release, in the dear hours."""
    inst = _cluster([_job("j", 0.0, 24.0)], 1)
    aware = online_fluid(inst, {"j": 6.0})
    assert aware.bill == pytest.approx(6 * 0.3 * 0.1)
    assert aware.kwh == pytest.approx(1.8)
    blind = online_fluid(inst, {"j": 6.0}, blind=True)
    assert blind.bill == pytest.approx(6 * 0.3 * 1.0)
    assert blind.kwh == pytest.approx(1.8)


def test_the_blind_plan_runs_from_the_release_however_dear_a_late_hour_would_be():
    """Six one-hour epochs due at 24 h, tardiness 400 an hour: a late cell's cost is
    thousands of times an hour's energy. The blind plan still runs at the release (it
    once ran in the cheap hours 18-23 of this series, its cost of an hour later lost
    below the solver's tolerance when the costs were put in units of the dearest)."""
    day = Series.regular(1.0, [1.0] * 6 + [0.1] * 6 + [1.0] * 6 + [0.2] * 6)
    job = Job("j", 0.0, 24.0, EpochDistribution.deterministic(6.0), {ONE: 1.0}, 400.0)
    inst = _cluster([job], 1).replace(prices=day)
    blind = online_fluid(inst, {"j": 6.0}, blind=True)
    assert blind.bill == pytest.approx(6 * 0.3 * 1.0)
    assert online_fluid(inst, {"j": 6.0}).bill == pytest.approx(6 * 0.3 * 0.1)


def test_a_later_arrival_is_not_foreseen():
    """One GPU. ``a`` (six epochs, due at 24 h) plans the cheap hours 6-11; ``b``, not
    known until it arrives at 6 h and due at 12 h, takes them, and ``a`` runs in the
    cheap hours 18-23 instead. With ``a`` due at 18 h it has only the dear hours 12-17
    left: the whole-run plan, knowing ``b``, would run ``a`` at once, in the dear hours
    0-5, for the same bill."""
    for due, bill in ((24.0, 2 * 6 * 0.3 * 0.1), (18.0, 6 * 0.3 * (0.1 + 1.0))):
        jobs = [_job("a", 0.0, due, 6.0), _job("b", 6.0, 12.0, 6.0)]
        inst = _cluster(jobs, 1)
        ran = {"a": 6.0, "b": 6.0}
        online = online_fluid(inst, ran)
        assert online.bill == pytest.approx(bill)
        assert online.missed == 0
        assert online.bill >= fluid_plan(inst, ran).bill - 1e-9


def test_a_job_that_cannot_be_on_time_runs_at_once_and_counts_its_lateness():
    """Six one-hour epochs on one GPU, due at 3 h: the plan runs them at once, ends at
    6 h, three hours late."""
    job = Job("j", 0.0, 3.0, EpochDistribution.deterministic(6.0), {ONE: 1.0}, 4.0)
    inst = _cluster([job], 1)
    online = online_fluid(inst, {"j": 6.0})
    assert online.missed == 1
    assert online.tardiness == pytest.approx(inst.tardiness_weight("j") * 3.0)
    assert online.bill == pytest.approx(6 * 0.3 * 1.0)


def test_epochs_beyond_the_maximum_or_not_finite_are_refused():
    inst = _cluster([_job("j", 0.0, 24.0, 6.0)], 1)
    with pytest.raises(ValueError, match=r"'j' ran 7\.0 epochs"):
        online_fluid(inst, {"j": 7.0})
    for bad in (math.nan, math.inf, -1.0):
        with pytest.raises(ValueError, match="not a finite count"):
            online_fluid(inst, {"j": bad})
    assert online_fluid(inst, {}).solves == 0


@settings(max_examples=15, deadline=None)
@given(priced_instances(max_jobs=4, relaunch=True))
def test_the_online_plan_is_a_fluid_plan_of_the_run(inst):
    """What the online plan runs is one of the whole-run LP's plans (the jobs it made
    late in ``late``), so its bill is at least that floor; its blind twin's too."""
    jobs = run_online(inst, "sts", seed=1).by_job()
    epochs = {str(j): float(e) for j, e in jobs["epochs_run"].items()}
    for blind in (False, True):
        online = online_fluid(inst, epochs, blind=blind)
        floor = fluid_plan(inst, epochs, online.late).bill
        assert online.bill >= floor - 1e-7 * max(1.0, abs(floor))


def test_the_store_table_sets_the_online_plans_beside_both_policies(tmp_path):
    """From a small prices campaign's store: per contended run, both policies' bills and
    the online plan's, which is at least the whole run's fluid floor."""
    from benchmarks.when_fluid import store_table as floors
    from benchmarks.when_online import store_table
    from tests.experiments.shrunk import run_small, shrunk

    text = shrunk("prices", ("sts", "sts-price-blind"))
    text = re.sub(r"prices = \[[^\]]*\]", 'prices = ["au-nsw-2023:840"]', text)
    run_small("prices", text, tmp_path, 4)
    path = str(tmp_path / "prices.sqlite")
    row = store_table([path], "prices", one_type=True).iloc[0]
    assert row["scenario"].startswith("contended")
    assert row["online, one type"] > 0 and row["online blind, one type"] > 0
    floor = floors(path, "prices", [1.0]).iloc[0]["floor x1"]
    assert row["online"] >= floor - 1e-9
    assert row["online blind"] > 0 and row["missed, online"] >= 0


P100 = Config("p100", 1)


def _two_types(times: dict[Config, float]) -> Instance:
    """One job of six epochs due at 18 h, on one V100 (300 W) and one P100 (250 W)."""
    job = Job("j", 0.0, 18.0, EpochDistribution.deterministic(6.0), times, 4.0)
    return Instance(
        (GpuType("v100", 16.0, 300.0), GpuType("p100", 16.0, 250.0)),
        (Node("n", "v100", 1), Node("m", "p100", 1)),
        (job,),
        energy_price=0.55,
        prices=PRICES,
    )


def test_a_job_held_to_one_type_is_planned_as_if_it_had_no_other():
    """Held to the P100, the job's plan is the one of an instance where it may run only
    there: six two-hour epochs, twelve hours of run, six of them in the cheap hours
    before its due date and six in dear ones. Free, it runs its six one-hour epochs on
    the V100 in the cheap hours. A type the job has no configuration of is refused by
    name."""
    both = _two_types({ONE: 1.0, P100: 2.0})
    alone = _two_types({P100: 2.0})
    for blind in (False, True):
        held = online_fluid(both, {"j": 6.0}, blind=blind, types={"j": "p100"})
        only = online_fluid(alone, {"j": 6.0}, blind=blind)
        assert held.bill == pytest.approx(only.bill)
        assert held.kwh == pytest.approx(6 * 2 * 0.25)
    assert online_fluid(both, {"j": 6.0}, types={"j": "p100"}).bill == pytest.approx(
        0.25 * (6 * 0.1 + 6 * 1.0)
    )
    assert online_fluid(both, {"j": 6.0}).bill == pytest.approx(6 * 0.3 * 0.1)
    with pytest.raises(ValueError, match=r"job 'j' has no allowed configuration of type 'k80'"):
        online_fluid(both, {"j": 6.0}, types={"j": "k80"})


def test_main_types_takes_the_type_of_most_gpu_hours():
    """Two hours on one P100 against one hour on four V100s: the V100s' four GPU-hours
    win. Equal GPU-hours go to the type whose name sorts first."""
    segs = (
        Segment(0.0, 2.0, "a", P100, (("m", 0),)),
        Segment(2.0, 3.0, "a", FOUR, tuple(("n", g) for g in range(4))),
        Segment(0.0, 1.0, "b", P100, (("m", 0),)),
        Segment(1.0, 2.0, "b", ONE, (("n", 0),)),
    )
    assert main_types(Plan(segs)) == {"a": "v100", "b": "p100"}
