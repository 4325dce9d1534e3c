"""A pricing round spread over processes.

Given the prices, each job's pricing is independent of every other's (the stacked
heuristic compares labels of one job only, :mod:`milp.decomposition.stack`), so a
round's jobs can be priced in separate processes and give the same bounds, values and
schedules as in one (the count of labels kept may differ by a few where jobs are
stacked differently). The workers are forked for the round: they inherit the round
(the oracle's slot models and completion tables, the prices) instead of having it
pickled, and send back only what they found. Forking costs tens of milliseconds, so a
round is spread only where its work is large (``SPREAD_WORK``); on the contended
windows a round takes 3-17 s in one process (docs/benchmarks.md).

The heuristic round's jobs go in ``workers`` groups of about equal work, each priced
stacked as in one process; the exact round's jobs one at a time to whichever worker is
free, the largest first (one job may take half a minute there). The deadline is each
worker's own clock (``time.perf_counter`` is the system's monotonic clock, the same in
every process), as in one process.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

# a round is spread over processes where its jobs hold at least this many (choice, slot)
# arcs in all (about a second of pricing in one process; a fork costs ~0.05 s)
SPREAD_WORK = 200_000

# the work of the round being spread, set before the workers are forked (they inherit it)
_PART: Callable[[list[int]], list[Any]] | None = None


def cores() -> int:
    """The processor cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def fan_out(
    part: Callable[[list[int]], list[Any]],
    weights: Sequence[int],
    workers: int,
    *,
    one_by_one: bool,
) -> list[Any] | None:
    """``part`` (a group of item indices to one result per item, in the group's order)
    over all items, in ``workers`` forked processes; the results in the items' order.
    ``one_by_one``: each item is a group of its own, handed to whichever worker is
    free, the heaviest first; else ``workers`` groups of about equal weight. ``None``
    where it is not worth it (one worker or one item), where this platform cannot fork,
    or in a daemonic process (which may not have children)."""
    n = len(weights)
    if workers < 2 or n < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return None
    if multiprocessing.current_process().daemon:
        return None  # a daemonic worker (a Dask or multiprocessing pool's) may not fork one
    global _PART
    _PART = part
    try:
        with multiprocessing.get_context("fork").Pool(min(workers, n)) as pool:
            if one_by_one:
                groups = [[j] for j in sorted(range(n), key=lambda j: -weights[j])]
            else:
                groups = balanced(weights, workers)
            out: list[Any] = [None] * n
            for group, got in zip(groups, pool.imap(_run, groups, chunksize=1), strict=True):
                for j, one in zip(group, got, strict=True):
                    out[j] = one
    finally:
        _PART = None
    return out


def balanced(weights: Sequence[int], groups: int) -> list[list[int]]:
    """The items in at most ``groups`` groups of about equal weight (heaviest first, each
    to the lightest group so far), each group in the items' order."""
    load = np.zeros(groups)
    out: list[list[int]] = [[] for _ in range(groups)]
    for j in sorted(range(len(weights)), key=lambda j: -weights[j]):
        g = int(np.argmin(load))
        out[g].append(j)
        load[g] += weights[j]
    return [sorted(g) for g in out if g]


def _run(group: list[int]) -> list[Any]:
    """In a worker: the round's ``part`` of ``group``."""
    assert _PART is not None, "a worker forked outside fan_out"
    return _PART(group)
