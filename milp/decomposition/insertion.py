"""Plans built from nothing: jobs inserted one by one in the order the root LP
completes them.

Where capacity binds, the root's master LP keeps most jobs on time by sharing the
contended nodes in fractions, and its columns seldom combine whole (the integer master
over them finds little below the warm start). What the LP does say is *when* it
finishes each job: ordering jobs by their LP completion times and scheduling them in
that order is the classical way from a time-indexed relaxation to a schedule (Hall,
Schulz, Shmoys and Wein, Mathematics of Operations Research 1997: list scheduling by
LP completion times, with constant-factor guarantees for weighted completion time).
Here each job in turn takes its best response beside the jobs already placed
(:func:`milp.decomposition.reinsert.cheapest`: its cheapest schedule at its true
cost, energy and tardiness, on the arcs where it fits; exact within the label budget
and the deadline, else the best found), so it is the list-scheduling
rule with the job's own configuration and timing chosen by the pricing program.

Measured on the overloaded 20-job real-data instance of ``scale_gaps`` (root LP 17.17
after 300 s): the plan costs 22.01, built in 6-10 s (20.84 with two jobs that complete
in the same LP slot the other way round), where the integer master gave nothing below
the improved STS plan (32.34) and re-insertion from that plan reached 23.97 in 182 s
(docs/benchmarks.md). Tried and not kept: a search over swaps of the order (21.72 in 15
builds), the job dearest above its LP cost moved forward (squeaky wheel: 31.9 at the
next build), and each job priced with the root's duals on what it holds (22.06-24.25).
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Sequence

from milp.decomposition.columns import Column
from milp.decomposition.oracle import Oracle
from milp.decomposition.reinsert import EJECT_BUDGET, Room, cheapest
from milp.decomposition.search import Incumbent


def lp_order(oracle: Oracle, weighted: Sequence[tuple[Column, float]]) -> list[int]:
    """The jobs by their completion slot in the LP (the mean of their columns' last
    slots, weighted by the columns' values), then by due date and index; a job with
    no column in ``weighted`` (the LP kept its artificial column) comes last."""
    mass: dict[int, float] = defaultdict(float)
    ends: dict[int, float] = defaultdict(float)
    for col, x in weighted:
        mass[col.job] += x
        ends[col.job] += x * col.end
    jobs = oracle.space.jobs

    def key(j: int) -> tuple[float, float, int]:
        end = ends[j] / mass[j] if mass.get(j, 0.0) > 0 else math.inf
        return (end, jobs[j].jd.job.due, j)

    return sorted(range(len(jobs)), key=key)


def insert(
    oracle: Oracle,
    order: Sequence[int],
    deadline: float | None,
    budget: int = EJECT_BUDGET,
) -> list[Column] | None:
    """A plan (one column per job, by job) with the jobs placed one by one in
    ``order``, each by its best response beside those placed before; ``None`` where
    some job finds no schedule (the horizon is full for it, or the deadline passed
    before its pricing found one)."""
    room = Room(oracle.space, [])
    placed: list[Column] = []
    for j in order:
        if deadline is not None and time.perf_counter() > deadline:
            return None
        col = cheapest(oracle, room, j, math.inf, budget, deadline=deadline)
        if col is None:
            return None
        room.add(col)
        placed.append(col)
    return sorted(placed, key=lambda c: c.job)


def improve_by_insertion(
    oracle: Oracle,
    weighted: Sequence[tuple[Column, float]],
    incumbent: Incumbent,
    deadline: float | None,
) -> bool:
    """Replace ``incumbent`` (in place) by the plan :func:`insert` builds in the LP's
    order of ``weighted`` (column, LP value) where that is cheaper; whether it was."""
    built = insert(oracle, lp_order(oracle, weighted), deadline)
    if built is None:
        return False
    cost = math.fsum(c.cost for c in built)
    if cost >= incumbent.cost * (1 - 1e-9):
        return False
    incumbent.columns, incumbent.cost = built, cost
    return True
