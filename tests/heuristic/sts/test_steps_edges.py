"""STS's slot-grid rules (heuristic/sts/steps.py) at their boundaries: a step ending
exactly at the coming slot's end, and a switch time already within the coming slot."""

from __future__ import annotations

from heuristic.sts.profile import Profile, Step
from heuristic.sts.steps import grid, step_now
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node

V1, V2 = Config("v100", 1), Config("v100", 2)


def _slotted() -> Instance:
    job = Job("j", 0.0, 10.0, EpochDistribution.deterministic(4.0), {V1: 1.0, V2: 0.5}, 8.0)
    return Instance((GpuType("v100", 32.0, 300.0),), (Node("n", "v100", 8),), (job,), slot=0.5)


def test_a_step_ending_at_the_coming_slots_end_is_run():
    """Half an epoch on one GPU ends at the first slot's end (0.5 h): that step runs now
    and the switch is at 0.5 h; a quarter epoch (0.25 h) ends within the slot and is
    skipped for the next, faster step."""
    inst = _slotted()
    job = inst.jobs[0]
    exact = Profile((Step(V1, 0.0, 0.5), Step(V2, 0.5, 4.0)), 2.25, 0.0, 0.0, 10.0)
    assert step_now(inst, job, exact, 1.0) == (Step(V1, 0.0, 0.5), 1.5, False)
    short = Profile((Step(V1, 0.0, 0.25), Step(V2, 0.25, 4.0)), 2.125, 0.0, 0.0, 10.0)
    assert step_now(inst, job, short, 1.0) == (Step(V2, 0.25, 4.0), 3.125, True)


def test_a_switch_is_moved_down_to_the_grid_but_at_least_a_slot_ahead():
    inst = _slotted()
    assert grid(inst, 1.0, 2.7) == 2.5
    assert grid(inst, 1.0, 2.5) == 2.5
    assert grid(inst, 1.0, 1.2) == 1.5  # the grid below (1.0) is now: a slot ahead
    assert grid(inst, 1.0, 1.0) == 1.5
