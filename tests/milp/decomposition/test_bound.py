"""The column generation's bound is never above the optimum (brute force on one node,
the compact MILP on two nodes with a multi-node configuration), with and without
sharing and overheads, in both tardiness modes; its plans cost what the evaluator says
and never less than the optimum."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from milp import solve as milp_solve
from milp.decomposition import CgOptions, solve
from tests.milp.brute_force import brute_force
from tests.milp.decomposition.instances import two_nodes
from tests.milp.test_milp import _tiny
from validation.evaluate import evaluate

SLOTS = 8


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 100_000),
    st.booleans(),
    st.sampled_from([0.0, 0.2, 0.7]),
    st.sampled_from(["worst_case", "expected"]),
    st.sampled_from([None, 1, 4]),
)
def test_the_bound_is_never_above_the_brute_force_optimum(seed, shared, delta, mode, rounds):
    """Also when the generation is stopped after one or four master solves: every
    round's bound is valid."""
    inst = _tiny(seed, shared=shared, tardiness=mode).replace(relaunch_hours=delta)
    best, _ = brute_force(inst, SLOTS)
    options = CgOptions() if rounds is None else CgOptions(rounds=rounds)
    res = solve(inst, slots=SLOTS, time_limit=None, options=options)
    assert res.root_bound <= best + 1e-9 * max(1.0, best)
    assert res.bound <= best + 1e-9 * max(1.0, best)
    if res.plan is not None:
        assert evaluate(inst, res.plan).total_cost == pytest.approx(res.objective, rel=1e-12)
        assert res.objective >= best - 1e-9 * max(1.0, best)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(
    ("delta", "mode"), [(0.0, "worst_case"), (0.2, "expected"), (0.7, "worst_case")]
)
def test_the_bound_is_never_above_the_compact_milp_optimum(seed, delta, mode):
    """Two nodes, three jobs, exclusive, shared and multi-node configurations."""
    inst = two_nodes(seed, jobs=3, delta=delta, tardiness=mode)
    exact = milp_solve(inst, slots=SLOTS, time_limit=120)
    assert exact.optimal and exact.objective is not None
    res = solve(inst, slots=SLOTS, time_limit=None)
    assert res.root_bound <= exact.objective + 1e-9 * max(1.0, exact.objective)
    if res.objective is not None:
        assert res.objective >= exact.objective - 1e-9 * max(1.0, exact.objective)
