"""On two nodes with a multi-node configuration (beyond the one-node brute force of
test_search), the root bound is never above the compact MILP's optimum and
branch-and-price reaches it, with and without sharing and overheads, in both tardiness
modes."""

from __future__ import annotations

import pytest

from milp import solve as milp_solve
from milp.decomposition import solve
from tests.milp.decomposition.instances import two_nodes

SLOTS = 8


@pytest.mark.parametrize(
    ("seed", "delta", "mode"),
    [(0, 0.0, "worst_case"), (1, 0.0, "expected"), (2, 0.2, "expected"), (3, 0.2, "worst_case")],
)
def test_branch_and_price_equals_the_compact_milp(seed, delta, mode):
    """Two nodes, three jobs, exclusive, shared and multi-node configurations: the
    root bound is below the compact MILP's optimum and branch-and-price reaches it."""
    inst = two_nodes(seed, jobs=3, delta=delta, tardiness=mode)
    exact = milp_solve(inst, slots=SLOTS, time_limit=120)
    assert exact.optimal and exact.objective is not None
    res = solve(inst, slots=SLOTS, time_limit=60)
    assert res.root_bound <= exact.objective + 1e-9 * max(1.0, exact.objective)
    assert res.optimal
    assert res.objective == pytest.approx(exact.objective, rel=1e-6, abs=1e-9)
