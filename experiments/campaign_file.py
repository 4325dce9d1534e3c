"""Reading a campaign file: its bytes, its TOML, and the error for a bad one.

Whatever the bytes, the outcome is a document or a :class:`CampaignError` naming the
file, the line or the field: never the TOML parser's own exception (a recursion error
on arrays nested thousands deep, a ``ValueError`` on an integer of thousands of digits).
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path
from typing import Any

from instances import InstanceError
from instances.jsonfile import check_numbers
from instances.limits import MAX_NESTING

MAX_CAMPAIGN_BYTES = 1 << 20  # the largest bundled campaign file is under 3 KiB


class CampaignError(ValueError):
    """A bad campaign file; the message names the field and the value."""

    def __init__(self, field: str, value: Any, reason: str) -> None:
        # the instance error's text: the value shown in at most 120 characters, and an
        # integer too long for repr() shown by its size
        super().__init__(str(InstanceError(field, value, reason)))


def read_text(path: Path) -> str:
    """A campaign file's text: a regular file (a pipe or a device may never end) of at
    most ``MAX_CAMPAIGN_BYTES``, in UTF-8 (TOML's encoding; a byte-order mark is
    harmless)."""
    try:
        if path.exists() and not path.is_file():
            raise CampaignError("campaign", str(path), "not a regular file")
        with path.open("rb") as f:
            raw = f.read(MAX_CAMPAIGN_BYTES + 1)
    except OSError as exc:
        raise CampaignError("campaign", str(path), f"cannot read it ({exc.strerror})") from None
    if len(raw) > MAX_CAMPAIGN_BYTES:
        raise CampaignError(
            "campaign", str(path), f"over {MAX_CAMPAIGN_BYTES >> 10} KiB: not a campaign file"
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise CampaignError(
            "campaign",
            str(path),
            f"not UTF-8 text: byte {raw[exc.start]:#04x} on line {line} (offset {exc.start})",
        ) from None


def parse_toml(text: str, name: str) -> dict[str, Any]:
    """The TOML document, its parser's failures as clean errors; every number a double
    holds and no container nested deeper than ``MAX_NESTING`` (as in instance files)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CampaignError("campaign", name, f"not valid TOML ({exc})") from None
    except RecursionError:  # arrays in arrays, thousands deep
        raise CampaignError(
            "campaign", name, f"arrays or tables nested too deep (at most {MAX_NESTING} levels)"
        ) from None
    except ValueError as exc:  # an integer past Python's digit limit for int(str)
        longest = sys.get_int_max_str_digits()
        digits = re.search(rf"\d{{{longest + 1},}}", text)
        if digits is None:
            raise CampaignError("campaign", name, f"not valid TOML ({exc})") from None
        line = text.count("\n", 0, digits.start()) + 1
        raise CampaignError(
            "campaign", name, f"line {line}: an integer of thousands of digits (at most 2**53)"
        ) from None
    try:
        check_numbers(doc)
    except InstanceError as exc:
        raise CampaignError(exc.path, exc.value, exc.reason) from None
    return doc


def listed_once(field: str, values: tuple[Any, ...]) -> None:
    """Each value once: a run listed twice would be computed twice, and the store
    refuses the second after the work is done."""
    seen: set[Any] = set()
    for v in values:
        if v in seen:
            raise CampaignError(field, v, "listed twice")
        seen.add(v)
