"""The MILP's index data (milp/data.py) by hand on one job and one GPU: the least energy
with the first start's overhead, the least tardiness at the end of a slot, a job's
bound that is its least cost alone where that is more, and the windows a cutoff leaves
(due date plus the lateness its room pays for, at the full run's weight). Cases a
mutation review found free to move (2026-12-08: 18 mutants, 8 killed by the fast MILP
tests; these kill 8 of the other 10; left: the rounding slack of a cutoff's room, which
the window's own tolerance covers at any horizon under a million slots, and lateness
rows for blocks no job stops at, which weigh 0); and a MIP start past such a window."""

from __future__ import annotations

import math

import pytest

from instances import (
    Config,
    EpochDistribution,
    GpuType,
    Instance,
    Job,
    Node,
    Plan,
    PlanError,
    Segment,
)
from milp.alone import least_alone
from milp.data import milp_data
from milp.model import model_of_data
from milp.plan_io import start_values

SLOT = 0.5
ONE, TWO = Config("v100", 1), Config("v100", 2)


def _one(job: Job, tardiness: str = "worst_case") -> Instance:
    node = Node("n", "v100", 2)
    return Instance(
        (GpuType("v100", 16.0, 300.0),),
        (node,),
        (job,),
        slot=SLOT,
        tardiness=tardiness,  # type: ignore[arg-type]
    )


def test_the_least_energy_pays_the_first_starts_overhead():
    """Two epochs of 0.5 h on one GPU (300 W), a relaunch of 0.25 h: every plan runs both
    epochs (no early stop) and starts once."""
    job = Job("j", 0.0, 9.0, EpochDistribution.deterministic(2.0), {ONE: 0.5}, 4.0)
    inst = _one(job).replace(relaunch_hours=0.25)
    jd = milp_data(inst, 8).jobs["j"]
    kwh = 0.3 * (2 * 0.5 + 0.25)
    assert jd.least_energy() == pytest.approx(inst.energy_price * kwh, rel=1e-12)


def test_the_least_tardiness_counts_to_the_end_of_the_earliest_slot():
    """One epoch of 1 h from 0, due 0.25: done at the end of slot 1 at the soonest (1 h),
    0.75 h late."""
    job = Job("j", 0.0, 0.25, EpochDistribution.deterministic(1.0), {ONE: 1.0}, 4.0)
    d = milp_data(_one(job), 8)
    assert d.jobs["j"].earliest_finish_slot(0) == 1
    assert d.least_tardiness("j") == pytest.approx(d.jobs["j"].omega * 0.75, rel=1e-12)


def test_a_jobs_bound_is_its_least_cost_alone_where_that_is_more():
    """One GPU is cheap and slow (0.3 kWh an epoch), two dear and fast (0.45 kWh); due so
    soon that the cheapest energy and the earliest finish cannot both be had: the job
    alone costs more than the two floors added, and its bound is that."""
    job = Job("j", 0.0, 1.0, EpochDistribution.deterministic(2.0), {ONE: 1.0, TWO: 0.75}, 4.0)
    inst = _one(job)
    d = milp_data(inst, 12)
    split = d.jobs["j"].least_energy() + d.least_tardiness("j")
    alone = least_alone(inst, job, "worst_case", inst.energy_price)
    assert alone is not None and alone > split + 1e-6
    assert d.job_bound("j") == pytest.approx(alone, rel=1e-12)


@pytest.mark.parametrize("mode", ["worst_case", "expected"])
def test_a_cutoff_leaves_the_lateness_its_room_pays_for_at_the_full_runs_weight(mode):
    """Two epochs of 0.5 h, stopping after one or two at even odds, due 1.0; released at 0,
    alone on a node of two GPUs. A cutoff 1.5 omega above its least energy leaves 1.5 h of
    lateness in the worst case (completion by 2.5 h: slot 4) and 3 h in expectation,
    where a full run's lateness weighs half (by 4 h: slot 7)."""
    stops = EpochDistribution((1.0, 2.0), (0.5, 0.5))
    job = Job("j", 0.0, 1.0, stops, {ONE: 0.5}, 4.0)
    inst = _one(job, mode)
    free = milp_data(inst, 20).jobs["j"]
    cutoff = free.least_energy() + 1.5 * free.omega
    cut = milp_data(inst, 20, cutoff=cutoff).jobs["j"]
    late = 1.5 if mode == "worst_case" else 3.0
    assert cut.last_slot == math.floor((1.0 + late) / SLOT - 1 + 1e-9)
    assert cut.last_slot == (4 if mode == "worst_case" else 7)


def test_a_cutoff_counts_a_job_late_even_alone_at_its_energy_only():
    """One epoch of 1 h from 0, due 0.25: late by 0.75 h whatever it runs. Its own room
    is the cutoff less its least energy (its lateness is what the room pays for): a
    cutoff 2 omega above that leaves 2 h (done by 2.25 h: slot 3). A cutoff at its least
    energy leaves none, but its window still reaches its earliest finish (slot 1)."""
    job = Job("j", 0.0, 0.25, EpochDistribution.deterministic(1.0), {ONE: 1.0}, 4.0)
    inst = _one(job)
    free = milp_data(inst, 8).jobs["j"]
    cut = milp_data(inst, 8, cutoff=free.least_energy() + 2.0 * free.omega).jobs["j"]
    assert cut.last_slot == 3
    cut = milp_data(inst, 8, cutoff=free.least_energy()).jobs["j"]
    assert cut.last_slot == free.earliest_finish_slot(0) == 1


def test_a_start_past_its_window_under_a_cutoff_is_refused_by_name():
    """``start_values`` of a plan that ends a slot after the job's window under a cutoff
    below the plan's own cost: a PlanError saying so (not a KeyError from the model's
    index). A review of milp/plan_io.py found the bound free to move by a slot."""
    job = Job("j", 0.0, 0.25, EpochDistribution.deterministic(1.0), {ONE: 1.0}, 4.0)
    inst = _one(job)
    free = milp_data(inst, 8).jobs["j"]
    d = milp_data(inst, 8, cutoff=free.least_energy())
    assert d.jobs["j"].last_slot == 1
    late = Plan.of([Segment(0.5, 1.5, "j", ONE, (("n", 0),))])
    with pytest.raises(PlanError, match="after its last slot under the model's cost cutoff"):
        start_values(model_of_data(d), d, late)
