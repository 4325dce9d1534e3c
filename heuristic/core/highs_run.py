"""Running HiGHS in this process: every direct highspy solve goes through :func:`run`.

HiGHS starts one thread scheduler per process, sized by the first solve's ``threads``
option. From highspy 1.16 a later solve asking for another count fails at once
(``kError``, model status ``kNotset``); 1.15 ran it on the old scheduler. Our solves
ask for different counts (the MILP one thread or HiGHS's default, the Lagrangian
bound one, the ``lp`` and Synergy policies the default), and a failed solve in the
``lp`` policy would silently fall back to no preference. So the scheduler is
restarted whenever the count changes, and before the first solve, since another
library may have started it (solves in one process run one at a time).

Solves that leave the count to HiGHS (``threads=None``) take it from the environment
variable ``GPUSCHED_HIGHS_THREADS`` when it is set: several solving processes on one
machine (a campaign's workers, the test suite's) then need not each start a thread
per core, whose idle workers spin on the cores the others solve on.
"""

from __future__ import annotations

import ctypes
import math
import os
import sys

import highspy
import numpy as np


def _without_banner() -> None:
    """HiGHS (1.16) prints its banner on standard output at a process's first
    ``Highs()``, whatever its options: into the table a user pipes to a file, and (were
    it sent to standard error) beside every command's help. The first is made here,
    with standard output pointed at the null device meanwhile."""
    if sys.stdout is not None:
        sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no standard output (a daemon's): nowhere for a banner to go wrong
        saved = None
    null = os.open(os.devnull, os.O_WRONLY)  # fd 1 itself, if it was closed
    try:
        if null != 1:
            os.dup2(null, 1)
        highspy.Highs()
        ctypes.CDLL(None).fflush(None)  # the C library's buffer, before fd 1 is back
    finally:
        if saved is None:
            os.close(1)  # closed before: closed again
        else:
            os.dup2(saved, 1)
            os.close(saved)
        if null != 1:
            os.close(null)


_without_banner()

#: the environment variable giving the thread count of solves that leave it to HiGHS
THREADS_VARIABLE = "GPUSCHED_HIGHS_THREADS"

# the thread count the scheduler was last started with by :func:`run`
_started: list[int] = []


def run(h: highspy.Highs, threads: int | None = None) -> None:
    """``h.run()``, with HiGHS's scheduler sized for ``threads`` (``None``: HiGHS's
    default, or ``GPUSCHED_HIGHS_THREADS`` when set; the caller must not have
    overridden the option)."""
    if threads is None:
        threads = default_threads()
        if threads is not None:
            h.setOptionValue("threads", threads)
    want = 0 if threads is None else threads
    if _started != [want]:
        highspy.Highs.resetGlobalScheduler(True)
        _started[:] = [want]
    h.run()


def default_threads() -> int | None:
    """The thread count ``GPUSCHED_HIGHS_THREADS`` asks for (``None`` when unset or
    empty: HiGHS's own default). Raises ``ValueError`` naming the variable and its
    value unless it is a positive integer."""
    raw = os.environ.get(THREADS_VARIABLE, "").strip()
    if not raw:
        return None
    try:
        threads = int(raw)
    except ValueError:
        threads = 0
    if threads < 1:
        raise ValueError(f"{THREADS_VARIABLE} must be a positive integer, got {raw!r}")
    return threads


# HiGHS's tolerances are absolute (a MIP gap of 1e-6, feasibility of 1e-7): an instance
# priced in a unit that makes every cost tiny (an energy price of 2e-5) was "solved"
# to a dual bound above a plan the evaluator costs lower (found by a probe, 2026-12-05).
# Below this largest cost coefficient the objective is scaled up to [1, 2); the
# ``lp`` policy, whose LP only ranks configurations, uses it too.
TINY_COST = 1e-2
MAX_SCALE_EXPONENT = 1000


def cost_scale(cost: np.ndarray, size: float | None = None) -> float:
    """The power of two the objective is multiplied by for HiGHS: 1 unless every cost
    coefficient, or the objective's ``size`` where the caller knows it (a lower bound
    on it), is below :data:`TINY_COST` (a power of two changes no digit of a cost, and
    no instance in the usual units is scaled). The size counts where units mix: a tiny
    energy price beside tardiness weights near 1 left the largest coefficient at 1.2
    and the objective at 1e-5, still "proved" 6-10% above a cheaper plan (found in
    review, 2026-12-05)."""
    top = float(np.max(np.abs(cost))) if len(cost) else 0.0
    if size is not None and 0.0 < size < top:
        top = size
    if top == 0.0 or top >= TINY_COST:
        return 1.0
    # at most 2**1000: costs near the smallest double (free energy, a weight of
    # 5e-324) would overflow the power (found in review, 2026-12-05)
    return math.ldexp(1.0, min(math.ceil(-math.log2(top)), MAX_SCALE_EXPONENT))
