"""STS's rule for the job ending last where an idle cluster draws power (docs/model.md,
'STS and idle power'): after every job is placed, that job hurries where the hours it
alone keeps the cluster powered cost more than the speed; the costs and candidate
profiles are :mod:`heuristic.sts.tail`'s."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from heuristic.core.occupancy import Allocation
from heuristic.core.policy import JobStatus
from heuristic.sts.decision import Round
from heuristic.sts.hulls import JobProfiles
from heuristic.sts.profile import Profile
from heuristic.sts.steps import grid, place, step_now
from heuristic.sts.tail import (
    ROUNDS,
    Arrivals,
    Done,
    Planned,
    all_done,
    alone_at_all,
    current_blocks,
    faster,
    flat_bill,
    latest,
    profile_blocks,
    rate_falls,
)
from instances import EpochDistribution, Job


def relieve(
    rnd: Round,
    jobs: Sequence[JobStatus],
    types_of: Callable[[Job], tuple[str, ...]],
    ran: Mapping[str, float],
    releases: list[float],
    arrivals_at: Callable[[float], Arrivals],
) -> set[str]:
    """Hurry the job ending last, then the one ending last after it (a few at most),
    where that costs the cluster less; ``releases``: every release seen, in order (when
    the arrival rate may fall), ``arrivals_at(now)`` the jobs still to come as they are
    seen now (asked only once a job may be hurried: the sojourns' estimate is not free).
    Nothing where a job waits for GPUs. Returns the jobs moved."""
    inst, now = rnd.inst, rnd.now
    plans: dict[str, Planned] = {}
    for s in jobs:
        alloc = rnd.assign.get(s.job.id, s.allocation)
        planned = current_blocks(inst, s, alloc, rnd.chosen.get(s.job.id), now)
        if planned is None:
            return set()
        plans[s.job.id] = planned
    moved: set[str] = set()
    if not plans or rnd.ledger is None:
        return moved
    ledger = rnd.ledger
    tariff = rnd.table.tariff
    bill = tariff.cost if tariff is not None else flat_bill(inst.energy_price)
    by_id = {s.job.id: s for s in jobs}
    arrivals = arrivals_at(now)
    rate = arrivals.rate
    for _ in range(ROUNDS):
        job_id = latest(plans)
        if job_id in moved:
            return moved
        status, planned = by_id[job_id], plans[job_id]
        types = types_of(status.job)

        def profiles(
            earlier: float, s: JobStatus = status, t: tuple[str, ...] = types
        ) -> JobProfiles:
            return JobProfiles(inst, s, now, t, rnd.table, earlier, ran.get(s.job.id, 0.0), ledger)

        others = [p.blocks for k, p in plans.items() if k != job_id]
        found: list[tuple[float, Profile]] = []  # too soon to tell whether jobs keep arriving
        done: Done | None = None
        if math.isfinite(rate):
            found, done = faster(inst, status, now, profiles, planned, others, bill, arrivals)
        for _, profile in found:
            assert planned.dist is not None
            # its later steps must fit beside the booked ones (its own old booking still
            # among them): hurrying must not take what the others' steps need
            if ledger.fits(status.job, profile, planned.dist) and take(
                rnd, status, profile, planned.dist, types
            ):
                blocks = profile_blocks(inst, status.job, profile, planned.dist, now)
                plans[job_id] = Planned(blocks, profile, planned.dist)
                moved.add(job_id)
                break
        else:
            # jobs may yet arrive: look again when the arrival rate may have fallen
            if rate > 0 and alone_at_all(
                planned, done if done is not None else all_done(others, now), inst.powered_kw, bill
            ):
                falls = rate_falls(releases, now)
                if falls > now:
                    wake = grid(inst, now, falls)
                    rnd.asks[job_id] = min(rnd.asks.get(job_id, math.inf), wake)
            return moved
    return moved


def take(
    rnd: Round,
    status: JobStatus,
    profile: Profile,
    dist: EpochDistribution,
    types: tuple[str, ...],
) -> bool:
    """Run ``profile`` instead of the job's plan if its step fits on the GPUs left free
    (or it waits for cheaper hours); else leave the job as it was."""
    job, job_id = status.job, status.job.id
    old = rnd.occ.owner.get(job_id)
    if old is not None:
        rnd.occ.release(job_id)
    if rnd.holds is not None:
        rnd.holds.drop(job_id)
    alloc: Allocation | None = None
    if profile.wait <= 0:
        step, step_end, last = step_now(rnd.inst, job, profile, rnd.now)
        alloc = place(rnd.occ, status, step.config, types, rnd.holds, rnd.holds is None)
        if alloc is None:
            if old is not None:
                rnd.occ.place(job, old)
                if rnd.holds is not None:
                    rnd.holds.take(job, old)
            return False
        if rnd.holds is not None:
            rnd.holds.take(job, alloc)
        rnd.asks.pop(job_id, None)
        if not last or alloc.config != step.config:
            rnd.asks[job_id] = grid(rnd.inst, rnd.now, step_end)
        rnd.waiting.discard(job_id)
        rnd.late_waits.discard(job_id)
    else:
        rnd.asks[job_id] = grid(rnd.inst, rnd.now, rnd.now + profile.wait)
        rnd.wait(job_id, profile)
    if alloc != status.allocation:
        rnd.assign[job_id] = alloc
    else:
        rnd.assign.pop(job_id, None)
    rnd.chosen[job_id] = (profile, dist)
    rnd.stuck.discard(job_id)
    return True
