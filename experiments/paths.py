"""File names made from names found in input files: never a path, never hidden."""

from __future__ import annotations

import re


def plain_name(text: str, limit: int, fallback: str) -> str:
    """``text`` cut down to letters, digits, '.', '_' and '-' (runs of anything else
    become one '-'), without leading or trailing dots and dashes, at most ``limit``
    characters; ``fallback`` if nothing is left."""
    plain = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip(".-")[:limit]
    return plain or fallback
