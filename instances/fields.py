"""Checks of single fields shared by the model's dataclasses: each returns the value
(normalised) or raises :class:`InstanceError` naming the field and the bad value."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, TypeGuard, get_type_hints

from instances.errors import InstanceError
from instances.limits import MAX_ID_CHARS


def positive(
    path: str, value: float, *, allow_zero: bool = False, upper: float | None = None
) -> float:
    """``value`` as a float in (0, upper] (or [0, upper]); else an error naming ``path``."""
    if type(value) is not float and not is_number(value):
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
    return v + 0.0  # -0.0 as 0.0: it printed, and was written, with its sign


def is_number(value: Any) -> bool:
    """A real number, numpy's included (``np.float32``, ``np.int64``), and not a bool:
    ``True`` is an int to Python and ``1.0`` to float(), which the reader refuses."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def huge_integer(value: int) -> str:
    """An integer past any double (``10**400``), named by its size: ``str()`` may refuse
    it, and a cut of its digits reads as a small number."""
    return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1:,} digits"


def in_order(values: Any) -> bool:
    """Whether ``values`` is a collection whose order is the caller's: a list, tuple,
    array or generator, not a string (``"12"`` would read as 1 and 2), a set or a
    mapping."""
    unordered = isinstance(values, str | bytes | Mapping | AbstractSet)
    return isinstance(values, Iterable) and not unordered


def numbers_in(path: str, values: Any) -> tuple[float, ...]:
    """``values`` as a tuple of floats, in order (:func:`in_order`), a bad entry named
    ``path[i]``."""
    if not in_order(values):
        raise InstanceError(path, values, "must be a list of numbers")
    out = []
    for i, v in enumerate(values):
        if type(v) is not float and not is_number(v):
            raise InstanceError(f"{path}[{i}]", v, "must be a number")
        try:
            out.append(float(v))
        except OverflowError:  # an integer beyond any float: the range checks name it
            out.append(math.inf)
    return tuple(out)


def whole_at_least(value: object, least: int) -> TypeGuard[int]:
    """Whether ``value`` is a whole number (numpy's included, not a bool) of at least
    ``least``: the test of every count, seed and limit an API call takes."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return False
    return int(value) >= least


# seeds are 32-bit (``0 <= seed < SEEDS``): scikit-learn's forest (``liquid-forest``)
# takes no larger one, so the command line, campaign files, policies and the engine
# bound them alike
SEEDS = 2**32


def seed_number(name: str, value: object) -> int:
    """``value`` as an int if it is a whole number in ``[0, SEEDS)``, else a ``ValueError``
    naming ``name``."""
    if not (whole_at_least(value, 0) and int(value) < SEEDS):
        raise ValueError(f"{name} = {value!r}: must be a whole number from 0 to {SEEDS - 1}")
    return int(value)


def whole_number(name: str, value: object, least: int) -> int:
    """``value`` as an int if :func:`whole_at_least` ``least``, else a ``ValueError``
    naming ``name``: an API call's sample count or event limit."""
    if not whole_at_least(value, least):
        raise ValueError(f"{name} = {value!r}: must be a whole number, at least {least}")
    return int(value)


def count(path: str, value: Any, upper: int) -> int:
    """A whole number in [1, upper]."""
    if not whole_at_least(value, 1):
        raise InstanceError(path, value, "must be a positive integer")
    if value > upper:
        raise InstanceError(path, value, f"must be at most {upper} (docs/model.md, bounds)")
    return int(value)


def items_of(path: str, values: Any, cls: type) -> tuple[Any, ...]:
    """``values`` as a tuple of ``cls``, in order (:func:`in_order`), each entry a
    ``cls``, a bad one named ``path[i]``."""
    if not in_order(values):
        raise InstanceError(path, values, f"must be a list of {cls.__name__}")
    out = tuple(values)
    for i, v in enumerate(out):
        if not isinstance(v, cls):
            raise InstanceError(f"{path}[{i}]", v, f"must be a {cls.__name__}")
    return out


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
