"""Running jobs that a late job may not displace (docs/model.md, 'STS under contention').

STS re-places every present job at every decision, most urgent first, and a job whose
step fits only on a running job's GPUs takes them: the displaced job pays its relaunch
overhead again and waits. Where that job is on time by less than a few of its
overheads, the displacement makes it late too, and a late job hurried by a few minutes
costs as much as it saves. On the Philly week's bursts of jobs due minutes after
release, each with a relaunch of minutes, this is what sends them through one another's
GPUs: two jobs take the P100 nodes from each other twice, a third is displaced at 27 of
its 45 epochs (docs/contended.md).

So a job that is late whatever it runs on (its slack on its fastest configuration, less
the overhead it pays to run the step, at most 0) does not take the GPUs of a running job
that is *fragile*: on time by less than ``SPARE`` of its relaunch overheads (the
option ``spare``), and of at
least its tardiness weight. It takes other GPUs, or runs another profile, or stays where
it is (:func:`heuristic.sts.steps.place` with ``spared``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from heuristic.core.policy import JobStatus
from heuristic.core.urgency import slack
from instances import Config, Instance, Job

# a running job on time by less than this many of its relaunch overheads is spared:
# measured 1, 3, 6 and unbounded on the week's 72 windows, the 25 contended 32-GPU runs,
# the bundled day's 100 windows and 25 light runs (docs/model.md)
SPARE = 3.0


def fragile(
    inst: Instance,
    jobs: Iterable[JobStatus],
    now: float,
    fastest: Callable[[Job], float],
    spare: float = SPARE,
) -> dict[str, float]:
    """The running jobs a displacement would make late, with their tardiness weights:
    on time (slack > 0) by less than ``spare`` of their relaunch overheads."""
    out = {}
    for s in jobs:
        if s.allocation is None:
            continue
        sl = slack(inst, s, now, fastest(s.job))
        if 0 < sl < spare * inst.relaunch(s.job):
            out[s.job.id] = inst.tardiness_weight(s.job.id)
    return out


def spared(
    inst: Instance,
    status: JobStatus,
    cfg: Config,
    now: float,
    fastest: float,
    weak: dict[str, float],
) -> frozenset[str]:
    """The fragile jobs (``weak``, from :func:`fragile`) that ``status``'s job may not
    displace to run ``cfg``: none unless it is late whatever it runs on, counting the
    overhead it pays there; then those of at least its weight."""
    if not weak:
        return frozenset()
    current = status.allocation
    continues = current is not None and current.config == cfg
    pay = status.overhead_left if continues else inst.relaunch(status.job)
    if slack(inst, status, now, fastest) - pay > 0:
        return frozenset()
    w = inst.tardiness_weight(status.job.id)
    return frozenset(j for j, wj in weak.items() if wj >= w and j != status.job.id)
