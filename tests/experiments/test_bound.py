"""The clairvoyant bound against online runs meeting the same stops."""

from __future__ import annotations

from experiments.bound import (
    clairvoyant_bound,
    scenario_epochs,
    scenario_instance,
    scenario_optimum,
)
from heuristic.sts.policy import StsPolicy
from instances.generators.suite import milp_suite
from validation.evaluate import evaluate
from validation.simulator import simulate


def test_clairvoyant_bound_is_below_the_online_sts_cost_per_scenario():
    inst = milp_suite()[0]
    res = clairvoyant_bound(inst, scenarios=3, seed=1, time_limit=20)
    assert res.proved == 3
    for s, bound in enumerate(res.bounds):
        run = simulate(inst, StsPolicy(), mode="sampled", seed=1 + s)
        assert run.epochs == scenario_epochs(inst, 1 + s)
        # the realised cost of the online run: the evaluator on the scenario's instance
        online = evaluate(scenario_instance(inst, run.epochs), run.plan).total_cost
        assert bound <= online + 1e-9
        assert res.costs[s] <= online + 1e-9


def test_a_job_of_no_weight_gets_a_clear_error_not_an_assertion():
    """A job whose lateness costs nothing may be late past any horizon, so no scenario's
    MILP bounds the instance: the bound, and a campaign's `clairvoyant` run (which
    aborted the campaign), said AssertionError (reviews of 2026-12-06); both now name
    the instance and the reason (a campaign stores it as the run's error)."""
    from dataclasses import replace

    import pytest

    from milp import MilpError

    base = milp_suite()[0]
    jobs = (replace(base.jobs[0], weight=0.0), *base.jobs[1:])
    inst = replace(base, jobs=jobs)
    with pytest.raises(MilpError, match=r"no clairvoyant bound.*no tardiness weight"):
        clairvoyant_bound(inst, scenarios=1, time_limit=20)
    with pytest.raises(MilpError, match=r"no clairvoyant bound.*no tardiness weight"):
        scenario_optimum(inst, scenario_epochs(inst, 0), time_limit=20)
