"""STS's rule for the job ending last (heuristic/sts/lastjob.py): a hurried profile
whose later steps do not fit beside the ledger's bookings, and small generated
instances with idle power on which each of the rule's steps changes the plan."""

from __future__ import annotations

import pytest

from heuristic.core.registry import make_policy
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from instances.generators.power import lay_idle
from instances.generators.registry import GENERATORS
from validation.evaluate import evaluate
from validation.simulator import rollout

V1, V2, V4, V6, V8 = (Config("v100", g) for g in (1, 2, 4, 6, 8))
TIMES = {V1: 1.0, V2: 0.52, V4: 0.28, V8: 0.16}


def test_a_faster_profile_that_does_not_fit_the_bookings_is_not_taken():
    """One always-on 8-V100 node (0.76 kW of its own): a 6-GPU job booked until 10 h, a
    short job, and a 200-epoch job due at 200 h. Once the short job has completed (2 h)
    the long one would be hurried, but its faster profiles take more GPUs than the
    6-GPU job leaves before 10 h: it stays on one GPU until then, and takes all 8 once
    that job has completed (10 + 190 x 0.16 = 40.4 h). Taking the first step of such a
    profile regardless (2 GPUs from 2.08 h) is what the ledger check stops."""
    gpu = GpuType("v100", 32.0, 300.0, idle_w=45.0)
    node = Node("n", "v100", 8, base_w=400.0)
    jobs = (
        Job("short", 0.0, 3.0, EpochDistribution.deterministic(2.0), TIMES, 8.0),
        Job("a", 0.0, 200.0, EpochDistribution.deterministic(200.0), TIMES, 8.0),
        Job("mid", 0.0, 12.0, EpochDistribution.deterministic(50.0), {V6: 0.2}, 8.0),
    )
    plan = rollout(Instance((gpu,), (node,), jobs, energy_price=0.2), make_policy("sts"))
    a = [(s.start, s.end, s.config) for s in plan.segments if s.job == "a"]
    assert a == [(0.0, 10.0, V1), (10.0, pytest.approx(40.4), V8)]


@pytest.mark.parametrize(
    ("generator", "params", "seed", "cost"),
    [
        # the job ending last after the first was hurried is hurried at the same
        # decision (one job a decision costs 4.046)
        ("synthetic", {"nodes": 1, "jobs": 5}, 5, 4.041298043276088),
        # no job is hurried at a decision where one waits for GPUs (hurrying regardless
        # costs 3.273 here); a hurried profile whose step does not fit leaves the job on
        # the GPUs it held (releasing them for good lost the job: a KeyError)
        ("synthetic", {"nodes": 2, "jobs": 10}, 2, 3.314798058399902),
    ],
)
def test_sts_with_idle_power_costs_what_it_did_on_small_generated_instances(
    generator, params, seed, cost
):
    """Worst-case rollouts of ``sts`` with idle power (``low``), pinned on 2026-12-07:
    each instance is one where a step of the rule for the job ending last changes the
    plan."""
    inst = lay_idle(GENERATORS[generator].instance(params, seed), "low")
    plan = rollout(inst, make_policy("sts"))
    assert evaluate(inst, plan).total_cost == pytest.approx(cost, rel=1e-9)
