"""What a MILP solve returns: the plan and its evaluator cost, HiGHS's bound and status."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from instances import Plan
from validation.evaluate import Evaluation


class Termination(enum.Enum):
    """Why HiGHS stopped."""

    OPTIMAL = "optimal"  # proved optimal within the gap tolerance
    TIME_LIMIT = "time_limit"  # the call's time limit (in HiGHS, or before it could run)
    INFEASIBLE = "infeasible"
    OTHER_LIMIT = "other_limit"  # iteration, node or objective limit
    ERROR = "error"
    UNKNOWN = "unknown"


class SolutionStatus(enum.Enum):
    """What the returned plan is."""

    OPTIMAL = "optimal"  # an optimal plan of the slotted model
    FEASIBLE = "feasible"  # a feasible plan, optimality not proved
    NONE = "none"  # no plan found


@dataclass(frozen=True)
class Result:
    """A solve of the time-indexed MILP.

    ``objective`` is the evaluator's cost of ``plan`` (the one cost definition);
    ``solver_objective`` is HiGHS's value of the same plan (``None`` when the plan is the
    warm start, returned because HiGHS found nothing better in time), ``bound`` a valid
    lower bound on the optimum: HiGHS's dual bound, and never below the capacity
    relaxation (each job alone at its least energy and least tardiness; so never
    ``-inf``), ``gap = (objective - bound) / max(|objective|, 1e-12)``. ``seconds`` is
    the wall time of the whole call, model building included; ``note`` says where a
    time limit stopped it.
    """

    instance: str
    plan: Plan | None
    evaluation: Evaluation | None
    solver_objective: float | None
    bound: float | None
    termination: Termination
    status: SolutionStatus
    seconds: float
    slots: int
    variables: int
    constraints: int
    warm_start_cost: float | None = None  # evaluator's cost of the initial plan, if any
    log: str = ""
    note: str = ""

    @property
    def objective(self) -> float | None:
        return None if self.evaluation is None else self.evaluation.total_cost

    @property
    def gap(self) -> float | None:
        if self.objective is None or self.bound is None:
            return None
        return max(0.0, self.objective - self.bound) / max(abs(self.objective), 1e-12)

    @property
    def optimal(self) -> bool:
        return self.status is SolutionStatus.OPTIMAL
