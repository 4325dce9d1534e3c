"""The clairvoyant bound (MODEL.md section 5): the MILP with each job's number of epochs
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

from instances import EpochDistribution, Instance, Job
from milp import solve
from validation.montecarlo import sample_epochs


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


def scenario_epochs(instance: Instance, seed: int) -> dict[str, float]:
    """Each job's stop in the simulator's sampled mode with this seed."""
    return sample_epochs(instance, np.random.default_rng(seed))


def scenario_instance(instance: Instance, epochs: dict[str, float]) -> Instance:
    """The instance with each job's epochs known: a run to exactly ``epochs[j]``."""
    jobs = tuple(
        Job(
            j.id,
            j.release,
            j.due,
            EpochDistribution.deterministic(epochs[j.id]),
            j.epoch_times,
            j.memory_gb,
            weight=instance.tardiness_weight(j.id),  # keep the original omega
            priority=1.0,
            job_type=j.job_type,
        )
        for j in instance.jobs
    )
    return instance.replace(jobs=jobs, name=f"{instance.name}-clairvoyant")


def clairvoyant_bound(
    instance: Instance, *, scenarios: int = 10, seed: int = 0, time_limit: float = 60.0
) -> BoundResult:
    """Solve the MILP of ``scenarios`` sampled scenarios. Scenario ``s`` has the stops of
    the simulator's sampled mode with seed ``seed + s``, so an online run
    ``simulate(instance, policy, mode="sampled", seed=seed + s)`` meets the same stops."""
    bounds, costs, proved = [], [], 0
    for s in range(scenarios):
        epochs = scenario_epochs(instance, seed + s)
        res = solve(scenario_instance(instance, epochs), time_limit=time_limit)
        assert res.bound is not None and res.objective is not None
        bounds.append(res.bound)
        costs.append(res.objective)
        proved += res.optimal
    return BoundResult(scenarios, tuple(bounds), tuple(costs), proved)
