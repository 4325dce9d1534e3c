import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from instances import EpochDistribution, InstanceError
from tests.strategies import distributions


def test_phi_and_survival_by_hand():
    d = EpochDistribution((5.0, 10.0), (0.4, 0.6))
    assert d.block_survival == (1.0, 0.6)
    assert d.block_lengths == (5.0, 5.0)
    assert d.survival(0) == 1.0 and d.survival(5.0) == 1.0 and d.survival(5.1) == 0.6
    assert d.survival(10.0) == 0.6 and d.survival(10.5) == 0.0
    assert d.phi(5.0) == pytest.approx(5.0)
    assert d.phi(7.5) == pytest.approx(5.0 + 0.6 * 2.5)
    assert d.phi(12.0) == pytest.approx(8.0) == d.mean()


def test_conditional_renormalises_and_shifts():
    d = EpochDistribution((2.0, 4.0, 8.0), (0.5, 0.25, 0.25))
    c = d.conditional(3.0)
    assert c.stops == (1.0, 5.0)
    assert c.probabilities == pytest.approx((0.5, 0.5))
    with pytest.raises(InstanceError, match="progress"):
        d.conditional(8.0)


@given(distributions(), st.floats(0, 1))
def test_a_conditional_built_unchecked_is_the_checked_one_and_is_kept(d, share):
    """The conditional skips the checks (its input is valid by construction) and is
    kept by progress: it must equal, lookups included, the one built with the checks."""
    w = share * d.max_epochs * 0.999
    c = d.conditional(w)
    checked = EpochDistribution(c.stops, c.probabilities)
    assert c == checked
    assert (c.block_survival, c.mean()) == (checked.block_survival, checked.mean())
    assert all(c.phi(x) == checked.phi(x) for x in (0.5, 1.0, c.max_epochs / 2))
    assert d.conditional(w) is c


@given(distributions(), st.floats(0, 40), st.floats(0, 40))
def test_phi_is_the_integral_of_survival(d, a, b):
    lo, hi = sorted((a, b))
    # midpoint rule on a fine grid, exact for a step function except at the steps
    grid = np.linspace(lo, hi, 4001)
    mids = (grid[:-1] + grid[1:]) / 2
    approx = sum(d.survival(m) for m in mids) * (hi - lo) / 4000
    assert d.phi(hi) - d.phi(lo) == pytest.approx(approx, abs=(hi - lo) / 400 + 1e-9)
    assert 0 <= d.phi(hi) - d.phi(lo) <= hi - lo + 1e-12


@given(distributions())
def test_mean_matches_pmf(d):
    assert d.mean() == pytest.approx(
        math.fsum(s * p for s, p in zip(d.stops, d.probabilities, strict=True))
    )


def test_sampling_is_seeded_and_on_stopping_points():
    d = EpochDistribution((5.0, 10.0), (0.4, 0.6))
    a = d.sample(np.random.default_rng(3), size=1000)
    b = d.sample(np.random.default_rng(3), size=1000)
    assert (a == b).all() and set(a) <= {5.0, 10.0}
    assert abs((a == 5.0).mean() - 0.4) < 0.06
