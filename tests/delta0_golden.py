"""Writes ``tests/delta0_golden.json``: the figures of every policy registered then on the bundled
instances and the MILP suite, computed by the code *before* the relaunch overhead (E1)
existed (commit deee007). ``tests/validation/test_relaunch.py`` checks that today's code
gives the same figures to the last digit when no job pays an overhead.

Run from a checkout of that commit: ``PYTHONPATH=. python tests/delta0_golden.py OUT``
(there, the instances are the bundled files and ``milp_suite()``, which the generators
without overheads reproduce).

``medium``'s ``sts`` and ``sts-greedy`` rows were re-made on 2026-11-30, when a
decision's wake-up began to replace the one asked for before (docs/model.md, 'The event
engine'): deee007 with that one change to its engine (a decision clears the wake-ups
kept, then pushes its own) gives them, and its unchanged code the rows they replace.
Every other row has no wake-up that ever went unrestated, so no figure moved.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import replace

from heuristic.core.registry import make_policy
from instances import Instance, Plan
from instances.generators.realdata import RealDataSpec, cluster_mix, real_data
from instances.generators.suite import suite_specs
from instances.generators.synthetic import SyntheticSpec, synthetic
from milp.solve import solve
from validation.evaluate import evaluate, evaluate_scenario
from validation.simulator import simulate


def without_relaunch(inst: Instance) -> Instance:
    """The instance with no relaunch overhead anywhere (due dates as they are)."""
    jobs = tuple(dataclasses.replace(j, relaunch_hours=None) for j in inst.jobs)
    return inst.replace(relaunch_hours=0.0, jobs=jobs)


def plain_instances() -> list[Instance]:
    """The bundled instances and the MILP suite as their generators give them without
    relaunch overheads (instances/data/README.md has the bundled files' commands): what
    every instance was before E1."""
    tiny = SyntheticSpec(nodes=2, jobs=3, slot=0.25, relaunch="none")
    small = SyntheticSpec(nodes=3, jobs=8, slot=0.25, relaunch="none")
    medium = RealDataSpec(jobs=60, nodes=cluster_mix(12), early_stopping="helios", relaunch="none")
    out = [
        real_data(medium, 3, "medium"),
        synthetic(small, 11, "small"),
        synthetic(tiny, 7, "tiny"),
    ]
    out += [
        synthetic(replace(spec, relaunch="none"), seed, name) for name, spec, seed in suite_specs()
    ]
    return out


# the policies that existed before the overhead (later ones have no "before" to keep)
POLICIES = ("edf", "fifo", "lp", "pr", "rg", "static", "sts", "sts-greedy")
# STS as it was then: its order and rules for contended clusters came later
# (heuristic/sts/contention.py), with figures of their own, and its choice between two
# orders by what-if runs later still (validation/rollout_choice.py)
THEN = {"sts": {"urgency": "slack", "backfill": False, "pull": False, "rollout_below": 0}}


def figures() -> dict[str, dict[str, list[float]]]:
    out: dict[str, dict[str, list[float]]] = {}
    for inst in plain_instances():
        row = {}
        for name in POLICIES:
            options = THEN.get(name, {})
            plan = simulate(inst, make_policy(name, seed=0, **options), mode="rollout").plan
            ev = evaluate(inst, plan)
            run = simulate(inst, make_policy(name, seed=0, **options), mode="sampled", seed=3)
            energy, tard = evaluate_scenario(inst, run.plan, run.epochs, tardiness="expected")
            row[name] = [ev.energy_cost, ev.tardiness_cost, ev.expected_energy_kwh, energy, tard]
        if inst.name.startswith("suite") and len(inst.jobs) <= 4:  # the MILP optimum
            res = solve(inst, initial_plan=plan_of(inst), time_limit=None, threads=1)
            assert res.evaluation is not None and res.solver_objective is not None
            row["milp"] = [res.evaluation.total_cost, res.solver_objective]
        out[inst.name] = row
    return out


def plan_of(inst: Instance) -> Plan:
    return simulate(inst, make_policy("sts", seed=0, **THEN["sts"]), mode="rollout").plan


if __name__ == "__main__":
    with open(sys.argv[1], "w") as f:
        json.dump(figures(), f, indent=1, sort_keys=True)
        f.write("\n")
