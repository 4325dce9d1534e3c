"""The clairvoyant bound against online runs meeting the same stops."""

from __future__ import annotations

from experiments.bound import clairvoyant_bound, scenario_epochs, scenario_instance
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
