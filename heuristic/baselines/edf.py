"""EDF: earliest due date first; each job on the cheapest configuration that meets its due
date in the worst case (among those that fit now), fixed for its whole run, best-fit.

Unlike FIFO, a job that cannot be placed now does not hold back later-due jobs that fit
(list scheduling): with heterogeneous GPUs and sizes, strict blocking would leave GPUs
idle for no gain in due-date order.
"""

from __future__ import annotations

from heuristic.baselines.fifo import FifoPolicy
from heuristic.core.policy import JobStatus


class EdfPolicy(FifoPolicy):
    name = "edf"
    blocking = False

    def order(self, waiting: list[JobStatus]) -> list[JobStatus]:
        return sorted(waiting, key=lambda s: (s.job.due, s.job.release, s.job.id))
