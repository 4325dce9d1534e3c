"""Cases of the Tariff and Grid (heuristic/sts/tariff.py) a mutation test found
untested (2026-12-07)."""

from __future__ import annotations

import pytest

from heuristic.sts.tariff import Tariff
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from instances.energy import Carbon, Series

C1 = Config("v100", 1)


def _inst(**fields) -> Instance:
    gpu = GpuType("v100", 32.0, 300.0)
    job = Job("a", 0.0, 20.0, EpochDistribution.deterministic(2.0), {C1: 1.0}, 8.0)
    return Instance((gpu,), (Node("n", "v100", 2),), (job,), energy_price=0.2, **fields)


HOURLY_CARBON = Series.regular(1.0, [300.0, 120.0, 250.0], upper=1e5)


def test_an_unpriced_carbon_series_leaves_the_bill_flat():
    """Carbon at price 0 bills nothing, however its intensity moves: no tariff (STS
    stays price-blind to the last digit, docs of heuristic/sts/tariff.py)."""
    assert Tariff.of(_inst(carbon=Carbon(HOURLY_CARBON, 0.0))) is None
    assert Tariff.of(_inst(carbon=Carbon(HOURLY_CARBON, 50.0))) is not None


def test_the_cells_follow_the_series_that_varies():
    """A flat price written on half-hour steps says nothing of when the bill changes:
    the cells are the varying carbon series' hours."""
    flat_price = Series.regular(0.5, [0.2] * 48)
    tariff = Tariff.of(_inst(prices=flat_price, carbon=Carbon(HOURLY_CARBON, 50.0)))
    assert tariff is not None and tariff.cell == 1.0
    both = Tariff.of(
        _inst(prices=Series.regular(0.5, [0.2, 0.4]), carbon=Carbon(HOURLY_CARBON, 50.0))
    )
    assert both is not None and both.cell == 0.5  # the price's own step first


def test_a_cells_bill_is_the_price_plus_the_priced_carbon():
    """What STS times against: each cell's price per kWh is the energy price plus the
    carbon price per gram times the intensity."""
    import numpy as np

    from heuristic.sts.tariff import Grid

    tariff = Tariff.of(_inst(carbon=Carbon(HOURLY_CARBON, 50.0)))
    assert tariff is not None and tariff.per_gram == 50.0 / 1e6
    want = [0.2 + 50e-6 * 300.0, 0.2 + 50e-6 * 120.0, 0.2 + 50e-6 * 250.0]
    assert tariff.cost(np.array([0.0, 1.0, 2.0, 3.0])) == pytest.approx(want, rel=1e-12)
    grid = Grid.of(tariff, 0.5, 3.0)  # a half cell, then two whole ones
    assert grid.edges.tolist() == [0.0, 0.5, 1.5, 2.5]
    assert grid.price == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize(("a", "b"), [(0.5, 2.5), (0.0, 1.0), (1.2, 3.7), (2.9, 5.1), (7.0, 9.0)])
def test_least_and_most_bound_every_hour_met(a, b):
    """``least``/``most`` bound the price per kWh over ``[a, b]``, the interval that
    holds ``b`` included (a regular repeating series reads only the intervals met)."""
    import numpy as np

    prices = Series.regular(1.0, [0.3, 0.2, 0.1, 0.4, 0.25])
    tariff = Tariff.of(_inst(prices=prices, carbon=Carbon(HOURLY_CARBON, 50.0)))
    ts = np.linspace(a, b, 101)
    bill = [prices.at(t) + 50e-6 * HOURLY_CARBON.at(t) for t in ts]
    assert tariff.least(a, b) <= min(bill) + 1e-12
    assert tariff.most(a, b) >= max(bill) - 1e-12


def test_least_reads_a_clock_a_rounding_short_of_a_boundary_as_on_it():
    """``a`` within 1e-9 h below an hour (a clock's rounding) starts at that hour: the
    cheap hour before it is not read (nor the dear one by ``most``)."""
    tariff = Tariff.of(_inst(prices=Series.regular(1.0, [0.1, 0.5, 0.4, 0.3])))
    assert tariff is not None
    assert tariff.least(1.0 - 1e-10, 2.5) == 0.4
    assert tariff.least(1.0 - 1e-6, 2.5) == 0.1  # a real part of the first hour
    high = Tariff.of(_inst(prices=Series.regular(1.0, [0.9, 0.5, 0.4, 0.3])))
    assert high is not None and high.most(1.0 - 1e-10, 2.5) == 0.5


def test_least_and_most_within_one_hour_are_that_hours_bill():
    """Inside one hour of hourly series both bounds are the hour's bill, the carbon's
    price per kWh included: a bound that left the carbon out would still bound from
    below, but not tightly."""
    prices = Series.regular(1.0, [0.3, 0.2, 0.1, 0.4, 0.25])
    tariff = Tariff.of(_inst(prices=prices, carbon=Carbon(HOURLY_CARBON, 50.0)))
    assert tariff is not None
    for hour in range(6):
        bill = prices.at(hour + 0.5) + 50e-6 * HOURLY_CARBON.at(hour + 0.5)
        assert tariff.least(hour + 0.1, hour + 0.9) == pytest.approx(bill, rel=1e-12)
        assert tariff.most(hour + 0.1, hour + 0.9) == pytest.approx(bill, rel=1e-12)
