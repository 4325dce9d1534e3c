"""A plan read into the MILP's variables (milp/plan_io.py): a block that ends at a
slot's end up to a float's last bit must not set work on the next block in that slot,
which has no variable there (a KeyError, found by a review on 2026-12-07)."""

from __future__ import annotations

import pytest

from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from milp import solve as compact
from milp.decomposition import solve
from tests.milp.brute_force import brute_force


def test_a_block_ending_at_a_slots_end_after_a_relaunch_writes_a_start():
    exclusive, shared, two = Config("v100", 1), Config("v100", 1, shared=True), Config("v100", 2)
    j0 = Job(
        "j0",
        0.5,
        1.25,
        EpochDistribution((1.0,), (1.0,)),
        {exclusive: 0.2, shared: 0.2},
        4.0,
        weight=5.0,
    )
    j1 = Job(
        "j1",
        0.0,
        0.25,
        EpochDistribution((1.0, 2.0, 3.0, 4.0), (0.59772, 0.124826, 0.145604, 0.13185)),
        {exclusive: 1 / 3, shared: (1 / 3) / 0.7, two: 0.5 / 1.875},
        6.0,
        weight=20.0,
    )
    inst = Instance(
        (GpuType("v100", 16.0, 300.0),),
        (Node("n", "v100", 2),),
        (j0, j1),
        slot=0.5,
        tardiness="expected",
        relaunch_hours=0.7,
        name="residual",
    )
    best, _ = brute_force(inst, 7)
    res = solve(inst, slots=7, time_limit=20)  # KeyError before the fix
    assert res.bound <= best + 1e-9 * max(1.0, best)
    assert res.objective is not None and res.objective >= best - 1e-9
    # the compact MILP reads the same plan as its warm start
    warm = compact(inst, slots=7, time_limit=60, initial_plan=res.plan)
    assert warm.objective == pytest.approx(best, rel=1e-9)
