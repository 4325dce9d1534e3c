"""Improvement at scale: an anytime large-neighbourhood search over the time-indexed MILP.

It starts from STS tuned by its search (or from a given slot-aligned plan). Each step
frees a few jobs (:mod:`milp.neighbourhood`), keeps every other job's plan, and solves the
MILP of the freed jobs alone on the GPUs the others leave free, warm-started by their
current plan and cut off at its cost. A cheaper answer replaces the incumbent. Costs are
separable by job (MODEL.md section 2), so the whole plan's cost falls by exactly what the
sub-MILP saved; the merged plan is still checked and costed by the evaluator, which is
the only cost reported.

Neighbourhood sizes adapt: a sub-MILP proved optimal quickly grows the next one, one
stopped by its time limit shrinks it. This follows the usual MIP-based LNS recipe
(Shaw 1998; Pisinger and Ropke 2010: adaptive choice of destroy methods and sizes).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from heuristic.sts.policy import StsPolicy, StsTuning
from heuristic.sts.search import SearchResult, search
from instances import Instance, Plan, PlanError
from milp.data import MilpError, milp_data, require_slot
from milp.lagrange import lagrangian_bound
from milp.neighbourhood import Chooser, Neighbourhood, host_occupancy, occupancy
from milp.solve import default_slots, solve
from validation.check import check_plan
from validation.evaluate import Evaluation, evaluate
from validation.simulator import rollout

MIN_SIZE = 2
# a sub-MILP stops at this relative gap: the search wants quick improvements, and the
# percent left is for the next neighbourhoods to find
SUB_GAP = 1e-2


@dataclass(frozen=True)
class Step:
    """One step of the search, as reported to the caller's ``on_step``."""

    iteration: int
    kind: str  # the neighbourhood's kind, or "start"
    jobs: int  # jobs freed
    seconds: float  # since the call began
    incumbent: float  # evaluator's cost of the best plan so far
    bound: float
    improved: bool
    proved: bool  # the sub-MILP was solved to optimality

    @property
    def gap(self) -> float:
        """Certified gap, ``(incumbent - bound) / bound``."""
        return certified_gap(self.incumbent, self.bound)


@dataclass(frozen=True)
class Improvement:
    """What :func:`improve` returns: the best plan and its evaluation, the cost of plain
    and tuned STS, the lower bound used, and the search's history."""

    instance: str
    plan: Plan
    evaluation: Evaluation
    sts_cost: float | None  # plain STS's worst-case rollout (None when a plan was given)
    start_cost: float  # the plan the search started from (tuned STS, or the given one)
    bound: float
    seconds: float
    history: tuple[Step, ...]

    @property
    def cost(self) -> float:
        return self.evaluation.total_cost

    @property
    def gap(self) -> float:
        return certified_gap(self.cost, self.bound)

    @property
    def improvements(self) -> int:
        return sum(s.improved for s in self.history)


def certified_gap(cost: float, bound: float) -> float:
    """``(cost - bound) / bound``: how far a plan may be above the optimum at most."""
    if bound <= 0:
        return 0.0 if cost <= bound else math.inf
    return max(0.0, cost - bound) / bound


def improve(
    instance: Instance,
    *,
    time_limit: float = 60.0,
    initial_plan: Plan | None = None,
    search_evaluations: int | None = None,
    bound: float | None = None,
    lagrangian: bool = True,
    seed: int = 0,
    size: int = 4,
    max_size: int = 40,
    sub_time_limit: float = 10.0,
    sub_gap: float = SUB_GAP,
    threads: int | None = 1,
    iterations: int | None = None,
    on_step: Callable[[Step], object] | None = None,
) -> Improvement:
    """The best plan found within ``time_limit`` seconds (the whole call).

    ``initial_plan``: a slot-aligned plan to start from; by default STS tuned by
    :func:`heuristic.sts.search.search` with ``search_evaluations`` rollouts (default
    ``max(50, 4000 / jobs)``) within a quarter of the time. ``bound``: a known lower
    bound; the capacity relaxation is used when it is higher, and with ``lagrangian``
    the Lagrangian bound of :mod:`milp.lagrange` (given at most a fifth of the time
    left). ``size``: jobs freed at first; ``sub_time_limit`` and ``sub_gap``: each
    sub-MILP's time limit (seconds) and relative gap; ``iterations``: stop after this
    many neighbourhoods (else only the time limit stops). Same seed, same plan when
    neither the search nor a sub-MILP is stopped by the clock (HiGHS is deterministic,
    the clock is not)."""
    t0 = time.perf_counter()
    if not (math.isfinite(time_limit) and time_limit > 0):
        raise MilpError(f"time_limit = {time_limit!r}: must be a positive number of seconds")
    require_slot(instance)  # a MilpError with a hint, before the search runs
    sts_cost = None
    if initial_plan is None:
        sts_plan = rollout(instance, StsPolicy())
        sts_cost = evaluate(instance, sts_plan).total_cost
        # the search may take a quarter of the time
        initial_plan = _tuned(instance, search_evaluations, t0 + time_limit / 4)
    problems = check_plan(instance, initial_plan)
    if problems:
        raise MilpError(f"the initial plan is infeasible: {problems[0]}")
    slots = default_slots(instance, initial_plan)
    data = milp_data(instance, slots, check_size=False)
    own = {j: data.job_bound(j) for j in data.jobs}
    best_bound = max(data.separable_bound(), bound if bound is not None else -math.inf)

    plan, ev = initial_plan, evaluate(instance, initial_plan)
    start_cost = ev.total_cost
    if lagrangian:
        left = time_limit - (time.perf_counter() - t0)
        try:
            lb = lagrangian_bound(instance, slots, upper=start_cost, time_limit=max(0.1, left / 5))
            best_bound = max(best_bound, lb.value)
        except MilpError:  # too large for memory: the capacity relaxation stands
            pass
    history = [
        Step(0, "start", 0, time.perf_counter() - t0, ev.total_cost, best_bound, False, False)
    ]
    if on_step is not None:
        on_step(history[-1])
    chooser = Chooser(instance, seed)
    n_jobs = len(instance.jobs)
    size = max(MIN_SIZE, min(size, n_jobs))
    while True:
        left = time_limit - (time.perf_counter() - t0)
        if left < 0.5 or ev.total_cost <= best_bound * (1 + 1e-9):
            break
        if iterations is not None and len(history) > iterations:
            break
        per_job = {c.job: c for c in ev.jobs}
        excess = {j: per_job[j].total_cost - own[j] for j in own}
        late = {j: c.tardiness_cost for j, c in per_job.items()}
        hood = chooser.draw(plan, excess, late, size)
        new_plan, proved, seconds, sub_bound = _sub_solve(
            instance, plan, hood, slots, min(sub_time_limit, left), sub_gap, threads
        )
        improved = False
        if new_plan is not None:
            new_ev = evaluate(instance, new_plan)
            if new_ev.total_cost < ev.total_cost - 1e-9 * max(1.0, abs(ev.total_cost)):
                plan, ev, improved = new_plan, new_ev, True
        if len(hood.jobs) == n_jobs and len(hood.nodes) == len(instance.nodes):
            best_bound = max(best_bound, sub_bound)  # the whole MILP's own bound
        # grow after a quick proof, shrink after a sub-MILP stopped by its limit
        if proved and seconds < 0.25 * sub_time_limit:
            size = min(size + 2, max_size, n_jobs)
        elif not proved:
            size = max(MIN_SIZE, size - 2)
        history.append(
            Step(
                len(history),
                hood.kind,
                len(hood.jobs),
                time.perf_counter() - t0,
                ev.total_cost,
                best_bound,
                improved,
                proved,
            )
        )
        if on_step is not None:
            on_step(history[-1])
    return Improvement(
        instance=instance.name,
        plan=plan,
        evaluation=ev,
        sts_cost=sts_cost,
        start_cost=start_cost,
        bound=best_bound,
        seconds=time.perf_counter() - t0,
        history=tuple(history),
    )


def tune_sts(
    instance: Instance, *, evaluations: int, deadline: float | None = None
) -> SearchResult:
    """The STS search on ``instance`` (:func:`heuristic.sts.search.search`), each tuning
    costed by the evaluator on its worst-case rollout; ``deadline``, a
    ``time.perf_counter()`` value, also ends it."""

    def cost(tuning: StsTuning) -> float:
        return evaluate(instance, rollout(instance, StsPolicy(tuning=tuning))).total_cost

    return search(instance, cost, evaluations=evaluations, deadline=deadline)


def _tuned(instance: Instance, evaluations: int | None, deadline: float) -> Plan:
    """STS tuned by its search (stopped at ``deadline``): the worst-case rollout of the
    cheapest tuning found."""
    budget = evaluations if evaluations is not None else max(50, 4000 // len(instance.jobs))
    found = tune_sts(instance, evaluations=budget, deadline=deadline)
    return rollout(instance, StsPolicy(tuning=found.tuning))


def _sub_solve(
    instance: Instance,
    plan: Plan,
    hood: Neighbourhood,
    slots: int,
    time_limit: float,
    gap: float,
    threads: int | None,
) -> tuple[Plan | None, bool, float, float]:
    """The plan with the freed jobs re-planned by their sub-MILP (``None`` if it found
    nothing or could not be built), whether the sub-MILP was solved (within ``gap``),
    its seconds and its lower bound."""
    freed = set(hood.jobs)
    fixed = {j.id for j in instance.jobs} - freed
    nodes = set(hood.nodes)
    held, tenants = occupancy(instance, plan, fixed)
    held = {k: v for k, v in held.items() if k[0] in nodes}
    host = {k: v for k, v in host_occupancy(instance, plan, fixed).items() if k[0] in nodes}
    tenants = {k: v for k, v in tenants.items() if k[0] in nodes}
    sub = instance.replace(
        name=f"{instance.name}/lns",
        jobs=tuple(instance.pinned_job(j) for j in hood.jobs),
        nodes=tuple(n for n in instance.nodes if n.id in nodes),
    )
    start = Plan.of(s for s in plan if s.job in freed)
    try:
        res = solve(
            sub,
            initial_plan=start,
            slots=slots,
            time_limit=time_limit,
            mip_gap=gap,
            threads=threads,
            occupied=held,
            tenants=tenants,
            host_held=host,
        )
    except MilpError:
        return None, False, time_limit, -math.inf
    except PlanError:
        # with a relaunch overhead: the sub-MILP counts GPUs per node, so it may keep a
        # job on its node across a slot in which a fixed job takes the very GPUs it had;
        # the evaluator then sees a move, and the plan falls short (docs/milp.md)
        return None, False, time_limit, -math.inf
    bound = res.bound if res.bound is not None else -math.inf
    if res.solver_objective is None or res.plan is None:
        return None, res.optimal, res.seconds, bound
    merged = Plan.of([*(s for s in plan if s.job in fixed), *res.plan])
    if not _cheaper(instance, merged, plan, freed):
        # with relaunch overheads the sub-MILP may value its start above the evaluator
        # (a tenant staying on a GPU whose fixed co-tenants come or go changes label, a
        # relaunch to the model), and so return a plan cheaper to it, dearer in truth
        return None, res.optimal, res.seconds, bound
    return merged, res.optimal, res.seconds, bound


def _cheaper(instance: Instance, merged: Plan, plan: Plan, freed: set[str]) -> bool:
    """Whether the freed jobs cost no more in ``merged`` than in ``plan`` (costs are
    separable by job, so this is the whole plan's comparison)."""
    new = {c.job: c.total_cost for c in evaluate(instance, merged, check=False).jobs}
    old = {c.job: c.total_cost for c in evaluate(instance, plan, check=False).jobs}
    return sum(new[j] for j in freed) <= sum(old[j] for j in freed) + 1e-12
