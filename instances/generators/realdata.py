"""Real-data instances: Gavel's measured throughputs and Philly arrivals and GPU counts.

- Epoch times come from Gavel's measured throughputs (``gavel_throughputs.csv``, a slice
  of Gavel's ``simulation_throughputs.json``, MIT) on K80, P100 and V100 with 1-8 GPUs;
  a 0.0 throughput marks a configuration unavailable. Each job's sharing interference
  factor is the median ratio of its co-located to its isolated throughput
  (``gavel_colocation.csv``). An 8-GPU configuration on 4-GPU nodes becomes a two-node
  configuration, 10% slower (cross-node communication; an assumption).
- GPU power and memory come from ``gpu_specs.csv`` (vendor figures).
- Arrivals, durations and GPU counts come from the Philly trace (Monday 2017-11-06 slice
  of the Pollux per-job CSV, CC-BY-4.0). A Philly job's work is its duration times the
  throughput of its (uniformly drawn, as Gavel did) job type at its GPU count on a P100,
  Philly's main GPU. Jobs with more than 8 GPUs, or shorter than ``min_hours``, are
  skipped.
- Epochs: the work is cut into ``E`` equal epochs, ``E`` drawn in ``epochs``; GPU memory
  needs per model family are assumptions (Gavel does not record them).
"""

from __future__ import annotations

import csv
import gzip
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cache
from importlib import resources
from typing import ClassVar

import numpy as np

from instances.errors import InstanceError
from instances.generators.common import assemble, draw_tightness, due_date
from instances.generators.early_stopping import make_distribution
from instances.generators.measured_overheads import family_relaunch_hours
from instances.generators.spec import Bound, GeneratorSpec
from instances.generators.synthetic import gpu_specs
from instances.limits import (
    MAX_GPUS_PER_NODE,
    MAX_HOURS,
    MAX_JOBS,
    MAX_NODES,
    MAX_RELAUNCH_HOURS,
    MAX_RUN_HOURS,
)
from instances.model import Config, Instance, Job, Node, Requested

GAVEL_TYPES = ("k80", "p100", "v100")
MULTI_NODE_SLOWDOWN = 1.1
# Typical training memory (GB) per model family at Gavel's batch sizes (assumption).
MEMORY_GB = {
    "ResNet-18": 3.0,
    "ResNet-50": 10.0,
    "Transformer": 6.0,
    "A3C": 1.5,
    "LM": 3.0,
    "Recommendation": 4.0,
    "CycleGAN": 5.0,
}


def bundled_rows(name: str) -> list[dict[str, str]]:
    """The rows of a bundled CSV file of ``instances/data`` (gunzipped if ``.gz``)."""
    raw = resources.files("instances.data").joinpath(name).read_bytes()
    text = (gzip.decompress(raw) if name.endswith(".gz") else raw).decode()
    return list(csv.DictReader(text.splitlines()))


@cache
def gavel_throughputs() -> dict[str, dict[tuple[str, int], float]]:
    """``{job_type: {(gpu_type, gpus): iterations per second}}``, zeros included."""
    out: dict[str, dict[tuple[str, int], float]] = defaultdict(dict)
    for r in bundled_rows("gavel_throughputs.csv"):
        out[r["job_type"]][(r["gpu_type"], int(r["gpus"]))] = float(r["iterations_per_s"])
    return dict(out)


@cache
def gavel_interference() -> dict[tuple[str, str], float]:
    """``{(job_type, gpu_type): median co-located / isolated throughput}`` (1 GPU)."""
    return {
        (r["job_type"], r["gpu_type"]): float(r["median_colocated_ratio"])
        for r in bundled_rows("gavel_colocation.csv")
    }


@cache
def gavel_pair_ratios() -> dict[tuple[str, str, str], tuple[float, float]]:
    """``{(job_type, other_type, gpu_type): (ratio, other's ratio)}``: each job's
    throughput when the two share one GPU over its throughput alone (Gavel's measured
    pairs, 1 GPU), both orders of every pair. 0.0: the pair was not runnable."""
    out: dict[tuple[str, str, str], tuple[float, float]] = {}
    for r in bundled_rows("gavel_pairs.csv"):
        a, b, gpu = r["job_type"], r["other_type"], r["gpu_type"]
        ra, rb = float(r["ratio"]), float(r["other_ratio"])
        out[(a, b, gpu)] = (ra, rb)
        out[(b, a, gpu)] = (rb, ra)
    return out


def family(job_type: str) -> str:
    return job_type.split(" (")[0]


def job_configs(
    job_type: str,
    iterations_per_epoch: float,
    nodes: list[Node],
    sharing: bool,
    measured_as: Mapping[str, str] | None = None,
    memory_gb: Mapping[str, float] | None = None,
) -> dict[Config, float]:
    """Epoch time (hours) per configuration the cluster can host; zero throughputs are
    left out. Raises :class:`InstanceError` if none is left.

    ``measured_as`` gives a cluster GPU type Gavel did not measure the measured type
    whose throughputs it takes (default: its own); ``memory_gb`` the cluster types'
    memory per GPU (default: the vendor figures)."""
    tput = gavel_throughputs().get(job_type)
    if tput is None:
        raise InstanceError("job_type", job_type, "not a Gavel job type")
    sizes: dict[str, set[int]] = defaultdict(set)
    for n in nodes:
        sizes[n.gpu_type].add(n.num_gpus)
    as_measured = measured_as or {t: t for t in sizes}
    gb = memory_gb or {t: s.memory_gb for t, s in gpu_specs().items()}
    memory = MEMORY_GB[family(job_type)]
    out: dict[Config, float] = {}
    for gpu in sorted(sizes):
        for (measured, g), its in sorted(tput.items()):
            if its <= 0 or measured != as_measured[gpu]:
                continue  # measured as not runnable, or another GPU type
            hours = iterations_per_epoch / its / 3600.0
            if any(s >= g for s in sizes[gpu]):
                out[Config(gpu, g)] = hours
            else:
                per = max((s for s in sizes[gpu] if g % s == 0), default=None)
                if per is not None:
                    out[Config(gpu, g, nodes=g // per)] = hours * MULTI_NODE_SLOWDOWN
            rho = gavel_interference().get((job_type, measured))
            if g == 1 and sharing and rho and memory <= gb[gpu]:
                out[Config(gpu, 1, shared=True)] = hours / rho
    if not out:
        raise InstanceError(
            "job_type", job_type, "every throughput of this job type is 0 on the cluster's GPUs"
        )
    return out


def cluster_hosts(nodes: Sequence[Node]) -> Callable[[Config], bool]:
    """Whether the cluster can ever host a configuration of :func:`job_configs`: one node
    of its type with its GPUs per node, or as many such nodes as it spans. An 8-GPU
    configuration on a cluster with one 4-GPU node of the type is listed but never
    hosted (the instance ignores it), so a due date may not count on it."""
    shapes = Counter((n.gpu_type, n.num_gpus) for n in nodes)

    @cache
    def hosts(cfg: Config) -> bool:
        fitting = sum(
            k for (t, g), k in shapes.items() if t == cfg.gpu_type and g >= cfg.gpus_per_node
        )
        return fitting >= cfg.nodes

    return hosts


def _requested(gpus: int, hostable: tuple[Config, ...]) -> Requested:
    """The Philly job's GPU count as its request, of any type. Where the cluster can host
    no exclusive configuration of that count (no node, or set of whole nodes, that
    large), the largest count below it that it can."""
    counts = {c.gpus for c in hostable if not c.shared}
    return Requested(max((g for g in counts if g <= gpus), default=min(counts)))


def with_requests(inst: Instance, asked: dict[str, int]) -> Instance:
    """``inst`` with each job requesting the GPU count its trace record asked for
    (``asked``, by job id), read against what the assembled cluster can host."""
    return inst.replace(
        jobs=tuple(
            replace(j, requested=_requested(asked[j.id], inst.allowed_configs(j)))
            for j in inst.jobs
        )
    )


@dataclass(frozen=True)
class RealDataSpec(GeneratorSpec):
    """Which Philly jobs, on which cluster (and :class:`GeneratorSpec`'s options).
    Times in hours."""

    jobs: int = 40
    start: int = 0  # index of the first Philly job (in submission order) to take
    source: str = "day"  # the bundled Philly day, or the whole week (PHILLY_FILES)
    nodes: tuple[tuple[str, int], ...] = (("k80", 4), ("p100", 4), ("v100", 4), ("v100", 8))
    min_hours: float = 0.25
    max_hours: float = 48.0
    time_scale: float = 1.0  # multiplies Philly inter-arrival times (<1 packs arrivals)
    early_stopping: str = "helios"
    sharing: bool = True
    # model families a job's Gavel type is drawn from (None: every family); e.g. the
    # elastic ones measured at 1-8 GPUs for Optimus' setting
    families: tuple[str, ...] | None = None
    # Philly GPU counts to keep (None: 1-8), e.g. (1,) for a hyper-parameter search burst
    philly_gpus: tuple[int, ...] | None = None
    # the instance's suspend/resume overhead in hours (None: a resume is a relaunch)
    suspend_hours: float | None = None

    BOUNDS: ClassVar[Mapping[str, Bound]] = {
        **GeneratorSpec.BOUNDS,
        "jobs": Bound(1, MAX_JOBS),
        "start": Bound(0, MAX_JOBS),
        "min_hours": Bound(0, MAX_RUN_HOURS, open_low=True),
        "max_hours": Bound(0, MAX_RUN_HOURS, open_low=True),
        # 0 submits every job at once; the arrivals must stay within the bound on times
        "time_scale": Bound(0, MAX_HOURS),
        "philly_gpus": Bound(1, 8),  # the Philly GPU counts kept
        "suspend_hours": Bound(0, MAX_RELAUNCH_HOURS),
    }
    ORDERED: ClassVar[tuple[tuple[str, str], ...]] = (("min_hours", "max_hours"),)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.source not in PHILLY_FILES:
            raise InstanceError("source", self.source, f"must be one of {tuple(PHILLY_FILES)}")
        for name in self.families or ():
            if name not in MEMORY_GB:
                raise InstanceError("families", name, f"must be among {sorted(MEMORY_GB)}")
        if len(self.nodes) > MAX_NODES:
            raise InstanceError("nodes", len(self.nodes), f"at most {MAX_NODES} nodes")
        for i, (gpu, count) in enumerate(self.nodes):
            if gpu not in GAVEL_TYPES or not 1 <= count <= MAX_GPUS_PER_NODE:
                raise InstanceError(
                    f"nodes[{i}]",
                    [gpu, count],
                    f"a node is a GPU type Gavel measured {GAVEL_TYPES} and 1 to "
                    f"{MAX_GPUS_PER_NODE} GPUs",
                )


def cluster_mix(count: int) -> tuple[tuple[str, int], ...]:
    """``count`` nodes cycling through the default mix (k80x4, p100x4, v100x4, v100x8)."""
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_NODES:
        raise InstanceError("nodes", count, f"must be a whole number from 1 to {MAX_NODES}")
    mix = RealDataSpec().nodes
    return tuple(mix[i % len(mix)] for i in range(count))


# the bundled Philly files: its first day, and its whole week (the day's jobs among them)
PHILLY_FILES = {"day": "philly_2017-11-06.csv", "week": "philly_2017wk45.csv.gz"}


@cache
def philly_jobs(source: str = "day") -> tuple[tuple[float, float, int], ...]:
    """(submit hour from the first job, duration hours, GPUs) of the bundled Philly day
    or week, in submission order."""
    rows = bundled_rows(PHILLY_FILES[source])
    t0 = datetime.fromisoformat(rows[0]["timestamp"])
    return tuple(
        (
            (datetime.fromisoformat(r["timestamp"]) - t0).total_seconds() / 3600.0,
            float(r["duration"]) / 3600.0,
            int(r["num_gpus"]),
        )
        for r in rows
    )


def usable(spec: RealDataSpec, job: tuple[float, float, int]) -> bool:
    """Whether a Philly job (submit hour, duration hours, GPUs) passes ``spec``'s
    filters: its run time, at most 8 GPUs, and the GPU counts kept."""
    _, hours, gpus = job
    return (
        spec.min_hours <= hours <= spec.max_hours
        and gpus <= 8
        and (spec.philly_gpus is None or gpus in spec.philly_gpus)
    )


def real_data(spec: RealDataSpec, seed: int = 0, name: str | None = None) -> Instance:
    """An instance from Gavel throughputs and Philly arrivals; same seed, same instance."""
    rng = np.random.default_rng(seed)
    nodes = [Node(f"{t}-{i}", t, g) for i, (t, g) in enumerate(spec.nodes)]
    hosts = cluster_hosts(nodes)
    tput = gavel_throughputs()
    trace = [j for j in philly_jobs(spec.source)[spec.start :] if usable(spec, j)]
    if len(trace) < spec.jobs:
        raise InstanceError(
            "jobs",
            spec.jobs,
            f"only {len(trace)} Philly jobs of the bundled {spec.source} fit the filters",
        )
    jobs = []
    asked: dict[str, int] = {}  # each job's Philly GPU count
    t_first = trace[0][0] if trace else 0.0
    for k, (submit, hours, gpus) in enumerate(trace[: spec.jobs]):
        types = sorted(
            t
            for t, m in tput.items()
            if m.get(("p100", gpus), 0.0) > 0
            and (spec.families is None or family(t) in spec.families)
        )
        if not types:
            raise InstanceError(
                "families", spec.families, f"no job type of these has a {gpus}-GPU P100 throughput"
            )
        job_type = str(rng.choice(types))
        iterations = hours * 3600.0 * tput[job_type][("p100", gpus)]
        E = int(rng.integers(spec.epochs[0], spec.epochs[1] + 1))
        times = job_configs(job_type, iterations / E, nodes, spec.sharing)
        release = round((submit - t_first) * spec.time_scale, 4)
        fastest = E * min(times.values())
        alone = E * min(t for c, t in times.items() if hosts(c))  # on this cluster
        delta = family_relaunch_hours(family(job_type)) if spec.relaunch == "measured" else None
        due = due_date(release, draw_tightness(rng, spec), fastest, spec.slot, delta or 0.0, alone)
        jobs.append(
            Job(
                f"p{spec.start + k}",
                release,
                due,
                make_distribution(spec.early_stopping, E, spec.blocks),
                times,
                MEMORY_GB[family(job_type)],
                job_type=job_type,
                relaunch_hours=delta,
            )
        )
        asked[jobs[-1].id] = gpus
    specs = gpu_specs()
    types_used = tuple(specs[t] for t in GAVEL_TYPES if any(n.gpu_type == t for n in nodes))
    week = "" if spec.source == "day" else "-week"
    default = f"gavel-philly{week}-{len(nodes)}n{spec.jobs}j-s{seed}"
    inst = assemble(types_used, nodes, jobs, spec, name or default)
    # the request is read against what this cluster can host, so it is set on the
    # assembled instance
    return with_requests(inst, asked).replace(suspend_hours=spec.suspend_hours)
