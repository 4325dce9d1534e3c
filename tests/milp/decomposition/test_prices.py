"""Branch-and-price and energy prices that change by the slot: refused, since its
columns, completion bound and dominance rules cost every slot at the instance's one
energy price (milp/decomposition/space.py, ``require_one_price``); a flat series, priced
as without one, solves as before."""

from __future__ import annotations

import pytest

from instances.energy import Carbon, Series
from instances.generators.prices import lay_prices
from instances.generators.suite import suite_instance
from milp import MilpError
from milp.data import milp_data
from milp.decomposition import solve
from milp.decomposition.space import build_space

NAME = "suite-excl-2n4j-s1"


def test_a_price_series_is_refused():
    inst = lay_prices(suite_instance(NAME), "au-nsw-2023:17")
    with pytest.raises(MilpError, match="one energy price"):
        solve(inst, time_limit=30)
    with pytest.raises(MilpError, match="one energy price"):
        build_space(milp_data(inst, 40, check_size=False))


def test_a_priced_carbon_series_alone_is_refused():
    inst = suite_instance(NAME)
    intensity = Series.regular(1.0, (100.0, 700.0, 300.0), upper=1e5)
    with pytest.raises(MilpError, match="one energy price"):
        solve(inst.replace(carbon=Carbon(intensity, 400.0)), time_limit=30)


def test_a_flat_series_solves_as_without_one():
    inst = suite_instance(NAME)
    flat = inst.replace(prices=Series.regular(1.0, (inst.energy_price,) * 4))
    a, b = solve(inst, time_limit=60), solve(flat, time_limit=60)
    assert a.optimal and b.optimal
    assert (a.objective, a.bound, a.plan) == (b.objective, b.bound, b.plan)
