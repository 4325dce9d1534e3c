"""Small instances for the decomposition's tests: two v100 nodes of two GPUs each, two or
three jobs with exclusive, shared and multi-node (both nodes) configurations, early
stopping, tight due dates and a relaunch overhead shorter or longer than a slot; and
any instance under a price of a kWh that changes by the slot, carbon priced."""

from __future__ import annotations

import numpy as np

from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from instances.energy import Carbon, Series

SLOT = 0.5


def two_nodes(
    seed: int,
    *,
    jobs: int = 2,
    shared: bool = True,
    multi: bool = True,
    delta: float = 0.0,
    tardiness: str = "worst_case",
) -> Instance:
    """Jobs of 2-3 epochs on two nodes of two v100s, contended by their due dates."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(jobs):
        e = int(rng.integers(2, 4))
        tau = float(rng.uniform(0.3, 0.7))
        times = {Config("v100", 1): tau, Config("v100", 2): tau / 1.6}
        if shared:
            times[Config("v100", 1, shared=True)] = tau / 0.7
        if multi:
            times[Config("v100", 4, nodes=2)] = tau / 2.5
        release = float(rng.integers(0, 2)) * SLOT
        due = release + float(rng.uniform(0.4, 1.2)) * e * tau
        dist = EpochDistribution(
            tuple(float(s) for s in range(1, e + 1)), tuple(rng.dirichlet(np.ones(e)))
        )
        out.append(Job(f"j{i}", release, round(due, 3), dist, times, 6.0 + 5 * i))
    return Instance(
        (GpuType("v100", 16.0, 300.0),),
        (Node("a", "v100", 2), Node("b", "v100", 2)),
        tuple(out),
        slot=SLOT,
        tardiness=tardiness,  # type: ignore[arg-type]
        relaunch_hours=delta,
        name=f"two-nodes-{seed}",
    )


def priced(inst: Instance, seed: int, *, carbon: bool = True) -> Instance:
    """``inst`` under a price of a kWh drawn for every slot of 0.5 h (odd seeds: every
    hour) from 0 to 0.8, one in seven free, repeated every eight steps; with
    ``carbon``, an hourly carbon intensity of 100-700 g/kWh at 400 a tonne on top."""
    rng = np.random.default_rng(1000 + seed)
    step = SLOT if seed % 2 == 0 else 2 * SLOT
    values = rng.uniform(0.0, 0.8, 8) * (rng.random(8) > 1 / 7)
    out = inst.replace(prices=Series.regular(step, tuple(float(x) for x in values)))
    if carbon:
        grams = tuple(float(x) for x in rng.uniform(100.0, 700.0, 3))
        out = out.replace(carbon=Carbon(Series.regular(1.0, grams, upper=1e5), 400.0))
    return out
