"""A bounded memo for STS's pure results kept between decisions (speed profiles,
expected power, grids of cells): kept until it holds ``limit`` entries, then started
again, so that a long run's memory stays bounded."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

V = TypeVar("V")


def kept(memo: dict[Hashable, V], key: Hashable, make: Callable[[], V], limit: int) -> V:
    """``memo[key]``, made by ``make()`` the first time it is asked for."""
    found = memo.get(key)
    if found is None:
        if len(memo) >= limit:
            memo.clear()
        found = memo[key] = make()
    return found
