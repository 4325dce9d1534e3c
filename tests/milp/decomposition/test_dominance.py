"""The dominance margin across states under prices by the slot: a label ahead by what one
relaunch can lose dominates another only if it is cheaper by what that relaunch can cost
in the slot about to run, at that slot's price (the random pricing tests of
test_pricing seldom make the margin decisive, so it is checked here directly)."""

from __future__ import annotations

import numpy as np
import pytest

from instances.energy import Series
from milp.data import milp_data
from milp.decomposition.dominance import Labels, dominated
from milp.decomposition.slots import SlotModel
from milp.decomposition.space import build_space
from milp.decomposition.stack import Stack
from tests.milp.decomposition.instances import SLOT, two_nodes

FREE, DEAR = 0.0, 0.9  # the price of a kWh in the window's first and second slot


def _two_labels(short: float) -> tuple[Stack, Labels, float]:
    """Job 0 (overhead 0.1 h, a fifth of a slot) under free and dear slots in turn from
    its first slot on,
    and two running labels in different states: the second ahead of the first by
    exactly one relaunch's loss at top speed and cheaper by ``short`` of what a
    relaunch costs at the dear price; that cost."""
    inst = two_nodes(0, delta=0.1)
    first = milp_data(inst, 6, check_size=False).jobs["j0"].first_slot
    series = tuple(FREE if (t - first) % 2 == 0 else DEAR for t in range(8))
    inst = inst.replace(prices=Series.regular(SLOT, series))
    space = build_space(milp_data(inst, 6, check_size=False))
    m = SlotModel.of(space.jobs[0], space.d.slot, space.d.tardiness)
    assert m.price is not None and m.positions == 1
    assert m.price[m.first] == FREE and m.price[m.first + 1] == DEAR
    stack = Stack.of([m])
    share = m.delta / m.slot
    lead = share * float(m.speed.max())
    dear = share * float(m.kwh.max()) * DEAR
    one = np.ones(2, dtype=np.int64)
    labels = Labels(
        job=np.zeros(2, dtype=np.int64),
        w=np.array([0.5, 0.5 + lead]),
        cost=np.array([1.0, 1.0 - short * dear]),
        state=np.array([0, 2]),  # two configurations' choices
        pos=one,
        parent=-one,
        via=np.array([0, 2]),
    )
    return stack, labels, dear


@pytest.mark.parametrize("short", [0.5, 1.0])
def test_the_margin_is_the_relaunch_at_the_price_of_the_slot_about_to_run(short):
    stack, labels, dear = _two_labels(short)
    assert dear > 0
    group = labels.state  # each label its own state: only the cross-state rule applies
    # before the free slot, a relaunch costs nothing: ahead is enough
    assert dominated(labels, group, stack, 0).tolist() == [True, False]
    # before the dear slot, only a label cheaper by the whole relaunch dominates
    assert dominated(labels, group, stack, 1).tolist() == [short >= 1.0, False]
