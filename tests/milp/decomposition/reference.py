"""The compact MILP's optimum as the reference branch-and-price is held to: solved and
proved, or pinned where that solve was most of a test's time (each pin names the slots
it was proved on, which the caller's run must use)."""

from __future__ import annotations

from collections.abc import Mapping

from instances import Instance
from milp import solve as milp_solve


def compact_optimum(
    key: str,
    inst: Instance,
    slots: int,
    pinned: Mapping[str, tuple[int, float]],
    time_limit: float,
) -> float:
    """``pinned[key]``'s optimum where pinned (its slot count asserted), else the compact
    MILP's proved optimum of ``inst`` on ``slots`` slots."""
    if key in pinned:
        at, optimum = pinned[key]
        assert slots == at, (key, slots, at)
        return optimum
    exact = milp_solve(inst, slots=slots, time_limit=time_limit)
    assert exact.optimal and exact.objective is not None
    return exact.objective
