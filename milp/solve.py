"""Solving the time-indexed MILP with HiGHS through Pyomo's ``appsi_highs`` interface."""

from __future__ import annotations

import math
import tempfile
import time
from pathlib import Path

import pyomo.environ as pyo
from pyomo.contrib.appsi.base import TerminationCondition
from pyomo.contrib.appsi.solvers import Highs

from heuristic.sts import StsPolicy
from instances import Instance, Plan, TardinessMode
from milp.data import MilpError, require_slot
from milp.model import build_model
from milp.plan_io import solution_plan, start_values
from milp.result import Result, SolutionStatus, Termination
from validation.evaluate import evaluate
from validation.simulator import rollout

_TERMINATION = {
    TerminationCondition.optimal: Termination.OPTIMAL,
    TerminationCondition.maxTimeLimit: Termination.TIME_LIMIT,
    TerminationCondition.infeasible: Termination.INFEASIBLE,
    TerminationCondition.infeasibleOrUnbounded: Termination.INFEASIBLE,
    TerminationCondition.maxIterations: Termination.OTHER_LIMIT,
    TerminationCondition.objectiveLimit: Termination.OTHER_LIMIT,
    TerminationCondition.error: Termination.ERROR,
}


def default_slots(instance: Instance, initial_plan: Plan | None = None) -> int:
    """The horizon in slots: the latest due date, or the end of the initial plan (else of
    the STS worst-case rollout) if later, so that a known feasible plan fits."""
    slot = require_slot(instance)
    plan = initial_plan if initial_plan is not None else rollout(instance, StsPolicy())
    end = max([s.end for s in plan] + [j.due for j in instance.jobs])
    return math.ceil(end / slot - 1e-9)


def solve(
    instance: Instance,
    *,
    initial_plan: Plan | None = None,
    slots: int | None = None,
    slot: float | None = None,
    time_limit: float | None = 60.0,
    mip_gap: float = 1e-6,
    threads: int | None = None,
    tardiness: TardinessMode | None = None,
    log_file: str | Path | None = None,
    stream: bool = False,
) -> Result:
    """Solve the slotted MILP of ``instance``; ``initial_plan`` (slot-aligned, e.g. an STS
    rollout) is given to HiGHS as a MIP start.

    ``slots`` is the horizon (default :func:`default_slots`); ``slot`` overrides the
    instance's slot length. Raises :class:`MilpError` when a job cannot finish within the
    horizon, or when no plan can finish them all.
    """
    if slot is not None:
        instance = instance.replace(slot=slot)
    slot = require_slot(instance)
    warm_cost = None
    if initial_plan is not None:
        warm_cost = evaluate(instance, initial_plan, tardiness=tardiness).total_cost
    slots = slots if slots is not None else default_slots(instance, initial_plan)
    t0 = time.perf_counter()
    # the warm start's cost bounds every job's lateness in a plan at least as good, so
    # the model leaves out the slots after that (milp.data.milp_data)
    model, data = build_model(instance, slots, tardiness=tardiness, cutoff=warm_cost)
    if initial_plan is not None:
        start_values(model, data, initial_plan)

    opt = Highs()
    opt.config.load_solution = False
    opt.config.stream_solver = stream
    opt.config.warmstart = initial_plan is not None
    opt.config.time_limit = time_limit
    opt.config.mip_gap = mip_gap
    if threads is not None:
        opt.highs_options = {"threads": threads}
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(log_file) if log_file is not None else Path(tmp) / "highs.log"
        opt.config.logfile = str(log_path)
        res = opt.solve(model)
        log = log_path.read_text() if log_path.exists() else ""
    seconds = time.perf_counter() - t0

    termination = _TERMINATION.get(res.termination_condition, Termination.UNKNOWN)
    if termination is Termination.INFEASIBLE:
        raise MilpError(
            f"no slot-aligned plan of instance {instance.name!r} finishes every job within "
            f"the horizon of {slots} slots ({slots * slot:g} h): each job fits alone, "
            "so the jobs compete for the same GPUs; give a longer horizon"
        )
    plan = evaluation = None
    status = SolutionStatus.NONE
    if res.best_feasible_objective is not None:
        res.solution_loader.load_vars()
        plan = solution_plan(model, data)
        evaluation = evaluate(instance, plan, tardiness=tardiness)
        status = (
            SolutionStatus.OPTIMAL
            if termination is Termination.OPTIMAL
            else SolutionStatus.FEASIBLE
        )
    return Result(
        instance=instance.name,
        plan=plan,
        evaluation=evaluation,
        solver_objective=res.best_feasible_objective,
        bound=res.best_objective_bound,
        termination=termination,
        status=status,
        seconds=seconds,
        slots=slots,
        variables=model.nvariables(),
        constraints=model.nconstraints(),
        warm_start_cost=warm_cost,
        log=log,
    )


def model_of(
    instance: Instance, slots: int, *, tardiness: TardinessMode | None = None
) -> pyo.ConcreteModel:
    """The Pyomo model alone, for users who add constraints and solve it themselves."""
    return build_model(instance, slots, tardiness=tardiness)[0]
