"""Running HiGHS in this process: every direct highspy solve goes through :func:`run`.

HiGHS starts one thread scheduler per process, sized by the first solve's ``threads``
option. From highspy 1.16 a later solve asking for another count fails at once
(``kError``, model status ``kNotset``); 1.15 ran it on the old scheduler. Our solves
ask for different counts (the MILP one thread or HiGHS's default, the Lagrangian
bound one, the ``lp`` and Synergy policies the default), and a failed solve in the
``lp`` policy would silently fall back to no preference. So the scheduler is
restarted whenever the count changes, and before the first solve, since another
library may have started it (solves in one process run one at a time).
"""

from __future__ import annotations

import highspy

# the thread count the scheduler was last started with by :func:`run`
_started: list[int] = []


def run(h: highspy.Highs, threads: int | None = None) -> None:
    """``h.run()``, with HiGHS's scheduler sized for ``threads`` (``None``: HiGHS's
    default, which the caller must not have overridden)."""
    want = 0 if threads is None else threads
    if _started != [want]:
        highspy.Highs.resetGlobalScheduler(True)
        _started[:] = [want]
    h.run()
