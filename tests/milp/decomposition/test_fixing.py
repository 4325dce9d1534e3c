"""Reduced-cost fixing never removes an arc of an optimal plan: on one-node instances
solved by brute force (sharing, overheads shorter and longer than a slot, both
tardiness modes), with the optimum itself as the incumbent (the tightest a solve can
have), the arcs removed at the root's converged duals and at its best bound's prices
miss every (choice, slot) of the brute-force optimal plan, and some arcs go."""

from __future__ import annotations

import math

import numpy as np
import pytest

from milp.data import milp_data
from milp.decomposition import CgOptions
from milp.decomposition.colgen import generate
from milp.decomposition.columns import columns_of_plan
from milp.decomposition.fixing import fix_arcs, refix
from milp.decomposition.master import Master, label_terms
from milp.decomposition.oracle import Oracle
from milp.decomposition.space import build_space
from tests.milp.brute_force import brute_force
from tests.milp.test_milp import _tiny

SLOTS = 8
CASES = [
    (seed, shared, delta, mode)
    for seed, (shared, delta, mode) in enumerate(
        [
            (True, 0.0, "worst_case"),
            (True, 0.2, "expected"),
            (False, 0.7, "worst_case"),
            (True, 0.7, "expected"),
            (False, 0.0, "expected"),
            (True, 0.2, "worst_case"),
        ]
    )
]


@pytest.mark.parametrize(("seed", "shared", "delta", "mode"), CASES)
def test_fixing_keeps_every_arc_of_the_optimum(seed, shared, delta, mode):
    inst = _tiny(seed, shared=shared, tardiness=mode).replace(relaunch_hours=delta)
    best, plan = brute_force(inst, SLOTS)
    space = build_space(milp_data(inst, SLOTS, check_size=False))
    master = Master(space, big=10.0 * max(1.0, best))
    oracle = Oracle(space, CgOptions().grid)
    gen = generate(master, oracle, CgOptions(), -math.inf, None)
    assert gen.bound <= best + 1e-9 * max(1.0, best) and gen.centre is not None
    # at the converged duals (each job priced exactly), then at the best bound's prices
    _, lam, _ = master.solve()
    upper = np.full(len(space.jobs), math.inf)
    got = oracle.price(lam, upper, beam=None, keep=3)
    count = fix_arcs(oracle, lam, got.proved, label_terms(space, lam), best, None)
    count += refix(oracle, gen.centre, best, None, None)
    assert count > 0  # the optimum's bound leaves arcs to remove here
    for col in columns_of_plan(space, plan):
        first = space.jobs[col.job].jd.first_slot
        for t, c in col.slots():
            assert not oracle.fixed[col.job][c, t - first], (col.job, t, c)
