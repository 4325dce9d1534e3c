"""Cases of instances/energy.py a mutation test found untested (2026-12-07): each test
fails on one or more mutants that the suite let through."""

from __future__ import annotations

import math

import numpy as np
import pytest

from instances import InstanceError
from instances.energy import Series

HOURLY = Series.regular(1.0, [0.1, 0.3, 0.2])  # a 3-hour day, repeated
UNEVEN = Series((0.0, 0.5, 2.0, 3.5), (0.4, 0.1, 0.7))


def test_an_interval_short_of_the_least_by_more_than_rounding_is_refused():
    """The bound on an interval forgives 1e-9 h of rounding, no more: 5e-9 h short of
    0.001 h is refused (a tolerance ten times looser took it)."""
    with pytest.raises(InstanceError, match="too short"):
        Series((0.0, 0.001, 0.001999995), (0.1, 0.2))
    assert len(Series((0.0, 0.001, 0.0019999995), (0.1, 0.2)).values) == 2  # rounding


@pytest.mark.parametrize("s", [HOURLY, UNEVEN])
def test_the_value_at_a_breakpoint_is_the_interval_that_starts_there(s):
    """``values[i]`` on ``[t_i, t_{i+1})``: at ``t_i`` itself the new value, in the first
    period and in later ones."""
    for i, t in enumerate(s.times[:-1]):
        assert s.at(t) == s.values[i]
        assert s.at(t + 2 * s.end) == s.values[i]
    held = Series(UNEVEN.times, UNEVEN.values, "hold")
    assert [held.at(t) for t in held.times] == [*held.values, held.values[-1]]


def _sound(moved: Series) -> None:
    """A derived series as the constructor would take it: times from 0, increasing,
    one value per interval (no empty interval)."""
    assert moved.times[0] == 0.0 and len(moved.times) == len(moved.values) + 1
    assert all(b > a for a, b in zip(moved.times, moved.times[1:], strict=False)), moved.times


@pytest.mark.parametrize("after", ["repeat", "hold"])
@pytest.mark.parametrize("base", [HOURLY, UNEVEN])
def test_a_series_shifted_to_a_breakpoint_starts_with_that_interval(base, after):
    """A shift onto a breakpoint (or onto the end, or whole periods on) leaves no empty
    interval: the shifted series starts with the interval that starts there, and a
    held series shifted to its end (or past it) is its last value."""
    s = Series(base.times, base.values, after)
    for k, shift in enumerate(s.times):
        for periods in (0, 2) if after == "repeat" else (0,):
            moved = s.shifted(shift + periods * s.end)
            _sound(moved)
            if k < len(s.values):
                assert moved.values[0] == s.values[k]
                assert moved.at(0.0) == s.values[k]
            assert moved.integral(0.0, 5.0) == pytest.approx(
                s.integral(shift + periods * s.end, shift + periods * s.end + 5.0)
            )
    if after == "hold":
        for shift in (s.end, s.end + 7.0):
            moved = s.shifted(shift)
            _sound(moved)
            assert moved.constant == s.values[-1] and moved.at(3.0) == s.values[-1]
            assert moved.integral(0.0, 2.0) == pytest.approx(2 * s.values[-1])


def test_a_held_series_shifted_past_its_last_change_is_flat():
    """``constant`` of the shifted series (what a re-planned instance reads to take
    the flat bill's path) sees that only the last value is left."""
    s = Series((0.0, 1.0, 2.0), (0.7, 0.2), "hold")
    assert s.shifted(1.0).constant == 0.2
    assert s.shifted(1.0) == Series((0.0, 1.0), (0.2,), "hold")


def test_off_grid_tolerance_is_1e9_slots_relative():
    """A breakpoint 5e-9 h off an hourly grid is off it; one that is on the grid but
    whose quotient by the slot rounds 4e-9 away from a whole number (99,999.999 h on
    a 0.003-h grid: 33,333,333 slots) is on it."""
    assert Series((0.0, 1.000000005, 2.0), (0.1, 0.2)).off_grid(1.0, 2.0) == [1.000000005]
    far = Series((0.0, 99999.999, 1e5), (0.1, 0.2), "hold")
    assert far.off_grid(0.003, 1e5) == []


def test_cumulative_folds_a_period_rounding_below_zero_as_cumulatives_does():
    """``floor(t / end) * end`` can pass ``t`` (3.3000000000000003 on a 0.3-h period
    of 0.1-h steps): the scalar fold steps back a period, giving the very float of the
    vector form."""
    s = Series.regular(0.1, [0.1, 0.3, 0.2])
    for t in (3.3000000000000003, 23.1, 27.900000000000002, 44.7):
        assert math.floor(t / s.end) * s.end > t  # the case itself
        assert s.cumulative(t) == float(s.cumulatives(np.array([t]))[0])


def test_an_empty_interval_integrates_to_zero_even_at_infinity():
    """``integral(a, b)`` is 0 for ``b <= a`` (docstring), also for ``a = b = inf``
    (an endless run's last event), where ``inf - inf`` would be NaN."""
    s = Series.regular(1.0, [0.5, 0.2])
    assert s.integral(math.inf, math.inf) == 0.0
    assert s.integral(2.0, 2.0) == 0.0


def test_breakpoints_are_each_change_once_and_only_inside():
    """The times in ``(a, b)``, each once: a period's end is the next one's start, not
    a second breakpoint; a held series' breakpoint at ``a`` or ``b`` is left out."""
    assert HOURLY.breakpoints(0.0, 10.0) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    assert HOURLY.breakpoints(3.0, 6.0) == [4.0, 5.0]
    held = Series(UNEVEN.times, UNEVEN.values, "hold")
    assert held.breakpoints(0.5, 3.5) == [2.0]
    assert held.breakpoints(0.0, 10.0) == [0.5, 2.0, 3.5]


@pytest.mark.parametrize("factor", [math.nan, math.inf])
def test_scaling_by_a_non_finite_factor_is_refused(factor):
    """A NaN factor (or inf times a free hour's 0) passes no ``top > upper`` test."""
    with pytest.raises(InstanceError):
        Series.regular(1.0, [0.0, 0.2]).scaled(factor)


def test_a_series_written_as_a_step_reads_back_to_the_same_times():
    """``0.3`` is not ``3 * 0.1`` (0.30000000000000004): a series with explicit times
    0, 0.1, 0.2, 0.3 is written with its times, so that it reads back the same."""
    from instances.energy import series_from_dict

    s = Series((0.0, 0.1, 0.2, 0.3), (0.1, 0.2, 0.3))
    assert s.step == pytest.approx(0.1)
    assert "times" in s.to_dict()
    assert series_from_dict(s.to_dict(), upper=1.0) == s


def test_intervals_unequal_by_more_than_1e12_hours_have_no_step():
    s = Series((0.0, 1.0, 2.000000000005), (0.1, 0.2))
    assert s.step is None
    assert Series((0.0, 1.0, 2.0000000000005), (0.1, 0.2)).step == 1.0


@pytest.mark.parametrize("shift", [1e-16, 1.0000000000000002])
def test_a_series_shifted_a_hair_past_a_breakpoint_has_no_empty_interval(shift):
    """A shift a float's last bit past a breakpoint leaves the wrapped part of that
    interval no width once rounded: it is left out, not kept as an empty last interval
    (whose times would not read back). (A shift that leaves it a sliver of a few ulps,
    2.0000000000000004 here, keeps it: exact in memory, but under the least interval a
    file may hold; no shifted series is written.)"""
    from instances.energy import series_from_dict

    moved = HOURLY.shifted(shift)
    _sound(moved)
    assert series_from_dict(moved.to_dict(), upper=1.0) == moved
    assert moved.integral(0.0, 7.0) == pytest.approx(HOURLY.integral(shift, shift + 7.0))
