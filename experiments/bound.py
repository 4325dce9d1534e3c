"""The clairvoyant bound (docs/milp.md): the MILP with each job's number of epochs
known in advance (a sampled scenario), averaged over seeded scenarios.

No online policy, which learns a job's stop only when it happens, can do better on a
scenario than the optimum with the stop known; so the mean of the MILP's dual bounds
over scenarios bounds the expected cost of every online slotted policy from below (the
dual bound is valid even when a time limit stops HiGHS).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from heuristic.sts.policy import StsPolicy
from instances import Instance
from milp import Result, solve
from validation.scenario import scenario_epochs, scenario_instance
from validation.simulator import rollout

__all__ = [
    "BoundResult",
    "clairvoyant_bound",
    "scenario_epochs",
    "scenario_instance",
    "scenario_optimum",
]


def scenario_optimum(
    instance: Instance,
    epochs: dict[str, float],
    *,
    time_limit: float,
    threads: int | None = None,
) -> Result:
    """The MILP of ``instance`` with each job's epochs known, warm-started by STS on the
    same scenario, so that a plan (and the evaluator's cost of it) exists even when the
    time limit stops HiGHS early; its bound is valid whatever the limit."""
    known = scenario_instance(instance, epochs)
    start = rollout(known, StsPolicy())
    return solve(known, initial_plan=start, time_limit=time_limit, threads=threads)


@dataclass(frozen=True)
class BoundResult:
    scenarios: int
    bounds: tuple[float, ...]  # dual bound per scenario
    costs: tuple[float, ...]  # best plan's cost per scenario (evaluator)
    proved: int  # scenarios solved to optimality

    @property
    def mean(self) -> float:
        return float(np.mean(self.bounds))

    @property
    def stderr(self) -> float:
        return (
            float(np.std(self.bounds, ddof=1) / math.sqrt(len(self.bounds)))
            if len(self.bounds) > 1
            else 0.0
        )


def clairvoyant_bound(
    instance: Instance, *, scenarios: int = 10, seed: int = 0, time_limit: float = 60.0
) -> BoundResult:
    """Solve the MILP of ``scenarios`` sampled scenarios. Scenario ``s`` has the stops of
    the simulator's sampled mode with seed ``seed + s``, so an online run
    ``simulate(instance, policy, mode="sampled", seed=seed + s)`` meets the same stops."""
    bounds, costs, proved = [], [], 0
    for s in range(scenarios):
        res = scenario_optimum(instance, scenario_epochs(instance, seed + s), time_limit=time_limit)
        assert res.bound is not None and res.objective is not None  # solve's contract
        bounds.append(res.bound)
        costs.append(res.objective)
        proved += res.optimal
    return BoundResult(scenarios, tuple(bounds), tuple(costs), proved)
