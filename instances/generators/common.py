"""What every generator shares: the due-date rule, the tightness draw, and the instance
built with the spec's cost options (the spec's fields: ``generators/spec.py``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from instances.generators.power import lay_idle, lay_power_off
from instances.generators.prices import lay_prices
from instances.generators.spec import GeneratorSpec
from instances.model import GpuType, Instance, Job, Node
from instances.topology import Topology


def draw_tightness(rng: np.random.Generator, spec: GeneratorSpec) -> float:
    """A job's tightness factor, uniform in ``spec.tightness``."""
    return float(rng.uniform(*spec.tightness))


def due_date(
    release: float,
    factor: float,
    fastest: float,
    slot: float | None = None,
    overhead: float = 0.0,
    alone: float | None = None,
) -> float:
    """Release + tightness factor x the job's fastest worst-case time, to 4 decimals.

    Never before the job could finish alone: its first start's relaunch ``overhead``
    and its time ``alone`` on its fastest configuration the cluster can host (default
    ``fastest``) after the release (slotted, from the first slot boundary after the
    release, rounded up to whole slots); otherwise no plan could meet it and the
    instance would only measure tardiness. That floor is rounded *up* to 4 decimals:
    rounded to the nearest, a due date at the floor fell up to 0.18 s before any
    possible finish, and every plan missed it.
    """
    quickest = fastest if alone is None else alone
    if slot is not None:
        start = math.ceil(release / slot - 1e-9) * slot
        floor = start + math.ceil((quickest + overhead) / slot - 1e-9) * slot
    else:
        floor = release + quickest + overhead
    return max(round(release + factor * fastest, 4), _round_up(floor, 4))


def _round_up(x: float, digits: int) -> float:
    """The smallest number of ``digits`` decimals (as a float) at or above ``x``."""
    nearest = round(x, digits)
    return nearest if nearest >= x else round(nearest + 10.0**-digits, digits)


def assemble(
    types: Sequence[GpuType],
    nodes: Sequence[Node],
    jobs: Sequence[Job],
    spec: GeneratorSpec,
    name: str,
    topology: Topology | None = None,
) -> Instance:
    inst = Instance(
        tuple(types),
        tuple(nodes),
        tuple(jobs),
        energy_price=spec.energy_price,
        tardiness=spec.tardiness,  # type: ignore[arg-type]
        slot=spec.slot,
        max_share=spec.max_share,
        name=name,
        topology=topology,
    )
    if spec.idle is not None:
        inst = lay_idle(inst, spec.idle)
    if spec.power_off is not None:
        inst = lay_power_off(inst, spec.power_off)
    if spec.prices is None:
        return inst
    return lay_prices(inst, spec.prices, spec.carbon_price)
