"""Deterministic worst-case choice of a configuration, shared by the fixed-config baselines.

This is the baselines' own decision rule (the worst case, as in Filippini et al.), not a
cost report: every reported cost comes from validation.evaluate.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from heuristic.core.occupancy import Allocation, Occupancy
from instances import Config, Instance, Job, Requested


def worst_case_cost(
    instance: Instance,
    job: Job,
    cfg: Config,
    remaining: float,
    now: float,
    *,
    overhead: float | None = None,
) -> float:
    """Energy of all remaining epochs on ``cfg`` plus tardiness if started ``now``, after
    ``overhead`` hours without progress at ``cfg``'s power (default: the job's relaunch
    overhead, paid by any new placement; 0 to stay where it runs)."""
    lost = instance.relaunch(job) if overhead is None else overhead
    tau = instance.epoch_time(job, cfg)
    late = max(0.0, now + lost + remaining * tau - job.due)
    energy = instance.epoch_cost(job, cfg) * remaining
    if lost > 0:
        energy += instance.energy_price * instance.power_w(cfg) * lost / 1000.0
    return energy + instance.tardiness_weight(job.id) * late


# How a fixed-configuration baseline ranks a job's configurations (``edf-fastest``:
# the fastest):
# "cheapest": cheapest in the worst case, as in Filippini et al. (the default);
# "fastest": shortest epoch first, as a user in a hurry or a JCT-minded manager would
RULES = ("cheapest", "fastest")


def ranked_configs(
    instance: Instance, job: Job, remaining: float, now: float, rule: str = "cheapest"
) -> list[Config]:
    """The job's configurations in the order ``rule`` prefers them. Cheapest worst-case
    first: the least energy plus tardiness, so a configuration that meets the due date
    comes first unless one late by little saves more energy than its lateness costs (a
    K80 0.01 h late before a V100 on time at the default weight, a review of
    2026-12-07). Fastest first: ties go to the cheaper."""

    def key(c: Config) -> tuple[Any, ...]:
        cheapest = (worst_case_cost(instance, job, c, remaining, now), c)
        return (instance.epoch_time(job, c), *cheapest) if rule == "fastest" else cheapest

    return sorted(instance.allowed_configs(job), key=key)


def first_placement(occupancy: Occupancy, job: Job, configs: Iterable[Config]) -> Allocation | None:
    """Best-fit placement of the first of ``configs`` that fits now, or ``None``."""
    return next((a for c in configs if (a := occupancy.find(job, c)) is not None), None)


def cheapest_placement(
    instance: Instance, job: Job, remaining: float, now: float, occupancy: Occupancy
) -> Allocation | None:
    """The cheapest configuration (worst case) that can be placed now, best-fit."""
    return first_placement(occupancy, job, ranked_configs(instance, job, remaining, now))


def requested_configs(instance: Instance, job: Job) -> list[Config]:
    """The job's hostable configurations of its requested size, in GPU-type order. A job
    without a request asks for its fewest GPUs of any type (its shared slots if it has
    no exclusive configuration)."""
    allowed = instance.allowed_configs(job)
    req = job.requested
    if req is None:
        exclusive = [c.gpus for c in allowed if not c.shared]
        if not exclusive:
            return list(allowed)
        req = Requested(min(exclusive))
    order = {g.name: k for k, g in enumerate(instance.gpu_types)}
    return sorted((c for c in allowed if req.matches(c)), key=lambda c: (order[c.gpu_type], c))
