"""How urgent a job is: its slack, shared by STS and the baselines that order by it."""

from __future__ import annotations

from heuristic.core.policy import JobStatus
from instances import Instance, Job


def fastest_epoch_time(instance: Instance, job: Job) -> float:
    """Hours per epoch on the job's fastest allowed configuration."""
    return min(instance.epoch_time(job, c) for c in instance.allowed_configs(job))


def slack(instance: Instance, status: JobStatus, now: float, fastest: float | None = None) -> float:
    """Hours to the due date minus the worst-case time (every remaining epoch runs) on the
    fastest configuration. ``fastest`` is that configuration's hours per epoch where the
    caller keeps it (STS's hull table), computed here otherwise."""
    if fastest is None:
        fastest = fastest_epoch_time(instance, status.job)
    return status.job.due - now - status.remaining * fastest
