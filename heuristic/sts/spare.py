"""Running jobs that a late job may not displace (docs/model.md, 'STS under contention').

STS re-places every present job at every decision, most urgent first, and a job whose
step fits only on a running job's GPUs takes them: the displaced job pays its relaunch
overhead again and waits. On the Philly week's bursts of jobs due minutes after
release, each with a relaunch of minutes, this is what sends them through one another's
GPUs: two jobs take the P100 nodes from each other twice, a third is displaced at 27 of
its 45 epochs (docs/contended.md). So a job that is late whatever it runs on (its slack
on its fastest configuration, less the overhead it pays to run the step, at most 0)
spares two kinds of running job:

- a *fragile* one: on time by less than ``spare`` (default ``SPARE``) of its relaunch
  overheads, and of at least its tardiness weight; the displacement would make it late
  too, to hurry a job that is late anyway;
- a *late* one, unless the displacement wins the exchange of the two with both
  overheads paid. Of two late jobs, ``a`` running with ``h_a`` hours left where it runs
  and ``b`` needing ``h_b`` hours there, overhead included, running ``b`` first and
  ``a`` after its relaunch ``δ_a`` adds ``w_a (h_b + δ_a) - w_b h_a`` to their weighted
  tardiness; ``a`` is spared unless that is negative (Smith's rule with set-up times).

The placed job takes other GPUs, another profile, or stays where it is
(:func:`heuristic.sts.steps.place` with ``spared``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from heuristic.core.policy import JobStatus
from heuristic.core.urgency import overhead_to_run, slack
from instances import Config, Instance, Job

# a running job on time by less than this many of its relaunch overheads is spared:
# measured 1, 3, 6 and unbounded on the week's 72 windows, the 25 contended 32-GPU runs,
# the bundled day's 100 windows and 25 light runs (docs/model.md)
SPARE = 3.0


@dataclass(frozen=True)
class LateRun:
    """A running job late whatever it runs on: its tardiness weight, the worst-case
    hours it has left where it runs (its overhead left included), its relaunch."""

    weight: float
    hours: float
    relaunch: float


@dataclass(frozen=True)
class Standing:
    """The running jobs at a decision that a late job may spare: the fragile ones with
    their tardiness weights, and the late ones."""

    fragile: dict[str, float]
    late: dict[str, LateRun]


def standing(
    inst: Instance,
    jobs: Iterable[JobStatus],
    now: float,
    fastest: Callable[[Job], float],
    spare: float = SPARE,
) -> Standing:
    """The fragile running jobs (on time by less than ``spare`` of their relaunch
    overheads) and the late ones."""
    fragile, late = {}, {}
    for s in jobs:
        if s.allocation is None:
            continue
        sl = slack(inst, s, now, fastest(s.job))
        if 0 < sl < spare * inst.relaunch(s.job):
            fragile[s.job.id] = inst.tardiness_weight(s.job.id)
        elif sl <= 0:
            hours = s.remaining * inst.epoch_time(s.job, s.allocation.config) + s.overhead_left
            late[s.job.id] = LateRun(inst.tardiness_weight(s.job.id), hours, inst.relaunch(s.job))
    return Standing(fragile, late)


def spared(
    inst: Instance,
    status: JobStatus,
    cfg: Config,
    now: float,
    fastest: float,
    running: Standing | None,
) -> frozenset[str]:
    """The running jobs that ``status``'s job may not displace to run ``cfg``: none
    unless it is late whatever it runs on, counting the overhead it pays there; then the
    fragile ones of at least its weight, and the late ones it does not win the exchange
    with (see the module's docstring)."""
    if running is None or not (running.fragile or running.late):
        return frozenset()
    pay = overhead_to_run(inst, status, cfg)
    if slack(inst, status, now, fastest) - pay > 0:
        return frozenset()
    me = status.job.id
    w = inst.tardiness_weight(me)
    hours = status.remaining * inst.epoch_time(status.job, cfg) + pay
    out = {j for j, wj in running.fragile.items() if wj >= w and j != me}
    out.update(
        j
        for j, run in running.late.items()
        if j != me and run.weight * (hours + run.relaunch) >= w * run.hours
    )
    return frozenset(out)
