"""How far a job has got along its segments: epochs done at each boundary, and the time
at which a given epoch count is reached. Shared by the checker, the evaluator and the
Monte Carlo replay so that all read a plan the same way.

The relaunch overhead (docs/model.md, E1) is read here and nowhere else: a segment that
does not continue the job's previous one (:func:`continues`) spends its first ``δ_j``
hours making no progress (:func:`start_overhead`: less where it resumes the job on the
very GPUs it was suspended from and the instance gives a suspend overhead); a
continuation carries whatever overhead is left.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

from instances import Instance, Segment, slot_ceil
from instances.distribution import EpochDistribution, reaches

TIME_TOL = 1e-9
# ulps of a segment's end (and start) a plan's clock may be off by: the engine's stop
# time, and the events before it, each rounded once; capped at TIME_TOL in hours
CLOCK_ULPS = 4


def continues(previous: Segment | None, segment: Segment) -> bool:
    """Whether ``segment`` continues ``previous`` (the job's segment before it): it
    starts when that one ends, on the same configuration and the same GPUs. Anything
    else (the first start, a resume after a pause, a new configuration, other GPUs) is a
    relaunch."""
    return (
        previous is not None
        and abs(segment.start - previous.end) <= TIME_TOL
        and _same_place(previous, segment)
    )


def resumes(previous: Segment | None, segment: Segment) -> bool:
    """Whether ``segment`` resumes the job after a pause on the configuration and GPUs of
    ``previous`` (Gandiva's suspend/resume: the job's state waited in host memory)."""
    return (
        previous is not None
        and segment.start > previous.end + TIME_TOL
        and _same_place(previous, segment)
    )


def _same_place(previous: Segment, segment: Segment) -> bool:
    """The same configuration on the same GPUs."""
    return segment.config == previous.config and sorted(segment.gpus) == sorted(previous.gpus)


def start_overhead(
    instance: Instance, previous: Segment | None, segment: Segment, left: float = 0.0
) -> float:
    """Hours without progress that ``segment`` starts with when it does not continue
    ``previous`` (which ended with ``left`` hours of overhead still to run): for a resume
    where the job has a suspend overhead, that overhead plus what was left (a launch cut
    short by a suspend is not done yet), at most a relaunch; else the relaunch overhead."""
    relaunch = instance.relaunch(segment.job)
    if resumes(previous, segment) and instance.suspends(segment.job):
        return min(left + instance.resume(segment.job), relaunch)
    return relaunch


@dataclass(frozen=True)
class Piece:
    """One segment of a job with the epochs it processes: ``[w0, w1)`` (capped at E).

    ``lost``: hours at the segment's start spent in relaunch overhead (no progress);
    ``relaunch``: the segment starts a relaunch (it does not continue the previous one).
    """

    segment: Segment
    epoch_time: float  # hours per epoch on this segment's configuration
    w0: float
    w1: float
    lost: float = 0.0
    relaunch: bool = False

    def time_at(self, w: float) -> float:
        """Instant at which the job's progress reaches ``w`` (``w0 <= w <= w1``)."""
        return self.segment.start + self.lost + (w - self.w0) * self.epoch_time


@dataclass(frozen=True)
class Timeline:
    """A job's segments in time order with the progress each achieves."""

    job: str
    max_epochs: float
    pieces: tuple[Piece, ...]

    @classmethod
    def of(cls, instance: Instance, job_id: str, segments: tuple[Segment, ...]) -> Timeline:
        job = instance.job(job_id)
        E = job.max_epochs
        stops = job.distribution.stops
        pieces = []
        w = 0.0
        left = 0.0  # overhead still to run, carried by a continuation
        noise = 0.0  # the clock's rounding so far, in epochs
        previous: Segment | None = None
        for s in sorted(segments, key=lambda s: s.start):
            relaunch = not continues(previous, s)
            if relaunch:
                left = start_overhead(instance, previous, s, left)
            previous = s
            lost = min(left, max(0.0, s.end - s.start))
            left -= lost
            tau = job.epoch_times.get(s.config)
            if tau is None:  # the checker reports it; count no progress here
                pieces.append(Piece(s, math.inf, w, w, lost, relaunch))
                continue
            w1 = min(E, w + max(0.0, s.end - s.start - lost) / tau)
            # the clock's rounding, in epochs: late in a long trace a float hour holds
            # few digits, and a stop time ``begin + epochs * tau`` rounded to it can
            # leave a job with short epochs more than STOP_TOL short (a release at
            # 5,000 h and 0.05-s epochs: 3.4e-8 epochs; found by a probe, 2026-12-05)
            noise += CLOCK_ULPS * math.ulp(max(abs(s.start), abs(s.end))) / tau
            # never more than the engine's own clock tolerance: a plan that stops short
            # by more is short, however many segments it has (found in review)
            slack = min(noise, TIME_TOL / tau)
            # absorb float noise so that a plan built to reach a stop (E, or an early
            # stop where a step ends) is seen to reach it, by every reader
            if reaches(w1, E) or E - w1 <= slack:
                w1 = E
            else:  # an early stop that every reader sees as reached needs no snap
                at = bisect.bisect_left(stops, w1)
                near = at < len(stops) and w < stops[at] <= w1 + slack
                if near and not reaches(w1, stops[at]):
                    w1 = stops[at]
            pieces.append(Piece(s, tau, w, w1, lost, relaunch))
            w = w1
        return cls(job_id, E, tuple(pieces))

    @property
    def progress(self) -> float:
        """Epochs done by the end of the plan (at most E)."""
        return self.pieces[-1].w1 if self.pieces else 0.0

    @property
    def complete(self) -> bool:
        return reaches(self.progress, self.max_epochs)

    def time_at(self, w: float) -> float:
        """First instant at which progress :func:`reaches` ``w`` epochs (a stopping
        point; ``inf`` if never)."""
        if w <= 0:
            return self.pieces[0].segment.start if self.pieces else 0.0
        for p in self.pieces:
            if reaches(p.w1, w) and p.w1 > p.w0:
                # a stop reached within the tolerance is reached by the segment's end
                # (a time within the clock's tolerance of it is left as computed)
                t = p.time_at(min(w, p.w1))
                return p.segment.end if t > p.segment.end + TIME_TOL else t
        return math.inf

    def ends(self, dist: EpochDistribution) -> list[tuple[float, float]]:
        """When the job completes at each of ``dist``'s stops, with that stop's
        probability (the completion distribution of the plan)."""
        stops = zip(dist.stops, dist.probabilities, strict=True)
        return [(self.time_at(e), p) for e, p in stops]

    def completion(self, slot: float | None) -> float:
        """Completion time of all E epochs, at the end of its slot when slotted."""
        return slot_ceil(self.time_at(self.max_epochs), slot)
