"""One result vocabulary for every solve, search and bound (after PyJobShop's and PyVRP's
``Result`` and Pyomo's two enums).

Every result type (``milp.Result``, ``milp.Improvement``, ``milp.lagrange.LagrangeBound``,
``experiments.bound.BoundResult``, ``heuristic.sts.search.SearchResult``) reads the same:

- ``objective``: the evaluator's cost of the best plan it holds (``None``: no plan);
- ``bound``: a valid lower bound on the optimum (``None``: the method proves none);
- ``gap``: ``(objective - bound) / |objective|``, HiGHS's relative gap (what
  ``mip_gap`` asks for), ``None`` where either is missing; :func:`certified_gap`,
  ``(objective - bound) / bound``, is how far above the optimum the plan may be;
- ``status``: what it found (:class:`SolutionStatus`), ``termination``: why it stopped
  (:class:`Termination`);
- ``runtime``: wall seconds of the whole call;
- ``summary()``: a few aligned lines for a reader (:func:`summary_text`).

The STS search and the other heuristics prove no bound; the bounds find no plan unless
they solve one (the clairvoyant bound does, per scenario; the Lagrangian bound does not).
This module sits in the policies' core because the STS search, the lowest of these
methods in the layers, returns one.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from typing import Protocol


class Termination(enum.Enum):
    """Why a solve, search or bound stopped."""

    OPTIMAL = "optimal"  # proved optimal within the gap tolerance (a bound: converged)
    TIME_LIMIT = "time_limit"  # the call's time limit (in HiGHS, or before it could run)
    INFEASIBLE = "infeasible"
    OTHER_LIMIT = "other_limit"  # iteration, node, evaluation or objective limit
    ERROR = "error"
    UNKNOWN = "unknown"


class SolutionStatus(enum.Enum):
    """What the returned plan is."""

    OPTIMAL = "optimal"  # an optimal plan of the slotted model
    FEASIBLE = "feasible"  # a feasible plan, optimality not proved
    NONE = "none"  # no plan found (or, for a bound, none sought)


class Outcome(Protocol):
    """What every result type answers (see the module's docstring)."""

    @property
    def objective(self) -> float | None: ...

    @property
    def bound(self) -> float | None: ...

    @property
    def gap(self) -> float | None: ...

    @property
    def status(self) -> SolutionStatus: ...

    @property
    def termination(self) -> Termination: ...

    @property
    def runtime(self) -> float: ...

    def summary(self) -> str: ...


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """``(objective - bound) / |objective|``, never below 0, in any unit of cost (at an
    objective of 0: 0 where the bound is not below it, else ``inf``); ``None`` when
    either is missing. (A floor under ``|objective|`` read a 36% gap as 0 at costs of
    1e-300, in a currency unit small enough: the numeric probe of 2026-12-05.)"""
    if objective is None or bound is None:
        return None
    if objective == 0:
        return 0.0 if bound >= 0 else math.inf
    return max(0.0, objective - bound) / abs(objective)


def certified_gap(cost: float, bound: float) -> float:
    """``(cost - bound) / bound``: how far a plan may be above the optimum at most
    (``inf`` for a positive cost over a bound of 0 or less)."""
    if bound <= 0:
        return 0.0 if cost <= bound else math.inf
    return max(0.0, cost - bound) / bound


def _figure(value: float | None, missing: str) -> str:
    return missing if value is None else f"{value:.6g}"


def summary_text(title: str, result: Outcome, details: Sequence[tuple[str, str]] = ()) -> str:
    """``title``, then the vocabulary's figures and the method's ``details`` (label,
    text), one aligned line each."""
    gap = result.gap
    rows = [
        ("objective", _figure(result.objective, "none (no plan)")),
        ("bound", _figure(result.bound, "none (no bound proved)")),
        ("gap", "none" if gap is None else f"{100 * gap:.2f}%"),
        ("status", f"{result.status.value} (stopped: {result.termination.value})"),
        ("runtime", f"{result.runtime:.2f} s"),
        *details,
    ]
    width = max(len(label) for label, _ in rows)
    return "\n".join([title, *(f"  {label:<{width}}  {text}" for label, text in rows)])
