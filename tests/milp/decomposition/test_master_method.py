"""The master solved by the interior point method (no crossover) decides as the simplex
does where it matters: the root's LP value, the bound and branch-and-price's optimum
(against the compact MILP's) are the same, and ``"auto"`` switches by the master's
size."""

from __future__ import annotations

import pytest

from milp import solve as milp_solve
from milp.decomposition import master as master_module
from milp.decomposition import solve
from milp.decomposition.master import Master
from tests.milp.decomposition.instances import two_nodes

SLOTS = 8


@pytest.mark.parametrize(("seed", "delta"), [(0, 0.0), (2, 0.2)])
def test_interior_master_reaches_the_compact_optimum(seed, delta, monkeypatch):
    """Every master of the search interior (the switch at 0 rows): the root LP value
    equals the simplex's, the bound is below the optimum, and the search proves it."""
    inst = two_nodes(seed, jobs=3, delta=delta, tardiness="expected")
    exact = milp_solve(inst, slots=SLOTS, time_limit=120)
    assert exact.optimal and exact.objective is not None
    simplex = solve(inst, slots=SLOTS, time_limit=60)
    monkeypatch.setattr(master_module, "IPM_ROWS", 0)
    interior = solve(inst, slots=SLOTS, time_limit=60)
    assert interior.root_lp == pytest.approx(simplex.root_lp, rel=1e-6, abs=1e-8)
    assert interior.root_bound <= exact.objective + 1e-9 * max(1.0, exact.objective)
    assert interior.optimal
    assert interior.objective == pytest.approx(exact.objective, rel=1e-6, abs=1e-9)


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
