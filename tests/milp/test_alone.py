"""A job's least cost alone (milp/alone.py): exact for a job alone whose epochs fill
whole slots, never above its cost in any schedule or plan, never below its least
energy."""

from __future__ import annotations

import pytest

from heuristic.core.registry import make_policy
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node, Plan, Segment
from instances.generators.suite import milp_suite
from milp.alone import least_alone
from milp.data import least_kwh, milp_data
from tests.milp.brute_force import _job_options, brute_force
from tests.milp.test_milp import _tiny
from validation.evaluate import evaluate
from validation.simulator import rollout

ONE, FOUR = Config("v100", 1), Config("v100", 4)


def _alone(inst: Instance, job: Job, mode, price: float) -> float:
    """The job's least cost alone, solved (HiGHS gives up only at absurd weights)."""
    figure = least_alone(inst, job, mode, price)
    assert figure is not None
    return figure


def _mixing(mode: str) -> Instance:
    """One job of 1 or 3 epochs (even odds), due at hour 1, weight 1: an epoch takes an
    hour on one GPU (0.3 kWh) or half an hour on four (0.6 kWh). In expected mode it
    costs least (1.4) running its first epoch on one GPU, on time, and the two it may go
    on with on four: neither configuration throughout (1.6 on one, 1.45 on four). In
    worst-case mode, on four throughout (1.7)."""
    job = Job(
        "j",
        0.0,
        1.0,
        EpochDistribution((1.0, 3.0), (0.5, 0.5)),
        {ONE: 1.0, FOUR: 0.5},
        4.0,
        weight=1.0,
    )
    return Instance(
        (GpuType("v100", 16.0, 300.0),),
        (Node("n", "v100", 4),),
        (job,),
        energy_price=1.0,
        slot=0.5,
        tardiness=mode,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("mode", ["worst_case", "expected"])
def test_a_job_alone_costs_its_least_alone_where_it_mixes_configurations(mode):
    inst = _mixing(mode)
    (job,) = inst.jobs
    best, _ = brute_force(inst, 8)
    assert _alone(inst, job, mode, 1.0) == pytest.approx(best)
    assert best == pytest.approx(1.7 if mode == "worst_case" else 1.4)
    # the least energy (0.6, on one GPU) and the least tardiness (on four) taken apart
    # bound it by 1.1 and 0.85; the capacity relaxation takes the larger of that and
    # the least cost alone
    data = milp_data(inst, 8, mode)
    assert data.jobs["j"].least_energy() + data.least_tardiness("j") < best - 0.1
    assert data.job_bound("j") == pytest.approx(best)
    assert data.separable_bound() == pytest.approx(best)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mode", ["worst_case", "expected"])
def test_no_schedule_of_a_job_costs_less_than_its_least_alone(seed, mode):
    """Every slot-aligned schedule of each job of the tiny instances (overheads of a
    tenth of an hour on odd seeds, shared GPUs on even ones), on 8 slots. A first form
    gave each block one configuration; a schedule that switches within a block cost
    less (tiny-0's j0 in worst-case mode, by 6e-6): the epochs now split."""
    inst = _tiny(seed, shared=seed % 2 == 0, tardiness=mode)
    if seed % 2:
        inst = inst.replace(relaunch_hours=0.1)
    for job in inst.jobs:
        cheapest = _job_options(inst, inst, 8)[job.id][0][0]
        assert _alone(inst, job, mode, inst.energy_price) <= cheapest * (1 + 1e-12)


@pytest.mark.parametrize("mode", ["worst_case", "expected"])
def test_no_plan_charges_a_suite_job_less_than_its_least_alone(mode):
    """The 24 suite instances (measured relaunch overheads on the seed-2 half), every job
    in the plans of four policies."""
    for inst in milp_suite():
        bounds = {j.id: _alone(inst, j, mode, inst.energy_price) for j in inst.jobs}
        for name in ("sts", "edf", "fifo", "lp"):
            plan = rollout(inst, make_policy(name))
            for cost in evaluate(inst, plan, tardiness=mode).jobs:
                assert bounds[cost.job] <= cost.total_cost * (1 + 1e-12), (inst.name, name)


def test_least_alone_is_never_below_a_jobs_least_energy():
    """The suite's jobs, in both modes: the figure adds to the capacity relaxation's
    least energy (`milp.data.least_kwh`), never takes from it."""
    for inst in milp_suite():
        for job in inst.jobs:
            kwh = least_kwh(inst, job)
            for mode in ("worst_case", "expected"):
                alone = _alone(inst, job, mode, inst.energy_price)
                assert alone >= inst.energy_price * kwh * (1 - 1e-6), (inst.name, job.id)


@pytest.mark.parametrize("weight", [1.0, 1e3, 1e6])
def test_least_alone_forgives_what_the_evaluator_forgives(weight):
    """One epoch of 1000 + 9e-7 h run on [0, 1000), due at 1000: the evaluator reads the
    epoch as done within its tolerance and the job as on time; the programme had it
    9e-7 h late, 0.9 above the job's cost at a weight of 1e6 (a review, 2026-12-06)."""
    job = Job(
        "k",
        0.0,
        1000.0,
        EpochDistribution.deterministic(1.0),
        {ONE: 1000.0 + 9e-7},
        4.0,
        weight=weight,
    )
    inst = Instance(
        (GpuType("v100", 16.0, 300.0),), (Node("n", "v100", 1),), (job,), energy_price=1.0, slot=1.0
    )
    plan = Plan.of([Segment(0.0, 1000.0, "k", ONE, (("n", 0),))])
    cost = evaluate(inst, plan).jobs[0].total_cost
    assert _alone(inst, job, "worst_case", 1.0) <= cost


def test_each_jobs_programme_is_solved_once_per_instance(monkeypatch):
    """The horizon's reach, the cutoff's windows and the capacity relaxation all read a
    job's least cost alone; a two-stage solve solved each job's programme four times."""
    import milp.alone as alone

    solved: list[str] = []
    real = alone._least_alone

    def counted(inst, job, mode, price):
        solved.append(job.id)
        return real(inst, job, mode, price)

    monkeypatch.setattr(alone, "_least_alone", counted)
    inst = milp_suite()[7]
    plan = rollout(inst, make_policy("sts"))
    cost = evaluate(inst, plan).total_cost
    from milp.solve import horizon

    reach = horizon(inst, plan)
    for _ in range(2):
        data = milp_data(inst, reach.slots, cutoff=cost)
        data.separable_bound()
    assert sorted(solved) == sorted(j.id for j in inst.jobs)
    # another instance of the same jobs is another programme (its cluster may differ)
    milp_data(inst.replace(name="again"), reach.slots, cutoff=cost)
    assert len(solved) == 2 * len(inst.jobs)


def test_an_instances_figures_go_with_it():
    """The figures are kept while the instance lives, and dropped with it (a campaign
    makes thousands of instances in one process)."""
    import gc

    import milp.alone as alone

    inst = _mixing("expected")
    key = id(inst)
    _alone(inst, inst.jobs[0], "expected", 1.0)
    assert key in alone._made
    del inst
    gc.collect()
    assert key not in alone._made
