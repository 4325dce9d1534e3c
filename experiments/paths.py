"""File names made from names found in input files: never a path, never hidden."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def plain_name(text: str, limit: int, fallback: str) -> str:
    """``text`` cut down to letters, digits, '.', '_' and '-' (runs of anything else
    become one '-'), without leading or trailing dots and dashes, at most ``limit``
    characters; ``fallback`` if nothing is left."""
    plain = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip(".-")[:limit]
    return plain or fallback


@contextmanager
def output_folder(out: Path) -> Iterator[Path]:
    """``out``, made with its missing parents for the body to write into; if the body
    fails, the folders made here are taken back with what it wrote, so that a failed
    command leaves no empty or half-filled folder (one that existed is left alone)."""
    made = [p for p in (out, *out.parents) if not p.exists()]
    try:
        out.mkdir(parents=True, exist_ok=True)
        yield out
    except BaseException:
        if made:  # the outermost folder made here, with all under it
            shutil.rmtree(made[-1], ignore_errors=True)
        raise
