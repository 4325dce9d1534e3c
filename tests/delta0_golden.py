"""Writes ``tests/delta0_golden.json``: the figures of every registered policy on the bundled
instances and the MILP suite, computed by the code *before* the relaunch overhead (E1)
existed (commit deee007). ``tests/validation/test_relaunch.py`` checks that today's code
gives the same figures to the last digit when no job pays an overhead.

Run from a checkout of that commit: ``PYTHONPATH=. python tests/delta0_golden.py OUT``.
"""

from __future__ import annotations

import json
import sys

from heuristic.registry import make_policy, policy_names
from instances import Instance, Plan
from instances.bundled import bundled, bundled_names
from instances.generators.suite import milp_suite
from milp.solve import solve
from validation.evaluate import evaluate, evaluate_scenario
from validation.simulator import simulate


def figures() -> dict[str, dict[str, list[float]]]:
    out: dict[str, dict[str, list[float]]] = {}
    instances = [bundled(n) for n in bundled_names()] + milp_suite()
    for inst in instances:
        row = {}
        for name in policy_names():
            plan = simulate(inst, make_policy(name, seed=0), mode="rollout").plan
            ev = evaluate(inst, plan)
            run = simulate(inst, make_policy(name, seed=0), mode="sampled", seed=3)
            energy, tard = evaluate_scenario(inst, run.plan, run.epochs, tardiness="expected")
            row[name] = [ev.energy_cost, ev.tardiness_cost, ev.expected_energy_kwh, energy, tard]
        if inst.name.startswith("suite") and len(inst.jobs) <= 4:  # the MILP optimum
            res = solve(inst, initial_plan=plan_of(inst), time_limit=None, threads=1)
            assert res.evaluation is not None and res.solver_objective is not None
            row["milp"] = [res.evaluation.total_cost, res.solver_objective]
        out[inst.name] = row
    return out


def plan_of(inst: Instance) -> Plan:
    return simulate(inst, make_policy("sts", seed=0), mode="rollout").plan


if __name__ == "__main__":
    with open(sys.argv[1], "w") as f:
        json.dump(figures(), f, indent=1, sort_keys=True)
        f.write("\n")
