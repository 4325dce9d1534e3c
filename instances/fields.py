"""Checks of single fields shared by the model's dataclasses: each returns the value
(normalised) or raises :class:`InstanceError` naming the field and the bad value."""

from __future__ import annotations

import math
from typing import Any, get_type_hints

from instances.errors import InstanceError
from instances.limits import MAX_ID_CHARS


def positive(
    path: str, value: float, *, allow_zero: bool = False, upper: float | None = None
) -> float:
    """``value`` as a float in (0, upper] (or [0, upper]); else an error naming ``path``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InstanceError(path, value, "must be a number")
    try:
        v = float(value)
    except OverflowError:  # an integer beyond any float
        v = math.inf
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise InstanceError(
            path,
            value,
            "must be a positive number" if not allow_zero else "must be a non-negative number",
        )
    if upper is not None and v > upper:
        raise InstanceError(path, value, f"must be at most {upper:g} (docs/model.md, bounds)")
    return v


def count(path: str, value: Any, upper: int) -> int:
    """A whole number in [1, upper]."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InstanceError(path, value, "must be a positive integer")
    if value > upper:
        raise InstanceError(path, value, f"must be at most {upper} (docs/model.md, bounds)")
    return value


def ident(path: str, value: Any) -> str:
    """An id or name: non-empty, printable (it reaches terminals, plots and pages)."""
    if not isinstance(value, str) or not value.strip():
        raise InstanceError(path, value, "must be a non-empty string")
    if len(value) > MAX_ID_CHARS or not value.isprintable():
        raise InstanceError(
            path, value, f"must be at most {MAX_ID_CHARS} printable characters (no control codes)"
        )
    return value


def index(path: str, items: tuple[Any, ...], key: str) -> dict[str, Any]:
    """``items`` by their attribute ``key``; a repeated key is refused naming
    ``path[i].key``."""
    out: dict[str, Any] = {}
    for i, it in enumerate(items):
        k = getattr(it, key)
        if k in out:
            raise InstanceError(f"{path}[{i}].{key}", k, f"duplicate {key}")
        out[k] = it
    return out


# each class's resolved annotations: resolving compiles every annotation's text, and
# generator specs and policy options are built, and their fields checked, by the thousand
_HINTS: dict[type, dict[str, Any]] = {}


def field_types(cls: type) -> dict[str, Any]:
    """``typing.get_type_hints(cls)``, resolved once per class."""
    if cls not in _HINTS:
        _HINTS[cls] = get_type_hints(cls)
    return _HINTS[cls]
