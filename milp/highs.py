"""The Pyomo model handed to HiGHS as matrices, and HiGHS's answer read back.

Pyomo's linear standard-form compiler turns the model into sparse matrices (about 3.5
times faster than the ``appsi_highs`` interface's term-by-term translation on the 60-job
models of docs/benchmarks.md), which go to ``highspy`` in one call. The solution is
loaded back into the Pyomo variables, so the plan extraction reads the model as before.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import highspy
import numpy as np
import pyomo.environ as pyo
from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler

from heuristic.core import highs_run
from heuristic.core.result import relative_gap
from milp.result import Termination

INF = highspy.kHighsInf

#: HiGHS's MIP feasibility tolerance, 1e-9 where its default is 1e-6. With the default,
#: HiGHS 1.16 proved 0.3644 optimal on a 3-job model of idle power whose optimum is
#: 0.3500 (a plan the evaluator costs at 0.3540, feasible in the model to 4e-16; HiGHS
#: finds it with presolve off, with any of three presolve rules off, or at 1e-7): its
#: presolve cut the optimum off. A tighter tolerance keeps it (docs/milp.md, 'Solving');
#: with it HiGHS's absolute gap is set to 0 (below).
MIP_FEASIBILITY = 1e-9


_STATUS = {
    highspy.HighsModelStatus.kOptimal: Termination.OPTIMAL,
    highspy.HighsModelStatus.kTimeLimit: Termination.TIME_LIMIT,
    highspy.HighsModelStatus.kInfeasible: Termination.INFEASIBLE,
    highspy.HighsModelStatus.kUnboundedOrInfeasible: Termination.INFEASIBLE,
    highspy.HighsModelStatus.kIterationLimit: Termination.OTHER_LIMIT,
    highspy.HighsModelStatus.kSolutionLimit: Termination.OTHER_LIMIT,
    highspy.HighsModelStatus.kObjectiveBound: Termination.OTHER_LIMIT,
    highspy.HighsModelStatus.kObjectiveTarget: Termination.OTHER_LIMIT,
    highspy.HighsModelStatus.kLoadError: Termination.ERROR,
    highspy.HighsModelStatus.kModelError: Termination.ERROR,
    highspy.HighsModelStatus.kPresolveError: Termination.ERROR,
    highspy.HighsModelStatus.kSolveError: Termination.ERROR,
    highspy.HighsModelStatus.kPostsolveError: Termination.ERROR,
}


@dataclass(frozen=True)
class Matrices:
    """``min c x + offset`` s.t. ``row_lower <= A x <= row_upper``, column bounds and
    integrality; ``columns`` are the Pyomo variables in column order (fixed ones are
    folded into the right-hand sides by the compiler and keep their values)."""

    columns: list[Any]
    cost: np.ndarray
    offset: float
    matrix: Any  # scipy.sparse.csc_array
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integer: np.ndarray  # bool per column


def compile_model(model: pyo.ConcreteModel) -> Matrices:
    """The matrices of ``model`` (one minimised objective, linear constraints)."""
    sf = LinearStandardFormCompiler().write(model, mixed_form=True)
    sense = np.array([bound for _, bound in sf.rows], dtype=np.int8)
    rhs = np.asarray(sf.rhs, dtype=float)
    # mixed form: 0 is an equality, 1 an upper bound, -1 a lower bound
    row_lower = np.where(sense == 1, -INF, rhs)
    row_upper = np.where(sense == -1, INF, rhs)
    cols = sf.columns
    lower = np.array([-INF if v.lb is None else v.lb for v in cols], dtype=float)
    upper = np.array([INF if v.ub is None else v.ub for v in cols], dtype=float)
    cost = sf.c.toarray().ravel() if len(cols) else np.zeros(0)
    return Matrices(
        columns=cols,
        cost=cost,
        offset=float(np.sum(sf.c_offset)),
        matrix=sf.A,
        row_lower=row_lower,
        row_upper=row_upper,
        col_lower=lower,
        col_upper=upper,
        integer=np.array([v.is_integer() for v in cols], dtype=bool),
    )


@dataclass(frozen=True)
class Answer:
    """What HiGHS found: the termination, the best objective and dual bound (``None`` if
    there is none), the column values of the best solution, and its log."""

    termination: Termination
    objective: float | None
    bound: float | None
    values: np.ndarray | None
    log: str


def run_highs(
    mats: Matrices,
    *,
    start: np.ndarray | None,
    time_limit: float,
    mip_gap: float,
    threads: int | None,
    log_file: Path,
    stream: bool,
    options: Mapping[str, Any] | None = None,
    size: float | None = None,
) -> Answer:
    """Solve the matrices with HiGHS; ``start`` (column values) is a MIP start;
    ``options`` are further HiGHS options by name (set last); ``size``, a lower bound
    on the objective where known, sets its scale (:func:`highs_run.cost_scale`).

    Where HiGHS proves an optimum but hands back the start's values, dearer than it by
    more than ``mip_gap``, it runs again without the start for the time left, and the
    better answer is kept with the higher bound. HiGHS 1.16 maps the start into its
    presolved space, where it may cost less (0.0504 against 0.0525 on a sub-MILP of
    ``improve``), proves that figure optimal and returns the start as given; the run
    without it found the 0.0504 plan in 0.55 s (2026-12-06)."""
    t0 = time.perf_counter()
    call = _Call(mats, mip_gap, threads, log_file, stream, options or {}, size)
    answer = call.run(start, time_limit)
    left = time_limit - (time.perf_counter() - t0)
    if start is None or answer.objective is None or left <= 0:
        return answer
    if not _handed_back(answer, mip_gap):
        return answer
    cold = call.run(None, left)
    note = "[gpusched: HiGHS handed back the start's values; run again without them]"
    log = f"{answer.log}\n{note}\n{cold.log}"
    log_file.write_text(log)
    best = answer
    if cold.objective is not None and cold.objective < answer.objective:
        best = cold
    bounds = [b for b in (answer.bound, cold.bound) if b is not None]
    return Answer(best.termination, best.objective, max(bounds, default=None), best.values, log)


def within_gap(cost: float, bound: float, mip_gap: float) -> bool:
    """Whether a plan of ``cost`` meets ``bound`` within the relative ``mip_gap`` (and
    1e-9 for rounding): the test of a run HiGHS calls optimal, here and in
    :mod:`milp.solve`."""
    gap = relative_gap(cost, bound)
    return gap is not None and gap <= mip_gap + 1e-9


#: how far above a plan's cost (relative) a solver's bound may lie from rounding alone;
#: beyond it the bound is an error, not a bound
BOUND_SLACK = 1e-6


def above_cost(bound: float, cost: float) -> bool:
    """Whether ``bound`` lies above a plan's ``cost`` by more than rounding: then it
    bounds nothing (no plan costs less than the optimum)."""
    return bound > cost * (1 + BOUND_SLACK) + 1e-12


def _handed_back(answer: Answer, mip_gap: float) -> bool:
    """Whether HiGHS called the run optimal while the values it handed back miss its
    bound by more than the gap asked for."""
    if answer.termination is not Termination.OPTIMAL:
        return False
    if answer.objective is None or answer.bound is None:
        return False
    return not within_gap(answer.objective, answer.bound, mip_gap)


@dataclass(frozen=True)
class _Call:
    """The settings of one :func:`run_highs` call, for each HiGHS run it makes."""

    mats: Matrices
    mip_gap: float
    threads: int | None
    log_file: Path
    stream: bool
    options: Mapping[str, Any]
    size: float | None

    def run(self, start: np.ndarray | None, time_limit: float) -> Answer:
        """One HiGHS run from ``start`` (or none) within ``time_limit`` seconds."""
        h = highspy.Highs()
        h.setOptionValue("output_flag", True)
        h.setOptionValue("log_to_console", self.stream)
        h.setOptionValue("log_file", str(self.log_file))
        h.setOptionValue("time_limit", max(time_limit, 1e-3))
        h.setOptionValue("mip_rel_gap", self.mip_gap)
        h.setOptionValue("mip_feasibility_tolerance", MIP_FEASIBILITY)
        # the relative gap alone stops it, as it alone calls a plan optimal here (at
        # HiGHS's absolute gap of 1e-6, costs near 0.1 stopped 1e-5 short of it)
        h.setOptionValue("mip_abs_gap", 0.0)
        if self.threads is not None:
            h.setOptionValue("threads", self.threads)
        for name, value in self.options.items():
            h.setOptionValue(name, value)
        scale = highs_run.cost_scale(self.mats.cost, self.size)
        h.passModel(_lp(self.mats, scale))
        if start is not None:
            sol = highspy.HighsSolution()
            sol.col_value = start
            sol.value_valid = True
            h.setSolution(sol)
        highs_run.run(h, self.threads)
        return _answer(h, self.mats, self.log_file, scale)


def _lp(mats: Matrices, scale: float) -> highspy.HighsLp:
    """The matrices as HiGHS's model (column-wise, with integrality), the objective
    multiplied by ``scale``."""
    a = mats.matrix
    lp = highspy.HighsLp()
    lp.num_col_ = len(mats.columns)
    lp.num_row_ = a.shape[0]
    lp.col_cost_ = mats.cost * scale
    lp.offset_ = mats.offset * scale
    lp.col_lower_ = mats.col_lower
    lp.col_upper_ = mats.col_upper
    lp.row_lower_ = mats.row_lower
    lp.row_upper_ = mats.row_upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = a.indptr
    lp.a_matrix_.index_ = a.indices
    lp.a_matrix_.value_ = a.data
    lp.a_matrix_.num_col_ = lp.num_col_
    lp.a_matrix_.num_row_ = lp.num_row_
    lp.integrality_ = [
        highspy.HighsVarType.kInteger if i else highspy.HighsVarType.kContinuous
        for i in mats.integer
    ]
    return lp


def _answer(h: highspy.Highs, mats: Matrices, log_file: Path, scale: float) -> Answer:
    """What a finished run found: its termination, the best solution if HiGHS holds a
    feasible one and the model's objective at its values, its dual bound (``None``
    before it had one, divided by the objective's ``scale``), and its log."""
    termination = _STATUS.get(h.getModelStatus(), Termination.UNKNOWN)
    info = h.getInfo()
    solution = h.getSolution()
    feasible = solution.value_valid and (
        termination is Termination.OPTIMAL or info.primal_solution_status == 2
    )
    values = np.asarray(solution.col_value, dtype=float) if feasible else None
    # the objective of the values handed back, not HiGHS's figure: warm-started, HiGHS
    # 1.16 reported an optimum of 7.5046 and handed back the start's values, 7.5533
    # (a review, 2026-12-06), so a sub-MILP whose plan is judged by this figure was
    # called optimal for the start
    objective = None if values is None else float(mats.cost @ values) + mats.offset
    bound: float | None = None
    if info.mip_node_count >= 0:
        bound = float(info.mip_dual_bound) / scale
    elif feasible:  # an LP, or a MIP HiGHS solved without branching
        bound = float(info.objective_function_value) / scale
    if bound is not None and not math.isfinite(bound):
        bound = None  # HiGHS stopped before it had a bound
    h.setOptionValue("log_file", "")  # closes the file so the log can be read
    log = log_file.read_text() if log_file.exists() else ""
    return Answer(termination, objective, bound, values, log)


def load_values(mats: Matrices, values: np.ndarray) -> None:
    """Put a solution's column values into the Pyomo variables."""
    for var, x in zip(mats.columns, values.tolist(), strict=True):
        var.set_value(x, skip_validation=True)


def start_vector(mats: Matrices) -> np.ndarray:
    """The Pyomo variables' current values as column values (unset ones at 0)."""
    return np.array([v.value or 0.0 for v in mats.columns], dtype=float)
