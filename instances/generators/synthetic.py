"""Synthetic thesis-style scenarios (seeded, deterministic).

N nodes of mixed GPU types with 2, 4 or 8 GPUs; jobs arrive at a ``high``, ``exponential``
or ``low`` rate, or all at time 0 (``batch``, the thesis's scalability instances); due
dates are a tightness factor times the job's worst-case time on one GPU of its fastest
type (the time "as submitted"), so that a job may start slow and speed up, or run on
several slower GPUs.
Every number that is an assumption is a named parameter with its default here.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import ClassVar

import numpy as np

from instances.distribution import EpochDistribution
from instances.errors import InstanceError
from instances.generators.common import assemble, draw_tightness, due_date
from instances.generators.early_stopping import make_distribution
from instances.generators.measured_overheads import drawn_relaunch_hours
from instances.generators.spec import Bound, GeneratorSpec
from instances.limits import (
    MAX_EPOCH_HOURS,
    MAX_GPUS_PER_NODE,
    MAX_JOBS,
    MAX_MEMORY_GB,
    MAX_NODES,
    MIN_EPOCH_HOURS,
)
from instances.model import Config, GpuType, Instance, Job, Node

# Speed of one GPU relative to a K80 on a typical training job. K80/P100/V100 are the
# medians of Gavel's measured 1-GPU throughput ratios; T4 and A100 are assumptions.
RELATIVE_SPEED = {"k80": 1.0, "t4": 2.0, "p100": 3.3, "v100": 4.2, "a100": 7.0}
# Mean offered load (busy GPU-hours per GPU-hour of the cluster, worst case) per rate.
ARRIVAL_LOAD = {"high": 1.5, "exponential": 0.8, "low": 0.4}
# The offered loads at which EDF's largest number of jobs present at once, for 1,000
# jobs on 100 nodes (sampled stops, mean of seeds 0-4), is the thesis's 400 / 200 / 100
# (seed text, section 8). Found by benchmarks/calibrate_load.py; docs/thesis.md.
THESIS_PEAK_LOAD = {"high": 0.762, "exponential": 0.320, "low": 0.138}
CALIBRATIONS = {"offered-load": ARRIVAL_LOAD, "thesis-peak": THESIS_PEAK_LOAD}
# every job submitted at time 0: the thesis's scalability instances (N, 2N or 4N jobs
# on N nodes, seed text section 8)
BATCH = "batch"
RATES = (*ARRIVAL_LOAD, BATCH)
MAX_LOAD = 100.0  # past this the arrivals are a batch in all but name
# below this the arrivals of a few jobs already span more than the bound on times
# (instances/limits.py), and a load of 5e-324 overflows their gaps to inf
MIN_LOAD = 1e-6


@cache
def gpu_specs() -> dict[str, GpuType]:
    """Vendor memory and board power (bundled ``gpu_specs.csv``)."""
    text = resources.files("instances.data").joinpath("gpu_specs.csv").read_text()
    return {
        r["gpu_type"]: GpuType(
            r["gpu_type"], float(r["memory_gb_per_gpu"]), float(r["board_power_w_per_gpu"])
        )
        for r in csv.DictReader(text.splitlines())
    }


@dataclass(frozen=True)
class SyntheticSpec(GeneratorSpec):
    """Parameters of a synthetic scenario (and :class:`GeneratorSpec`'s). Times in hours."""

    nodes: int = 4
    jobs: int = 10
    gpu_types: tuple[str, ...] = ("k80", "p100", "v100")
    gpus_per_node: tuple[int, ...] = (2, 4, 8)
    rate: str = "exponential"
    early_stopping: str = "uniform"
    epochs: tuple[int, int] = (5, 30)  # range of maximum epochs
    epoch_hours_k80: tuple[float, float] = (0.2, 1.5)  # 1-GPU K80 epoch time range
    scaling: tuple[float, float] = (0.6, 0.95)  # exponent alpha: tau(g) = tau(1) / g**alpha
    memory_gb: tuple[float, ...] = (2.0, 4.0, 6.0, 8.0, 12.0)
    sharing: bool = True
    interference: tuple[float, float] = (0.5, 0.9)  # rho: shared speed / exclusive 1-GPU
    # which offered load each rate stands for: CALIBRATIONS
    calibration: str = "offered-load"
    load: float | None = None  # an offered load of its own, instead of the rate's

    BOUNDS: ClassVar[Mapping[str, Bound]] = {
        **GeneratorSpec.BOUNDS,
        "nodes": Bound(1, MAX_NODES),
        "jobs": Bound(1, MAX_JOBS),
        "gpus_per_node": Bound(1, MAX_GPUS_PER_NODE),
        "epoch_hours_k80": Bound(MIN_EPOCH_HOURS, MAX_EPOCH_HOURS),
        # more GPUs are never slower, nor more than proportionally faster
        "scaling": Bound(0, 1),
        "memory_gb": Bound(0, MAX_MEMORY_GB, open_low=True),
        # sharing a GPU is never faster than owning it
        "interference": Bound(0, 1, open_low=True),
        "load": Bound(MIN_LOAD, MAX_LOAD),
    }

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.rate not in RATES:
            raise InstanceError("rate", self.rate, f"must be one of {RATES}")
        if self.calibration not in CALIBRATIONS:
            raise InstanceError(
                "calibration", self.calibration, f"must be one of {tuple(CALIBRATIONS)}"
            )
        if self.load is not None and self.rate == BATCH:
            raise InstanceError(
                "load", self.load, "has no meaning with rate 'batch' (every job at time 0)"
            )
        unknown = [g for g in self.gpu_types if g not in RELATIVE_SPEED]
        if unknown:
            raise InstanceError(
                "gpu_types", unknown, f"no relative speed known; known: {sorted(RELATIVE_SPEED)}"
            )


def offered_load(spec: SyntheticSpec) -> float:
    """Busy GPU-hours per GPU-hour of the cluster that the arrivals offer (worst case)."""
    if spec.load is not None:
        return spec.load
    return CALIBRATIONS[spec.calibration].get(spec.rate, 1.0)


def _one_gpu_time(times: dict[Config, float]) -> float:
    """Hours per epoch on one exclusive GPU of the job's fastest type."""
    return min(t for c, t in times.items() if c.gpus == 1 and not c.shared and c.nodes == 1)


def _due_date_gpu_hours(
    epochs: int, times: dict[Config, float], factor: float, max_share: int
) -> float:
    """Worst-case GPU-hours on the most GPU-efficient configuration that finishes within
    ``factor`` x the reference time (a shared slot counts as 1/K_max of a GPU)."""
    window = factor * epochs * _one_gpu_time(times)
    meets = [c for c, t in times.items() if epochs * t <= window * (1 + 1e-12)]
    if not meets:
        # a factor below the fastest configuration's speed-up: the due date falls back
        # to the job's fastest finish (:func:`due_date`), which only those meet
        quickest = min(times.values())
        meets = [c for c, t in times.items() if t == quickest]
    return min(epochs * times[c] * (1 / max_share if c.shared else c.gpus) for c in meets)


def synthetic(spec: SyntheticSpec, seed: int = 0, name: str | None = None) -> Instance:
    """A random instance drawn from ``spec``; the same seed gives the same instance."""
    rng = np.random.default_rng(seed)
    specs = gpu_specs()
    types = [specs[g] for g in spec.gpu_types]
    nodes = []
    for i in range(spec.nodes):
        t = (
            spec.gpu_types[i % len(spec.gpu_types)]
            if i < len(spec.gpu_types)
            else str(rng.choice(spec.gpu_types))
        )
        nodes.append(Node(f"n{i}", t, int(rng.choice(spec.gpus_per_node))))
    total_gpus = sum(n.num_gpus for n in nodes)
    largest = {
        t: max((n.num_gpus for n in nodes if n.gpu_type == t), default=0) for t in spec.gpu_types
    }

    # one object per configuration, shared by every job (they are frozen): building,
    # checking and hashing a fresh one per job and step took a third of generating
    # 1,000 jobs
    configs: dict[tuple[str, int, bool], Config] = {}

    def config(t: str, g: int, shared: bool = False) -> Config:
        key = (t, g, shared)
        if key not in configs:
            configs[key] = Config(t, g, shared=shared)
        return configs[key]

    drafts = []
    for _ in range(spec.jobs):
        E = int(rng.integers(spec.epochs[0], spec.epochs[1] + 1))
        base = float(rng.uniform(*spec.epoch_hours_k80))
        alpha = float(rng.uniform(*spec.scaling))
        memory = float(rng.choice(spec.memory_gb))
        rho = float(rng.uniform(*spec.interference))
        times: dict[Config, float] = {}
        for t in spec.gpu_types:
            # per-job heterogeneity: the type's speed varies by +-25% across jobs
            speed = RELATIVE_SPEED[t] * float(rng.uniform(0.75, 1.25))
            tau1 = base / speed
            g = 1
            while g <= largest[t]:
                times[config(t, g)] = tau1 / g**alpha
                g *= 2
            if spec.sharing and memory <= specs[t].memory_gb:
                times[config(t, 1, shared=True)] = tau1 / rho
        factor = draw_tightness(rng, spec)
        drafts.append((E, times, memory, factor))

    # Arrivals: Poisson at the rate that gives the offered load of the scenario. A job's
    # load is its worst-case GPU-hours on the most GPU-efficient configuration that meets
    # its due date: the due dates force fast, GPU-hungry configurations, and measuring on
    # the slowest one would overload the cluster at every rate.
    mean_gpu_hours = (
        np.mean(
            [
                _due_date_gpu_hours(E, times, factor, spec.max_share)
                for E, times, _, factor in drafts
            ]
        )
        if drafts
        else 1.0
    )
    rate = offered_load(spec) * total_gpus / max(mean_gpu_hours, 1e-9)
    gaps = rng.exponential(1.0 / rate, size=spec.jobs)
    arrivals: np.ndarray = np.cumsum(gaps) - (gaps[0] if spec.jobs else 0.0)
    if spec.rate == BATCH:
        arrivals = np.zeros(spec.jobs)
    elif spec.rate == "high":
        # bursts: the high-rate scenario submits jobs in batches of up to five at once
        arrivals = np.repeat(arrivals[::5], 5)[: spec.jobs]

    jobs = []
    overheads = drawn_relaunch_hours(seed, spec.jobs) if spec.relaunch == "measured" else None
    for j, ((E, times, memory, factor), r) in enumerate(zip(drafts, arrivals, strict=True)):
        dist: EpochDistribution = make_distribution(spec.early_stopping, E, spec.blocks)
        release = round(float(r), 4)
        delta = overheads[j] if overheads is not None else None
        due = due_date(release, factor, E * _one_gpu_time(times), spec.slot, delta or 0.0)
        jobs.append(Job(f"j{j}", release, due, dist, times, memory, relaunch_hours=delta))
    return assemble(
        types, nodes, jobs, spec, name or f"synthetic-{spec.rate}-{spec.nodes}n{spec.jobs}j-s{seed}"
    )
