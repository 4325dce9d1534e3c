"""Solving by column generation: the root's Lagrangian bound, then plans from the
columns, every plan through the checker and the evaluator."""

from __future__ import annotations

import math
import time

from heuristic.core.result import Termination
from heuristic.sts.policy import StsPolicy
from instances import Instance, Plan, TardinessMode
from milp.data import milp_data
from milp.decomposition.colgen import CgOptions, Generation, generate
from milp.decomposition.columns import Column, columns_of_plan
from milp.decomposition.master import Master
from milp.decomposition.oracle import Oracle
from milp.decomposition.plans import assemble, integer_master
from milp.decomposition.result import DecompositionResult
from milp.decomposition.space import Space, build_space
from milp.requirements import MilpError, require_slot
from milp.solve import default_slots
from validation.check import check_plan
from validation.evaluate import Evaluation, evaluate
from validation.simulator import rollout

# share of the time limit kept for the integer master after the column generation
INTEGER_SHARE = 0.2


def solve(
    instance: Instance,
    initial_plan: Plan | None = None,
    *,
    slots: int | None = None,
    time_limit: float | None = 60.0,
    tardiness: TardinessMode | None = None,
    options: CgOptions | None = None,
) -> DecompositionResult:
    """Column generation at the root, then the integer master over its columns.

    ``initial_plan`` (slot-aligned; default: the STS worst-case rollout) gives the first
    columns, the MIP start and the cost that cuts each job's slots (docs/milp.md, "The
    warm start's cost cuts the model"). ``time_limit`` (seconds) is the whole call's."""
    t0 = time.perf_counter()
    if time_limit is not None and not (math.isfinite(time_limit) and time_limit > 0):
        raise MilpError(f"time_limit = {time_limit!r}: must be a positive number of seconds")
    require_slot(instance)
    options = options or CgOptions()
    warm = initial_plan if initial_plan is not None else rollout(instance, StsPolicy())
    warm_eval = evaluate(instance, warm, tardiness=tardiness)
    slots = slots or default_slots(instance, warm)
    # a warm start that does not end within the horizon cannot seed it, nor cut it
    fits = warm.makespan <= slots * require_slot(instance) + 1e-9
    cutoff = warm_eval.total_cost if fits else None
    d = milp_data(instance, slots, tardiness, cutoff, check_size=False)
    space = build_space(d)
    start = columns_of_plan(space, warm) if fits else []
    master = Master(space, big=10.0 * max(1.0, warm_eval.total_cost), artificial=not start)
    master.add(start)
    deadline = None if time_limit is None else t0 + (1 - INTEGER_SHARE) * time_limit
    root = generate(master, Oracle(space, options.grid), options, d.separable_bound(), deadline)
    left = None if time_limit is None else max(0.01, t0 + time_limit - time.perf_counter())
    chosen, _value, _ = integer_master(master, start or None, left)
    known = (warm, warm_eval) if fits else None
    found = _better(space, known, chosen, tardiness)
    return _result(instance, space, found, root, master, warm_eval, t0)


def _better(
    space: Space,
    known: tuple[Plan, Evaluation] | None,
    chosen: list[Column] | None,
    tardiness: TardinessMode | None,
) -> tuple[Plan | None, Evaluation | None]:
    """The cheaper of the warm start (if it fits the horizon) and the integer master's
    plan, by the evaluator (the assembled plan is checked first: a violation would be
    a bug in the master, and is reported as one)."""
    if chosen is None:
        return known if known is not None else (None, None)
    plan = assemble(space, chosen)
    violations = check_plan(space.instance, plan)
    if violations:
        raise AssertionError(f"a plan from the columns is infeasible: {violations[:3]}")
    ev = evaluate(space.instance, plan, tardiness=tardiness, check=False)
    if known is not None and known[1].total_cost <= ev.total_cost:
        return known
    return plan, ev


def _result(
    instance: Instance,
    space: Space,
    found: tuple[Plan | None, Evaluation | None],
    root: Generation,
    master: Master,
    warm_eval: Evaluation,
    t0: float,
) -> DecompositionResult:
    plan, evaluation = found
    cost = math.inf if evaluation is None else evaluation.total_cost
    bound = min(root.bound, cost)  # a bound above a plan's cost can only be rounding
    termination = root.termination
    if cost - bound <= 1e-6 * abs(cost):
        termination = Termination.OPTIMAL
    elif root.termination is Termination.OPTIMAL:
        termination = Termination.OTHER_LIMIT  # the root converged with a gap left
    return DecompositionResult(
        instance=instance.name,
        plan=plan,
        evaluation=evaluation,
        bound=bound,
        root_bound=root.bound,
        root_lp=root.lp_value,
        rounds=root.rounds,
        nodes=1,
        columns=len(master.columns),
        slots=space.d.slots,
        termination=termination,
        runtime=time.perf_counter() - t0,
        warm_start_cost=warm_eval.total_cost,
        root_seconds=root.runtime,
    )
