"""What both generators share: the due-date rule and the instance's cost options."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from types import UnionType
from typing import Any, Protocol, Union, get_args, get_origin, get_type_hints

import numpy as np

from instances.errors import InstanceError
from instances.generators.measured_overheads import RELAUNCH_MODES
from instances.model import GpuType, Instance, Job, Node
from instances.topology import Topology


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
    spec: CostOptions,
    name: str,
    topology: Topology | None = None,
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
        topology=topology,
    )


def check_relaunch(mode: str) -> None:
    """The ``relaunch`` option of a generator: measured overheads, or none."""
    if mode not in RELAUNCH_MODES:
        raise InstanceError("relaunch", mode, f"must be one of {RELAUNCH_MODES}")


def check_spec(spec: object, counts: dict[str, int]) -> None:
    """Every field of a generator spec (a dataclass) of its annotated type, and each
    count in ``counts`` within 1..bound: a campaign file's value reaches the generator as
    the spec says, or is refused naming the field, never as a ``TypeError`` inside it."""
    hints = get_type_hints(type(spec))
    for f in dataclasses.fields(spec):  # type: ignore[arg-type]
        value = getattr(spec, f.name)
        problem = _type_problem(value, hints[f.name])
        if problem:
            raise InstanceError(f.name, value, f"must be {problem}")
    for name, bound in counts.items():
        value = getattr(spec, name)
        if not 1 <= value <= bound:
            raise InstanceError(name, value, f"must be between 1 and {bound}")


def _type_problem(value: Any, hint: Any) -> str:
    """What ``value`` should be to match ``hint`` (empty if it does)."""
    origin, args = get_origin(hint), get_args(hint)
    if origin in (Union, UnionType):
        if value is None and type(None) in args:
            return ""
        (inner,) = [a for a in args if a is not type(None)]
        return _type_problem(value, inner)
    if origin is tuple:
        wanted = "a non-empty list" if args[1:] == (Ellipsis,) else f"a list of {len(args)}"
        if not isinstance(value, tuple):
            return wanted
        items = args[:1] * len(value) if args[1:] == (Ellipsis,) else args
        if not value or len(items) != len(value):
            return wanted
        for v, a in zip(value, items, strict=True):
            problem = _type_problem(v, a)
            if problem:
                return f"a list of items each {problem}"
        return ""
    if hint is bool:
        return "" if isinstance(value, bool) else "true or false"
    if hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool) and abs(value) <= 2**53
        return "" if ok else "a whole number"
    if hint is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        # the bound first: a 400-digit integer compares exactly, but isfinite would
        # convert it to a float and overflow
        return "" if ok and abs(value) <= 1e15 and math.isfinite(value) else "a finite number"
    if hint is str:
        return "" if isinstance(value, str) else "a string"
    return ""
