"""Policy options: one frozen dataclass per policy, read from keyword arguments or a
campaign file and checked by name and type before any run.

A policy class declares ``Options`` (a frozen dataclass on :class:`CheckedOptions` whose
fields have defaults) and takes ``Options`` as its first argument. Fields are typed
``float``, ``int``, ``bool``, an :class:`enum.Enum` or a ``Literal`` of strings; times
in the model's hours carry ``_hours`` in their names, solver limits ``_seconds``. Each
field is checked by its type when the dataclass is built, however it is built (directly
or from a campaign file), then by the class's ``ranges`` (with :func:`require`); an
error names the class, or the policy where :func:`build_options` built it. The PyVRP
parameter classes (``SolveParams``) are the model followed here.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import numbers
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from instances.fields import field_types, huge_integer, is_number
from instances.limits import MAX_HOURS, MIN_SLOT_HOURS

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class NoOptions:
    """The options of a policy that has none."""


class OptionError(ValueError):
    """An option that does not exist, has the wrong type, or is out of range; ``bare``
    is the message without the class or policy it names first."""

    def __init__(self, message: str, *, owner: str | None = None) -> None:
        self.bare = message
        super().__init__(f"{owner}: {message}" if owner else message)


def require(ok: bool, name: str, value: object, what: str) -> None:
    """Raise :class:`OptionError` naming the option unless ``ok``."""
    if not ok:
        raise OptionError(f"{name} = {value!r}: {what}")


def positive_hours(name: str, value: float) -> None:
    """A period in hours (a round, a lease, a quantum): at least
    :data:`MIN_SLOT_HOURS`, the shortest slot (``5e-324`` overflowed a round's count,
    ``1e-6`` ran a 3-job instance past 90 s), and at most :data:`MAX_HOURS`, the
    model's span of time (a longer one overflows the slot counts derived from it)."""
    require(
        math.isfinite(value) and MIN_SLOT_HOURS <= value <= MAX_HOURS,
        name,
        value,
        f"must be a number of hours in [{MIN_SLOT_HOURS:g}, {MAX_HOURS:g}]",
    )


def hours(name: str, value: float) -> None:
    """A duration in hours that may be zero: at most :data:`MAX_HOURS`."""
    require(
        math.isfinite(value) and 0 <= value <= MAX_HOURS,
        name,
        value,
        f"must be a number of hours in [0, {MAX_HOURS:g}]",
    )


def _coerce(name: str, kind: Any, value: Any) -> Any:
    """``value`` as an option of type ``kind``; ints are accepted for floats, an enum's
    value (a string in a campaign file) for the enum; nothing else is converted."""
    if kind is bool:
        require(isinstance(value, bool), name, value, "must be true or false")
        return value
    if kind is int:
        # numpy's integers too, as every count of the model takes them
        require(
            isinstance(value, numbers.Integral) and not isinstance(value, bool),
            name,
            value,
            "must be an integer",
        )
        return int(value)
    if kind is float:
        # infinity is a value some options mean (first fit's share ratio: never share);
        # each dataclass checks its own range
        ok = is_number(value)
        require(ok, name, value, "must be a number")
        try:
            number = float(value)
        except OverflowError:  # an integer beyond any double, such as 10**400
            raise OptionError(f"{name} = {huge_integer(value)}: too large for a number") from None
        require(not math.isnan(number), name, value, "must be a number, not NaN")
        return number
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        if isinstance(value, kind):
            return value
        names = ", ".join(repr(m.value) for m in kind)
        for member in kind:
            if member.value == value:
                return member
        raise OptionError(f"{name} = {value!r}: must be one of {names}")
    if typing.get_origin(kind) is Literal:
        allowed = typing.get_args(kind)
        require(value in allowed, name, value, f"must be one of {', '.join(map(repr, allowed))}")
        return value
    raise TypeError(f"option {name}: unsupported type {kind!r}")  # a policy's own defect


class CheckedOptions:
    """The base of every options dataclass: built directly (``StsOptions(lookahead=
    "false")`` ran with the look-ahead on, a misspelt order as the default one) or from
    a campaign file, each field is checked by its type and taken as :func:`_coerce`
    takes it (an int for a float, an enum's value for the enum), then by the class's
    :meth:`ranges`; an error names the class and the option."""

    def __post_init__(self) -> None:
        hints = field_types(type(self))
        try:
            for f in dataclasses.fields(self):  # type: ignore[arg-type]
                value = _coerce(f.name, hints[f.name], getattr(self, f.name))
                object.__setattr__(self, f.name, value)  # frozen: as its own __init__ does
            self.ranges()
        except OptionError as err:
            raise OptionError(err.bare, owner=type(self).__name__) from None

    def ranges(self) -> None:
        """The options' ranges, checked with :func:`require` once every field has its
        type (a subclass calls its parent's first)."""


def option_names(cls: type) -> tuple[str, ...]:
    """The options an options dataclass declares, in order."""
    return tuple(f.name for f in dataclasses.fields(cls))


def build_options(cls: type[T], values: Mapping[str, Any], *, where: str) -> T:
    """``cls(**values)`` with every name and type checked; errors name ``where`` (the
    policy) and the option."""
    known = option_names(cls)
    try:
        for key in values:
            if key not in known:
                listed = ", ".join(known) if known else "none"
                raise OptionError(f"unknown option {key!r} (options: {listed})")
        if not issubclass(cls, CheckedOptions):  # no fields, or a class without checks
            hints = field_types(cls)
            values = {k: _coerce(k, hints[k], v) for k, v in values.items()}
        return cls(**values)  # its types and ranges checked as it is built
    except OptionError as err:
        raise OptionError(err.bare, owner=where) from None


def as_dict(options: object) -> dict[str, Any]:
    """An options dataclass as plain values (an enum as its value), e.g. for a report."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(options):  # type: ignore[arg-type]
        v = getattr(options, f.name)
        out[f.name] = v.value if isinstance(v, enum.Enum) else v
    return out
