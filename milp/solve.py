"""Solving the time-indexed MILP with HiGHS: Pyomo builds the model, its standard-form
compiler makes the matrices, ``highspy`` solves them (:mod:`milp.highs`).

A time limit is the wall time of the whole call. The clock is read before each stage
(the STS horizon, each constraint family, the MIP start, the compilation, HiGHS); when
the time is up, or when the compilation would end after it, the call returns at once
with what it has: the warm start, if one was given, and a valid lower bound.
"""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from heuristic.sts.policy import StsPolicy
from instances import Instance, Plan, TardinessMode
from milp.data import MilpData, MilpError, milp_data, require_slot
from milp.highs import compile_model, load_values, run_highs, start_vector
from milp.model import model_of_data
from milp.plan_io import solution_plan, start_values
from milp.result import Result, SolutionStatus, Termination
from validation.evaluate import Evaluation, evaluate
from validation.simulator import rollout

# compiling the model to matrices takes about this share of the time building it took
# (0.74 on the 60-job model of benchmarks/milp_time_limit): a compilation that would
# end past the time limit is not started
COMPILE_PER_BUILD = 0.8


class _OutOfTime(Exception):
    def __init__(self, stage: str, need: float) -> None:
        self.stage = stage
        self.need = need  # seconds the stage was expected to take (0: not known)


class _Clock:
    """The call's deadline (none without a time limit)."""

    def __init__(self, time_limit: float | None) -> None:
        if time_limit == math.inf:
            time_limit = None  # no limit, as None
        if time_limit is not None and not (math.isfinite(time_limit) and time_limit > 0):
            raise MilpError(f"time_limit = {time_limit!r}: must be a positive number of seconds")
        self.t0 = time.perf_counter()
        self.limit = time_limit

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def remaining(self) -> float:
        return math.inf if self.limit is None else self.limit - self.elapsed()

    def check(self, stage: str, need: float = 0.0) -> None:
        """Stop before ``stage`` if the time is up, or if it would take longer (``need``
        seconds) than remains."""
        if self.remaining() <= need:
            raise _OutOfTime(stage, need)


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
    occupied: Mapping[tuple[str, int], frozenset[int]] | None = None,
    tenants: Mapping[tuple[str, int], Mapping[int, tuple[int, float]]] | None = None,
    host_held: Mapping[tuple[str, int], tuple[int, float]] | None = None,
) -> Result:
    """Solve the slotted MILP of ``instance``; ``initial_plan`` (slot-aligned, e.g. an STS
    rollout) is given to HiGHS as a MIP start.

    ``slots`` is the horizon (default :func:`default_slots`); ``slot`` overrides the
    instance's slot length; ``time_limit`` (seconds) bounds the whole call; ``occupied``
    and ``tenants`` give, per (node id, slot), the GPUs held by jobs outside
    ``instance``, and ``host_held`` their CPU cores and DRAM (see
    :func:`milp.data.milp_data`; :mod:`milp.improve` uses them). Raises
    :class:`MilpError` when a job cannot finish within the horizon, when no plan can
    finish them all, or when the model is too large to build.
    """
    clock = _Clock(time_limit)
    if slot is not None:
        instance = instance.replace(slot=slot)
    slot = require_slot(instance)
    warm: Evaluation | None = None
    if initial_plan is not None:
        warm = evaluate(instance, initial_plan, tardiness=tardiness)
    slots = slots if slots is not None else default_slots(instance, initial_plan)
    # the warm start's cost bounds every job's lateness in a plan at least as good, so
    # the model leaves out the slots after that (milp.data.milp_data)
    cutoff = None if warm is None else warm.total_cost
    data = milp_data(
        instance,
        slots,
        tardiness,
        cutoff,
        occupied=occupied,
        tenants=tenants,
        host_held=host_held,
    )
    size = (0, 0)  # variables, constraints
    try:
        clock.check("building the model")
        built = clock.elapsed()
        model = model_of_data(data, clock.check)
        built = clock.elapsed() - built
        size = (model.nvariables(), model.nconstraints())
        if initial_plan is not None:
            clock.check("setting the MIP start")
            start_values(model, data, initial_plan)
        clock.check("compiling the model for HiGHS", need=COMPILE_PER_BUILD * built)
        mats = compile_model(model)
        clock.check("starting HiGHS")
    except _OutOfTime as out:
        return _stopped(data, initial_plan, warm, clock, out, size)

    with tempfile.TemporaryDirectory() as tmp:
        answer = run_highs(
            mats,
            start=start_vector(mats) if initial_plan is not None else None,
            time_limit=clock.remaining(),
            mip_gap=mip_gap,
            threads=threads,
            log_file=Path(log_file) if log_file is not None else Path(tmp) / "highs.log",
            stream=stream,
        )
    if answer.termination is Termination.INFEASIBLE:
        raise MilpError(
            f"no slot-aligned plan of instance {instance.name!r} finishes every job within "
            f"the horizon of {slots} slots ({slots * slot:g} h): each job fits alone, "
            "so the jobs compete for the same GPUs; give a longer horizon"
        )
    plan, evaluation, status = initial_plan, warm, SolutionStatus.NONE
    if answer.values is not None:
        load_values(mats, answer.values)
        plan = solution_plan(model, data)
        evaluation = evaluate(instance, plan, tardiness=tardiness)
        optimal = answer.termination is Termination.OPTIMAL
        status = SolutionStatus.OPTIMAL if optimal else SolutionStatus.FEASIBLE
    elif plan is not None:
        status = SolutionStatus.FEASIBLE
    return Result(
        instance=instance.name,
        plan=plan,
        evaluation=evaluation,
        solver_objective=answer.objective,
        bound=max(data.separable_bound(), answer.bound if answer.bound is not None else -math.inf),
        termination=answer.termination,
        status=status,
        seconds=clock.elapsed(),
        slots=slots,
        warm_start_cost=None if warm is None else warm.total_cost,
        log=answer.log,
        variables=size[0],
        constraints=size[1],
    )


def _stopped(
    data: MilpData,
    initial_plan: Plan | None,
    warm: Evaluation | None,
    clock: _Clock,
    out: _OutOfTime,
    size: tuple[int, int],
) -> Result:
    """The result of a call whose time ran out before HiGHS could run."""
    when = f"before {out.stage}"
    if out.need > 0 and clock.remaining() > 0:
        when = f"during {out.stage} (about {out.need:.1f} s, not started)"
    return Result(
        instance=data.instance.name,
        plan=initial_plan,
        evaluation=warm,
        solver_objective=None,
        bound=data.separable_bound(),
        termination=Termination.TIME_LIMIT,
        status=SolutionStatus.NONE if initial_plan is None else SolutionStatus.FEASIBLE,
        seconds=clock.elapsed(),
        slots=data.slots,
        warm_start_cost=None if warm is None else warm.total_cost,
        note=f"the time limit of {clock.limit:g} s ran out {when} ({clock.elapsed():.2f} s "
        "in); HiGHS did not run",
        variables=size[0],
        constraints=size[1],
    )

