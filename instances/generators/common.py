"""What both generators share: the due-date rule and the instance's cost options."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from instances.model import GpuType, Instance, Job, Node


class CostOptions(Protocol):
    """The fields every generator spec has (read-only: specs are frozen dataclasses)."""

    @property
    def energy_price(self) -> float: ...
    @property
    def tardiness(self) -> str: ...
    @property
    def slot(self) -> float | None: ...
    @property
    def max_share(self) -> int: ...
    @property
    def tightness(self) -> tuple[float, float]: ...


def draw_tightness(rng: np.random.Generator, spec: CostOptions) -> float:
    """A job's tightness factor, uniform in ``spec.tightness``."""
    return float(rng.uniform(*spec.tightness))


def due_date(release: float, factor: float, fastest: float, slot: float | None = None) -> float:
    """Release + tightness factor x the job's fastest worst-case time (4 decimals).

    Slotted, a job starts at the first slot boundary after its release and ends at a slot
    end, so the due date is at least that start + the fastest time rounded up to whole
    slots: otherwise no plan could meet it and the instance would only measure tardiness.
    """
    due = release + factor * fastest
    if slot is not None:
        start = math.ceil(release / slot - 1e-9) * slot
        due = max(due, start + math.ceil(fastest / slot - 1e-9) * slot)
    return round(due, 4)


def assemble(
    types: Sequence[GpuType],
    nodes: Sequence[Node],
    jobs: Sequence[Job],
    spec: CostOptions,
    name: str,
) -> Instance:
    return Instance(
        tuple(types),
        tuple(nodes),
        tuple(jobs),
        energy_price=spec.energy_price,
        tardiness=spec.tardiness,  # type: ignore[arg-type]
        slot=spec.slot,
        max_share=spec.max_share,
        name=name,
    )
