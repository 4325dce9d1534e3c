"""The policy interface: the state of the cluster in, allocations out (docs/model.md,
'The event engine').

A policy never sees the sampled number of epochs of a job, only its progress.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.power import PowerStates
from instances import Instance, Job


@dataclass(frozen=True)
class JobStatus:
    """A job present in the system (released, not finished)."""

    job: Job
    progress: float  # epochs done so far
    allocation: Allocation | None  # what it runs on now; None while it waits
    # hours of relaunch overhead its current allocation still has to run (docs/model.md,
    # E1); any new allocation pays the job's full overhead, ``instance.relaunch(job)``
    overhead_left: float = 0.0

    @property
    def remaining(self) -> float:
        """Worst-case remaining epochs."""
        return self.job.max_epochs - self.progress


@dataclass(frozen=True)
class SchedulerState:
    """What a policy sees at a decision point.

    ``occupancy`` is a private copy: a policy may place and release on it freely while
    it plans; only the returned :class:`Decision` changes the cluster.
    """

    time: float
    instance: Instance
    jobs: tuple[JobStatus, ...]  # in arrival order
    occupancy: Occupancy
    # where empty nodes are powered off: the nodes booting and off now (docs/model.md);
    # None where every node is always on
    power: PowerStates | None = None


@dataclass(frozen=True)
class Decision:
    """Changes to make now.

    ``assign[job] = allocation`` starts the job there, or moves it (a new configuration or
    new GPUs); ``assign[job] = None`` pauses it (progress is kept). Jobs not named keep
    what they have. ``wake_at`` asks for another decision at that time even if nothing
    else happens (e.g. an STS profile threshold).
    """

    assign: Mapping[str, Allocation | None] = field(default_factory=dict)
    wake_at: float | None = None


class Policy(Protocol):
    """A scheduling policy. Same seed, same decisions.

    A policy that keeps memory from one decision to the next (a clock, counters, what it
    learnt of the jobs) may also define ``begin(instance)``: the engine calls it before
    a run's first decision, and the policy forgets the last run there, so that a policy
    object run again decides as a new one would (:func:`begin_run`).
    """

    name: str

    def decide(self, state: SchedulerState) -> Decision:
        """The changes to make at ``state.time``."""
        ...


def begin_run(policy: object, instance: Instance) -> None:
    """Tell ``policy`` a new run on ``instance`` begins, where it keeps memory of a run
    (its ``begin``; a policy without one keeps none)."""
    begin = getattr(policy, "begin", None)
    if callable(begin):
        begin(instance)
