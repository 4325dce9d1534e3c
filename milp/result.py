"""What a MILP solve returns: the plan and its evaluator cost, HiGHS's bound and status,
in the one result vocabulary of :mod:`heuristic.core.result` (whose two enums it
re-exports)."""

from __future__ import annotations

from dataclasses import dataclass

from heuristic.core.result import SolutionStatus, Termination, relative_gap, summary_text
from instances import Plan
from validation.evaluate import Evaluation

__all__ = ["Evaluated", "Result", "SolutionStatus", "Termination"]


class Evaluated:
    """The vocabulary's ``objective`` (the evaluator's cost of the plan held) and
    ``gap`` of a result holding an ``evaluation`` and a ``bound``."""

    evaluation: Evaluation | None
    bound: float | None

    @property
    def objective(self) -> float | None:
        return None if self.evaluation is None else self.evaluation.total_cost

    @property
    def gap(self) -> float | None:
        return relative_gap(self.objective, self.bound)


@dataclass(frozen=True)
class Result(Evaluated):
    """A solve of the time-indexed MILP.

    ``objective`` is the evaluator's cost of ``plan`` (the one cost definition);
    ``solver_objective`` is HiGHS's value of the same plan (``None`` when the plan is the
    warm start, returned because HiGHS found nothing better in time, or, where the
    model bounds the nodes' own power, because HiGHS's plan costs more by the
    evaluator), ``bound`` a valid
    lower bound on the optimum: HiGHS's dual bound, and never below the capacity
    relaxation (each job alone at its least energy and least tardiness; so never
    ``-inf``), ``gap = (objective - bound) / max(|objective|, 1e-12)``. ``runtime`` is
    the wall time of the whole call in seconds, model building included; ``note`` says
    where a time limit stopped it.
    """

    instance: str
    plan: Plan | None
    evaluation: Evaluation | None
    solver_objective: float | None
    bound: float | None
    termination: Termination
    status: SolutionStatus
    runtime: float
    slots: int
    variables: int
    constraints: int
    warm_start_cost: float | None = None  # evaluator's cost of the initial plan, if any
    log: str = ""
    note: str = ""

    @property
    def optimal(self) -> bool:
        return self.status is SolutionStatus.OPTIMAL

    def summary(self) -> str:
        """The instance and model size, the vocabulary's figures, HiGHS's value of the
        plan, the warm start's cost and the note."""
        title = (
            f"MILP of {self.instance!r}: {self.slots} slots, {self.variables:,} variables, "
            f"{self.constraints:,} constraints"
        )
        details = []
        if self.solver_objective is not None:
            details.append(("HiGHS value", f"{self.solver_objective:.6g}"))
        if self.warm_start_cost is not None:
            details.append(("warm start", f"{self.warm_start_cost:.6g}"))
        if self.note:
            details.append(("note", self.note))
        return summary_text(title, self, details)
