"""Plans from the root's support (milp.decomposition.support): the compact MILP over
the arcs of a set of columns finds the cheapest plan those arcs allow, runs only on
them, and its plan passes the checker at the evaluator's cost."""

from __future__ import annotations

import math
import time

import pytest

from heuristic import make_policy
from heuristic.sts.policy import StsPolicy
from instances.generators.suite import milp_suite
from milp.data import milp_data
from milp.decomposition import solve
from milp.decomposition.columns import columns_of_plan
from milp.decomposition.search import Incumbent, from_pool
from milp.decomposition.space import build_space
from milp.decomposition.support import Support, narrowed, support_plan
from milp.solve import base_slots
from validation.check import check_plan
from validation.evaluate import evaluate
from validation.simulator import rollout


def _setup(name: str):
    (inst,) = [i for i in milp_suite() if i.name == name]
    sts = rollout(inst, StsPolicy())
    slots = base_slots(inst, sts)
    space = build_space(milp_data(inst, slots, None, None, check_size=False))
    return inst, sts, slots, space


@pytest.mark.parametrize("name", ["suite-share-4n10j-s2", "suite-excl-4n10j-s2"])
def test_over_the_optimum_and_a_worse_plan_it_finds_the_optimum(name):
    """The support of the STS plan's columns and the optimum's holds the optimum, so
    the MILP over it finds a plan that costs it (sharing, and exclusive GPUs only)."""
    inst, sts, slots, space = _setup(name)
    best = solve(inst, initial_plan=sts, slots=slots, time_limit=60)
    assert best.optimal and best.plan is not None
    start = columns_of_plan(space, sts)
    assert math.fsum(c.cost for c in start) > best.objective * (1 + 1e-3)  # else nothing to find
    plan = support_plan(
        space, start + columns_of_plan(space, best.plan), sts, time.perf_counter() + 60
    )
    assert plan is not None and check_plan(inst, plan) == []
    assert evaluate(inst, plan).total_cost == pytest.approx(best.objective, rel=1e-6)


def test_its_plans_run_only_on_the_support():
    """Over the STS plan's columns and one other plan's (the compact MILP may splice
    them, which the integer master cannot), every (configuration, slot),
    (configuration, node, slot) and shared (node, slot) the plan found uses is in the
    support, and the narrowed index sets keep only the configurations and slots the
    support runs."""
    inst, sts, _, space = _setup("suite-share-4n10j-s2")
    other = rollout(inst, make_policy("sts-greedy"))
    columns = columns_of_plan(space, sts) + columns_of_plan(space, other)
    support = Support(space, columns)
    d, index = narrowed(space.d, support)
    for j, jd in d.jobs.items():
        assert [space.d.jobs[j].configs[k] for k in index[j]] == list(jd.configs)
        assert jd.first_slot == min(t for _, t in support.run[j])
        assert jd.last_slot == max(t for _, t in support.run[j])
    plan = support_plan(space, columns, sts, time.perf_counter() + 60)
    assert plan is not None and check_plan(inst, plan) == []
    found = Support(space, columns_of_plan(space, plan))
    for j in d.jobs:
        assert found.run[j] <= support.run[j]
        assert found.place[j] <= support.place[j]
        assert found.share[j] <= support.share[j]
    # and it splices them: cheaper than the best plan of whole columns among them
    # (0.70665 against 0.72097, sts-greedy's plan)
    start = columns_of_plan(space, sts)
    pool = Incumbent(start, math.fsum(c.cost for c in start))
    from_pool(space, columns, pool, None)
    assert evaluate(inst, plan).total_cost < pool.cost * (1 - 1e-3)


def test_a_step_whose_model_is_not_built_in_its_allowance_ends_the_search(monkeypatch):
    """With no time to build a model (an allowance of 0 s) the search keeps the
    incumbent and builds no later step; with time it splices the two plans' columns
    into a cheaper plan."""
    from milp.decomposition import support as module
    from milp.decomposition.support import improve_by_support

    calls = []

    def counted(*args, **kwargs):
        calls.append(kwargs.get("built_by"))
        return support_plan(*args, **kwargs)

    monkeypatch.setattr(module, "support_plan", counted)

    inst, sts, _, space = _setup("suite-share-4n10j-s2")
    other = rollout(inst, make_policy("sts-greedy"))
    start = columns_of_plan(space, sts)
    weighted = [(c, 1.0) for c in start + columns_of_plan(space, other)]
    incumbent = Incumbent(start, math.fsum(c.cost for c in start))
    t0 = time.perf_counter()
    kept = improve_by_support(space, weighted, incumbent, t0 + 60, build=0.0)
    assert kept is incumbent
    assert len(calls) == 1  # the first step's model was not built: no later step tried
    found = improve_by_support(space, weighted, incumbent, time.perf_counter() + 60, build=60)
    assert found.cost < incumbent.cost * (1 - 1e-3)


def test_a_build_that_runs_out_says_so_and_a_deadline_gives_none():
    """Past ``built_by`` the support step raises :class:`NotBuilt` (its caller ends the
    search); past its deadline it returns ``None`` (the caller goes on)."""
    from milp.decomposition.support import NotBuilt

    _, sts, _, space = _setup("suite-share-4n10j-s2")
    columns = columns_of_plan(space, sts)
    now = time.perf_counter()
    with pytest.raises(NotBuilt):
        support_plan(space, columns, sts, now + 60, built_by=now)
    assert support_plan(space, columns, sts, time.perf_counter()) is None
