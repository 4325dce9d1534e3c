"""What a placement that takes running jobs' GPUs costs the jobs it displaces
(:meth:`heuristic.sts.policy.StsPolicy._spare_displaced` weighs it against the
placing job's dearer profiles that leave them be).

A displaced job pays its relaunch again: the relaunch's energy, and its hours, which
come out of the time it has left to its due date, so that it must later run faster
(dearer) or end late. ``relaunch`` counts the energy only (STS until 2026-11-27, and
``sts-greedy``). ``profile`` counts both, as STS's own profile prices them: the rise of
the job's cheapest expected cost (over its GPU types) when it restarts from a pause
instead of running on as it does. It does not see how long the displaced job will
wait for GPUs (its profile assumes they are free now), so it understates the harm
where the job must wait; a job with hours of slack loses little by it, a job on time
by less than its relaunch becomes late (tests/heuristic/sts/test_displace.py;
docs/model.md, 'STS under contention', has the measurements). ``wait`` (the default)
sees part of that wait: where decisions are slotted, a displaced job whose
configuration fits on no GPUs left free restarts a slot later at the earliest, and is
priced so (``restart``); unslotted it may restart at the next event, and is priced as
by ``profile``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from heuristic.core.holds import Holds
from heuristic.core.occupancy import Allocation
from heuristic.core.policy import JobStatus
from instances import Instance

# how the cost of displacing a running job is counted
DISPLACE_COSTS = ("wait", "profile", "relaunch")


def displaced(alloc: Allocation, holds: Holds, job_id: str) -> list[str]:
    """The running jobs (not yet re-placed) whose GPUs ``alloc`` takes: those sharing a
    GPU with it, or a node where either is multi-node; two shared slots do not
    collide."""
    taken = set(alloc.gpus)
    nodes = {n for n, _ in alloc.gpus}
    out = []
    for other in holds.near(alloc):  # a job it hits has GPUs on its nodes
        old = holds.pending[other]
        if other == job_id or old is None:
            continue
        hit = bool(taken & set(old.gpus))
        if (alloc.config.nodes > 1 or old.config.nodes > 1) and nodes & {n for n, _ in old.gpus}:
            hit = True
        if old.config.shared and alloc.config.shared:
            hit = False
        if hit:
            out.append(other)
    return out


def relaunch_energy(inst: Instance, holds: Holds, others: list[str]) -> float:
    """The energy cost of the relaunches the displaced jobs pay again."""
    total = 0.0
    for other in others:
        old = holds.pending[other]
        assert old is not None
        total += inst.energy_price * inst.power_w(old.config) / 1000.0 * inst.relaunch(other)
    return total


def restart_loss(
    status: JobStatus,
    cheapest: Callable[[JobStatus], float],
    restart: Callable[[JobStatus], float] | None = None,
) -> float:
    """How much more the job's cheapest profile costs from a pause (its full relaunch
    ahead) than running on where it runs; ``cheapest`` prices a job's status now,
    ``restart`` the paused job's (default ``cheapest``; a later start where it waits)."""
    paused = dataclasses.replace(status, allocation=None, overhead_left=0.0)
    return max(0.0, (restart or cheapest)(paused) - cheapest(status))
