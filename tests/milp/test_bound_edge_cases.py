"""Bounds certified against proved optima on instances the other bound tests do not
reach: a shared GPU two jobs must share at once (one GPU), a multi-node configuration
on nodes of two sizes, relaunch overheads on configurations of different power, and a
job whose top speed ends a block exactly at a slot's end."""

from __future__ import annotations

import pytest

from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from milp import solve as milp_solve
from milp.data import milp_data
from milp.lagrange import lagrangian_bound
from tests.milp.brute_force import brute_force

SLOT = 0.5


def _one_gpu_sharing(seed: int) -> Instance:
    """One node with one v100, two small jobs (4 and 6 GB, room for both on it) due at
    1.5 h: sharing the GPU at once, both are on time; one after the other, one is late."""
    tau = 0.45 + 0.025 * seed
    jobs = tuple(
        Job(
            f"j{i}",
            0.0,
            1.5,
            EpochDistribution((1.0, 2.0), (0.3, 0.7)),
            {Config("v100", 1): tau, Config("v100", 1, shared=True): tau / 0.7},
            4.0 + 2 * i,
            weight=50.0,
        )
        for i in range(2)
    )
    return Instance(
        (GpuType("v100", 16.0, 300.0),),
        (Node("n", "v100", 1),),
        jobs,
        slot=SLOT,
        name=f"one-gpu-sharing-{seed}",
    )


@pytest.mark.parametrize("seed", range(3))
def test_the_lagrangian_bound_counts_a_shared_gpu_by_its_tenants(seed):
    """Two tenants of one GPU hold it once: a bound that counted each a whole GPU
    would forbid the optimum and rise above it."""
    inst = _one_gpu_sharing(seed)
    best, _ = brute_force(inst, 8)
    lb = lagrangian_bound(inst, 8, states=64)
    assert lb.bound <= best + 1e-9 * max(1.0, best)


def _two_sizes(due: float) -> Instance:
    """Nodes of two and four v100s; one job of two epochs whose due date only the
    two-node configuration (two GPUs on each node, 0.2 h an epoch) meets."""
    tau = 0.5
    job = Job(
        "j0",
        0.0,
        due,
        EpochDistribution((1.0, 2.0), (0.5, 0.5)),
        {
            Config("v100", 1): tau,
            Config("v100", 2): tau / 1.6,
            Config("v100", 4, nodes=2): tau / 2.5,
        },
        6.0,
        weight=20.0,
    )
    return Instance(
        (GpuType("v100", 16.0, 300.0),),
        (Node("a", "v100", 2), Node("b", "v100", 4)),
        (job,),
        slot=SLOT,
        name="two-sizes",
    )


@pytest.mark.parametrize("due", [0.4, 0.5])
def test_the_lagrangian_bound_counts_a_multi_node_configuration_at_the_smallest_host(due):
    inst = _two_sizes(due)
    exact = milp_solve(inst, slots=6, time_limit=60)
    assert exact.optimal and exact.objective is not None
    lb = lagrangian_bound(inst, 6, states=64)
    assert lb.bound <= exact.objective + 1e-9 * max(1.0, exact.objective)


def _one_job(due: float, tau: float, relaunch: float, two_gpus: bool) -> Instance:
    """One job of two epochs alone on a node of two v100s."""
    times = {Config("v100", 1): tau}
    if two_gpus:
        times[Config("v100", 2)] = tau / 1.6
    job = Job("j0", 0.0, due, EpochDistribution((1.0, 2.0), (0.4, 0.6)), times, 6.0, weight=10.0)
    return Instance(
        (GpuType("v100", 16.0, 300.0),),
        (Node("n", "v100", 2),),
        (job,),
        slot=SLOT,
        relaunch_hours=relaunch,
        name="one-job",
    )


@pytest.mark.parametrize("relaunch", [0.1, 0.2, 0.7])
def test_the_capacity_relaxation_pays_the_first_start_at_the_least_power(relaunch):
    """Alone and in no hurry, the job runs on one GPU: its first start's overhead costs
    that GPU's power, not the two GPUs' (a floor at the dearest power is above it)."""
    inst = _one_job(10.0, 0.5, relaunch, two_gpus=True)
    best, _ = brute_force(inst, 8)
    d = milp_data(inst, 8, check_size=False)
    assert d.separable_bound() <= best + 1e-12
    assert lagrangian_bound(inst, 8, states=64).bound <= best + 1e-12


@pytest.mark.parametrize("due", [0.5, 0.6])
def test_a_block_done_exactly_at_a_slots_end_is_on_time_in_the_bounds(due):
    """Two epochs of 0.25 h fill the first slot of 0.5 h exactly: the job is done at
    0.5 h, on time; a floor that read the slot after would charge tardiness."""
    inst = _one_job(due, 0.25, 0.0, two_gpus=False)
    best, _ = brute_force(inst, 4)
    d = milp_data(inst, 4, check_size=False)
    assert d.separable_bound() <= best + 1e-12
    assert lagrangian_bound(inst, 4, states=64).bound <= best + 1e-12
