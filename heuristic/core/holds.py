"""Soft holds on running jobs' GPUs while a decision re-places every job.

With relaunch overheads a running job that is moved pays its overhead again, so a
policy that re-places every present job in urgency order (STS, ``lp``) should not let a
more urgent job take a running job's GPUs while other GPUs are free.
"""

from __future__ import annotations

from collections.abc import Iterable

from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.policy import JobStatus
from instances import Config, Job


class Holds:
    """The GPUs of running jobs not yet re-placed at this decision still hold. A
    placement avoids them where it can; it takes them only if nothing else fits (the
    displaced job would pay a relaunch for nothing)."""

    def __init__(self, occ: Occupancy, jobs: Iterable[JobStatus]) -> None:
        self.soft = occ.copy()  # everything placed now, and every running job's GPUs
        running = [s for s in jobs if s.allocation is not None]
        self.pending = {s.job.id: s.allocation for s in running}
        self._status = {s.job.id: s for s in running}
        # the pending jobs by node, and each one's rank in ``pending``: a placement
        # concerns the jobs on its nodes only (in the order of ``pending``), not every
        # running job (16,000 nodes, 2,000 running jobs in the benchmark)
        self._rank = {j: k for k, j in enumerate(self.pending)}
        self._on: dict[str, dict[str, None]] = {}
        for j, alloc in self.pending.items():
            assert alloc is not None
            for n, _ in alloc.gpus:
                self._on.setdefault(n, {})[j] = None

    def drop(self, job_id: str) -> None:
        """The job is being re-placed: its old GPUs hold no more."""
        old = self.pending.pop(job_id, None)
        if old is not None:
            self.soft.release(job_id)
            for n, _ in old.gpus:
                self._on[n].pop(job_id, None)

    def near(self, alloc: Allocation) -> list[str]:
        """The pending jobs with GPUs on the nodes of ``alloc``, in the order of
        ``pending``."""
        found: dict[str, None] = {}
        for n in dict.fromkeys(n for n, _ in alloc.gpus):
            found.update(self._on.get(n, {}))
        return sorted(found, key=self._rank.__getitem__)

    def find(self, occ: Occupancy, job: Job, cfg: Config) -> Allocation | None:
        """Where ``cfg`` fits on GPUs that no running job holds, or ``None``."""
        alloc = self.soft.find(job, cfg)
        return alloc if alloc is not None and occ.why_not(job, alloc) is None else None

    def sparing(self, occ: Occupancy, spared: Iterable[str]) -> Occupancy:
        """A copy of ``occ`` where the ``spared`` running jobs not yet re-placed still
        hold their GPUs: a search there may displace any running job but those."""
        out = occ.copy()
        # in the order of ``pending``, not the set's: the order jobs are placed in orders
        # the best-fit buckets, and a set of strings iterates in an order that changes
        # with each process's hash seed (same seed, same plan)
        for j in sorted(spared, key=self._rank.__getitem__):
            alloc = self.pending.get(j)
            job = self._status[j].job
            if alloc is not None and out.why_not(job, alloc) is None:
                out.place(job, alloc)
        return out

    def status(self, job_id: str) -> JobStatus:
        """A running job's status at this decision (held or not any more)."""
        return self._status[job_id]

    def take(self, job: Job, alloc: Allocation) -> None:
        """Record a placement; running jobs whose GPUs (nodes) it takes lose their hold,
        in the order of ``pending``, until it fits."""
        if self.soft.why_not(job, alloc) is not None:  # else it takes no one's GPUs
            for other in self.near(alloc):
                self.drop(other)
                if self.soft.why_not(job, alloc) is None:
                    break
        if self.soft.why_not(job, alloc) is None:
            self.soft.place(job, alloc)
