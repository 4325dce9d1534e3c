"""RG and PR: feasibility, determinism, and that each search step never worsens its own
criterion (the worst-case deterministic cost of heuristic.baselines.candidate)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from heuristic.baselines.candidate import Search
from heuristic.baselines.edf import EdfPolicy
from heuristic.baselines.pr import PrPolicy
from heuristic.baselines.rg import RgPolicy
from heuristic.core.occupancy import Occupancy
from heuristic.core.policy import JobStatus, SchedulerState
from heuristic.core.registry import make_policy
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from tests.strategies import instances
from validation.check import check_plan
from validation.evaluate import evaluate
from validation.simulator import simulate


@given(instances(max_jobs=6), st.sampled_from(["rg", "pr"]), st.integers(0, 5))
def test_rollout_plans_are_feasible_and_run_every_job(inst, name, seed):
    res = simulate(inst, make_policy(name, seed=seed))
    assert check_plan(inst, res.plan) == []
    assert all(c < float("inf") for c in res.completions.values())


@given(instances(max_jobs=5), st.sampled_from(["rg", "pr"]), st.integers(0, 50))
def test_same_seed_same_plan(inst, name, seed):
    a = simulate(inst, make_policy(name, seed=seed), mode="sampled", seed=seed)
    b = simulate(inst, make_policy(name, seed=seed), mode="sampled", seed=seed)
    assert a.plan == b.plan


def _start_state(inst: Instance) -> SchedulerState:
    """Every job present and waiting at time 0 on an empty cluster."""
    jobs = tuple(JobStatus(j, 0.0, None) for j in inst.jobs)
    return SchedulerState(0.0, inst, jobs, Occupancy(inst))


@given(instances(max_jobs=6, slot=False), st.integers(0, 20))
def test_rg_best_is_no_worse_than_its_greedy_start_and_pr_no_worse_than_rg(inst, seed):
    state = _start_state(inst)
    rg = RgPolicy(seed=seed)
    search = Search(state)
    ranked = rg.solutions(search)
    greedy = search.decode(rg.greedy(search))
    assert ranked[0].cost <= greedy.cost + 1e-9
    pr = PrPolicy(seed=seed)
    assert pr.improve(search, ranked).cost <= ranked[0].cost + 1e-9


def _two_jobs_one_node() -> Instance:
    """Job a misses its due date by 0.1 h on one GPU and makes it on two; job b needs one
    GPU for 0.9 h and is due at 1.0. EDF gives a both GPUs (a's cheapest worst case), so b
    waits and is 0.5 h late; taking jobs by pressure, b first, both run on one GPU."""
    ten = EpochDistribution.deterministic(10)
    a = Job("a", 0.0, 1.0, ten, {Config("v100", 1): 0.11, Config("v100", 2): 0.06}, 8.0)
    b = Job("b", 0.0, 1.0, ten, {Config("v100", 1): 0.09}, 8.0)
    return Instance((GpuType("v100", 16.0, 300.0),), (Node("n", "v100", 2),), (a, b))


@pytest.mark.parametrize("name", ["rg", "pr"])
def test_search_baselines_beat_edf_where_greedy_due_date_order_blocks(name):
    inst = _two_jobs_one_node()
    edf = evaluate(inst, simulate(inst, EdfPolicy()).plan)
    ours = evaluate(inst, simulate(inst, make_policy(name)).plan)
    assert edf.missed == 2 - 1  # b is late under EDF
    assert ours.total_cost < edf.total_cost
    # by hand: a 0.33 kWh + 0.1 h late at 6*0.2/h; b 0.27 kWh; price 0.2 per kWh
    assert ours.total_cost == pytest.approx(0.2 * (0.33 + 0.27) + 0.1 * 10 * 0.2 * 0.6)
