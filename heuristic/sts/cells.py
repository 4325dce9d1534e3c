"""Which cells a timed profile's portions run in: the shortest path of
:func:`place_runs`, compiled.

The path is a loop over portions and cells whose every step depends on the one before,
so numpy could only vectorise it over the cells, one row per portion: a long job's 160
portions on 720 cells took 2.4 ms, and under a price series STS spent two thirds of its
time there (a contended run of the ``prices`` campaign, 274 s of which 255 s in this
search, profiled). Compiled by numba the same loop takes 0.2 ms, with the same
operations in the same order, so the same floats and the same cells (docs/prices.md,
'Decision time'), compiled on the first timed profile (:mod:`heuristic.sts.compiled`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from heuristic.sts.compiled import Compiled


def _path(
    a: Any, w: Any, resume: Any, running: bool, idled: bool, tail: Any, extra: float, stay: bool
) -> tuple[float, Any]:
    # (run compiled; the operations are numpy's row form of the search, element by
    # element, so that the sums round alike)
    n = a.shape[0]
    cells = w.shape[0]
    inf = math.inf
    rows = np.full((n, cells), inf)  # rows[j, k]: least cost with portion j in cell k
    for k in range(cells):
        rows[0, k] = a[0] * w[k] + (resume[0] * w[k] + extra if running else 0.0)
        if running and stay:
            rows[0, k] = inf  # it may not resume
    if running and not idled:
        rows[0, 0] = a[0] * w[0]  # it goes on in cell 0: no relaunch
    for j in range(1, n):
        r, aj = resume[j], a[j]
        rows[j, 0] = inf + aj * w[0]
        low = inf  # the least of row j - 1 before cell k - 1
        for k in range(1, cells):
            v = rows[j - 1, k - 1]  # on from the cell before
            if k >= 2 and not stay:  # or resumed after an idle cell, from the least before
                if rows[j - 1, k - 2] < low:
                    low = rows[j - 1, k - 2]
                resumed = low + r * w[k] + extra
                if resumed < v:
                    v = resumed
            rows[j, k] = v + aj * w[k]
    k = 0  # the earliest cell on ties
    for i in range(1, cells):
        if rows[n - 1, i] + tail[i] < rows[n - 1, k] + tail[k]:
            k = i
    cost = rows[n - 1, k] + tail[k]
    runs = np.empty(n, np.int64)
    if not math.isfinite(cost):
        return cost, runs[:0]
    runs[n - 1] = k
    for j in range(n - 1, 0, -1):
        # where portion j - 1 ran: the cell before, unless resuming was cheaper (ties go
        # to the earlier cells: runs come as early as they can)
        here = rows[j, k] - a[j] * w[k]
        moved = False
        if k >= 2 and not stay:
            best = 0
            for i in range(1, k - 1):
                if rows[j - 1, i] < rows[j - 1, best]:
                    best = i
            resumed = rows[j - 1, best] + resume[j] * w[k] + extra
            same = abs(resumed - here) <= 1e-9 * max(1.0, abs(resumed), abs(here))
            if resumed <= rows[j - 1, k - 1] and same:
                k = best
                moved = True
        if not moved:
            k -= 1
        runs[j - 1] = k
    return cost, runs


_compiled_path = Compiled(_path)


def place_runs(
    a: np.ndarray,
    w: np.ndarray,
    resume: np.ndarray,
    running: bool,
    tail: np.ndarray | None = None,
    extra: float = 0.0,
    idled: bool = False,
    stay: bool = False,
) -> tuple[float, np.ndarray]:
    """The cheapest choice of cells for ``len(a)`` portions in order: portion ``j`` in
    cell ``k`` costs ``a[j]·w[k]``; a portion after an idle cell (or the first, if the
    job is ``running`` before cell 0 and idles; with ``idled``, a running job already
    idle before cell 0, the first wherever it runs) adds ``resume[j]·w[k]``; the last
    portion in cell ``k`` adds ``tail[k]`` (the tardiness of a run ending there; none
    where ``tail`` is ``None``); each resume also adds ``extra`` (the tardiness its
    relaunch hours add to a run that ends late). Exact (a
    shortest path over portions and the cell each runs in: portion ``j`` in cell ``k``
    follows portion ``j - 1`` in cell ``k - 1``, or, resuming, the cheapest in a cell
    before ``k - 1``), in ``O(cells · portions)``; returns the cost and the cells that
    run, an array (``inf`` and an empty one if the portions do not fit). Ties go to the
    earliest cells: runs come as early as they can, keeping slack. With ``stay`` no
    portion resumes: the portions run back to back from the first, and a running job
    goes on in cell 0."""
    if len(a) > len(w):
        return math.inf, np.empty(0, dtype=np.int64)
    f64 = np.float64
    cost, runs = _compiled_path(
        np.ascontiguousarray(a, dtype=f64),
        np.ascontiguousarray(w, dtype=f64),
        np.ascontiguousarray(resume, dtype=f64),
        bool(running),
        bool(running and idled),
        np.zeros(len(w)) if tail is None else np.ascontiguousarray(tail, dtype=f64),
        float(extra),
        bool(stay),
    )
    if not math.isfinite(cost):
        return math.inf, np.empty(0, dtype=np.int64)
    return float(cost), runs
