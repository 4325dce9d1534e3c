"""Price and carbon series (instances/energy.py): exact integrals, the rule past the end,
JSON round trips and refusals naming the field and the value."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from instances import InstanceError, instance_from_dict, instance_to_dict
from instances.energy import Carbon, Series
from tests.strategies import series


def test_integral_repeat_and_hold_by_hand():
    s = Series.regular(1.0, [0.1, 0.3, 0.2])  # a 3-hour day, repeated
    assert s.integral(0.0, 3.0) == pytest.approx(0.6)
    assert s.integral(0.5, 1.5) == pytest.approx(0.05 + 0.15)
    assert s.integral(2.5, 4.5) == pytest.approx(0.1 + 0.1 + 0.15)  # wraps around
    assert s.integral(30.0, 33.0) == pytest.approx(0.6)  # ten periods later
    assert s.at(4.2) == 0.3 and s.at(3.0) == 0.1
    held = Series((0.0, 2.0, 5.0), (1.0, 4.0), "hold")
    assert held.integral(0.0, 10.0) == pytest.approx(2 + 12 + 4 * 5)
    assert held.at(1e4) == 4.0
    assert held.mean() == pytest.approx(14 / 5)


@given(series(), st.floats(0.0, 30.0), st.floats(0.0, 10.0))
def test_integral_is_the_area_under_the_steps(s, a, length):
    """Against a midpoint sum: the steps are exact on all but the cells that straddle a
    breakpoint, each off by at most its width times the jump."""
    b = a + length
    cells = max(1, int(200 * length))
    h = length / cells
    approx = h * sum(s.at(a + (k + 0.5) * h) for k in range(cells)) if length else 0.0
    jumps = len(s.breakpoints(a, b)) + 1
    assert abs(s.integral(a, b) - approx) <= jumps * h * max(s.values) + 1e-9


@given(series(), st.lists(st.floats(0.0, 20.0), min_size=3, max_size=6))
def test_integrals_add_up(s, points):
    """∫_a^c = ∫_a^b + ∫_b^c, and the vector form agrees with the scalar one."""
    edges = np.array(sorted(points))
    parts = s.integrals(edges)
    assert parts.sum() == pytest.approx(s.integral(edges[0], edges[-1]), abs=1e-9)
    assert all(p >= -1e-12 for p in parts)


@given(
    series(),
    st.lists(st.floats(-5.0, 1e6, allow_nan=False, allow_infinity=False), min_size=1, max_size=12),
)
def test_the_cumulatives_at_many_times_are_each_one_to_the_last_bit(s, times):
    """The vectorised cumulative (STS bills every profile it tries by it) gives the very
    floats of the one-time form, before 0, inside, at the end, and many periods on."""
    ts = np.array([*times, 0.0, s.end, 3 * s.end], dtype=float)
    assert s.cumulatives(ts).tolist() == [s.cumulative(float(t)) for t in ts]


def test_a_flat_series_is_its_value():
    s = Series.flat(0.2)
    assert s.constant == 0.2
    assert Series.regular(0.5, [0.2, 0.2, 0.2]).constant == 0.2
    assert Series.regular(0.5, [0.2, 0.3]).constant is None
    assert s.integral(1.0, 4.5) == pytest.approx(0.7)


def _doc(tiny, **fields):
    doc = instance_to_dict(tiny)
    doc.update(fields)
    return json.loads(json.dumps(doc))


def test_round_trip(tiny):
    inst = tiny.replace(
        prices=Series.regular(1.0, [0.1, 0.3, 0.2]),
        carbon=Carbon(Series((0.0, 7.0, 22.0, 24.0), (300.0, 120.0, 250.0), "hold"), 80.0),
    )
    doc = instance_to_dict(inst)
    assert doc["prices"] == {"step": 1.0, "values": [0.1, 0.3, 0.2], "after": "repeat"}
    assert doc["carbon"]["times"] == [0.0, 7.0, 22.0, 24.0]
    assert doc["carbon"]["price"] == 80.0
    back = instance_from_dict(json.loads(json.dumps(doc)))
    assert back == inst
    assert "prices" not in instance_to_dict(tiny) and "carbon" not in instance_to_dict(tiny)


@pytest.mark.parametrize(
    ("field", "value", "path", "words"),
    [
        ("prices", {"step": 1.0, "values": []}, "prices.values", "empty"),
        ("prices", {"times": [0.0, -1.0], "values": [0.2]}, "prices.times[1]", "negative"),
        ("prices", {"times": [0, 2, 1], "values": [0.2, 0.1]}, "prices.times[2]", "increase"),
        ("prices", {"times": [1, 2], "values": [0.2]}, "prices.times[0]", "starts at time 0"),
        ("prices", {"times": [0, 1, 2], "values": [0.2]}, "prices.times", "breakpoints"),
        ("prices", {"step": 1.0, "values": [0.2, -0.1]}, "prices.values[1]", "non-negative"),
        ("prices", {"step": 1.0, "values": [2e6]}, "prices.values[0]", "at most"),
        ("prices", {"step": 0.0, "values": [0.2]}, "prices.step", "positive"),
        ("prices", {"step": 1.0, "values": [0.2], "after": "loop"}, "prices.after", "repeat"),
        ("prices", {"values": [0.2]}, "prices.times", "exactly one of"),
        ("prices", {"step": 1.0, "times": [0, 1], "values": [0.2]}, "prices.step", "exactly"),
        ("carbon", {"step": 1.0, "values": [300.0], "price": -1}, "carbon.price", "minimum"),
        ("carbon", {"step": 1.0, "values": [2e5]}, "carbon.values[0]", "at most"),
        ("prices", {"step": 1e-4, "values": [0.2]}, "prices.step", "at least"),
        ("prices", {"step": 2e4, "values": [0.2] * 6}, "prices.step", "end after"),
    ],
)
def test_bad_series_are_refused_naming_the_field(tiny, field, value, path, words):
    with pytest.raises(InstanceError) as err:
        instance_from_dict(_doc(tiny, **{field: value}))
    assert err.value.path == path, str(err.value)
    assert words in str(err.value)


def test_non_finite_values_are_refused_by_path(tiny):
    text = json.dumps(_doc(tiny, prices={"step": 1.0, "values": [0.2, 1.0]}))
    text = text.replace("[0.2, 1.0]", "[0.2, NaN]")
    with pytest.raises(InstanceError) as err:
        instance_from_dict(json.loads(text))
    assert err.value.path == "prices.values[1]"


@given(series(), st.floats(0.0, 40.0), st.floats(0.0, 20.0), st.floats(0.0, 10.0))
def test_a_shifted_series_is_the_series_from_then_on(s, shift, a, length):
    """What the rolling MILP plans with: the value and integrals from ``shift`` on."""
    moved = s.shifted(shift)
    assert moved.integral(a, a + length) == pytest.approx(
        s.integral(shift + a, shift + a + length), rel=1e-9, abs=1e-9
    )
    for t in (a, a + 0.5 * length):
        # away from a breakpoint (rounding may put t + shift on either side of one)
        if not s.breakpoints(shift + t - 1e-7, shift + t + 1e-7):
            assert moved.at(t) == s.at(shift + t)


def test_off_grid_and_slot_means():
    s = Series.regular(1.0, [0.1, 0.3, 0.2])
    assert s.off_grid(0.25, 10.0) == [] and s.off_grid(0.4, 3.0) == [1.0]  # 2.0 is 5 slots
    assert s.slot_means(0.5, 7) == pytest.approx((0.1, 0.1, 0.3, 0.3, 0.2, 0.2, 0.1))
    assert Series.regular(0.5, [1.0, 3.0]).slot_means(1.0, 2) == pytest.approx((2.0, 2.0))


def test_a_series_at_the_least_interval_is_taken_despite_rounding():
    """``step`` 0.001 h is allowed, but ``10 * 0.001 - 9 * 0.001`` rounds below it: twenty
    values were refused as 'an interval is too short' at ``times[10]`` (found by a
    probe, 2026-12-05). Explicit times alike; a shorter interval is still refused."""
    assert len(Series.regular(0.001, [0.1, 0.5] * 10).values) == 20
    assert len(Series(tuple(i * 0.001 for i in range(21)), (0.1,) * 20).values) == 20
    with pytest.raises(InstanceError, match="too short"):
        Series((0.0, 0.001, 0.0019), (0.1, 0.2))
    with pytest.raises(InstanceError, match="must increase"):
        Series((0.0, 0.001, 0.001), (0.1, 0.2))


def test_the_slot_grid_check_reads_one_period_of_a_repeating_series():
    """A series of 0.0011-h intervals repeated over 5,000 h has millions of breakpoints:
    the MILP's grid check listed them all and raised a bare ValueError (found by a probe,
    2026-12-05). It now reads one period; a flat series is on every grid."""
    fine = Series.regular(0.0011, [0.1, 0.5])
    assert fine.off_grid(1.0, 5000.0)[0] == 0.0011
    assert Series.regular(0.00125, [0.2] * 1000).off_grid(1.0, 5000.0) == []
    hourly = Series.regular(1.0, [0.1, 0.5, 0.3])
    assert hourly.off_grid(0.25, 5000.0) == [] and hourly.off_grid(0.4, 5000.0) == [1.0, 3.0]
    assert Series.regular(1.5, [0.1, 0.5]).off_grid(1.0, 10.0) == [1.5]
    assert Series.regular(1.0, [0.1, 0.5], after="hold").off_grid(0.3, 10.0) == [1.0, 2.0]
