"""Improvement at scale: an anytime large-neighbourhood search over the time-indexed MILP.

It starts from STS tuned by its search (or from a given slot-aligned plan). Each step
frees a few jobs (:mod:`milp.neighbourhood`), keeps every other job's plan, and solves the
MILP of the freed jobs alone on the GPUs the others leave free, warm-started by their
current plan and cut off at its cost. A cheaper answer replaces the incumbent. Costs are
separable by job (docs/model.md, "Plans and their cost"), so the whole plan's cost falls
by exactly what the sub-MILP saved; the merged plan is still checked and costed by the
evaluator, which is the only cost reported.

Neighbourhood sizes adapt: a sub-MILP proved optimal quickly grows the next one, one
stopped by its time limit shrinks it. This follows the usual MIP-based LNS recipe
(Shaw 1998; Pisinger and Ropke 2010: adaptive choice of destroy methods and sizes).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from heuristic.core.result import (
    SolutionStatus,
    Termination,
    certified_gap,
    relative_gap,
    summary_text,
)
from heuristic.sts.policy import StsPolicy, StsTuning
from heuristic.sts.search import SearchResult, search
from instances import Instance, Plan, PlanError
from instances.fields import is_number
from milp.data import milp_data
from milp.highs import above_cost
from milp.lagrange import lagrangian_bound
from milp.neighbourhood import Chooser, Neighbourhood, outside
from milp.requirements import MilpError, require_count, require_gap, require_slot
from milp.solve import horizon, late_note, solve_beside
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
    def certified_gap(self) -> float:
        """``(incumbent - bound) / bound`` (:func:`heuristic.core.result.certified_gap`)."""
        return certified_gap(self.incumbent, self.bound)


@dataclass(frozen=True)
class Improvement:
    """What :func:`improve` returns, in the one result vocabulary
    (:mod:`heuristic.core.result`): the best plan, its evaluation and cost
    (``objective``), the lower bound used, why the search stopped (its ``status`` is
    optimal once the plan meets the bound), the cost of plain and tuned STS, and the
    search's history."""

    instance: str
    plan: Plan
    evaluation: Evaluation
    sts_cost: float | None  # plain STS's worst-case rollout (None when a plan was given)
    start_cost: float  # the plan the search started from (tuned STS, or the given one)
    bound: float
    termination: Termination
    runtime: float  # seconds, the whole call
    history: tuple[Step, ...]
    note: str = ""  # why no bound is claimed (-inf), where the horizon is short

    @property
    def objective(self) -> float:
        return self.evaluation.total_cost

    @property
    def gap(self) -> float | None:
        return relative_gap(self.objective, self.bound)

    @property
    def status(self) -> SolutionStatus:
        proved = self.termination is Termination.OPTIMAL
        return SolutionStatus.OPTIMAL if proved else SolutionStatus.FEASIBLE

    @property
    def improvements(self) -> int:
        return sum(s.improved for s in self.history)

    def summary(self) -> str:
        """The vocabulary's figures, the certified gap, the start's cost and plain
        STS's."""
        title = (
            f"neighbourhood search on {self.instance!r}: {len(self.history) - 1} "
            f"neighbourhoods, {self.improvements} improved the plan"
        )
        cert = certified_gap(self.objective, self.bound)
        details = [("certified gap", f"{100 * cert:.2f}% = (objective - bound) / bound")]
        start = "start (tuned STS)" if self.sts_cost is not None else "start (given plan)"
        details.append((start, f"{self.start_cost:.6g}"))
        if self.sts_cost is not None:
            details.append(("plain STS", f"{self.sts_cost:.6g}"))
        if self.note:
            details.append(("note", self.note))
        return summary_text(title, self, details)


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
    _check_arguments(
        time_limit, bound, search_evaluations, seed, size, max_size, sub_time_limit, sub_gap,
        threads, iterations,
    )  # fmt: skip
    require_slot(instance)  # a MilpError with a hint, before the search runs
    sts_cost = None
    if initial_plan is None:
        sts_cost = evaluate(instance, rollout(instance, StsPolicy())).total_cost
        # the search may take a quarter of the time
        initial_plan = _tuned(instance, search_evaluations, t0 + time_limit / 4)
    problems = check_plan(instance, initial_plan)
    if problems:
        raise MilpError(f"the initial plan is infeasible: {problems[0]}")
    lns = _Search(instance, initial_plan, t0, time_limit, on_step)
    _check_bound(bound, lns.ev.total_cost)
    lns.raise_bound(bound, lagrangian)
    subs = _SubMilps(sub_time_limit, sub_gap, threads)
    sizes = _Sizes(size, max_size, sub_time_limit, len(instance.jobs))
    termination = lns.run(sizes, subs, seed, iterations)
    return Improvement(
        instance=instance.name,
        plan=lns.plan,
        evaluation=lns.ev,
        sts_cost=sts_cost,
        start_cost=lns.history[0].incumbent,
        bound=lns.bound,
        termination=termination,
        runtime=time.perf_counter() - t0,
        history=tuple(lns.history),
        note=late_note(lns.short),
    )


@dataclass(frozen=True)
class _SubMilps:
    """Each sub-MILP's time limit (seconds), relative gap and HiGHS threads."""

    time_limit: float
    gap: float
    threads: int | None


class _Sizes:
    """How many jobs the next neighbourhood frees: grown after a quick proof, shrunk
    after a sub-MILP stopped by its limit (between :data:`MIN_SIZE` and ``max_size``,
    and at most every job)."""

    def __init__(self, size: int, max_size: int, sub_time_limit: float, jobs: int) -> None:
        self.size = max(MIN_SIZE, min(size, jobs))
        self.max_size, self.sub_time_limit, self.jobs = max_size, sub_time_limit, jobs

    def adapt(self, proved: bool, seconds: float) -> None:
        if proved and seconds < 0.25 * self.sub_time_limit:
            self.size = min(self.size + 2, self.max_size, self.jobs)
        elif not proved:
            self.size = max(MIN_SIZE, self.size - 2)


def _check_arguments(
    time_limit: object,
    bound: object,
    search_evaluations: object,
    seed: object,
    size: object,
    max_size: object,
    sub_time_limit: object,
    sub_gap: object,
    threads: object,
    iterations: object,
) -> None:
    """:func:`improve`'s arguments, each named where it is not what the call can use (a
    string was a TypeError, a bad seed numpy's error, and a NaN gap, zero threads or a
    zero sub-MILP limit were taken and changed the search)."""
    if not (is_number(time_limit) and math.isfinite(time_limit) and time_limit > 0):  # type: ignore[arg-type,operator]
        raise MilpError(f"time_limit = {time_limit!r}: must be a positive number of seconds")
    # infinity: each sub-MILP limited by the time left alone
    if not (is_number(sub_time_limit) and sub_time_limit > 0):  # type: ignore[operator]
        raise MilpError(
            f"sub_time_limit = {sub_time_limit!r}: must be a positive number of seconds"
        )
    if bound is not None and not (is_number(bound) and not math.isnan(bound)):  # type: ignore[arg-type]
        raise MilpError(f"bound = {bound!r}: must be a number (a known lower bound)")
    require_gap("sub_gap", sub_gap)
    counts = (
        ("seed", seed, 0, False),
        ("size", size, 1, False),
        ("max_size", max_size, 1, False),
        ("search_evaluations", search_evaluations, 1, True),
        ("threads", threads, 1, True),
        ("iterations", iterations, 1, True),
    )
    for name, value, least, optional in counts:
        require_count(name, value, least, optional=optional)


def _check_bound(bound: float | None, start: float) -> None:
    """A caller's lower bound is a number no plan costs less than: at most the start's
    cost (taken as proof, a bound above it ended the search at once, "optimal"), within
    a solver's tolerance (a proved optimum's bound may pass its cost in the 9th digit)."""
    if bound is not None and above_cost(bound, start):
        raise MilpError(
            f"bound = {bound:g} is above the initial plan's cost {start:g}: no lower bound "
            "is (the plan is feasible)"
        )


class _Search:
    """The incumbent, the best bound and the history of one :func:`improve` call."""

    def __init__(
        self,
        instance: Instance,
        plan: Plan,
        t0: float,
        time_limit: float,
        on_step: Callable[[Step], object] | None,
    ) -> None:
        self.instance, self.t0, self.time_limit, self.on_step = instance, t0, time_limit, on_step
        reach = horizon(instance, plan)
        self.slots = reach.slots
        data = milp_data(instance, self.slots, check_size=False)
        self.own = {j: data.job_bound(j) for j in data.jobs}
        # where the horizon cannot reach every plan as good as the start (a job of no
        # tardiness weight, say), a bound over it bounds nothing: none is claimed, and
        # the search never calls its plan optimal (it said OPTIMAL 1.08 where 0.90
        # exists, a review of 2026-12-06)
        self.short = reach.short
        self.bound = -math.inf if reach.short else data.separable_bound()
        self.plan, self.ev = plan, evaluate(instance, plan)
        self.history: list[Step] = []

    def left(self) -> float:
        return self.time_limit - (time.perf_counter() - self.t0)

    def raise_bound(self, bound: float | None, lagrangian: bool) -> None:
        """The best of the capacity relaxation, the caller's ``bound`` and (with
        ``lagrangian``) the Lagrangian bound, given at most a fifth of the time left;
        none where the horizon is short."""
        if self.short:
            return
        self.bound = max(self.bound, bound if bound is not None else -math.inf)
        if lagrangian:
            limit = max(0.1, self.left() / 5)
            try:
                lb = lagrangian_bound(
                    self.instance, self.slots, upper=self.ev.total_cost, time_limit=limit
                )
                self.bound = max(self.bound, lb.bound)
            except MilpError:  # too large for memory: the capacity relaxation stands
                pass

    def record(self, kind: str, jobs: int, improved: bool, proved: bool) -> None:
        seconds = time.perf_counter() - self.t0
        step = Step(
            len(self.history), kind, jobs, seconds, self.ev.total_cost, self.bound, improved, proved
        )
        self.history.append(step)
        if self.on_step is not None:
            self.on_step(step)

    def run(self, sizes: _Sizes, subs: _SubMilps, seed: int, iterations: int | None) -> Termination:
        """Neighbourhoods until the plan meets the bound (optimal), the time is up
        (time limit) or ``iterations`` were tried (other limit)."""
        self.record("start", 0, False, False)
        chooser = Chooser(self.instance, seed)
        while True:
            left = self.left()
            if self.ev.total_cost <= self.bound * (1 + 1e-9):
                return Termination.OPTIMAL
            if left < 0.5:
                return Termination.TIME_LIMIT
            if iterations is not None and len(self.history) > iterations:
                return Termination.OTHER_LIMIT
            per_job = {c.job: c for c in self.ev.jobs}
            excess = {j: per_job[j].total_cost - self.own[j] for j in self.own}
            late = {j: c.tardiness_cost for j, c in per_job.items()}
            hood = chooser.draw(self.plan, excess, late, sizes.size)
            limit = replace(subs, time_limit=min(subs.time_limit, left))
            improved, proved, seconds = self.try_neighbourhood(hood, limit)
            sizes.adapt(proved, seconds)
            self.record(hood.kind, len(hood.jobs), improved, proved)

    def try_neighbourhood(self, hood: Neighbourhood, subs: _SubMilps) -> tuple[bool, bool, float]:
        """Re-plan the freed jobs; keep the plan if cheaper. Whether it improved, whether
        the sub-MILP was proved, its seconds."""
        new_plan, proved, seconds, sub_bound = _sub_solve(
            self.instance, self.plan, hood, self.slots, subs.time_limit, subs.gap, subs.threads
        )
        improved = False
        if new_plan is not None:
            new_ev = evaluate(self.instance, new_plan)
            cost = self.ev.total_cost
            if new_ev.total_cost < cost - 1e-9 * max(1.0, abs(cost)):
                self.plan, self.ev, improved = new_plan, new_ev, True
        every_node = len(hood.nodes) == len(self.instance.nodes)
        if len(hood.jobs) == len(self.instance.jobs) and every_node and not self.short:
            self.bound = max(self.bound, sub_bound)  # the whole MILP's own bound
        return improved, proved, seconds


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
    held = outside(instance, plan, fixed, nodes)
    sub = instance.replace(
        name=f"{instance.name}/lns",
        jobs=tuple(instance.pinned_job(j) for j in hood.jobs),
        nodes=tuple(n for n in instance.nodes if n.id in nodes),
    )
    start = Plan.of(s for s in plan if s.job in freed)
    try:
        res = solve_beside(
            sub,
            held,
            initial_plan=start,
            slots=slots,
            time_limit=time_limit,
            mip_gap=gap,
            threads=threads,
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
        return None, res.optimal, res.runtime, bound
    merged = Plan.of([*(s for s in plan if s.job in fixed), *res.plan])
    if not _cheaper(instance, merged, plan, freed):
        # with relaunch overheads the sub-MILP may value its start above the evaluator
        # (a tenant staying on a GPU whose fixed co-tenants come or go changes label, a
        # relaunch to the model), and so return a plan cheaper to it, dearer in truth
        return None, res.optimal, res.runtime, bound
    return merged, res.optimal, res.runtime, bound


def _cheaper(instance: Instance, merged: Plan, plan: Plan, freed: set[str]) -> bool:
    """Whether the freed jobs cost no more in ``merged`` than in ``plan`` (costs are
    separable by job, so this is the whole plan's comparison)."""
    new = {c.job: c.total_cost for c in evaluate(instance, merged, check=False).jobs}
    old = {c.job: c.total_cost for c in evaluate(instance, plan, check=False).jobs}
    return sum(new[j] for j in freed) <= sum(old[j] for j in freed) + 1e-12
