"""Cases a mutation review of the column-generation loop (milp/decomposition/colgen.py:
its bound per round, the stall and exact-pricing rules) and the split of the nodes'
own power (lower.py) found the other tests leave free: a generation whose label budget
falls short grows it up to its largest, prices exactly every round with no stall
allowed, and calls itself optimal only where its bound meets the master's value, never
where the clock cut a pricing short; the stall's share, the smoothing weight after
mispricings, the best bound and centre kept; the credit split's constant on a tight
plan, and no credit split where a GPU idles at its busy power (the review of
2026-12-08: 26 mutants)."""

from __future__ import annotations

import types

import numpy as np
import pytest

from heuristic.sts.policy import StsPolicy
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from milp import solve as milp_solve
from milp.data import milp_data
from milp.decomposition import colgen
from milp.decomposition.colgen import STALL_DROP, CgOptions, _alpha, _State, generate
from milp.decomposition.lower import lowered, powered_cost
from milp.decomposition.oracle import Oracle
from tests.milp.decomposition.instances import two_nodes
from tests.milp.decomposition.root import root_master
from validation.evaluate import evaluate
from validation.simulator import rollout

SLOTS = 8


def _exact_budgets(oracle: Oracle) -> list[int | None]:
    """The label budgets of ``oracle``'s exact pricings from now on, in order."""
    budgets: list[int | None] = []
    real = oracle.price

    def spy(lam, upper, **kw):
        if kw.get("beam") is None:
            budgets.append(kw.get("budget"))
        return real(lam, upper, **kw)

    oracle.price = spy  # type: ignore[method-assign]
    return budgets


@pytest.mark.parametrize("seed", [1, 4])
def test_a_budget_that_falls_short_grows_until_the_generation_converges(seed):
    """One label per job proves no job at first: the budget is multiplied by 4 until an
    exact pricing at the master's duals proves every job; with ``stall=0`` every round
    prices exactly; the generation is called optimal with its bound at the master's
    value (a pricing proving some jobs only is no convergence), and that bound is below
    the compact MILP's optimum."""
    inst = two_nodes(seed, jobs=2, delta=0.2, tardiness="expected")
    master, oracle, floor = root_master(inst, SLOTS)
    budgets = _exact_budgets(oracle)
    options = CgOptions(labels=1, stall=0, rounds=100)
    gen = generate(master, oracle, options, floor, None)
    assert gen.termination.name == "OPTIMAL"
    assert budgets[0] == 1 and {4, 16} <= set(budgets)  # grown by 4 a shortfall
    assert budgets == sorted(budgets)
    assert gen.exact_rounds == len(budgets) >= gen.rounds - 1  # no round without one
    assert gen.bound >= gen.lp_value - options.tolerance * abs(gen.lp_value)
    exact = milp_solve(inst, slots=SLOTS, time_limit=60)
    assert exact.optimal and exact.objective is not None
    assert gen.bound <= exact.objective + 1e-9 * max(1.0, exact.objective)


def test_a_budget_stops_growing_at_its_largest():
    """Where ``labels_max`` labels still leave a job unproved at the master's duals, the
    generation stops (not converged) rather than grow the budget past it."""
    inst = two_nodes(1, jobs=2, delta=0.2, tardiness="expected")
    master, oracle, floor = root_master(inst, SLOTS)
    budgets = _exact_budgets(oracle)
    gen = generate(master, oracle, CgOptions(labels=1, labels_max=4, stall=0), floor, None)
    assert gen.termination.name == "OTHER_LIMIT"
    assert max(b for b in budgets if b is not None) == 4


def test_a_pricing_the_clock_cuts_short_is_no_convergence(monkeypatch):
    """The first exact pricing, at the master's duals, proves no job (one label, and
    its deadline long past): the clock, read past the stop right after it, ends the
    generation at its time limit, not converged."""
    inst = two_nodes(1, jobs=2, delta=0.2, tardiness="expected")
    master, oracle, floor = root_master(inst, SLOTS)
    budgets = _exact_budgets(oracle)
    readings = iter([-2e9, -2e9])  # the start and the first round's check, before the stop
    fake = types.SimpleNamespace(perf_counter=lambda: next(readings, 0.0))
    monkeypatch.setattr(colgen, "time", fake)
    gen = generate(master, oracle, CgOptions(labels=1, stall=0), floor, -1e9)
    assert budgets == [1]
    assert gen.termination.name == "TIME_LIMIT"


def test_a_master_solve_is_a_stall_unless_it_lowers_the_value_by_its_share():
    """``STALL_DROP`` of the master's value: a fall of five times that share resets the
    count, a fall of half of it counts one more stall."""
    st = _State(0.0)
    st.solved(100.0)
    st.solved(100.0 * (1 - 5 * STALL_DROP))
    assert st.stall == 0
    st.solved(st.z * (1 - STALL_DROP / 2))
    assert st.stall == 1
    assert STALL_DROP == 1e-4


@pytest.mark.parametrize(("alpha", "weights"), [(0.5, [0.5, 0.0, 0.0]), (0.75, [0.75, 0.5, 0.25])])
def test_the_smoothing_weight_falls_by_one_minus_alpha_a_mispricing(alpha, weights):
    """No centre: the master's duals; else ``alpha_k = max(0, 1 - (k + 1)(1 - alpha))``
    after ``k`` mispricings in a row."""
    st = _State(0.0)
    assert _alpha(alpha, st) == 0.0
    st.centre = np.zeros((1, 1))
    for k, w in enumerate(weights):
        st.mispricings = k
        assert _alpha(alpha, st) == pytest.approx(w, abs=1e-12)


def test_the_best_bound_and_its_prices_are_kept():
    """A later, lower bound keeps neither the best nor the centre."""
    st = _State(1.0)
    high, low = np.ones((1, 2)), np.zeros((1, 2))
    st.observe(high, 5.0)
    st.observe(low, 3.0)
    assert st.best == 5.0 and st.centre is high and st.centre_value == 5.0


def _one_long_job(idle_w: float) -> Instance:
    """One job of four epochs of 2.5 h on one GPU, done at a slot's end (10 h, twenty
    slots), on a node of two GPUs idling at ``idle_w`` with 200 W of base power."""
    job = Job("j0", 0.0, 20.0, EpochDistribution((4.0,), (1.0,)), {Config("v100", 1): 2.5}, 6.0)
    gpu = GpuType("v100", 16.0, 300.0, idle_w=idle_w)
    return Instance((gpu,), (Node("a", "v100", 2, base_w=200.0),), (job,), slot=0.5, name="long")


def test_the_credit_split_charges_the_whole_base_and_idle_kw_and_no_more():
    """Run at top speed from its release, the job keeps the cluster powered 10 h, 9.5 of
    them surely: the credit split's constant, the nodes' base and idle kW over those
    hours, is 0.76 of the plan's 1.2; 10% more kW would value the plan above its cost."""
    inst = _one_long_job(100.0)
    plan = rollout(inst, StsPolicy())
    true = evaluate(inst, plan).total_cost
    (credit,) = [s for s in lowered(inst) if s.split == "credit"]
    assert credit.kw == pytest.approx(inst.powered_kw) and credit.kw > 0
    shift = credit.kw * powered_cost(milp_data(credit.instance, 24, check_size=False))
    low = evaluate(credit.instance, plan).total_cost
    assert low + shift <= true + 1e-9
    assert low + 1.1 * shift > true  # tight: the constant is all of the kW


def test_a_gpu_idling_at_its_busy_power_offers_only_the_base_split():
    assert [s.split for s in lowered(_one_long_job(300.0))] == ["base"]
