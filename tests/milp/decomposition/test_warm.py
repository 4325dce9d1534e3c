"""The root's column generation started from the Lagrangian bound's prices
(milp/decomposition/warm.py): the prices land on the right rows, and an exact pricing
there bounds at least as high as the Lagrangian bound itself, never above the optimum."""

from __future__ import annotations

import math

import numpy as np
import pytest

from milp.decomposition.colgen import CgOptions, generate
from milp.decomposition.master import Master
from milp.decomposition.oracle import Oracle
from milp.decomposition.solve import _start
from milp.decomposition.space import GPU, TENANTS
from milp.decomposition.warm import on_rows
from milp.lagrange import lagrangian_bound
from tests.milp.brute_force import brute_force
from tests.milp.test_milp import _tiny

SLOTS = 7


def test_a_gpu_row_pays_its_types_price_and_a_tenants_row_its_share():
    inst = _tiny(26, shared=True, tardiness="worst_case")
    space = _start(inst, None, SLOTS, None).space
    types = sorted(inst.nodes_by_type)
    prices = np.arange(1.0, 1.0 + len(types) * SLOTS).reshape(len(types), SLOTS)
    rows = on_rows(space, prices)
    assert rows.shape == (len(space.resources), SLOTS)
    kinds = {r.kind for r in space.resources}
    assert TENANTS in kinds  # the instance shares: both kinds are checked
    for r, res in enumerate(space.resources):
        per = prices[types.index(inst.node(res.node).gpu_type)]
        if res.kind == GPU:
            assert rows[r] == pytest.approx(per)
        elif res.kind == TENANTS:
            assert rows[r] == pytest.approx(per / inst.max_share)
        else:
            assert not rows[r].any()


@pytest.mark.parametrize(
    ("seed", "shared", "mode"),
    [
        (26, False, "worst_case"),
        (26, False, "expected"),
        (28, True, "worst_case"),
        (29, True, "expected"),
    ],
)
def test_an_exact_pricing_at_the_lagrangian_prices_bounds_at_least_as_high(seed, shared, mode):
    """Each job's exact priced optimum is at least its Lagrangian problem's for any
    weight on its own cost (its real cost is at least its grid path's and its floor),
    so the root's bound at those prices is at least the Lagrangian bound: measured on
    120 tiny instances (the largest shortfall 1.4e-17), strictly above it on these four
    (by 0.0005-0.07), and never above brute force's optimum. No master round runs: the
    bound is the pricing's at the centre alone."""
    inst = _tiny(seed, shared=shared, tardiness=mode)
    best, _ = brute_force(inst, SLOTS)
    start = _start(inst, None, SLOTS, None)
    cost = start.evaluation.total_cost
    lag = lagrangian_bound(inst, SLOTS, upper=cost, tardiness=start.d.tardiness)
    assert lag.prices is not None and lag.prices.any()
    master = Master(start.space, big=10.0 * max(1.0, cost), artificial=not start.fits)
    master.add(start.columns)
    oracle = Oracle(start.space, CgOptions().grid, 1)
    centre = on_rows(start.space, lag.prices)
    got = generate(master, oracle, CgOptions(rounds=0), -math.inf, None, centre=centre)
    assert got.rounds == 0 and got.exact_rounds == 1
    assert lag.bound + 1e-4 < got.bound <= best + 1e-9


def test_a_lagrangian_grid_too_large_for_memory_leaves_the_root_as_before(monkeypatch):
    """The Lagrangian bound refuses a grid that would not fit even coarsened
    (milp.lagrange.MAX_BYTES); branch-and-price then starts its root from its own duals
    and still reaches brute force's optimum."""
    import milp.lagrange
    from milp.decomposition import solve
    from milp.decomposition.warm import lagrange_start

    inst = _tiny(26, shared=False, tardiness="worst_case")
    best, _ = brute_force(inst, SLOTS)
    monkeypatch.setattr(milp.lagrange, "MAX_BYTES", 1)
    start = _start(inst, None, SLOTS, None)
    assert lagrange_start(start.space, start.evaluation.total_cost, None) == (-math.inf, None)
    res = solve(inst, slots=SLOTS, time_limit=None)
    assert res.objective == pytest.approx(best, rel=1e-6)
    assert res.bound == pytest.approx(best, rel=1e-6)
