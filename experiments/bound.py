"""The clairvoyant bound (docs/milp.md): the MILP with each job's number of epochs
known in advance (a sampled scenario), averaged over seeded scenarios.

No online policy, which learns a job's stop only when it happens, can do better on a
scenario than the optimum with the stop known; so the mean of the MILP's dual bounds
over scenarios bounds the expected cost of every online slotted policy from below (the
dual bound is valid even when a time limit stops HiGHS).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from heuristic.core.result import SolutionStatus, Termination, relative_gap, summary_text
from heuristic.sts.policy import StsPolicy
from instances import Instance
from instances.fields import whole_number
from milp import MilpError, Result, solve
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
    time limit stops HiGHS early; its bound is valid whatever the limit. A
    :class:`MilpError` where no bound exists (:func:`milp.solve.horizon` kept short)."""
    known = scenario_instance(instance, epochs)
    start = rollout(known, StsPolicy())
    res = solve(known, initial_plan=start, time_limit=time_limit, threads=threads)
    if res.bound is None:
        # the horizon could not reach every plan as good as the start (a job of no
        # tardiness weight, a reach too far or a model too large): nothing is bounded
        raise MilpError(f"instance {instance.name!r}: no clairvoyant bound, {res.note}")
    return res


@dataclass(frozen=True)
class BoundResult:
    """The clairvoyant bound, in the one result vocabulary
    (:mod:`heuristic.core.result`): ``bound`` is the mean of the scenarios' dual bounds,
    ``objective`` the mean of their best plans' costs (the clairvoyant plans, each
    warm-started by STS, so one always exists), ``status`` optimal when every scenario
    was proved, ``termination`` optimal then, else the first unproved scenario's, and
    ``runtime`` the seconds of the whole call."""

    instance: str
    bounds: tuple[float, ...]  # dual bound per scenario
    costs: tuple[float, ...]  # best plan's cost per scenario (evaluator)
    terminations: tuple[Termination, ...]  # why each scenario's solve stopped
    proved: int  # scenarios solved to optimality
    runtime: float

    @property
    def scenarios(self) -> int:
        return len(self.bounds)

    @property
    def bound(self) -> float:
        return float(np.mean(self.bounds))

    @property
    def objective(self) -> float:
        return float(np.mean(self.costs))

    @property
    def gap(self) -> float | None:
        return relative_gap(self.objective, self.bound)

    @property
    def status(self) -> SolutionStatus:
        every = self.proved == self.scenarios
        return SolutionStatus.OPTIMAL if every else SolutionStatus.FEASIBLE

    @property
    def termination(self) -> Termination:
        return next(
            (t for t in self.terminations if t is not Termination.OPTIMAL), Termination.OPTIMAL
        )

    @property
    def stderr(self) -> float:
        """The standard error of ``bound`` over the scenarios (0 for one)."""
        return (
            float(np.std(self.bounds, ddof=1) / math.sqrt(len(self.bounds)))
            if len(self.bounds) > 1
            else 0.0
        )

    def summary(self) -> str:
        title = f"clairvoyant bound of {self.instance!r} over {self.scenarios} scenarios"
        details = [
            ("std. error", f"{self.stderr:.6g} (of the bound)"),
            ("proved", f"{self.proved} of {self.scenarios} scenarios"),
        ]
        return summary_text(title, self, details)


def clairvoyant_bound(
    instance: Instance, *, scenarios: int = 10, seed: int = 0, time_limit: float = 60.0
) -> BoundResult:
    """Solve the MILP of ``scenarios`` sampled scenarios. Scenario ``s`` has the stops of
    the simulator's sampled mode with seed ``seed + s``, so an online run
    ``simulate(instance, policy, mode="sampled", seed=seed + s)`` meets the same stops."""
    whole_number("scenarios", scenarios, 1)  # 1.5 or "2" failed inside
    t0 = time.perf_counter()
    runs = []
    for s in range(scenarios):
        res = scenario_optimum(instance, scenario_epochs(instance, seed + s), time_limit=time_limit)
        assert res.bound is not None and res.objective is not None  # scenario_optimum's
        runs.append(res)
    return BoundResult(
        instance=instance.name,
        bounds=tuple(r.bound for r in runs if r.bound is not None),
        costs=tuple(r.objective for r in runs if r.objective is not None),
        terminations=tuple(r.termination for r in runs),
        proved=sum(r.optimal for r in runs),
        runtime=time.perf_counter() - t0,
    )
