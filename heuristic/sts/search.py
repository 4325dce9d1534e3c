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

from heuristic.sts.policy import StsTuning
from instances import Instance

Move = Callable[[StsTuning], StsTuning | None]


@dataclass(frozen=True)
class SearchResult:
    tuning: StsTuning
    cost: float  # the caller's cost of ``tuning``
    start_cost: float  # ... of plain STS (no adjustment)
    evaluations: int  # distinct tunings costed
    improvements: int  # moves kept


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
    if evaluations < 1:
        raise ValueError(f"evaluations must be at least 1, got {evaluations}")
    step = step if step is not None else (instance.slot or 0.25)
    rng = random.Random(seed)
    all_moves = moves(instance, step)
    seen: dict[tuple[object, ...], float] = {}

    def costed(t: StsTuning) -> float | None:
        """The cost of ``t``; ``None`` once the budget is spent (a tuning seen before is
        free)."""
        key = t.key()
        if key not in seen:
            late = deadline is not None and seen and time.perf_counter() > deadline
            if len(seen) >= evaluations or late:
                return None
            seen[key] = cost(t)
        return seen[key]

    start = StsTuning()
    start_cost = costed(start)
    assert start_cost is not None
    best, best_cost, kept = start, start_cost, 0

    def descend(t: StsTuning, c: float) -> tuple[StsTuning, float]:
        nonlocal kept
        improved = True
        while improved:
            improved = False
            for move in _shuffled(all_moves, rng):
                nxt = move(t)
                if nxt is None:
                    continue
                nc = costed(nxt)
                if nc is None:
                    return t, c
                if nc < c - 1e-12:
                    t, c, improved, kept = nxt, nc, True, kept + 1
        return t, c

    best, best_cost = descend(best, best_cost)
    for _ in range(evaluations):  # kicks; each costs at least one evaluation, or none if seen
        if len(seen) >= evaluations:
            break
        t = best
        for move in rng.sample(all_moves, k=min(3, len(all_moves))):  # a kick
            t = move(t) or t
        c = costed(t)
        if c is None:
            break
        t, c = descend(t, c)
        if c < best_cost - 1e-12:
            best, best_cost = t, c
    return SearchResult(best, best_cost, start_cost, len(seen), kept)


def _shuffled(items: list[Move], rng: random.Random) -> Iterator[Move]:
    order = list(items)
    rng.shuffle(order)
    return iter(order)
