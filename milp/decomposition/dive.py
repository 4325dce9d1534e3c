"""A diving heuristic: plans by fixing columns and generating again.

The root's master solution is fractional where capacity binds, and the integer master
over the root's columns may find no plan better than the warm start (the columns that
mix well fractionally need not combine whole). So the dive fixes, each step, the
schedule of every job whose master value is whole, or if there is none, of the job
whose best column has the largest value, as branching decisions (its choice in each
slot of its window), and runs the column generation again for the others, who price
around the fixed ones. It ends with one schedule per job (a plan, kept if cheaper than
the incumbent), or when the master keeps an artificial column (the fixed schedules
leave no room), or at its deadline. Each step fixes at least one job, so it takes at
most one step per job.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np

from milp.decomposition.branching import Decision, choose
from milp.decomposition.colgen import CgOptions, generate
from milp.decomposition.columns import Column
from milp.decomposition.master import Master
from milp.decomposition.oracle import Oracle
from milp.decomposition.search import Incumbent
from milp.decomposition.space import Space

WHOLE = 1 - 1e-6  # a master value at least this is a job's whole schedule


def dive(
    space: Space,
    oracle: Oracle,
    pool: list[Column],
    incumbent: Incumbent,
    options: CgOptions,
    deadline: float | None,
) -> int:
    """Dive from the root (see the module's docstring); ``pool`` grows and
    ``incumbent`` improves in place. Returns the steps taken."""
    decisions: tuple[Decision, ...] = ()
    fixed: dict[int, Column] = {}
    options = replace(options, rounds=10**9)
    steps = 0
    big = 10.0 * max(1.0, abs(incumbent.cost)) if math.isfinite(incumbent.cost) else 1e9
    while deadline is None or time.perf_counter() < deadline:
        steps += 1
        master = Master(space, big=big)
        master.add([c for c in pool if fixed.get(c.job, c) == c and oracle.allows(c)])
        generate(master, oracle, options, -math.inf, deadline, decisions)
        seen = {(c.job, c.start, c.choices) for c in pool}
        pool += [c for c in master.columns if (c.job, c.start, c.choices) not in seen]
        if master.artificial:
            break  # the fixed schedules leave some job no room
        x = master.values()
        if choose(space, master.columns, x) is None:
            chosen = [c for c, v in zip(master.columns, x, strict=True) if v > 0.5]
            cost = math.fsum(c.cost for c in chosen)
            if cost < incumbent.cost:
                incumbent.columns, incumbent.cost = chosen, cost
            break
        for col in _to_fix(master.columns, x, fixed):
            fixed[col.job] = col
            decisions += _fix(space, col)
    return steps


def _to_fix(columns: list[Column], x: np.ndarray, fixed: dict[int, Column]) -> list[Column]:
    """The whole schedules of jobs not yet fixed; if there is none, the largest
    fractional one (the cheaper on ties)."""
    free = [(v, -c.cost, i) for i, (c, v) in enumerate(zip(columns, x, strict=True))]
    free = [p for p in free if columns[p[2]].job not in fixed and p[0] > 1e-9]
    whole = [columns[i] for v, _, i in free if v >= WHOLE]
    return whole or [columns[max(free)[2]]]


def _fix(space: Space, col: Column) -> tuple[Decision, ...]:
    """Decisions that leave the job only this column: its choice in every slot it
    runs, and no choice in the other slots of its window."""
    js = space.jobs[col.job]
    every = frozenset(range(len(js.choices)))
    out = []
    for t in range(js.jd.first_slot, js.jd.last_slot + 1):
        run = col.at(t)
        if run:
            out.append(Decision(col.job, t, frozenset(run), True))
        else:
            out.append(Decision(col.job, t, every, False))
    return tuple(out)
