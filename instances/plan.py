"""Plans: each job's sequence of segments (start, end, configuration, GPUs).

A plan is *static*: it runs every job to its maximum epochs (the worst case). When a
job really stops earlier, the rest of its plan is not run (docs/model.md, 'Plans and their cost').
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from instances.errors import PlanError
from instances.fields import is_number
from instances.model import Config

GpuRef = tuple[str, int]
"""One GPU: (node id, GPU index on that node, from 0)."""


def slot_ceil(t: float, slot: float | None) -> float:
    """End of the slot in which an event at time ``t`` happens (``t`` itself if exact):
    where an instance is slotted, a completion or a switch counts there."""
    if slot is None or math.isinf(t):
        return t
    k = math.ceil(t / slot - 1e-9)
    return k * slot


@dataclass(frozen=True, order=True)
class Segment:
    """Job ``job`` runs configuration ``config`` on ``gpus`` during ``[start, end)`` hours.

    Exclusive: ``config.gpus`` GPUs of one node. Multi-node: ``config.gpus_per_node`` GPUs
    on each of ``config.nodes`` nodes, which are then wholly reserved. Shared: one GPU,
    one of its ``K_max`` slots.
    """

    start: float
    end: float
    job: str
    config: Config
    gpus: tuple[GpuRef, ...]

    @property
    def duration(self) -> float:
        return self.end - self.start

    @property
    def node_ids(self) -> tuple[str, ...]:
        return tuple(sorted({n for n, _ in self.gpus}))


def _check_segment(i: int, s: object) -> None:
    """The types a plan is sorted and checked by: a plain tuple, a time given as text or
    a configuration given by its label would fail deep inside the checker. The values
    (times in order, GPUs that exist and each named as a pair) are the checker's to
    judge, as violations (validation/check.py)."""
    where = f"segments[{i}]"
    if not isinstance(s, Segment):
        raise PlanError(f"{where} = {s!r:.120}: must be a Segment")
    for name in ("start", "end"):
        if not is_number(getattr(s, name)):
            raise PlanError(f"{where}.{name} = {getattr(s, name)!r:.60}: must be a number")
    if not isinstance(s.job, str):
        raise PlanError(f"{where}.job = {s.job!r:.60}: must be a job id (text)")
    if not isinstance(s.config, Config):
        raise PlanError(f"{where}.config = {s.config!r:.60}: must be a Config")
    if not isinstance(s.gpus, tuple):  # each pair is the checker's (a violation)
        raise PlanError(f"{where}.gpus = {s.gpus!r:.60}: must be a tuple of (node id, GPU index)")


@dataclass(frozen=True)
class Plan:
    """All segments of a schedule, sorted by (start, job)."""

    segments: tuple[Segment, ...] = ()
    _by_job: dict[str, tuple[Segment, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        given = tuple(self.segments)  # a generator is read once
        for i, s in enumerate(given):
            # the common case tested by exact types: policies build plans of thousands
            plain = (
                type(s) is Segment
                and type(s.start) is float
                and type(s.end) is float
                and type(s.job) is str
                and type(s.config) is Config
                and type(s.gpus) is tuple
            )
            if not plain:
                _check_segment(i, s)
        segs = tuple(sorted(given, key=lambda s: (s.start, s.job, s.end)))
        object.__setattr__(self, "segments", segs)
        by_job: dict[str, list[Segment]] = defaultdict(list)
        for s in segs:
            by_job[s.job].append(s)
        object.__setattr__(self, "_by_job", {k: tuple(v) for k, v in by_job.items()})

    @classmethod
    def of(cls, segments: Iterable[Segment]) -> Plan:
        return cls(tuple(segments))

    def for_job(self, job_id: str) -> tuple[Segment, ...]:
        """The job's segments in time order (empty if the plan never runs it)."""
        return self._by_job.get(job_id, ())

    def __iter__(self) -> Iterator[Segment]:
        return iter(self.segments)

    def __len__(self) -> int:
        return len(self.segments)

    @property
    def makespan(self) -> float:
        return max((s.end for s in self.segments), default=0.0)
