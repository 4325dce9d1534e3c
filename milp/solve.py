"""Solving the time-indexed MILP with HiGHS: Pyomo builds the model, its standard-form
compiler makes the matrices, ``highspy`` solves them (:mod:`milp.highs`).

A time limit is the wall time of the whole call. The clock is read before each stage
(the STS horizon, each constraint family, the MIP start, the compilation, HiGHS); when
the time is up, or when the compilation would end after it, the call returns at once
with what it has: the warm start, if one was given, and a valid lower bound.
"""

from __future__ import annotations

import math
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

import pyomo.environ as pyo

from heuristic.sts.policy import StsPolicy
from instances import Instance, Plan, TardinessMode
from milp.data import MilpData, Outside, improving_end, milp_data, model_variables
from milp.highs import (
    Answer,
    Matrices,
    above_cost,
    compile_model,
    load_values,
    run_highs,
    start_vector,
    within_gap,
)
from milp.model import model_of_data
from milp.plan_io import solution_plan, start_values
from milp.requirements import (
    MilpError,
    ModelTooLarge,
    require_count,
    require_gap,
    require_slot,
    require_slots,
    require_time_limit,
)
from milp.result import Result, SolutionStatus, Termination
from validation.evaluate import Evaluation, evaluate
from validation.simulator import rollout

# compiling the model to matrices takes about this share of the time building it took
# (0.74 on the 60-job model of benchmarks/milp_time_limit): a compilation that would
# end past the time limit is not started
COMPILE_PER_BUILD = 0.8
# a model whose estimated variables (milp.data.model_variables) would take longer than
# the time left to build at this many a second is not started. Generous, so that only a
# build that cannot end in time is refused: Pyomo built 180,000 a second (3.2 million in
# 18 s, the neighbourhood search's sub-MILP of two jobs over 800,000 slots), and the
# estimate counts 1.00-1.12 times those built (milp.data); one component's
# construction cannot be stopped, and that sub-MILP ran 9 s past a 5-s limit (a
# hostile-input review, 2026-12-07)
BUILD_RATE = 1_000_000


class _OutOfTime(Exception):
    def __init__(self, stage: str, need: float) -> None:
        self.stage = stage
        self.need = need  # seconds the stage was expected to take (0: not known)
        self.size = (0, 0)  # the model's variables and constraints, once built


class _Clock:
    """The call's deadline (none without a time limit)."""

    def __init__(self, time_limit: float | None) -> None:
        time_limit = require_time_limit(time_limit)  # infinity: no limit, as None
        self.t0 = time.perf_counter()
        self.limit = time_limit

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def remaining(self) -> float:
        return math.inf if self.limit is None else self.limit - self.elapsed()

    def share(self, part: float) -> _Clock:
        """A clock for ``part`` of the time left, from now (none without a limit)."""
        clock = _Clock(None)
        clock.limit = None if self.limit is None else part * self.remaining()
        return clock

    def check(self, stage: str, need: float = 0.0) -> None:
        """Stop before ``stage`` if the time is up, or if it would take longer (``need``
        seconds) than remains."""
        if self.remaining() <= need:
            raise _OutOfTime(stage, need)


# the most slots the horizon grows by to reach every plan late past it (beyond, the
# model would not be built anyway: a weight of 1e-12 asked for 434 TiB, a review)
MAX_REACH_SLOTS = 100_000

# a horizon reaching this many times the base one or more is solved in two stages, the
# base one first (_from_the_base): on the suite, whose reach passes the base by a slot or
# two, a first stage only took time from the second (share-2n6j-s2 in worst-case mode:
# 0.1197 after 60 s in two stages, 0.1190 in one)
TWO_STAGES = 2
# the least share of the time the first stage gets (else its slots' share of the
# reach's): 9/1370 of 30 s found nothing better than the start on a suite instance with
# one weight made 1,000 times smaller, where 10 s found 0.2456 against 0.5964 and cut
# the reach to 200 slots (a review)
FIRST_SHARE = 0.25

T = TypeVar("T")


@dataclass(frozen=True)
class Horizon:
    """The default horizon in ``slots``; ``base``, the latest due date or the plan's end;
    ``short``, where the horizon may cut off a cheaper plan, why; empty where it
    cannot."""

    slots: int
    base: int
    short: str = ""

    def kept_short(self, why: str) -> Horizon:
        """The base horizon, kept for ``why``."""
        return Horizon(
            self.base,
            self.base,
            f"{why}: the horizon ends at the latest due date or the start's end",
        )


def within_size(reach: Horizon, build: Callable[[int], T], what: str) -> tuple[Horizon, T]:
    """``build`` on the reach's slots; where that is too large (:class:`ModelTooLarge`)
    and the reach goes past the base horizon, the base one, kept short (no optimum over
    it is claimed for the instance), built instead."""
    try:
        return reach, build(reach.slots)
    except ModelTooLarge:
        if reach.slots == reach.base:
            raise
        short = reach.kept_short(f"{what} reaching {reach.slots} slots would be too large")
        return short, build(short.slots)


def late_note(short: str) -> str:
    """The note of a result over a horizon kept ``short`` (empty where it is not): no
    optimum or bound over it is the instance's."""
    return f"{short}; a plan late past it may cost less" if short else ""


def horizon(
    instance: Instance, initial_plan: Plan | None = None, tardiness: TardinessMode | None = None
) -> Horizon:
    """The latest due date, or the end of the initial plan (else of the STS worst-case
    rollout) if later, so that a known feasible plan fits; and as far as any plan at
    least as good as that one can reach (:func:`milp.data.improving_end`, in the
    ``tardiness`` mode): being late can pay, under a flat bill too, and a horizon that
    cuts late plans off makes the optimum over it a wrong claim (docs/milp.md, 'The
    horizon'). Where that reach is unbounded (a job without a
    tardiness weight), more than :data:`MAX_REACH_SLOTS` further, or crosses a change of
    price inside a slot, the base horizon is kept and ``short`` says why."""
    slot = require_slot(instance)
    plan = initial_plan if initial_plan is not None else rollout(instance, StsPolicy())
    base = _base(instance, plan, slot)
    cost = evaluate(instance, plan, tardiness=tardiness).total_cost
    reach, free = improving_end(instance, cost, instance.tardiness_mode(tardiness))
    # a completion counts at the end of its slot (instances.slot_ceil): a plan as good
    # completes by the end of the last slot that ends by the reach
    found = Horizon(max(base, math.floor(reach / slot + 1e-9)), base)
    if free is not None:
        return found.kept_short(f"job {free!r}'s lateness is not bounded (no tardiness weight)")
    if found.slots > base + MAX_REACH_SLOTS:
        return found.kept_short(f"a plan as good as the start may end at {reach:g} h")
    series = [instance.price_series]
    if instance.carbon is not None and instance.carbon.price > 0:
        series.append(instance.carbon.intensity)
    if any(s.off_grid(slot, found.slots * slot) for s in series):
        return found.kept_short("the price changes inside a slot past it")
    return found


def base_slots(instance: Instance, initial_plan: Plan | None = None) -> int:
    """The latest due date, or the end of the initial plan (else of the STS worst-case
    rollout) if later, in slots: :func:`horizon` before its reach. Comparisons on one
    fixed horizon (a brute force, a relaxation against the MILP on the same slots) are
    sized by it."""
    slot = require_slot(instance)
    plan = initial_plan if initial_plan is not None else rollout(instance, StsPolicy())
    return _base(instance, plan, slot)


def _base(instance: Instance, plan: Plan, slot: float) -> int:
    end = max([s.end for s in plan] + [j.due for j in instance.jobs])
    return math.ceil(end / slot - 1e-9)


def default_slots(
    instance: Instance, initial_plan: Plan | None = None, tardiness: TardinessMode | None = None
) -> int:
    """:func:`horizon`'s slots."""
    return horizon(instance, initial_plan, tardiness).slots


@dataclass(frozen=True)
class _Settings:
    """How HiGHS runs: its relative gap, threads, log file (a temporary one if
    ``None``) and whether the log streams to the console."""

    mip_gap: float
    threads: int | None
    log_file: str | Path | None = None
    stream: bool = False


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
    instance's slot length; ``time_limit`` (seconds) bounds the whole call; ``mip_gap``
    is HiGHS's relative gap; ``tardiness`` overrides the instance's tardiness mode;
    HiGHS's log goes to ``log_file`` (and to the console with ``stream``). Raises
    :class:`MilpError` when a job cannot finish within the horizon, when no plan can
    finish them all, or when the model is too large to build.
    """
    clock = _Clock(time_limit)
    if initial_plan is not None and not isinstance(initial_plan, Plan):
        raise MilpError(
            f"initial_plan = {initial_plan!r:.60}: must be a Plan (instances.read_plan reads one)"
        )
    slots = require_slots(slots)
    require_gap("mip_gap", mip_gap)
    require_count("threads", threads, 1, optional=True)
    if slot is not None:
        instance = instance.replace(slot=slot)
    if log_file is not None and not isinstance(log_file, str | os.PathLike):
        raise MilpError(f"log_file = {log_file!r:.60}: must be a path (text or a Path)")
    settings = _Settings(mip_gap, threads, log_file, stream)
    if slots is not None:
        return _solve(instance, initial_plan, Horizon(slots, slots), tardiness, clock, settings)
    reach = horizon(instance, initial_plan, tardiness)
    if reach.slots < TWO_STAGES * reach.base or reach.short:
        return _solve(instance, initial_plan, reach, tardiness, clock, settings)
    return _from_the_base(instance, initial_plan, reach, tardiness, clock, settings)


def _from_the_base(
    instance: Instance,
    initial_plan: Plan | None,
    reach: Horizon,
    tardiness: TardinessMode | None,
    clock: _Clock,
    settings: _Settings,
) -> Result:
    """The MILP over a horizon reaching far past the base one, in two stages. The reach
    is taken from the start's cost, and a weight small beside the start's excess makes
    it loose. So the base horizon is solved first, with the share of the time its size
    is of the reach's; its best plan, no dearer than the start, gives a reach of its
    own, and where that ends within the base horizon, no plan late past it can be
    cheaper than the first stage's best: its result, bound included, is the instance's.
    Otherwise the second stage solves the shorter reach, started from the first stage's
    plan and cut off at its cost (docs/milp.md, 'The horizon')."""
    share = max(reach.base / reach.slots, FIRST_SHARE)
    base = Horizon(reach.base, reach.base)
    try:
        first = _solve(instance, initial_plan, base, tardiness, clock.share(share), settings)
    except MilpError:
        # the model may count a job at the evaluator's tolerance one slot later than it
        # does and find no plan within the base horizon (a review's instance): one stage
        first = None
    if first is None or first.plan is None:  # nothing found: the whole reach, one stage
        return _solve(instance, initial_plan, reach, tardiness, clock, settings)
    tighter = horizon(instance, first.plan, tardiness)
    found = _first_note(first, initial_plan, reach.base)
    if first.optimal and tighter.slots <= reach.base and not tighter.short:
        note = f"{found}: no plan as good ends past it" + (f"; {first.note}" if first.note else "")
        return replace(first, runtime=clock.elapsed(), note=note)
    # not proved in its share, or a reach past it: the rest of the time on that reach
    second = _solve(instance, first.plan, tighter, tardiness, clock, settings)
    note = f"{found}: it reaches {tighter.slots} slots, the start {reach.slots}"
    kept = second.plan is first.plan  # HiGHS's value of the plan is the first stage's
    return replace(
        second,
        solver_objective=first.solver_objective if kept else second.solver_objective,
        warm_start_cost=first.warm_start_cost,
        runtime=clock.elapsed(),
        log=first.log + second.log,
        note=f"{note}; {second.note}" if second.note else note,
    )


def solve_beside(
    instance: Instance,
    outside: Outside,
    *,
    initial_plan: Plan,
    slots: int,
    time_limit: float,
    mip_gap: float,
    threads: int | None,
) -> Result:
    """The MILP of ``instance``'s jobs beside what jobs outside it hold (``outside``,
    :class:`milp.data.Outside`): the neighbourhood search's sub-MILP
    (:mod:`milp.improve`). Users call :func:`solve`."""
    settings = _Settings(mip_gap, threads)
    return _solve(
        instance, initial_plan, Horizon(slots, slots), None, _Clock(time_limit), settings, outside
    )


def _first_note(first: Result, start: Plan | None, base: int) -> str:
    """What the first stage of :func:`_from_the_base` found over the ``base`` slots: an
    optimum, a plan not proved, or nothing cheaper than the ``start`` (the note said
    "solved" in each case, a review of 2026-12-06)."""
    if first.optimal:
        what = f"optimum {first.objective:.6g}"
    elif first.plan is start:
        what = "nothing cheaper than the start found in its share of the time"
    else:
        what = f"best {first.objective:.6g} in its share of the time, not proved"
    return f"the base horizon of {base} slots first ({what})"


def _solve(
    instance: Instance,
    initial_plan: Plan | None,
    reach: Horizon,
    tardiness: TardinessMode | None,
    clock: _Clock,
    settings: _Settings,
    outside: Outside | None = None,
) -> Result:
    """:func:`solve`'s steps over one horizon: the index sets, the model and its
    matrices, HiGHS, the result."""
    slot = require_slot(instance)
    warm: Evaluation | None = None
    if initial_plan is not None:
        warm = evaluate(instance, initial_plan, tardiness=tardiness)
    # the warm start's cost bounds every job's lateness in a plan at least as good, so
    # the model leaves out the slots after that (milp.data.milp_data)
    cutoff = None if warm is None else warm.total_cost
    outside = Outside() if outside is None else outside
    whole = outside == Outside()  # idle power is bounded over every job (milp.idle)

    def data_of(slots: int) -> MilpData:
        return milp_data(
            instance,
            slots,
            tardiness,
            cutoff,
            outside=None if whole else outside,
            idle_bound=whole,
        )

    reach, data = within_size(reach, data_of, "a model")
    slots = reach.slots
    try:
        model, mats, size = _build(data, initial_plan, clock)
    except _OutOfTime as out:
        stopped = _stopped(data, initial_plan, warm, clock, out)
        if not reach.short:
            return stopped
        return replace(stopped, bound=None, note=f"{stopped.note}; {late_note(reach.short)}")
    answer = _run(mats, initial_plan is not None, clock, settings, data.separable_bound())
    if answer.termination is Termination.INFEASIBLE:
        raise MilpError(
            f"no slot-aligned plan of instance {instance.name!r} finishes every job within "
            f"the horizon of {slots} slots ({slots * slot:g} h): each job fits alone, "
            "so the jobs compete for the same GPUs; give a longer horizon"
        )
    plan, evaluation, status = initial_plan, warm, SolutionStatus.NONE
    value = answer.objective  # HiGHS's value of the plan returned (None: the start)
    if answer.values is not None:
        load_values(mats, answer.values)
        plan = solution_plan(model, data)
        evaluation = evaluate(instance, plan, tardiness=tardiness)
        optimal = answer.termination is Termination.OPTIMAL
        # the cheaper of HiGHS's plan and the start is kept: where the nodes draw power
        # HiGHS minimised a bound of their own energy (milp.idle), so its plan may cost
        # more than the start by the evaluator; and a start HiGHS did not take leaves it
        # free to stop at its time limit on a dearer plan of its own (beyond rounding:
        # the same plan found again keeps HiGHS's value)
        if warm is not None and (
            (instance.node_power and warm.total_cost < evaluation.total_cost)
            or (whole and warm.total_cost < evaluation.total_cost * (1 - 1e-9) - 1e-12)
        ):
            plan, evaluation, value = initial_plan, warm, None
        # the plan's cost must meet the bound: where the nodes draw power HiGHS proved a
        # bound's optimum, not the plan's; and warm-started, HiGHS 1.16 has reported an
        # optimum of 7.5046 while handing back the start's values (7.5533), called
        # optimal before (a review, 2026-12-06; milp.highs now runs again without the
        # start there). Beside jobs outside (milp.improve's sub-MILPs) the evaluator
        # sees the neighbourhood without them: the plan's cost is the model's value
        cost = evaluation.total_cost if whole or instance.node_power else value
        if cost is not None:
            optimal = optimal and within_gap(cost, _bound(data, answer), settings.mip_gap)
        status = SolutionStatus.OPTIMAL if optimal else SolutionStatus.FEASIBLE
    elif plan is not None:
        status = SolutionStatus.FEASIBLE
    dual = _bound(data, answer)
    bound: float | None = dual
    note = ""
    if whole and evaluation is not None and above_cost(dual, evaluation.total_cost):
        # no bound exceeds a plan's cost: HiGHS's has cut off a plan (its presolve did,
        # at its default tolerance, on a 3-tenant idle-power model: milp.highs)
        status = SolutionStatus.FEASIBLE if status is SolutionStatus.OPTIMAL else status
        note = (
            f"HiGHS's bound {dual:.6g} is above the plan's cost "
            f"{evaluation.total_cost:.6g}: it bounds nothing, and no optimum is proved"
        )
        bound = None
    if reach.short:
        # a plan late past the horizon may cost less: neither the optimum nor the bound
        # is the instance's
        status = SolutionStatus.FEASIBLE if status is SolutionStatus.OPTIMAL else status
        bound, note = None, "; ".join(filter(None, (note, late_note(reach.short))))
    return Result(
        instance=instance.name,
        plan=plan,
        evaluation=evaluation,
        solver_objective=value,
        bound=bound,
        termination=answer.termination,
        status=status,
        runtime=clock.elapsed(),
        slots=slots,
        warm_start_cost=None if warm is None else warm.total_cost,
        log=answer.log,
        variables=size[0],
        constraints=size[1],
        note=note,
    )


def _bound(data: MilpData, answer: Answer) -> float:
    """HiGHS's dual bound, never below the capacity relaxation."""
    return max(data.separable_bound(), answer.bound if answer.bound is not None else -math.inf)


def _build(
    data: MilpData, initial_plan: Plan | None, clock: _Clock
) -> tuple[pyo.ConcreteModel, Matrices, tuple[int, int]]:
    """The model, with the MIP start's values, its matrices and its size (variables,
    constraints); :class:`_OutOfTime` (with the size once built) when the time runs out
    before a stage."""
    size = (0, 0)
    try:
        clock.check("building the model", need=model_variables(data) / BUILD_RATE)
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
        out.size = size
        raise
    return model, mats, size


def _run(
    mats: Matrices, warm_started: bool, clock: _Clock, settings: _Settings, size: float
) -> Answer:
    """HiGHS on the matrices, for the time left; the MIP start is the variables'
    values; ``size``, a lower bound on the objective, sets its scale."""
    with tempfile.TemporaryDirectory() as tmp:
        log = settings.log_file
        return run_highs(
            mats,
            start=start_vector(mats) if warm_started else None,
            time_limit=clock.remaining(),
            mip_gap=settings.mip_gap,
            threads=settings.threads,
            log_file=Path(log) if log is not None else Path(tmp) / "highs.log",
            stream=settings.stream,
            size=size,
        )


def _stopped(
    data: MilpData,
    initial_plan: Plan | None,
    warm: Evaluation | None,
    clock: _Clock,
    out: _OutOfTime,
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
        runtime=clock.elapsed(),
        slots=data.slots,
        warm_start_cost=None if warm is None else warm.total_cost,
        note=f"the time limit of {clock.limit:g} s ran out {when} ({clock.elapsed():.2f} s "
        "in); HiGHS did not run",
        variables=out.size[0],
        constraints=out.size[1],
    )
