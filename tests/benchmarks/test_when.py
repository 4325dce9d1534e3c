"""The floor under the bill of plans that meet every due date (benchmarks/when.py)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings

from benchmarks.when import bill_floor
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from instances.energy import Carbon, Series
from tests.strategies import priced_instances
from validation.online import run_online

ONE = Config("v100", 1)
FOUR = Config("v100", 4)


def _alone(epochs: float, due: float) -> Instance:
    """One job on one 4-GPU V100 node (300 W a GPU; an epoch takes 1 h on one GPU, 0.4 h
    on four), billed 1.0 per kWh in hours 0-5 of every 12 and 0.1 in hours 6-11."""
    job = Job("j", 0.0, due, EpochDistribution.deterministic(epochs), {ONE: 1.0, FOUR: 0.4}, 4.0)
    return Instance(
        (GpuType("v100", 16.0, 300.0),),
        (Node("n", "v100", 4),),
        (job,),
        energy_price=0.55,
        prices=Series.regular(1.0, [1.0] * 6 + [0.1] * 6),
    )


def test_the_floor_runs_the_cheapest_epochs_in_the_cheapest_hours():
    # six epochs fit the six cheap hours on one GPU (0.3 kWh an epoch, the least)
    inst = _alone(6.0, 18.0)
    assert bill_floor(inst, inst.jobs[0], 6.0) == pytest.approx(0.1 * 0.3 * 6)
    # ten epochs due at 12 h: the cheap hours mix one GPU and four (3 1/3 h and 2 2/3 h:
    # 10 epochs), dearer per epoch but a tenth of the price of the dear hours
    inst = _alone(10.0, 12.0)
    assert bill_floor(inst, inst.jobs[0], 10.0) == pytest.approx(0.1 * (0.3 * 10 / 3 + 1.2 * 8 / 3))
    # carbon at 100 a tonne over 500 g/kWh adds 0.05 to every kWh
    priced = _alone(6.0, 18.0).replace(carbon=Carbon(Series.flat(500.0, upper=800.0), 100.0))
    assert bill_floor(priced, priced.jobs[0], 6.0) == pytest.approx((0.1 + 0.05) * 0.3 * 6)
    # none run: nothing to pay; more than fit before the due date: no schedule
    assert bill_floor(inst, inst.jobs[0], 0.0) == 0.0
    assert bill_floor(inst, inst.jobs[0], 31.0) == math.inf


def test_a_price_below_the_solver_tolerance_is_not_rounded_into_the_floor():
    """One epoch of 1 h on one K80 (0.1 kW) in a 2-hour window, free but for 1e-7 a kWh
    in [1.5, 1.75) of a series repeating every 1.75 h: the floor is 0 (with HiGHS's
    default tolerances it came out 2.5e-9, above the bill of running in free hours)."""
    k80 = Config("k80", 1)
    job = Job("j", 0.0, 2.0, EpochDistribution.deterministic(1.0), {k80: 1.0}, 2.0)
    times = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75)
    prices = Series(times, (0.0,) * 6 + (1e-7,), upper=0.6)
    inst = Instance((GpuType("k80", 12.0, 100.0),), (Node("n", "k80", 4),), (job,), prices=prices)
    assert bill_floor(inst, job, 1.0) == pytest.approx(0.0, abs=1e-15)


@settings(max_examples=25, deadline=None)
@given(priced_instances(max_jobs=4, relaunch=True))
def test_no_job_on_time_pays_less_than_its_floor(inst):
    """Online under any series, every job that meets its due date has paid at least its
    floor for the epochs it ran (STS timed and price-blind)."""
    for policy in ("sts", "sts-price-blind"):
        run = run_online(inst, policy, seed=1)
        jobs = run.by_job()
        for job_id, row in jobs.iterrows():
            if row["missed"]:
                continue
            floor = bill_floor(inst, inst.job(str(job_id)), row["epochs_run"])
            bill = row["energy_cost"] + row["carbon_cost"]
            assert bill >= floor - 1e-9 * max(1.0, floor), (policy, job_id)
