"""The fluid floor under a whole run's bill, its jobs sharing the cluster's GPUs
(benchmarks/when_fluid.py)."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings

from benchmarks.when import bill_floor
from benchmarks.when_fluid import NoFluidPlan, fluid_plan
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node, Plan, Segment
from instances.energy import Series
from tests.strategies import priced_instances
from validation.evaluate import evaluate
from validation.online import run_online

ONE = Config("v100", 1)
FOUR = Config("v100", 4)
SHARED = Config("v100", 1, shared=True)
# 1.0 a kWh in hours 0-5 of every 12, 0.1 in hours 6-11
PRICES = Series.regular(1.0, [1.0] * 6 + [0.1] * 6)


def _cluster(jobs: list[Job], gpus: int) -> Instance:
    """``jobs`` on one V100 node of ``gpus`` GPUs (300 W a GPU)."""
    return Instance(
        (GpuType("v100", 16.0, 300.0),),
        (Node("n", "v100", gpus),),
        tuple(jobs),
        energy_price=0.55,
        prices=PRICES,
    )


def _job(name: str, due: float, times: dict[Config, float]) -> Job:
    return Job(name, 0.0, due, EpochDistribution.deterministic(12.0), times, 4.0)


def test_one_job_alone_pays_its_own_floor():
    """With one job the LP is bill_floor's: on the GPUs it has and with none shared out."""
    for epochs, due in ((6.0, 18.0), (10.0, 12.0)):
        inst = _cluster([_job("j", due, {ONE: 1.0, FOUR: 0.4})], 4)
        alone = bill_floor(inst, inst.jobs[0], epochs)
        for scale in (1.0, math.inf):
            assert fluid_plan(inst, {"j": epochs}, scale=scale).bill == pytest.approx(alone)


def test_two_jobs_share_one_gpus_cheap_hours():
    """Two jobs of six one-hour epochs on one GPU, both due at 12 h: the six cheap hours
    hold one of them, the other runs in the dear hours (0.3 kW either way). With two
    GPUs, or a job allowed to run late (after its due date, on no GPU of the cluster),
    both run cheap; with a due date at 10 h twelve hours of work do not fit at all."""
    jobs = [_job(n, 12.0, {ONE: 1.0}) for n in ("a", "b")]
    inst = _cluster(jobs, 1)
    six = {"a": 6.0, "b": 6.0}
    both = fluid_plan(inst, six)
    assert both.bill == pytest.approx(0.3 * (6 * 0.1 + 6 * 1.0))
    assert sum(both.by_job.values()) == pytest.approx(both.bill) and set(both.by_job) == {"a", "b"}
    cheap = 2 * 0.3 * 6 * 0.1
    assert fluid_plan(inst, six, scale=2.0).bill == pytest.approx(cheap)
    assert fluid_plan(inst, six, scale=math.inf).bill == pytest.approx(cheap)
    assert fluid_plan(inst, six, late={"b"}).bill == pytest.approx(cheap)
    # a job that ran no epoch holds nothing
    assert fluid_plan(inst, {"a": 6.0}).bill == pytest.approx(0.3 * 6 * 0.1)
    tight = _cluster([_job(n, 10.0, {ONE: 1.0}) for n in ("a", "b")], 1)
    with pytest.raises(NoFluidPlan, match="no fluid plan"):
        fluid_plan(tight, six)
    with pytest.raises(ValueError, match="late_hours must be positive"):
        fluid_plan(inst, six, late={"b"}, late_hours=0.0)


def test_a_plan_inside_the_evaluators_tolerances_is_a_solution():
    """The evaluator accepts a start a few 1e-10 h before the release, an end as much
    after the due date and the work 8e-10 epochs beyond two one-hour epochs in two hours:
    the LP takes the same tolerances, so it finds a plan (found by a review: it had
    none)."""
    work = 2.0 + 8e-10
    job = Job("j", 1.0, 3.0, EpochDistribution.deterministic(work), {ONE: 1.0}, 4.0)
    inst = _cluster([job], 1)
    plan = Plan((Segment(1.0 - 4e-10, 3.0 + 4e-10, "j", ONE, (("n", 0),)),))
    ev = evaluate(inst, plan)
    assert ev.missed == 0
    floor = fluid_plan(inst, {"j": work}).bill
    assert floor <= ev.energy_cost + ev.carbon_cost + 1e-9


def test_a_shared_slot_holds_half_a_gpu():
    """Shared slots (K_max = 2) of one GPU run both jobs at once in the cheap hours, each
    drawing half the GPU's power."""
    jobs = [_job(n, 12.0, {SHARED: 1.0}) for n in ("a", "b")]
    inst = _cluster(jobs, 1)
    assert fluid_plan(inst, {"a": 6.0, "b": 6.0}).bill == pytest.approx(2 * 0.15 * 6 * 0.1)


def test_the_blind_twin_runs_least_energy_first():
    """Blind to the price: the configuration of least energy (one GPU, 0.3 kWh an epoch,
    against four's 0.48), from the release, so in the dear hours, billed at the series;
    its energy is the same as the priced plan's, its bill more."""
    inst = _cluster([_job("j", 18.0, {ONE: 1.0, FOUR: 0.4})], 4)
    blind = fluid_plan(inst, {"j": 6.0}, blind=True)
    assert blind.bill == pytest.approx(0.3 * 6 * 1.0)
    assert blind.kwh == pytest.approx(1.8)
    priced = fluid_plan(inst, {"j": 6.0})
    assert priced.kwh == pytest.approx(1.8)
    assert priced.bill == pytest.approx(0.3 * 6 * 0.1)


@settings(max_examples=20, deadline=None)
@given(priced_instances(max_jobs=4, relaunch=True) | priced_instances(max_jobs=6, idle=True))
def test_no_run_pays_less_than_the_fluid_floor(inst):
    """Online under any series, a run's bill (its jobs' energy and carbon) is at least
    the fluid floor of the epochs its jobs ran, with the jobs it made late in ``late``:
    its own plan is one of the LP's (STS timed and price-blind; idle power, where charged,
    is the nodes', not the jobs')."""
    for policy in ("sts", "sts-price-blind"):
        jobs = run_online(inst, policy, seed=1).by_job()
        epochs = {str(j): float(e) for j, e in jobs["epochs_run"].items()}
        late = {str(j) for j, missed in jobs["missed"].items() if missed}
        bill = float((jobs["energy_cost"] + jobs["carbon_cost"]).sum())
        floor = fluid_plan(inst, epochs, late).bill
        assert bill >= floor - 1e-9 * max(1.0, abs(floor)), policy


def test_the_store_table_floors_both_policies_runs(tmp_path):
    """From a small prices campaign's store: per contended run, the floor at the cluster's
    GPUs is at most price-blind STS's bill (its own plan keeps on time the jobs it
    keeps) and at least the floor with GPUs to spare; the blind twin bills more."""
    from benchmarks.when_fluid import store_table
    from tests.experiments.shrunk import run_small, shrunk

    text = shrunk("prices", ("sts", "sts-price-blind"))
    text = re.sub(r"prices = \[[^\]]*\]", 'prices = ["au-nsw-2023:840"]', text)
    run_small("prices", text, tmp_path, 4)
    table = store_table(str(tmp_path / "prices.sqlite"), "prices", [1.0, math.inf])
    assert len(table) == 1 and table["scenario"].iloc[0].startswith("contended")
    row = table.iloc[0]
    assert row["floor x1"] <= row["price-blind STS"] + 1e-9
    assert row["floor xinf"] <= row["floor x1"] + 1e-9
    assert row["blind x1"] >= row["floor x1"] - 1e-9
    maxed = store_table(str(tmp_path / "prices.sqlite"), "prices", [1.0], work="max").iloc[0]
    assert maxed["blind x1"] >= maxed["floor x1"] - 1e-9
