"""The engine's node power states (validation/power_states.py) by hand: waits, boots
timed to the start, boots cancelled when their work never runs, the slot grid."""

from __future__ import annotations

import math

import pytest

from instances.power import PowerOff
from validation.power_states import NodePower

OPTION = PowerOff(after_h=1.0, boot_h=0.5, boot_kwh=0.3)


def test_on_within_the_delay_off_after_it():
    power = NodePower(OPTION, ["a"], None)
    assert power.place("j1", ("a",), 0.5) == 0.5  # nodes start on
    power.leave("j1", ("a",), 2.0)
    assert power.place("j2", ("a",), 3.0) == 3.0  # empty 1 h: still on
    power.leave("j2", ("a",), 4.0)
    assert power.place("j3", ("a",), 6.0) == 6.5  # off since 5: boots 6 to 6.5
    power.leave("j3", ("a",), 7.0)
    ledger = power.ledger()
    assert ledger.off["a"] == ((5.0, 6.0), (8.0, math.inf))
    assert ledger.boots["a"] == (6.5,)
    assert ledger.powered_hours("a", 9.0) == pytest.approx(9.0 - 1.0 - 1.0)


def test_work_placed_on_a_booting_node_waits_for_the_boot():
    power = NodePower(OPTION, ["a"], None)
    assert power.place("j1", ("a",), 3.0) == 3.5  # never used: off since 1
    assert power.place("j2", ("a",), 3.2) == 3.5
    assert power.ledger().boots["a"] == (3.5,)


def test_a_boot_whose_work_never_runs_is_cancelled():
    power = NodePower(OPTION, ["a"], None)
    assert power.place("j1", ("a",), 3.0) == 3.5
    power.leave("j1", ("a",), None)  # moved away before its work started
    assert power.ledger().off["a"] == ((1.0, math.inf),) and power.ledger().boots["a"] == ()
    assert power.place("j2", ("a",), 4.0) == 4.5  # still off: a new boot
    assert power.ledger().off["a"] == ((1.0, 4.0),)


def test_the_slot_grid_may_boot_a_node_that_was_on():
    """Work on nodes a (off) and b (empty since 2.1, on until 3.1) placed at 3: the
    boot of a ends at the slot end 4, when b has been empty 1.9 h > d + b: b boots too."""
    power = NodePower(OPTION, ["a", "b"], 1.0)
    power.place("j0", ("b",), 0.0)
    power.leave("j0", ("b",), 2.1)
    assert power.place("j1", ("a", "b"), 3.0) == 4.0
    ledger = power.ledger()
    assert ledger.off["a"] == ((1.0, 3.5),) and ledger.off["b"] == ((3.1, 3.5),)
    assert ledger.boots == {"a": (4.0,), "b": (4.0,)}
