"""The Lagrangian bound (milp.lagrange): never above the optimum, never below the
capacity relaxation, and strictly above it where the jobs compete for the GPUs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from instances.generators import SyntheticSpec, synthetic
from instances.generators.power import lay_idle
from milp.lagrange import lagrangian_bound
from milp.solve import default_slots
from tests.milp.brute_force import brute_force, joint_brute_force
from tests.milp.test_idle import _idle, _off
from tests.milp.test_milp import _tiny

SLOTS = 7


@settings(max_examples=30, deadline=None)
@given(
    st.integers(0, 100_000),
    st.booleans(),
    st.sampled_from(["worst_case", "expected"]),
    st.sampled_from([2, 8, 64]),
    st.booleans(),
)
def test_the_bound_is_never_above_the_optimum(seed, shared, mode, states, guided):
    inst = _tiny(seed, shared=shared, tardiness=mode)
    best, _ = brute_force(inst, SLOTS)
    upper = best if guided else None  # the tightest cut of the windows: at the optimum
    lb = lagrangian_bound(inst, SLOTS, upper=upper, states=states)
    assert lb.bound <= best + 1e-9
    assert lb.bound >= lb.capacity_relaxation


@pytest.mark.parametrize(("seed", "mode"), [(0, "worst_case"), (1, "worst_case"), (3, "expected")])
def test_the_bound_beats_the_capacity_relaxation_where_the_gpus_are_contended(seed, mode):
    """Two jobs on one node of two GPUs, due dates they cannot both meet at full speed:
    pricing the GPUs shows it."""
    inst = _tiny(seed, shared=seed % 2 == 0, tardiness=mode)
    best, _ = brute_force(inst, SLOTS)
    lb = lagrangian_bound(inst, SLOTS, upper=best, states=64)
    assert lb.capacity_relaxation + 1e-3 < lb.bound <= best + 1e-9


def test_without_contention_one_round_suffices_and_the_bound_is_the_relaxation():
    inst = synthetic(SyntheticSpec(nodes=8, jobs=6, rate="low", slot=0.25), seed=1)
    lb = lagrangian_bound(inst, default_slots(inst), states=32)
    assert lb.iterations == 1
    assert lb.bound == pytest.approx(lb.capacity_relaxation, rel=1e-12)


def test_a_grid_too_large_for_memory_is_coarsened_and_then_refused(monkeypatch):
    import milp.lagrange
    from milp import MilpError

    inst = _tiny(1, tardiness="worst_case")
    best, _ = brute_force(inst, SLOTS)
    full = lagrangian_bound(inst, SLOTS, upper=best, states=64)
    monkeypatch.setattr(milp.lagrange, "MAX_BYTES", 2 * (SLOTS + 5 * 8 * 3) * 17)
    coarse = lagrangian_bound(inst, SLOTS, upper=best, states=64)
    assert coarse.states == 16 < full.states
    assert coarse.capacity_relaxation <= coarse.bound <= best + 1e-9
    monkeypatch.setattr(milp.lagrange, "MAX_BYTES", 100)
    with pytest.raises(MilpError, match="Lagrangian bound of 2 jobs"):
        lagrangian_bound(inst, SLOTS, states=64)


def _bound_with_nodes_counted_as_nothing(inst, best):
    return lagrangian_bound(inst, SLOTS, upper=best, states=64, idle=False).bound


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("mode", ["worst_case", "expected"])
@pytest.mark.parametrize("priced", [False, True])
def test_with_idle_power_always_on_the_bound_holds_and_counts_the_nodes(seed, mode, priced):
    """Nodes always on (milp/lagrange_idle.py): the bound with the nodes' own energy split
    over the jobs is never above the optimum of joint plans costed whole by the evaluator,
    and above the bound that counts that energy as nothing (measured: 6-29% above on
    these sixteen; with prices, carbon and relaunch overheads where ``priced``)."""
    inst = _idle(seed, mode, priced=priced, relaunch=0.2 if priced else 0.0)
    best, _ = joint_brute_force(inst, SLOTS)
    lb = lagrangian_bound(inst, SLOTS, upper=best, states=64)
    assert lb.bound <= best + 1e-9
    assert lb.bound > _bound_with_nodes_counted_as_nothing(inst, best) + 1e-4


def test_powered_off_the_nodes_are_counted_as_nothing():
    """Where empty nodes power off, the powered hours are the nodes' own, not a sum over
    the jobs: the bound is the one without them (still below the optimum)."""
    inst = _off(1, "expected")
    best, _ = joint_brute_force(inst, SLOTS)
    lb = lagrangian_bound(inst, SLOTS, upper=best, states=64)
    assert lb.bound == _bound_with_nodes_counted_as_nothing(inst, best)
    assert lb.bound <= best + 1e-9


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("mode", ["worst_case", "expected"])
def test_one_job_on_gpus_idling_near_their_busy_power_gets_its_credit(seed, mode):
    """One job, GPUs idling at 90% of their busy power, no base power: the cluster is
    powered exactly while the job runs, and its busy GPUs draw no idle power. Charging
    the powered hours without the busy GPUs' credit puts the bound above the optimum on
    six of these eight (measured), so the credit is checked here."""
    tiny = _tiny(seed, tardiness=mode)
    inst = lay_idle(tiny.replace(jobs=tiny.jobs[:1]), "0.9,0")
    best, _ = joint_brute_force(inst, SLOTS)
    assert lagrangian_bound(inst, SLOTS, upper=best, states=64).bound <= best + 1e-9
