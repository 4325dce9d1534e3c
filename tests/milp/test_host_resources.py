"""E3 in the MILP: CPU cores and DRAM as two capacity families per node and slot."""

from __future__ import annotations

import numpy as np
import pytest

from heuristic.sts.policy import StsPolicy
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from milp import MilpError, SolutionStatus, solve
from tests.milp.brute_force import brute_force
from validation.check import check_plan
from validation.evaluate import evaluate
from validation.simulator import rollout

SLOT = 0.5


def _cpu_bound(seed: int, *, cores: int = 6, dram: float | None = None) -> Instance:
    """Two one-GPU jobs on a 2-GPU node whose cores cannot feed both at their fast,
    CPU-hungry level: 4 cores each (fast) or 2 (Synergy's proportional share, slower)."""
    rng = np.random.default_rng(seed)
    jobs = []
    for i in range(2):
        E = int(rng.integers(2, 4))
        tau = float(rng.uniform(0.3, 0.6))
        speedup = float(rng.uniform(1.3, 2.0))
        times = {
            Config("v100", 1, cpus=2, dram_gb=40.0): tau,
            Config("v100", 1, cpus=4, dram_gb=60.0): tau / speedup,
        }
        due = float(rng.uniform(0.6, 1.2)) * E * tau
        jobs.append(
            Job(
                f"j{i}",
                0.0,
                round(due, 3),
                EpochDistribution.deterministic(float(E)),
                times,
                8.0,
            )
        )
    return Instance(
        (GpuType("v100", 16.0, 300.0),),
        (Node("n", "v100", 2, cpu_cores=cores, dram_gb=dram),),
        tuple(jobs),
        slot=SLOT,
        name=f"cpu-{seed}",
    )


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dram", [None, 100.0])
def test_milp_with_cpu_and_dram_equals_brute_force(seed, dram):
    inst = _cpu_bound(seed, dram=dram)
    best, plan = brute_force(inst, 8)
    assert check_plan(inst, plan) == []
    res = solve(inst, slots=8, time_limit=60)
    assert res.status is SolutionStatus.OPTIMAL
    assert res.objective == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert res.plan is not None and check_plan(inst, res.plan) == []
    # the cores bind: with unlimited ones the optimum is cheaper
    free = inst.replace(nodes=(Node("n", "v100", 2),))
    assert solve(free, slots=8, time_limit=60).objective < res.objective - 1e-6


def test_the_cores_bind_both_fast_levels_never_run_together():
    inst = _cpu_bound(0)
    res = solve(inst, slots=8, time_limit=60)
    assert res.plan is not None
    for t in range(8):
        at = [s for s in res.plan if s.start <= t * SLOT < s.end]
        assert sum(s.config.cpus or 0 for s in at) <= 6


def test_sts_warm_start_is_feasible_and_respects_the_cores():
    inst = _cpu_bound(1, dram=100.0)
    plan = rollout(inst, StsPolicy())
    assert check_plan(inst, plan) == []
    res = solve(inst, initial_plan=plan, slots=8, time_limit=60)
    assert res.objective <= evaluate(inst, plan).total_cost + 1e-9
    assert "MIP start solution is feasible" in res.log


def test_two_shared_configurations_of_one_type_are_refused():
    job = Job(
        "j",
        0.0,
        4.0,
        EpochDistribution.deterministic(2.0),
        {
            Config("v100", 1, shared=True, cpus=2): 0.5,
            Config("v100", 1, shared=True, cpus=4): 0.4,
        },
        4.0,
    )
    inst = Instance(
        (GpuType("v100", 16.0, 300.0),), (Node("n", "v100", 2, cpu_cores=8),), (job,), slot=SLOT
    )
    with pytest.raises(MilpError, match="two shared configurations on v100"):
        solve(inst, slots=8)
