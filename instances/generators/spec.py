"""What every generator spec shares: the fields of the instance's cost options and of
its jobs' shape, and the checks of every field, in one place.

A generator's spec is a frozen dataclass deriving from :class:`GeneratorSpec`, every
field with a default. Its ``__post_init__`` (this class's, then the subclass's own
checks) refuses a value naming the field, before a generator sees it:

- every field is of its annotated type (a campaign file's value reaches the generator
  as the spec says, or is refused naming the field, never as a ``TypeError`` in it);
- a number, or each number of a tuple field, lies within its :class:`Bound` in
  ``BOUNDS`` (a subclass extends the table with its own fields);
- a field typed ``tuple[T, T]`` is a range ``(low, high)``: ``low <= high``;
- each pair of fields in ``ORDERED`` (e.g. ``min_hours``, ``max_hours``) does not
  decrease;
- ``relaunch``, ``tardiness`` and ``early_stopping`` are among their modes.

So a field added to a subclass is type-checked with no new code, and range-checked once
its bound is in ``BOUNDS``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import UnionType
from typing import Any, ClassVar, Union, get_args, get_origin

from instances.errors import InstanceError
from instances.fields import field_types, is_number
from instances.generators.early_stopping import FAMILIES
from instances.generators.measured_overheads import RELAUNCH_MODES
from instances.generators.power import parse_idle, parse_power_off
from instances.generators.prices import parse_prices
from instances.limits import (
    MAX_EPOCHS,
    MAX_PRICE,
    MAX_SHARE,
    MAX_SLOT_HOURS,
    MAX_STOPS,
    MIN_SLOT_HOURS,
)
from instances.model import TARDINESS_MODES

# a due date a thousand times the job's fastest time is no due date at all
MAX_TIGHTNESS = 1e3
# jobs (or bursts) per hour: below this the arrivals span more than the bound on times
# (instances/limits.py), and a rate of 5e-324 overflows their gaps to inf
MIN_RATE = 1e-6


@dataclass(frozen=True)
class Bound:
    """The interval a number must lie in: ``[low, high]``, or ``(low, high]`` if
    ``open_low`` (a factor that must be positive)."""

    low: float
    high: float
    open_low: bool = False

    def holds(self, value: float) -> bool:
        above = value > self.low if self.open_low else value >= self.low
        return above and value <= self.high

    def __str__(self) -> str:
        return f"{'(' if self.open_low else '['}{self.low:g}, {self.high:g}]"


@dataclass(frozen=True)
class GeneratorSpec:
    """The fields every generator's spec has. Times in hours.

    ``epochs``: range of the jobs' maximum epochs; ``blocks``: stopping points per job;
    ``early_stopping``: the family of the jobs' stopping distributions;
    ``tightness``: range of the factor a job's due date gives its fastest time;
    ``energy_price`` (per kWh), ``tardiness``, ``slot`` and ``max_share``: the
    instance's cost options; ``relaunch``: measured relaunch overheads, or none;
    ``prices``: a bundled real series laid over the instance (``NAME[:OFFSET]``, hours
    into it; generators/prices.py), ``carbon_price`` the price of a tonne of its carbon;
    ``idle`` and ``power_off``: idle power and empty nodes powered off, laid over the
    instance (generators/power.py).
    """

    epochs: tuple[int, int] = (10, 50)
    blocks: int = 5
    early_stopping: str = "none"
    tightness: tuple[float, float] = (1.5, 3.0)
    energy_price: float = 0.2
    tardiness: str = "worst_case"
    slot: float | None = None
    max_share: int = 2
    relaunch: str = "measured"  # per-job relaunch overheads (generators/measured_overheads.py)
    # a bundled real series laid over the instance, NAME[:OFFSET hours] (generators/prices.py),
    # and the price of a tonne of its carbon; None: energy_price at every hour
    prices: str | None = None
    carbon_price: float = 0.0
    # idle power (a level or IDLE_FRACTION,BASE_W_PER_GPU) and the power-off option
    # (AFTER_H[,BOOT_H[,BOOT_KWH]]) laid over the instance (generators/power.py); None:
    # busy GPUs only, every node always on
    idle: str | None = None
    power_off: str | None = None

    BOUNDS: ClassVar[Mapping[str, Bound]] = {
        "epochs": Bound(1, MAX_EPOCHS),
        "blocks": Bound(1, MAX_STOPS),
        "tightness": Bound(0, MAX_TIGHTNESS, open_low=True),
        "energy_price": Bound(0, MAX_PRICE),
        "slot": Bound(MIN_SLOT_HOURS, MAX_SLOT_HOURS),
        "max_share": Bound(1, MAX_SHARE),
        "carbon_price": Bound(0, MAX_PRICE),
    }
    ORDERED: ClassVar[tuple[tuple[str, str], ...]] = ()
    EARLY_STOPPING: ClassVar[tuple[str, ...]] = FAMILIES

    def __post_init__(self) -> None:
        check_types(self)
        check_bounds(self)
        for mode, known in (
            ("relaunch", RELAUNCH_MODES),
            ("tardiness", TARDINESS_MODES),
            ("early_stopping", self.EARLY_STOPPING),
        ):
            if getattr(self, mode) not in known:
                raise InstanceError(mode, getattr(self, mode), f"must be one of {known}")
        if self.idle is not None:
            parse_idle(self.idle)
        if self.power_off is not None:
            parse_power_off(self.power_off)
        if self.prices is not None:
            parse_prices(self.prices)
        elif self.carbon_price > 0:
            raise InstanceError(
                "carbon_price", self.carbon_price, "prices a carbon series: give prices too"
            )


def check_relaunch(mode: Any) -> None:
    """The ``relaunch`` option of a generator: measured overheads, or none."""
    if mode not in RELAUNCH_MODES:
        raise InstanceError("relaunch", mode, f"must be one of {RELAUNCH_MODES}")


def check_types(spec: GeneratorSpec) -> None:
    """Every field of ``spec`` of its annotated type."""
    hints = field_types(type(spec))
    for f in dataclasses.fields(spec):
        value = getattr(spec, f.name)
        problem = _type_problem(value, hints[f.name])
        if problem:
            raise InstanceError(f.name, value, f"must be {problem}")


def check_bounds(spec: GeneratorSpec) -> None:
    """Each number within its bound, each ``tuple[T, T]`` field a range, each
    ``ORDERED`` pair not decreasing (types already checked)."""
    hints = field_types(type(spec))
    for name, bound in spec.BOUNDS.items():
        value = getattr(spec, name)
        items = value if isinstance(value, tuple) else (value,)
        if any(x is not None and not bound.holds(x) for x in items):
            if isinstance(value, tuple):
                raise InstanceError(name, list(value), f"each must be in {bound}")
            raise InstanceError(name, value, f"must be in {bound}")
    for f in dataclasses.fields(spec):
        args = get_args(hints[f.name])
        value = getattr(spec, f.name)
        is_range = get_origin(hints[f.name]) is tuple and len(args) == 2 and args[0] == args[1]
        if is_range and value[0] > value[1]:
            raise InstanceError(f.name, list(value), "a range must be [low, high], low <= high")
    for low, high in spec.ORDERED:
        if getattr(spec, low) > getattr(spec, high):
            top = getattr(spec, high)
            raise InstanceError(low, getattr(spec, low), f"must be at most {high} ({top})")


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
        ok = is_number(value)
        # isfinite on floats only: a 400-digit integer would overflow converted to one
        # (it compares exactly with the bound)
        if not ok or (isinstance(value, float) and not math.isfinite(value)):
            return "a finite number"
        # above every field's own bound, which would name the range
        return "" if abs(value) <= 1e15 else "a number of at most 1e15 in size"
    if hint is str:
        return "" if isinstance(value, str) else "a string"
    return ""
