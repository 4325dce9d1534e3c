"""A fast yes/no: does a JSON document pass both checks of its structure, the numbers
check (:func:`instances.jsonfile.check_numbers`) and the JSON Schema?

The reader asks this first. ``jsonschema`` takes seconds on a whole trace (the Philly
week: about 5 s of its 7 s of reading) because it walks every value through its
generic machinery; the schemas here use a dozen keywords, which compile into a few
Python closures that walk the same document in a tenth of the time. Only a yes is
trusted: on a no, the reader runs ``check_numbers`` and ``jsonschema`` as before, and
they find and word the error, so every message stays exactly what it was. A yes must
therefore never be given where either would refuse: the closures are stricter than the
schema where that is simpler (exact built-in types, no subclasses), a value the schema
does not describe down to its numbers is a no, and a schema with a keyword not known
here compiles to ``None`` (always ask ``jsonschema``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]

MAX_EXACT_INT = 2**53  # as check_numbers: integers beyond are not exact as doubles

# keywords that describe and constrain nothing
_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "title", "description", "default"})
_KNOWN = _ANNOTATIONS | {
    "type",
    "const",
    "enum",
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "properties",
    "additionalProperties",
    "required",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "oneOf",
}


class _Unsupported(Exception):
    """A schema this module does not compile (jsonschema alone decides)."""


def compile_schema(schema: dict[str, Any]) -> Check | None:
    """A function telling whether a document passes ``check_numbers`` and ``schema``
    (``True`` only if both would accept it), or ``None`` for a schema using keywords
    not compiled here."""
    try:
        return _slot(schema)
    except _Unsupported:
        return None


def _finite_number(v: Any) -> bool:
    # exact types: bool is an int subclass, and jsonschema's number excludes it
    t = type(v)
    if t is float:
        return math.isfinite(v)
    return t is int and -MAX_EXACT_INT <= v <= MAX_EXACT_INT


def _is_integer(v: Any) -> bool:
    # JSON Schema 2020-12: a number with a zero fractional part is an integer (1.0)
    t = type(v)
    if t is int:
        return -MAX_EXACT_INT <= v <= MAX_EXACT_INT
    return t is float and math.isfinite(v) and v.is_integer()


def _scalar(v: Any) -> bool:
    """A value check_numbers accepts with nothing inside: text, true/false, null or a
    finite number."""
    return type(v) in (str, bool, type(None)) or _finite_number(v)


_TYPES: dict[str, Check] = {
    "number": _finite_number,
    "integer": _is_integer,
    "string": lambda v: type(v) is str,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
}


def _slot(s: Any) -> Check:
    """The check of a value entering a subschema (the document, a property's value, an
    array's item): the subschema's, and where it does not describe the value down to
    its numbers, only a scalar passes (a NaN, a 1e400 or a container it does not
    describe goes to the slow path)."""
    check = _node(s)
    if _covers_contents(s):
        return check
    return lambda v: _scalar(v) and check(v)


def _covers_contents(s: dict[str, Any]) -> bool:
    """Whether every value valid here has its numbers checked: its type is named (each
    type check of :data:`_TYPES` refuses numbers check_numbers would), containers have
    every member described, or it is one of a few strings."""
    types = s.get("type")
    if types is None:
        return "const" in s or "enum" in s  # strings only (see _values)
    kinds = {types} if isinstance(types, str) else set(types)
    if "object" in kinds and s.get("additionalProperties") is not False:
        return False
    if "array" in kinds and "items" not in s:
        return s.get("maxItems", math.inf) <= len(s.get("prefixItems", ()))
    return True


def _node(s: Any) -> Check:
    """The checks of one subschema, applied to the value in place."""
    if not isinstance(s, dict) or not set(s) <= _KNOWN:
        raise _Unsupported
    typed = _object(s) or _array(s)  # each checks the type itself
    checks = [c for c in (typed or _type(s), _values(s), _bounds(s)) if c]
    if "oneOf" in s:
        checks.append(_one_of(s))
    return _all(checks)


def _all(checks: list[Check]) -> Check:
    """All of ``checks``, in order (two or three unrolled: called per object of a
    trace, an ``all()`` over a generator costs more than the checks)."""
    if not checks:
        return lambda v: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        a, b = checks
        return lambda v: a(v) and b(v)
    if len(checks) == 3:
        a, b, c = checks
        return lambda v: a(v) and b(v) and c(v)
    return lambda v: all(c(v) for c in checks)


def _type(s: dict[str, Any]) -> Check | None:
    types = s.get("type")
    if types is None:
        return None
    names = [types] if isinstance(types, str) else list(types)
    if not names or any(n not in _TYPES for n in names):
        raise _Unsupported
    checks = [_TYPES[n] for n in names]
    if len(checks) == 1:
        return checks[0]
    return lambda v: any(c(v) for c in checks)


def _values(s: dict[str, Any]) -> Check | None:
    """``const`` and ``enum`` of strings (the only ones the schemas use)."""
    if "const" not in s and "enum" not in s:
        return None
    if "const" in s and "enum" in s:
        raise _Unsupported
    allowed = [s["const"]] if "const" in s else list(s["enum"])
    if not all(type(a) is str for a in allowed):
        raise _Unsupported
    names = frozenset(allowed)
    return lambda v: type(v) is str and v in names


def _bounds(s: dict[str, Any]) -> Check | None:
    """``minimum``, ``exclusiveMinimum`` (numbers) and ``minLength`` (strings), each
    ignored by JSON Schema for values of other types."""
    low, strict, length = s.get("minimum"), s.get("exclusiveMinimum"), s.get("minLength")
    for bound in (low, strict):
        if bound is not None and type(bound) not in (int, float):
            raise _Unsupported
    if length is not None and type(length) is not int:
        raise _Unsupported
    checks: list[Check] = []
    if low is not None:
        checks.append(lambda v: type(v) not in (int, float) or v >= low)
    if strict is not None:
        checks.append(lambda v: type(v) not in (int, float) or v > strict)
    if length is not None:
        checks.append(lambda v: type(v) is not str or len(v) >= length)
    return _all(checks) if checks else None


def _object(s: dict[str, Any]) -> Check | None:
    """An object schema (``type: object``, its properties closed): the type, the
    required names, no other names, and each property's value. Other object schemas
    are not compiled."""
    if not {"properties", "additionalProperties"} & set(s):
        return _required(s)
    if s.get("type") != "object" or s.get("additionalProperties") is not False:
        raise _Unsupported
    props = {k: _slot(v) for k, v in s.get("properties", {}).items()}
    names = frozenset(props)
    required = frozenset(s.get("required", ()))
    if not required <= names:
        raise _Unsupported  # never met by a closed object; let jsonschema say so

    def check(v: Any) -> bool:
        if type(v) is not dict:
            return False
        keys = v.keys()
        if not required <= keys or not keys <= names:
            return False
        for k, x in v.items():  # noqa: SIM110 (faster than all() over a generator)
            if not props[k](x):
                return False
        return True

    return check


def _required(s: dict[str, Any]) -> Check | None:
    """``required`` alone (as in a ``oneOf`` option): names an object must have; any
    other value passes (JSON Schema applies it to objects only)."""
    if "required" not in s:
        return None
    if s.get("type") not in (None, "object"):
        raise _Unsupported
    required = frozenset(s["required"])
    if s.get("type") == "object":
        return lambda v: type(v) is dict and required <= v.keys()
    return lambda v: not isinstance(v, dict) or required <= v.keys()


def _array(s: dict[str, Any]) -> Check | None:
    """An array schema (``type: array``): the type, the length bounds, each item of
    the prefix and each item after it."""
    if not {"items", "prefixItems", "minItems", "maxItems"} & set(s):
        return None
    if s.get("type") != "array" or ("items" not in s and "maxItems" not in s):
        raise _Unsupported
    item = _slot(s["items"]) if "items" in s else None
    prefix = [_slot(p) for p in s.get("prefixItems", ())]
    low, high = s.get("minItems", 0), s.get("maxItems")
    if type(low) is not int or (high is not None and type(high) is not int):
        raise _Unsupported
    if item is None and (high is None or high > len(prefix)):
        raise _Unsupported  # items after the prefix would go unchecked (numbers)

    def check(v: Any) -> bool:
        if type(v) is not list:
            return False
        n = len(v)
        if n < low or (high is not None and n > high):
            return False
        if prefix and not all(c(x) for c, x in zip(prefix, v, strict=False)):
            return False
        return item is None or all(map(item, v[len(prefix) :] if prefix else v))

    return check


def _one_of(s: dict[str, Any]) -> Check:
    """Exactly one option holds. Each option must be checked exactly here, not just
    strictly (a strict no for an option jsonschema finds valid would turn its two into
    one): options of ``required`` alone, which are."""
    if not all(isinstance(o, dict) and set(o) - _ANNOTATIONS == {"required"} for o in s["oneOf"]):
        raise _Unsupported
    options = [_node(o) for o in s["oneOf"]]
    return lambda v: [c(v) for c in options].count(True) == 1
