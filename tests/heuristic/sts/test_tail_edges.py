"""The last job's hours alone (heuristic/sts/tail.py) on cases the property tests do not
reach: a profile that pays relaunch overheads and is late, costed against the
evaluator; a job completing exactly where its next step's overhead would start; the
rule's thresholds and budgets (``alone_at_all``, ``targets``, ``median_done``); and a
job's completion as planned on GPUs it does not hold yet."""

from __future__ import annotations

import pytest

from heuristic.core.occupancy import Allocation
from heuristic.core.policy import JobStatus
from heuristic.sts.profile import Profile, Step
from heuristic.sts.tail import (
    Planned,
    all_done,
    alone_at_all,
    constant_blocks,
    current_blocks,
    faster,
    flat_bill,
    latest,
    median_done,
    profile_blocks,
    tail_cost,
    targets,
)
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node, Plan, Segment
from validation.evaluate import evaluate

V1, V2 = Config("v100", 1), Config("v100", 2)
TIMES = {V1: 1.0, V2: 0.52}
PRICE = 0.2
DIST = EpochDistribution((2.0, 4.0), (0.5, 0.5))


def _instance(relaunch: float) -> Instance:
    """One always-on 8-V100 node drawing 45 W a GPU and 400 W of its own; one job of 2
    or 4 epochs due at 3.5 h (7 an hour late)."""
    gpu = GpuType("v100", 32.0, 300.0, idle_w=45.0)
    job = Job("j", 0.0, 3.5, DIST, TIMES, 8.0, weight=7.0)
    node = Node("n", "v100", 8, base_w=400.0)
    return Instance((gpu,), (node,), (job,), energy_price=PRICE, relaunch_hours=relaunch)


def _overhead_profile(inst: Instance) -> Profile:
    """Two epochs on one GPU, then two on two; each step starts with the 0.5 h overhead
    (the second only where the job has not stopped at 2 epochs: probability one half).
    Energy as the evaluator charges a job's busy power."""
    v1, v2 = inst.power_w(V1) / 1000, inst.power_w(V2) / 1000
    energy = PRICE * (v1 * (0.5 + 2 * 1.0) + v2 * 0.5 * (0.5 + 2 * 0.52))
    steps = (Step(V1, 0.0, 2.0, lost=0.5), Step(V2, 2.0, 4.0, lost=0.5))
    return Profile(steps, 0.5 + 2.0 + 0.5 + 1.04, energy, 0.0, 3.5)


def test_a_job_stopping_at_a_step_end_does_not_pay_the_next_steps_overhead():
    inst = _instance(0.5)
    blocks = profile_blocks(inst, inst.jobs[0], _overhead_profile(inst), DIST, 1.0)
    assert blocks == [(1.0 + 2.5, 0.5), (pytest.approx(1.0 + 2.5 + 0.5 + 1.04), 0.5)]


def test_a_late_profile_with_overheads_costs_what_the_evaluator_charges():
    """The job alone: energy less its GPUs' idle power (the second overhead with the
    chance the job runs it), worst-case tardiness (0.54 h late) and the cluster's own
    power until it completes, against the evaluator's bill of the same plan."""
    inst = _instance(0.5)
    job, p = inst.jobs[0], _overhead_profile(inst)
    plan = Plan(
        (
            Segment(0.0, 2.5, "j", V1, (("n", 0),)),
            Segment(2.5, 4.04, "j", V2, (("n", 0), ("n", 1))),
        )
    )
    ev = evaluate(inst, plan)
    assert ev.tardiness_cost == pytest.approx(7.0 * 0.54)
    got = tail_cost(inst, job, p, DIST, 0.0, all_done([], 0.0), flat_bill(PRICE))
    assert got == pytest.approx(ev.total_cost, rel=1e-12)


def test_a_job_on_gpus_it_does_not_hold_yet_pays_its_relaunch():
    """Planned on a new allocation, the job's completion counts the relaunch overhead;
    on the one it runs, the overhead it has left."""
    inst = _instance(0.5)
    job = inst.jobs[0]
    held = Allocation(V1, (("n", 0),))
    status = JobStatus(job, 0.0, held, overhead_left=0.2)
    same = current_blocks(inst, status, held, None, 0.0)
    assert same is not None and same.blocks == [(2.2, 0.5), (4.2, 0.5)]
    moved = current_blocks(inst, status, Allocation(V2, (("n", 0), ("n", 1))), None, 0.0)
    assert moved is not None and moved.blocks == [(0.5 + 1.04, 0.5), (0.5 + 2.08, 0.5)]
    assert constant_blocks(inst, job, V1, DIST, 1.0, 0.5) == [(3.5, 0.5), (5.5, 0.5)]


def test_a_job_is_looked_at_only_where_its_hours_alone_cost_half_a_percent():
    """One hour alone (from 1 h to 2 h, the other job done at 1 h) at 0.2 per kWh: 0.2 kW
    costs 0.04, 4% of a plan of 1; 0.02 kW costs 0.004, 0.4% of it."""
    profile = Profile((Step(V1, 0.0, 2.0),), 2.0, 1.0, 0.0, 10.0)
    planned = Planned([(2.0, 1.0)], profile)
    done = all_done([[(1.0, 1.0)]], 0.0)
    assert alone_at_all(planned, done, 0.2, flat_bill(PRICE))
    assert not alone_at_all(planned, done, 0.02, flat_bill(PRICE))
    assert not alone_at_all(Planned([(2.0, 1.0)]), done, 0.2, flat_bill(PRICE))


def test_the_budgets_offered_to_the_last_job():
    """Finishing by the others' last completion (6 h), their median (4 h), half-way from
    either to the job's own (10 h), and as fast as it can, due at 20 h: budgets of
    ``due - finish``; a finish before now or at the job's own is not offered."""
    assert targets(10.0, 6.0, 4.0, 20.0, 0.0) == [12.0, 13.0, 14.0, 16.0, 20.0]
    assert targets(10.0, 6.0, 4.0, 20.0, 5.0) == [12.0, 13.0, 14.0, 15.0]
    assert targets(10.0, 10.0, 10.0, 20.0, 0.0) == [20.0]


def test_the_median_is_where_every_other_job_is_done_with_probability_one_half():
    done = all_done([[(1.0, 0.5), (2.0, 0.5)]], 0.0)
    assert done[1].tolist() == [0.0, 0.5, 1.0]
    assert median_done(done) == 1.0
    assert median_done(all_done([[(1.0, 0.4), (2.0, 0.6)]], 0.0)) == 2.0


class _Offers:
    """A stand-in for :class:`heuristic.sts.hulls.JobProfiles`: the same profiles on
    every budget, one per type (``bounds``) as ``faster`` reads them."""

    def __init__(self, *profiles: Profile):
        self.bounds = [(0.0, k) for k in range(len(profiles))]
        self._profiles = profiles

    def solve(self, k: int) -> Step:  # anything with ``.profile``
        return type("Solved", (), {"profile": self._profiles[k]})()


def _slow(energy: float) -> Profile:
    return Profile((Step(V1, 0.0, 4.0),), 4.0, energy, 0.0, 3.5)


def _fast(energy: float) -> Profile:
    return Profile((Step(V2, 0.0, 4.0),), 2.08, energy, 0.0, 3.5)


def _faster(planned_energy: float, others: list, *offers: Profile):
    inst = _instance(0.0)
    job = inst.jobs[0]
    job = Job(job.id, job.release, 100.0, job.distribution, job.epoch_times, 8.0)
    slow = _slow(planned_energy)
    planned = Planned(profile_blocks(inst, job, slow, DIST, 0.0), slow, DIST)
    status = JobStatus(job, 0.0, Allocation(V1, (("n", 0),)))
    return faster(inst, status, 0.0, lambda _: _Offers(*offers), planned, others, flat_bill(PRICE))


def test_the_last_job_is_offered_the_profiles_that_save_cheapest_first():
    """The job ends at 4 h, the other by 3 h; a profile saves where its own cost and the
    cluster's power over its hours alone (0.76 kW) cost less than the plan's."""
    others = [[(1.0, 0.5), (3.0, 0.5)]]
    found, done = _faster(0.5, others, _fast(0.6), _fast(0.4), _slow(0.5), _fast(9.0))
    assert done is not None
    costs = [cost for cost, _ in found]
    assert costs == sorted(costs) and len(costs) == 10  # two of four, on five budgets
    assert [p.energy_cost for _, p in found[:5]] == [0.4] * 5
    assert [p.energy_cost for _, p in found[5:]] == [0.6] * 5


def test_a_job_that_ends_as_late_as_another_is_not_hurried():
    """The other job may end at 4 h too: hurrying this one saves no hour alone."""
    assert _faster(0.5, [[(1.0, 0.5), (4.0, 0.5)]], _fast(0.01)) == ([], None)


def test_a_job_whose_hours_alone_cost_too_little_is_not_hurried():
    """The hours alone (about 0.16: from 1 h, the other job done with probability one
    half) are below 0.5% of a plan of 100: no profile is looked at, not even a cheaper
    one."""
    found, done = _faster(100.0, [[(1.0, 0.5), (3.9, 0.5)]], _fast(50.0))
    assert found == [] and done is not None


def test_the_job_ending_last_is_the_one_whose_last_completion_is_latest():
    plans = {
        "b": Planned([(3.0, 0.5), (9.0, 0.5)]),
        "a": Planned([(5.0, 1.0)]),
        "c": Planned([(9.0, 1.0)]),
    }
    assert latest(plans) == "b"  # b and c both end at 9 h: the smaller id
    assert latest({"a": plans["a"], "c": plans["c"]}) == "c"
