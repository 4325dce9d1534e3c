"""Branch-and-price: best-first search over branching decisions
(:mod:`milp.decomposition.branching`), each node's bound by column generation, the
cheapest plan found as the incumbent.

A node's master holds the columns of the pool that meet its decisions, and an
artificial column per job so that it is feasible until pricing finds real ones (a node
whose decisions no plan meets keeps an artificial column, whose cost, ten times the
incumbent's, prunes it). Its bound is the column generation's Lagrangian bound under
its decisions, never below its parent's. A node whose master solution is integral is a
plan: assembled, checked and costed by the evaluator, it becomes the incumbent if
cheaper. The search stops when no open node's bound is below the incumbent (the plan
is then optimal to within ``gap``), or at the deadline; the bound it returns is the
least bound of the open nodes.

Best-first search seldom reaches a leaf where many nodes share one bound (alike shared
labels did that until the second child forbade a label's whole orbit,
:func:`milp.decomposition.branching.other_side`), so plans come mostly from the
*pool*: whenever the columns generated have grown by a quarter since it last ran, the
integer master over all of them
(:func:`milp.decomposition.plans.integer_master`, the incumbent as MIP start, a tenth
of the time left) looks for a cheaper plan (a restricted-master heuristic). On
``suite-share-2n6j-s1`` with overheads, 139 nodes left the incumbent at the STS plan's
0.09684 against a bound of 0.08860; the pool's integer program then found the optimum,
0.088655, in 0.35 s.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from dataclasses import dataclass, field, replace

from heuristic.core.result import Termination
from milp.decomposition.branching import Decision, choose, other_side
from milp.decomposition.colgen import CgOptions, generate
from milp.decomposition.columns import Column
from milp.decomposition.master import Master
from milp.decomposition.oracle import Oracle
from milp.decomposition.plans import integer_master
from milp.decomposition.space import Space


@dataclass(order=True)
class _Node:
    """An open node: least bound first, then the deepest (a dive finds plans sooner
    among nodes of equal bound), then the oldest."""

    bound: float
    depth: int
    order: int
    decisions: tuple[Decision, ...] = field(compare=False)


@dataclass
class Incumbent:
    """The cheapest plan found, as one column per job, and its cost (by the columns,
    which is the evaluator's cost of their plan)."""

    columns: list[Column] | None
    cost: float


@dataclass(frozen=True)
class Outcome:
    """What the search ends with: the least open bound (the incumbent's cost when none
    is open), the nodes solved, and why it stopped."""

    bound: float
    nodes: int
    termination: Termination


def branch_and_price(
    space: Space,
    oracle: Oracle,
    pool: list[Column],
    incumbent: Incumbent,
    root_bound: float,
    options: CgOptions,
    deadline: float | None,
    gap: float = 1e-6,
) -> Outcome:
    """Search below the root (whose bound is ``root_bound``); ``pool`` (every column
    generated, grown in place) and ``incumbent`` (updated in place)."""
    counter = itertools.count()
    heap = [_Node(root_bound, 0, next(counter), ())]
    stuck: list[float] = []  # bounds of nodes whose generation stopped short
    nodes = 0
    options = replace(options, rounds=UNLIMITED)  # a node's bound needs its generation done
    pooled = 0  # the pool's size when its integer master last ran
    while heap:
        if len(pool) >= POOL_GROWTH * pooled + POOL_NEW:
            pooled = len(pool)
            from_pool(space, pool, incumbent, deadline)
        if heap[0].bound >= _cutoff(incumbent.cost, gap):
            heap.clear()
            break
        if deadline is not None and time.perf_counter() > deadline:
            break
        node = heapq.heappop(heap)
        nodes += 1
        children = _solve_node(space, oracle, pool, incumbent, node, options, deadline, gap)
        if children is None:
            stuck.append(node.bound)
            continue
        for bound, decisions in children:
            heapq.heappush(heap, _Node(bound, -len(decisions), next(counter), decisions))
    open_bounds = [n.bound for n in heap] + [b for b in stuck if b < _cutoff(incumbent.cost, gap)]
    if not open_bounds:
        return Outcome(incumbent.cost, nodes, Termination.OPTIMAL)
    timed_out = deadline is not None and time.perf_counter() > deadline
    termination = Termination.TIME_LIMIT if timed_out else Termination.OTHER_LIMIT
    return Outcome(min(min(open_bounds), incumbent.cost), nodes, termination)


# master solves a node may take: as many as its generation needs
UNLIMITED = 10**9
# the pool's integer master runs again once the pool has grown by this factor and by
# this many columns, with this share of the time left (seconds when there is no limit)
POOL_GROWTH = 1.25
POOL_NEW = 10
POOL_SHARE = 0.1
POOL_SECONDS = 10.0


def from_pool(
    space: Space, pool: list[Column], incumbent: Incumbent, deadline: float | None
) -> None:
    """The integer master over every column of ``pool``; ``incumbent`` becomes its plan
    if that is cheaper (see the module's docstring)."""
    left = POOL_SECONDS if deadline is None else POOL_SHARE * (deadline - time.perf_counter())
    if left <= 0:
        return
    master = Master(space, big=1.0, artificial=False)
    master.add(pool)
    chosen, _, _ = integer_master(master, incumbent.columns, left)
    if chosen is not None:
        cost = math.fsum(c.cost for c in chosen)
        if cost < incumbent.cost:
            incumbent.columns, incumbent.cost = chosen, cost


def _cutoff(cost: float, gap: float) -> float:
    """Nodes bounded at or above this cannot hold a plan cheaper by more than ``gap``."""
    return cost - gap * abs(cost)


def _solve_node(
    space: Space,
    oracle: Oracle,
    pool: list[Column],
    incumbent: Incumbent,
    node: _Node,
    options: CgOptions,
    deadline: float | None,
    gap: float,
) -> list[tuple[float, tuple[Decision, ...]]] | None:
    """Column generation at ``node``; its children (bound, decisions), none if it is
    pruned or integral. Out of time, it goes back open; stopped short otherwise (the
    exact pricer's label budget spent), ``None``: it stays open at its bound, not
    searched further."""
    big = 10.0 * max(1.0, abs(incumbent.cost)) if math.isfinite(incumbent.cost) else 1e9
    master = Master(space, big=big)
    known = len(pool)
    master.add([c for c in pool if oracle.allows(c) and all(d.allows(c) for d in node.decisions)])
    gen = generate(master, oracle, options, node.bound, deadline, node.decisions)
    seen = {(c.job, c.start, c.choices) for c in pool[:known]}
    pool += [c for c in master.columns if (c.job, c.start, c.choices) not in seen]
    bound = max(node.bound, gen.bound)
    if bound >= _cutoff(incumbent.cost, gap):
        return []
    if gen.termination is Termination.TIME_LIMIT:
        return [(bound, node.decisions)]  # still open, at its bound
    if gen.termination is not Termination.OPTIMAL:
        return None
    x = master.values()
    decision = choose(space, master.columns, x)
    if decision is None:
        if not master.artificial:  # one schedule per job: a plan
            chosen = [c for c, v in zip(master.columns, x, strict=True) if v > 0.5]
            cost = math.fsum(c.cost for c in chosen)
            if cost < incumbent.cost:
                incumbent.columns, incumbent.cost = chosen, cost
        return []  # (with an artificial column left, no plan meets the decisions)
    off = other_side(space, decision, node.decisions)
    return [(bound, (*node.decisions, decision)), (bound, (*node.decisions, off))]
