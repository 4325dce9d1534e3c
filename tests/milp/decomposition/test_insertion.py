"""Plans built in the root LP's order of completions (milp.decomposition.insertion):
the order is the LP's, the plans pass the checker at the evaluator's cost and never
below the root's bound, and an incumbent is replaced only by a cheaper plan."""

from __future__ import annotations

import math
import time

import pytest

from heuristic.sts.policy import StsPolicy
from instances.generators.suite import milp_suite
from milp.decomposition.colgen import CgOptions, generate
from milp.decomposition.columns import Column
from milp.decomposition.insertion import improve_by_insertion, insert, lp_order
from milp.decomposition.plans import assemble
from milp.decomposition.search import Incumbent
from milp.solve import base_slots
from tests.milp.decomposition.instances import two_nodes
from tests.milp.decomposition.root import root_master
from validation.check import check_plan
from validation.evaluate import evaluate
from validation.simulator import rollout


def test_jobs_come_in_the_order_the_lp_completes_them():
    """Job 0 half in a column ending in slot 1 and half in one ending in slot 7: it
    completes at 4 in the LP (not at 1 nor at 7), before job 1 ending in slot 5 and
    after one ending in slot 3; a job with half its weight on one column completes
    at that column's end; where all three complete at 4 the due dates order them; a
    job without a column (the LP kept its artificial one) comes last."""
    inst = two_nodes(0, jobs=3)
    _, oracle, _ = root_master(inst, 10)
    due = [js.jd.job.due for js in oracle.space.jobs]
    assert due[0] < due[2] < due[1]  # so the due dates' order is not the index order

    def col(j: int, end: int) -> Column:
        return Column(j, 0, (0,) * (end + 1), 0.0)

    half = [(col(0, 1), 0.5), (col(0, 7), 0.5)]
    assert lp_order(oracle, [*half, (col(1, 5), 1.0)]) == [0, 1, 2]
    assert lp_order(oracle, [*half, (col(1, 3), 1.0)]) == [1, 0, 2]
    assert lp_order(oracle, [*half, (col(1, 5), 0.5)]) == [0, 1, 2]  # 5, not 2.5
    assert lp_order(oracle, [*half, (col(1, 4), 1.0), (col(2, 4), 1.0)]) == [0, 2, 1]


def test_a_job_whose_arcs_are_all_fixed_finds_no_place():
    """Reduced-cost fixing's removed arcs stay removed: with every arc of job 1 removed
    no plan is built; with none removed one is."""
    inst = two_nodes(1, jobs=3)
    master, oracle, _ = root_master(inst, 10)
    order = lp_order(oracle, [(c, 1.0) for c in master.columns])
    assert insert(oracle, order, None) is not None
    oracle.fixed[1][:] = True
    assert insert(oracle, order, None) is None


@pytest.mark.parametrize(
    "name", ["suite-share-4n10j-s2", "suite-excl-4n10j-s2", "suite-share-2n6j-s2"]
)
def test_a_plan_in_the_lp_order_is_checked_and_above_the_root_bound(name):
    """From the root LP of a suite instance, the plan built in its order passes the
    checker, costs by the evaluator what its columns say, and no less than the
    root's bound; the incumbent takes it only where it is cheaper."""
    (inst,) = [i for i in milp_suite() if i.name == name]
    slots = base_slots(inst, rollout(inst, StsPolicy()))
    master, oracle, floor = root_master(inst, slots)
    root = generate(master, oracle, CgOptions(), floor, time.perf_counter() + 60)
    weighted = master.support()
    built = insert(oracle, lp_order(oracle, weighted), None)
    assert built is not None and [c.job for c in built] == list(range(len(inst.jobs)))
    plan = assemble(oracle.space, built)
    assert check_plan(inst, plan) == []
    cost = math.fsum(c.cost for c in built)
    assert evaluate(inst, plan).total_cost == pytest.approx(cost, rel=1e-9, abs=1e-9)
    assert cost >= root.bound - 1e-6 * max(1.0, root.bound)

    dearer = Incumbent(list(built), cost * 2)
    assert improve_by_insertion(oracle, weighted, dearer, None)
    assert dearer.cost == pytest.approx(cost) and dearer.columns == built
    kept = list(built)
    same = Incumbent(kept, cost)  # the same plan is not an improvement
    assert not improve_by_insertion(oracle, weighted, same, None)
    assert same.columns is kept and same.cost == cost


def test_a_deadline_already_past_builds_nothing():
    inst = two_nodes(1, jobs=3)
    master, oracle, _ = root_master(inst, 10)
    weighted = [(c, 1.0) for c in master.columns]
    assert insert(oracle, lp_order(oracle, weighted), time.perf_counter() - 1) is None


def test_the_plan_in_the_lp_order_is_built_only_far_above_the_lp():
    """The measured cases: the overloaded 20-job instance's warm start (32.32 against an
    LP of 16.95) is far above, the contended 100- and 200-job windows' (80.25 against
    65.27, 105.8 against 91.3) are not; a master LP not solved (infinite) or not
    positive never calls for it."""
    from milp.decomposition.solve import far_above

    assert far_above(32.32, 16.95)
    assert not far_above(80.25, 65.27) and not far_above(105.8, 91.3)
    assert not far_above(10.0, math.inf) and not far_above(10.0, 0.0)
    assert not far_above(10.0, math.nan) and not far_above(10.0, -1.0)


def test_solve_builds_the_plan_within_its_share_of_the_time(monkeypatch):
    """Where the incumbent is far above the LP, ``solve`` builds the plan once, after
    the root, with a deadline within the call's time limit."""
    import importlib

    module = importlib.import_module("milp.decomposition.solve")  # the module, not the function
    calls = []

    def recorded(oracle, weighted, incumbent, deadline):
        calls.append((time.perf_counter(), deadline))
        return improve_by_insertion(oracle, weighted, incumbent, deadline)

    monkeypatch.setattr(module, "improve_by_insertion", recorded)
    monkeypatch.setattr(module, "far_above", lambda cost, lp: True)
    (inst,) = [i for i in milp_suite() if i.name == "suite-excl-4n10j-s2"]
    t0 = time.perf_counter()
    result = module.solve(inst, time_limit=20)
    assert result.plan is not None and check_plan(inst, result.plan) == []
    assert len(calls) == 1
    called, deadline = calls[0]
    assert deadline is not None
    assert called < deadline <= t0 + 20
    assert deadline <= called + module.INSERT_SHARE * 20 + 1e-6
