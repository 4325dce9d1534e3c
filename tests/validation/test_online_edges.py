"""An online run's case a mutation test found untested (2026-12-07)."""

import pytest

from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from validation.online import run_online


def test_the_makespan_runs_from_the_first_release_not_from_zero():
    """(mutant N04: `- first` dropped) one job released at 2 h runs 4 epochs of 0.25 h
    alone: makespan 1 h (not 3 h) and the one GPU of the cluster busy all of it."""
    one = Config("a", 1)
    job = Job("A", 2.0, 50.0, EpochDistribution((4.0,), (1.0,)), {one: 0.25}, 1.0)
    inst = Instance((GpuType("a", 32.0, 400.0),), (Node("n0", "a", 1),), (job,))
    run = run_online(inst, "fifo", seed=0)
    assert run.result.completions["A"] == pytest.approx(3.0)
    assert run.makespan == pytest.approx(1.0)
    assert run.utilisation == pytest.approx(1.0)
    assert run.summary()["makespan_h"] == pytest.approx(1.0)
