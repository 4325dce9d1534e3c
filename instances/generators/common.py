"""What both generators share: the due-date rule and the instance's cost options."""

from __future__ import annotations

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


def due_date(rng: np.random.Generator, release: float, fastest: float, spec: CostOptions) -> float:
    """Release + a tightness factor (drawn in ``spec.tightness``) x the fastest worst case."""
    return round(release + float(rng.uniform(*spec.tightness)) * fastest, 4)


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
