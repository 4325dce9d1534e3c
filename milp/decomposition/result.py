"""What the decomposition returns, in the one result vocabulary of
:mod:`heuristic.core.result`."""

from __future__ import annotations

from dataclasses import dataclass

from heuristic.core.result import SolutionStatus, Termination, summary_text
from instances import Plan
from milp.result import Evaluated
from validation.evaluate import Evaluation


@dataclass(frozen=True)
class DecompositionResult(Evaluated):
    """A solve by column generation (and branch-and-price where it branches).

    ``objective`` is the evaluator's cost of ``plan`` (the cheapest of the warm start and
    the plans built from the columns); ``bound`` a valid lower bound on the slotted
    optimum over ``slots`` slots: the best Lagrangian bound of the root (or, after
    branching, the least bound of the open nodes), never below the capacity relaxation.
    ``root_bound`` and ``root_lp`` are the root's best Lagrangian bound and last master
    LP value; ``rounds`` the master solves of the root, ``nodes`` the search nodes
    solved (1: the root only), ``columns`` the columns generated."""

    instance: str
    plan: Plan | None
    evaluation: Evaluation | None
    bound: float
    root_bound: float
    root_lp: float
    rounds: int
    nodes: int
    columns: int
    slots: int
    termination: Termination
    runtime: float
    warm_start_cost: float | None = None
    root_seconds: float = 0.0
    fixed: int = 0  # (choice, slot) arcs removed by reduced-cost fixing after the root
    note: str = ""

    @property
    def status(self) -> SolutionStatus:
        """Optimal once the plan meets the bound (within the relative gap of 1e-6)."""
        if self.objective is None:
            return SolutionStatus.NONE
        gap = self.gap
        return (
            SolutionStatus.OPTIMAL if gap is not None and gap <= 1e-6 else SolutionStatus.FEASIBLE
        )

    @property
    def optimal(self) -> bool:
        return self.status is SolutionStatus.OPTIMAL

    def summary(self) -> str:
        title = (
            f"Column generation of {self.instance!r}: {self.slots} slots, "
            f"{self.columns:,} columns, {self.nodes} node(s)"
        )
        details = [
            (
                "root bound",
                f"{self.root_bound:.6g} ({self.rounds} rounds, {self.root_seconds:.2f} s)",
            ),
            ("root master LP", f"{self.root_lp:.6g}"),
        ]
        if self.warm_start_cost is not None:
            details.append(("warm start", f"{self.warm_start_cost:.6g}"))
        if self.note:
            details.append(("note", self.note))
        return summary_text(title, self, details)
