"""How urgent a job is: its slack, shared by STS and the baselines that order by it."""

from __future__ import annotations

from heuristic.core.policy import JobStatus
from instances import Config, Instance, Job


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


def overhead_to_run(instance: Instance, status: JobStatus, cfg: Config) -> float:
    """Hours of relaunch overhead the job pays to run ``cfg`` now: what is left of its
    current one where it goes on with the same configuration, its full relaunch
    otherwise."""
    current = status.allocation
    if current is not None and current.config == cfg:
        return status.overhead_left
    return instance.relaunch(status.job)
