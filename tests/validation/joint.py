"""The expected bill by brute force: every combination of the jobs' stops, each
realised bill weighted by its probability (the evaluator's exact figure where it is not
a sum over jobs: idle power, powered-off nodes)."""

from __future__ import annotations

import itertools

from instances import Instance, Plan
from validation.evaluate import scenario_costs


def joint_expectation(inst: Instance, plan: Plan) -> tuple[float, float]:
    """Expected (energy cost, carbon cost) over every combination of the jobs' stops."""
    energy = carbon = 0.0
    dists = [j.distribution for j in inst.jobs]
    for combo in itertools.product(*(range(len(d.stops)) for d in dists)):
        p = 1.0
        epochs = {}
        for job, d, b in zip(inst.jobs, dists, combo, strict=True):
            p *= d.probabilities[b]
            epochs[job.id] = d.stops[b]
        if p > 0:
            cost = scenario_costs(inst, plan, epochs)
            energy += p * cost.energy_cost
            carbon += p * cost.carbon_cost
    return energy, carbon
