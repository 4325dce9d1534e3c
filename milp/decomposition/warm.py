"""Prices for the root's column generation to start from: the Lagrangian bound's
(:mod:`milp.lagrange`).

That bound prices each GPU type's GPUs per slot and keeps each job's floor (its least
cost alone) in its master, on a relaxed progress grid: it converges in seconds where the
root's exact pricing takes minutes (the overloaded 20-job real-data window: 14.92 in
about 10 s against the root's 14.82 after 420 s, docs/benchmarks.md). Its prices, put
on this master's rows, are a stability centre for the root: a GPU row of a node pays
its type's price, a shared label's tenants row a ``1 / K_max`` share of it (so a shared
GPU's ``y`` costs nothing net, as a shared configuration pays ``1 / K_max`` of a GPU in
the Lagrangian bound), every other row nothing. Any prices give the root a valid bound
from its own exact pricing; at these, each job's exact priced optimum is at least its
Lagrangian problem's for any weight on its own cost (its real cost is at least its
path's on the grid and its floor), so the root's first bound is at least the
Lagrangian bound's at the same prices, where the pricing completes.
"""

from __future__ import annotations

import numpy as np

from milp.decomposition.space import GPU, TENANTS, Space
from milp.lagrange import lagrangian_bound
from milp.requirements import MilpError


def lagrange_start(
    space: Space, upper: float | None, time_limit: float | None
) -> tuple[float, np.ndarray | None]:
    """The Lagrangian bound of ``space``'s instance over its slots, its windows cut at
    ``upper`` (a known plan's cost within the slots, as the root's are; ``None``: not
    cut), stopped after ``time_limit`` seconds, and its prices on ``space``'s rows
    (resources x slots); ``None`` where it priced nothing above zero (nothing binds: the
    root starts as before); ``-inf`` and ``None`` where its grid would not fit in memory
    (:func:`milp.lagrange.lagrangian_bound` refuses it)."""
    d = space.d
    try:
        lag = lagrangian_bound(
            space.instance, d.slots, upper=upper, tardiness=d.tardiness, time_limit=time_limit
        )
    except MilpError:  # its grid would not fit in memory even coarsened: start as before
        return -np.inf, None
    if lag.prices is None or not np.any(lag.prices > 0):
        return lag.bound, None
    return lag.bound, on_rows(space, lag.prices)


def on_rows(space: Space, prices: np.ndarray) -> np.ndarray:
    """Per-type prices (GPU types in sorted order x slots) on ``space``'s rows."""
    inst = space.instance
    index = {t: i for i, t in enumerate(sorted(inst.nodes_by_type))}
    slots = min(space.d.slots, prices.shape[1])
    out = np.zeros((len(space.resources), space.d.slots))
    for r, res in enumerate(space.resources):
        if res.kind not in (GPU, TENANTS):
            continue
        per = prices[index[inst.node(res.node).gpu_type], :slots]
        out[r, :slots] = per if res.kind == GPU else per / inst.max_share
    return out
