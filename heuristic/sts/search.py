"""A local search over STS's per-job adjustments (:class:`heuristic.sts.policy.StsTuning`) on a
static instance: STS's decisions, with earliest starts, GPU types, urgency shifts and
earlier planned finishes chosen to lower the cost of the plan they produce.

STS decides one event at a time. On a loaded cluster that loses in two ways
(docs/benchmarks.md): a job with slack starts at once on a dear GPU type rather than
wait for an efficient one, and it takes GPUs that a more urgent job needs for its later,
faster steps. Each move of the search corrects one such decision, and keeps it if the
plan gets cheaper.

The cost of a tuning is given by the caller (the package judging plans is
``validation``, which imports this one): typically the evaluator's cost of the
worst-case rollout of ``StsPolicy(tuning=...)``. The search is first-improvement hill
climbing over the moves below, restarted from random kicks of the best tuning (iterated
local search) until the evaluation budget is spent. Same seed, same result.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from heuristic.core.result import SolutionStatus, Termination, relative_gap, summary_text
from heuristic.sts.policy import StsTuning
from instances import Instance
from instances.fields import whole_number

Move = Callable[[StsTuning], StsTuning | None]


@dataclass(frozen=True)
class SearchResult:
    """The cheapest tuning found, in the one result vocabulary
    (:mod:`heuristic.core.result`). A heuristic proves no bound: ``bound`` and ``gap``
    are ``None``; ``status`` is feasible; ``termination`` says whether the deadline
    (time limit) or the evaluation budget (other limit) ended it."""

    instance: str
    tuning: StsTuning
    objective: float  # the caller's cost of ``tuning``
    start_cost: float  # ... of plain STS (no adjustment)
    evaluations: int  # distinct tunings costed
    improvements: int  # moves kept
    termination: Termination
    runtime: float  # seconds

    @property
    def bound(self) -> float | None:
        return None  # a heuristic search proves no bound

    @property
    def status(self) -> SolutionStatus:
        return SolutionStatus.FEASIBLE  # every tuning's rollout is a plan

    @property
    def gap(self) -> float | None:
        return relative_gap(self.objective, self.bound)

    def summary(self) -> str:
        title = f"STS search on {self.instance!r}: {self.evaluations} tunings costed"
        details = [
            ("plain STS", f"{self.start_cost:.6g}"),
            ("moves kept", str(self.improvements)),
        ]
        return summary_text(title, self, details)


def _shift(knob: str, job: str, delta: float, *, floor: float | None = 0.0) -> Move:
    """Add ``delta`` to the job's value of the per-job knob ``knob`` (``hold``,
    ``earlier`` or ``urgency``; absent counts as 0); ``None`` below ``floor``."""

    def move(t: StsTuning) -> StsTuning | None:
        values: Mapping[str, float] = getattr(t, knob)
        v = values.get(job, 0.0) + delta
        if floor is not None:
            if v < floor - 1e-9:
                return None
            v = max(v, floor)
        changes: dict[str, Any] = {knob: {**values, job: v}}  # knob names a float mapping
        return replace(t, **changes)

    return move


def _toggle_type(job: str, gpu_type: str, hosting: frozenset[str]) -> Move:
    def move(t: StsTuning) -> StsTuning | None:
        allowed = t.types.get(job, hosting) ^ {gpu_type}
        if not allowed:
            return None  # a job keeps at least one type that can host it
        types = {**t.types, job: frozenset(allowed)}
        if allowed == hosting:
            del types[job]
        return replace(t, types=types)

    return move


def moves(instance: Instance, step: float) -> list[Move]:
    """Every move: per job, start one ``step`` later or earlier; forbid or allow each
    GPU type that can host it; become more or less urgent by one or four ``step``; plan
    to finish one or four ``step`` earlier or later (never after the due date)."""
    out: list[Move] = []
    for job in instance.jobs:
        hosting = frozenset(c.gpu_type for c in instance.allowed_configs(job))
        out += [_shift("hold", job.id, step), _shift("hold", job.id, -step)]
        if len(hosting) > 1:
            out += [_toggle_type(job.id, g, hosting) for g in sorted(hosting)]
        out += [_shift("urgency", job.id, d * step, floor=None) for d in (-4, -1, 1, 4)]
        out += [_shift("earlier", job.id, d * step) for d in (-4, -1, 1, 4)]
    return out


def search(
    instance: Instance,
    cost: Callable[[StsTuning], float],
    *,
    evaluations: int = 2000,
    seed: int = 0,
    step: float | None = None,
    deadline: float | None = None,
) -> SearchResult:
    """The cheapest tuning found within ``evaluations`` calls of ``cost``.

    ``step`` (hours) is the unit of the hold, urgency and earlier moves: the instance's
    slot length, else a quarter hour. ``deadline`` (a ``time.perf_counter()`` value)
    also ends the search, after plain STS is costed; the result then depends on the
    machine's speed."""
    whole_number("evaluations", evaluations, 1)  # 1.5 or "3" failed inside
    t0 = time.perf_counter()
    step = step if step is not None else (instance.slot or 0.25)
    rng = random.Random(seed)
    all_moves = moves(instance, step)
    budget = _Budget(cost, evaluations, deadline)
    start_cost = budget.cost(StsTuning())
    assert start_cost is not None  # the first tuning is always costed
    best, best_cost = _descend(StsTuning(), start_cost, all_moves, rng, budget)
    for _ in range(evaluations):  # kicks; each costs at least one evaluation, or none if seen
        if budget.spent():
            break
        t = best
        for move in rng.sample(all_moves, k=min(3, len(all_moves))):  # a kick
            t = move(t) or t
        c = budget.cost(t)
        if c is None:
            break
        t, c = _descend(t, c, all_moves, rng, budget)
        if c < best_cost - 1e-12:
            best, best_cost = t, c
    return SearchResult(
        instance=instance.name,
        tuning=best,
        objective=best_cost,
        start_cost=start_cost,
        evaluations=len(budget.seen),
        improvements=budget.kept,
        termination=Termination.TIME_LIMIT if budget.late else Termination.OTHER_LIMIT,
        runtime=time.perf_counter() - t0,
    )


class _Budget:
    """The costs of the tunings seen, within ``evaluations`` distinct ones and the
    ``deadline``; counts the moves kept."""

    def __init__(
        self, cost: Callable[[StsTuning], float], evaluations: int, deadline: float | None
    ) -> None:
        self.of, self.evaluations, self.deadline = cost, evaluations, deadline
        self.seen: dict[tuple[object, ...], float] = {}
        self.late = False  # the deadline ended the search
        self.kept = 0

    def spent(self) -> bool:
        return len(self.seen) >= self.evaluations

    def cost(self, t: StsTuning) -> float | None:
        """The cost of ``t``; ``None`` once the budget is spent (a tuning seen before is
        free)."""
        key = t.key()
        if key not in self.seen:
            late = self.deadline is not None and self.seen and time.perf_counter() > self.deadline
            self.late = self.late or bool(late)
            if self.spent() or late:
                return None
            self.seen[key] = self.of(t)
        return self.seen[key]


def _descend(
    t: StsTuning, c: float, all_moves: list[Move], rng: random.Random, budget: _Budget
) -> tuple[StsTuning, float]:
    """First-improvement hill climbing from ``t`` (of cost ``c``), the moves in a random
    order each pass, until no move improves or the budget is spent."""
    improved = True
    while improved:
        improved = False
        for move in _shuffled(all_moves, rng):
            nxt = move(t)
            if nxt is None:
                continue
            nc = budget.cost(nxt)
            if nc is None:
                return t, c
            if nc < c - 1e-12:
                t, c, improved = nxt, nc, True
                budget.kept += 1
    return t, c


def _shuffled(items: list[Move], rng: random.Random) -> Iterator[Move]:
    order = list(items)
    rng.shuffle(order)
    return iter(order)
