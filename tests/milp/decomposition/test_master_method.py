"""The master solved by the interior point method (no crossover) decides as the simplex
does where it matters: the root's LP value, the bound and branch-and-price's optimum
(against the compact MILP's) are the same, and ``"auto"`` switches by the master's
size."""

from __future__ import annotations

import pytest

from milp.decomposition import master as master_module
from milp.decomposition import solve
from milp.decomposition.colgen import _best_known
from milp.decomposition.master import Master
from tests.milp.decomposition.instances import two_nodes
from tests.milp.decomposition.root import root_master

SLOTS = 8


@pytest.mark.parametrize(("seed", "delta"), [(1, 0.0), (2, 0.2)])
def test_interior_master_reaches_the_compact_optimum(seed, delta, monkeypatch):
    """Every master of the search interior (the switch at 0 rows): the root LP value
    equals the simplex's, the bound is below the optimum, and the search proves it. The
    optimum is the simplex search's: tests/milp/decomposition/test_bound.py holds it to
    the compact MILP's on these two instances (the compact solve of the second takes
    about 10 s, and was made here a second time)."""
    inst = two_nodes(seed, jobs=3, delta=delta, tardiness="expected")
    simplex = solve(inst, slots=SLOTS, time_limit=60)
    assert simplex.optimal and simplex.objective is not None
    monkeypatch.setattr(master_module, "IPM_ROWS", 0)
    interior = solve(inst, slots=SLOTS, time_limit=60)
    assert interior.root_lp == pytest.approx(simplex.root_lp, rel=1e-6, abs=1e-8)
    assert interior.root_bound <= simplex.objective + 1e-9 * max(1.0, simplex.objective)
    assert interior.optimal
    assert interior.objective == pytest.approx(simplex.objective, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize(("rows", "interior"), [(None, False), (0, True)])
def test_auto_switches_by_rows(rows, interior, monkeypatch):
    """A small master stays simplex; above ``IPM_ROWS`` rows every solve is interior."""
    if rows is not None:
        monkeypatch.setattr(master_module, "IPM_ROWS", rows)
    seen: list[bool] = []
    real = Master.solve

    def spy(self: Master):
        out = real(self)
        seen.append(self.interior)
        return out

    monkeypatch.setattr(Master, "solve", spy)
    assert solve(two_nodes(1, jobs=2), slots=SLOTS, time_limit=30).optimal
    assert seen
    assert set(seen) == {interior}


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="master method"):
        Master(None, big=1.0, method="barrier")  # type: ignore[arg-type]


def test_vertex_after_columns_added_needs_no_solve(monkeypatch):
    """An interior master stopped with a round's columns added since its last solve: the
    crossover starts from the last solution with the new columns at 0, so no solve runs,
    the value is the last solve's and the solution is basic (no more positive values
    than rows)."""
    monkeypatch.setattr(master_module, "IPM_ROWS", 0)
    inst = two_nodes(0, jobs=3, delta=0.2, tardiness="expected")
    master, oracle, _ = root_master(inst, SLOTS)
    added = 0
    for _ in range(3):
        z, lam, _ = master.solve()
        added = master.add(oracle.price(lam, _best_known(master, lam), beam=4, keep=3).columns)
    assert master.interior and added > 0
    solves: list[int] = []
    real = Master.solve
    monkeypatch.setattr(Master, "solve", lambda self: solves.append(1) or real(self))
    master.vertex()
    assert solves == []
    info = master.h.getInfo()
    assert info.basis_validity == 1
    assert info.objective_function_value == pytest.approx(z, rel=1e-5, abs=1e-7)
    x = master.values()
    assert len(x) == len(master.columns)
    assert (x > 1e-9).sum() <= master.h.getNumRow()
