"""A JSON document read from a user's file, or written to one, whatever its bytes.

Every JSON file the tool reads (instances, plans, stopping fits) comes through
:func:`load_json_file`: a regular file, at most ``MAX_FILE_BYTES`` (gunzipped a
piece at a time if its content is gzip), UTF-8, JSON with no key twice in one object
and no number a double cannot hold; :func:`check_numbers` then refuses non-finite
numbers and deep nesting by the field's path. Each refusal is an
:class:`InstanceError` naming the file or the field. Files are written whole or not at
all (:func:`write_atomic`). Streams (histories) are read by :mod:`instances.files`,
campaign files (TOML) by :mod:`experiments.campaign_file`.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import math
import os
import tempfile
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

from instances.errors import InstanceError
from instances.files import GZIP_MAGIC
from instances.limits import MAX_FILE_BYTES, MAX_NESTING


def json_path(path: Any) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def file_path(source: object, what: str) -> Path:
    """``source`` as a path, or an :class:`InstanceError` naming it (``Path()`` of None
    or a number raised a bare ``TypeError`` naming no argument, a hostile-input review)."""
    if isinstance(source, str | os.PathLike) and not isinstance(source, bytes):
        return Path(source)
    why = f"the {what} file must be a path (str or os.PathLike), not {type(source).__name__}"
    raise InstanceError(what.replace(" ", "_"), source, why)  # (which cuts a long repr)


def load_json_file(source: str | Path, what: str) -> Any:
    """The JSON document of a file, or an :class:`InstanceError` saying what is wrong
    with its bytes: not a regular file, too large, not UTF-8, not JSON, nested too deep
    for the parser, an integer of thousands of digits, named as the ``what`` file it was
    read as (a plan's path was shown as ``<instance>``, a hostile-input hunt). (Its
    numbers are checked by :func:`check_numbers` when it is read as an instance or a
    plan.)"""
    path = file_path(source, what)
    try:
        return _load_json_file(path, what)
    except InstanceError as exc:
        if exc.path:  # a field of the document (an over-long integer's)
            raise
        raise InstanceError(what.replace(" ", "_"), exc.value, exc.reason) from None


def _load_json_file(path: Path, what: str) -> Any:
    try:
        if path.exists() and not path.is_file():  # a device or a pipe may never end
            raise InstanceError("", str(path), f"the {what} file is not a regular file")
        if path.exists() and path.stat().st_size > MAX_FILE_BYTES:
            raise InstanceError(
                "", str(path), f"the {what} file is over {MAX_FILE_BYTES >> 20} MiB"
            )
        raw: bytes | bytearray = path.read_bytes()
    except OSError as exc:
        raise InstanceError("", str(path), f"cannot read {what} file: {exc.strerror}") from None
    if raw.startswith(GZIP_MAGIC):
        raw = _gunzip(raw, path, what)
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InstanceError("", str(path), "the file is UTF-16 text; save it as UTF-8")
    try:
        text = raw.decode("utf-8-sig")  # a UTF-8 byte-order mark is harmless
    except UnicodeDecodeError as exc:
        raise InstanceError(
            "", str(path), f"not UTF-8 text: byte {raw[exc.start]:#04x} at offset {exc.start}"
        ) from None
    try:
        doc = json.loads(text, object_pairs_hook=_no_twice, parse_float=_double)
    except _Refused as exc:
        raise InstanceError("", str(path), str(exc)) from None
    except json.JSONDecodeError as exc:
        raise InstanceError(
            "", str(path), f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise InstanceError(
            "", str(path), f"JSON nested deeper than {MAX_NESTING} levels"
        ) from None
    except ValueError as exc:  # an integer literal of thousands of digits
        _name_long_integer(text)
        raise InstanceError("", str(path), f"a number JSON cannot hold: {exc}") from None
    return doc


def _name_long_integer(text: str) -> None:
    """Refuse the document naming the field of its over-long integer: read again, only
    now, with such literals kept as text (a hook on every integer would slow each read).
    A document malformed further on is left to the caller's message."""
    try:
        doc = json.loads(text, parse_int=_integer)
    except (ValueError, RecursionError):
        return
    check_numbers(doc)


class _Refused(ValueError):
    """JSON that Python's reader would take but no file of ours holds."""


def _no_twice(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are all different: JSON readers disagree on which of two
    values of one key counts (Python's takes the last), so a file with both is refused
    (about 0.07 s more on the 10 MB Philly week)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        counts = Counter(k for k, _ in pairs)
        twice = next(k for k, n in counts.items() if n > 1)
        raise _Refused(f"the key {twice!r} appears twice in one object")
    return out


def _double(text: str) -> float:
    """A JSON number with a fraction or an exponent, refused where it is not zero but
    too small for a double: read as 0 it would change a figure unseen (one too large
    reads as infinity, which the checks refuse)."""
    value = float(text)
    if value == 0.0 and any(c in "123456789" for c in text.lower().partition("e")[0]):
        raise _Refused(f"the number {text[:40]} is too small for a double (it would read as 0)")
    return value


class _Digits(str):
    """An integer literal too long for ``int`` (Python refuses over 4,300 digits)."""


def _integer(text: str) -> int | _Digits:
    return int(text) if len(text) < 4000 else _Digits(text)


def _gunzip(raw: bytes | bytearray, path: Path, what: str) -> bytearray:
    """A gzip file's content (whole traces are written as ``.json.gz``), at most
    ``MAX_FILE_BYTES`` of it: a small file may expand without end. Inflated a piece
    at a time into one buffer, returned as it is: a whole member inflated at once, then
    appended (or the result copied into ``bytes``), held the bound's 512 MiB twice."""
    out = bytearray()
    try:
        while raw:  # a gzip file may hold several members, one after the other
            d = zlib.decompressobj(wbits=31)
            data = raw
            while not d.eof:
                piece = d.decompress(data, _PIECE)
                out += piece
                if len(out) > MAX_FILE_BYTES:
                    raise InstanceError(
                        "",
                        str(path),
                        f"the {what} file expands to over {MAX_FILE_BYTES >> 20} MiB",
                    )
                data = d.unconsumed_tail
                if not piece and not data:  # the input is spent before the member's end
                    raise InstanceError("", str(path), "the gzip file is cut short")
            raw = d.unused_data
    except zlib.error as exc:
        raise InstanceError("", str(path), f"not a valid gzip file: {exc}") from None
    return out


_PIECE = 16 << 20


def encoded(target: str | Path, text: str) -> bytes:
    """The bytes to write: gzip-compressed for a name ending in ``.gz`` (the time stamp
    zeroed, so that the same document gives the same file)."""
    raw = text.encode()
    if str(target).endswith(".gz"):
        return gzip.compress(raw, compresslevel=6, mtime=0)
    return raw


def check_numbers(doc: Any) -> None:
    """Every number of ``doc`` is finite and fits a float (no ``NaN``, ``Infinity``, or
    ``1e400``), and containers nest at most ``MAX_NESTING`` deep; iterative, so any depth
    is reported rather than overflowing the stack."""
    todo: list[tuple[Any, tuple[str | int, ...]]] = [(doc, ())]
    while todo:
        value, where = todo.pop()
        if isinstance(value, dict | list):
            if len(where) >= MAX_NESTING:
                raise InstanceError(
                    json_path(where), "...", f"nested deeper than {MAX_NESTING} levels"
                )
            items = value.items() if isinstance(value, dict) else enumerate(value)
            todo.extend((v, (*where, k)) for k, v in items)
        elif isinstance(value, float) and not math.isfinite(value):
            raise InstanceError(json_path(where), value, "must be a finite number")
        elif isinstance(value, _Digits):
            raise InstanceError(
                json_path(where), f"{value[:20]}... ({len(value):,} digits)", "is too large"
            )
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53:
            raise InstanceError(
                json_path(where), value, "is too large (integers up to 2**53 are exact)"
            )


def write_atomic(target: str | Path, data: str | bytes) -> Path:
    """Write ``data`` to ``target`` whole or not at all: into a temporary file beside it,
    renamed over it once complete (a full disk or a kill leaves the old file, or none).
    A target that is not a regular file (``/dev/stdout``) is written directly."""
    path = Path(target)
    raw = data.encode() if isinstance(data, str) else data
    if path.exists() and not path.is_file():
        try:
            path.write_bytes(raw)
        except OSError as exc:  # a write, not an open, fails without the file's name
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        return path
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:  # name the file the user asked for, not the temporary one
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # as an ordinary new file, not mkstemp's 0600
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        raise
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
