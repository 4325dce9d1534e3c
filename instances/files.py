"""A user's data file opened as a stream of text, whatever its bytes.

Histories (``gpusched fit-stops FILE``) may be large or gzip-compressed exports, so they
are read as a stream rather than whole: a file is gunzipped if its content is gzip (its
name does not matter, as for instance files), and refused past ``MAX_FILE_BYTES`` of
text, so that a small gzip file that expands to gigabytes stops there. A device or a
pipe (which may never end) is refused, and so is a corrupt or truncated gzip body;
each refusal is an :class:`InstanceError` naming the file.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, TextIO

from instances.errors import InstanceError
from instances.limits import MAX_FILE_BYTES

GZIP_MAGIC = b"\x1f\x8b"


class _Capped(io.RawIOBase):
    """``inner``'s bytes, refused past ``MAX_FILE_BYTES`` (read at each call, so that a
    test may lower it); the decompressor's failures become errors naming the file."""

    def __init__(self, inner: BinaryIO, path: str, what: str, field: str, compressed: bool) -> None:
        self._inner, self._path, self._what, self._field = inner, path, what, field
        self._compressed = compressed
        self._total = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        try:
            n = self._inner.readinto(buffer)  # type: ignore[attr-defined]
        except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
            if not self._compressed:
                raise InstanceError(
                    self._field, self._path, f"cannot read {self._what} file: {exc}"
                ) from None
            reason = "is cut short" if isinstance(exc, EOFError) else f"is corrupt ({exc})"
            raise InstanceError(
                self._field, self._path, f"the gzip {self._what} file {reason}"
            ) from None
        self._total += n
        if self._total > MAX_FILE_BYTES:
            grown = "expands to" if self._compressed else "is"
            raise InstanceError(
                self._field,
                self._path,
                f"the {self._what} file {grown} over {MAX_FILE_BYTES >> 20} MiB",
            )
        return int(n)


@contextlib.contextmanager
def open_text(
    source: str | Path, what: str, field: str = "", errors: str = "strict"
) -> Iterator[TextIO]:
    """The file's text, streamed: UTF-8 (a byte-order mark is harmless), its line ends
    left to the reader (``newline=""``: CR, LF and CRLF all end a line, as the ``csv``
    module wants), gunzipped if gzip. A byte that is not UTF-8 raises
    ``UnicodeDecodeError`` where the decoder meets it, which may be lines ahead of the
    reader; ``errors="surrogateescape"`` passes it on, for the reader to find in its
    line. Errors name
    ``field`` (what the file is to the command, e.g. ``trace``) and the file."""
    path = Path(source)
    try:
        if path.exists() and not path.is_file():
            raise InstanceError(field, str(path), f"the {what} file is not a regular file")
        raw = path.open("rb")
    except OSError as exc:
        raise InstanceError(field, str(path), f"cannot read {what} file: {exc.strerror}") from None
    with raw:
        compressed = raw.peek(2)[:2] == GZIP_MAGIC
        inner: BinaryIO = gzip.GzipFile(fileobj=raw, mode="rb") if compressed else raw  # type: ignore[assignment]
        capped = io.BufferedReader(_Capped(inner, str(path), what, field, compressed))
        yield io.TextIOWrapper(capped, encoding="utf-8-sig", errors=errors, newline="")
