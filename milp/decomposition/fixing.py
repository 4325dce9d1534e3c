"""Reduced-cost variable fixing (Pessoa, Uchoa, Poggi de Aragão and Rodrigues 2010,
section 3.3): arcs of a job's pricing space that no plan cheaper than the incumbent
can use are removed, for the rest of the solve.

An *arc* is a (choice, slot) of one job: the job runs that choice in that slot. At
prices ``lam >= 0``, every plan ``P`` costs at least ``priced(col_j) + sum_{k != j}
v_k + C(lam)`` for its column ``col_j`` of job ``j`` (the Lagrangian bound of
:mod:`milp.decomposition.colgen` with job ``j``'s priced optimum ``v_j`` replaced by
its own column; ``v_k`` may be replaced by any lower bound on it, as a round's
``proved`` values are). So if every schedule of job ``j`` through an arc costs, priced,
more than ``T_j = UB - sum_{k != j} proved_k - C(lam)``, no plan through it costs less
than the incumbent's ``UB``, and the arc can go: the optimum (never above ``UB``) and
every plan cheaper than the incumbent avoid it, so bounds computed without it still
bound the optimum. Removed arcs are an infinite price in the pricing, which is how
branching forbids a choice (:mod:`milp.decomposition.branching`).

The cost through an arc is bounded by the exact label-setting program run with
``T_j`` as its threshold (it keeps every partial schedule whose cost plus completion
bound is below ``T_j``, not only those below the best schedule found): for each arc,
the least cost plus completion bound of a label through it. A schedule through the arc
either passes a label dropped for reaching ``T_j`` (its cost is at least that label's
cost plus completion bound) or a label dropped by dominance, whose dominating label
makes the same choices in the same slots at no more cost, or reaches the arc as a
label kept. Choices priced alike with a representative share its arcs' bounds
(switching a schedule's alike choices to the representative costs no more). A job
whose program runs out of labels fixes nothing.
"""

from __future__ import annotations

import math
import time

import numpy as np

from milp.decomposition.completion import completion_bound
from milp.decomposition.master import label_terms
from milp.decomposition.oracle import Oracle
from milp.decomposition.pricing import Job, price_jobs
from milp.decomposition.slots import SlotModel

# an arc goes only when schedules through it cost more than the threshold by this
# share of the incumbent's cost (rounding never removes an arc of a plan at UB)
MARGIN = 1e-9


def representative_of(m: SlotModel, price: np.ndarray) -> np.ndarray:
    """Each choice's representative: the first choice of its configuration priced
    alike in every slot (:func:`milp.decomposition.pricing.representatives`)."""
    first: dict[tuple[int, bytes], int] = {}
    return np.array(
        [first.setdefault((int(m.k[c]), price[c].tobytes()), c) for c in range(price.shape[0])],
        dtype=np.int64,
    )


def fix_arcs(
    oracle: Oracle,
    lam: np.ndarray,
    proved: np.ndarray,
    rest: float,
    upper: float,
    budget: int | None,
    deadline: float | None = None,
) -> int:
    """Remove the arcs no plan cheaper than ``upper`` uses, from a round at prices
    ``lam`` whose jobs' priced optima are at least ``proved`` and whose Lagrangian
    bound is ``sum(proved) + rest``; how many arcs went (jobs left at ``deadline``
    fix nothing)."""
    if not (math.isfinite(upper) and np.isfinite(proved).all()):
        return 0
    total = math.fsum(proved) + rest
    margin = MARGIN * max(1.0, abs(upper))
    removed = 0
    for j, (m, steps) in enumerate(zip(oracle.models, oracle.steps, strict=True)):
        if deadline is not None and time.perf_counter() > deadline:
            break
        threshold = upper - (total - proved[j]) + margin
        price = oracle.prices(j, lam)
        bound = completion_bound(m, steps, price)
        job = Job(m, steps, price, bound, threshold, charge=oracle.space.window_charge(j))
        (got,) = price_jobs([job], budget=budget, arcs=True, stack=oracle.stacks[j])
        if not got.complete or got.arcs is None:
            continue  # out of labels: nothing proved about its arcs
        arcs = got.arcs[representative_of(m, price)]
        new = (arcs >= threshold) & ~oracle.fixed[j]
        oracle.fixed[j] |= new
        removed += int(new.sum())
    return removed


def refix(
    oracle: Oracle, lam: np.ndarray, upper: float, budget: int | None, deadline: float | None
) -> int:
    """Fixing again at prices ``lam`` (the root's best) once the incumbent has become
    cheaper (``upper``): every job priced exactly there first (within ``budget``
    labels; one that runs out counts by its completion bound); how many arcs went."""
    infinite = np.full(len(oracle.models), np.inf)
    got = oracle.price(lam, infinite, beam=None, keep=1, budget=budget, deadline=deadline)
    rest = label_terms(oracle.space, lam)
    return fix_arcs(oracle, lam, got.proved, rest, upper, budget, deadline)
