"""Synergy's setting (Mohan et al., OSDI 2022): CPU- and memory-sensitive jobs on V100
servers with CPU cores and DRAM (E3, docs/model.md; docs/synergy.md).

- **Cluster.** ``nodes`` servers of 8 V100s. Shape ``synergy``: 24 cores and 500 GB
  each, Synergy's default server (``configs/default_cluster.ini``), 3 cores and 62.5 GB
  per GPU. Shape ``alibaba``: 96 cores and 768 GB, the Alibaba GPU trace's 8 x V100M32
  nodes (``openb_node_list_all_node.csv``; the cores are probably logical), 12 cores
  and 96 GB per GPU: CPU is rarely short there.
- **Jobs.** Each draws a model of Synergy's default zoo by task, in the proportions
  ``split`` (image, language, speech; Synergy's default 20/70/10), and a (duration,
  GPU count) pair of the bundled Philly day (at most 8 GPUs), as Synergy's workload
  generator draws Philly durations and GPU demands. The duration is the job's time at
  the GPU-proportional share, cut into ``E`` epochs. Arrivals are Poisson at ``rate``
  jobs per hour. No early stopping by default (Synergy's setting).
- **Configurations.** ``g`` V100s (the user's count, ``requested``; Synergy never
  changes it) at a few CPU/DRAM levels read off the model's measured profile
  (``synergy_profiles.csv``, MIT): the node's GPU-proportional share (the fastest grid
  point within ``cores·g/8`` cores and ``DRAM·g/8`` GB), the best case (Synergy's demand
  vector: the fewest cores, then the least DRAM, of the highest throughput that fits
  one server) and the least that still runs at the proportional share's throughput.
  The epoch time at a level is the proportional time over its measured throughput
  ratio ``W``.
- **Relaunch overheads** from measurements (``instances/generators/measured_overheads.py``): the
  ImageNet models pay the ImageNet restore time, speech and recurrent models
  DeepSpeech2's, the attention models BERT's, ``m5`` Pollux's default.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import ClassVar

import numpy as np

from instances.errors import InstanceError
from instances.generators.common import assemble, draw_tightness, due_date
from instances.generators.early_stopping import make_distribution
from instances.generators.measured_overheads import MEASURED_SECONDS
from instances.generators.realdata import philly_jobs
from instances.generators.spec import MIN_RATE, Bound, GeneratorSpec
from instances.generators.synthetic import gpu_specs
from instances.limits import MAX_JOBS, MAX_NODES, MAX_RUN_HOURS
from instances.model import Config, Instance, Job, Node, Requested

GPUS_PER_NODE = 8
# node shapes: (CPU cores, DRAM GB) of an 8 x V100 server
SHAPES = {"synergy": (24, 500.0), "alibaba": (96, 768.0)}
TASKS = ("image", "language", "speech")
# the measured relaunch model of each zoo model (instances/generators/measured_overheads.py)
RELAUNCH_MODEL = {
    "alexnet": "imagenet",
    "res18": "imagenet",
    "res50": "imagenet",
    "mobilenet": "imagenet",
    "shufflenet": "imagenet",
    "deepspeech": "deepspeech2",
    "lstm": "deepspeech2",
    "transformer": "bert",
    "gnmt": "bert",
    "m5": "pollux-default",
}
# GPU memory per zoo model at Synergy's batch sizes (GB; an assumption, as for Gavel's)
MEMORY_GB = {"image": 10.0, "language": 8.0, "speech": 6.0}


@cache
def zoo() -> dict[str, str]:
    """Synergy's default model zoo: model -> task."""
    text = resources.files("instances.data").joinpath("synergy_models.csv").read_text()
    return {
        r["model"]: r["task"]
        for r in csv.DictReader(text.splitlines())
        if r["in_default_zoo"] == "True"
    }


@cache
def profiles() -> dict[str, dict[tuple[int, float], float]]:
    """Per model, throughput over the proportional share at (CPUs, DRAM GB) per GPU."""
    text = resources.files("instances.data").joinpath("synergy_profiles.csv").read_text()
    out: dict[str, dict[tuple[int, float], float]] = defaultdict(dict)
    for r in csv.DictReader(text.splitlines()):
        point = (int(r["cpu_per_gpu"]), float(r["dram_gb_per_gpu"]))
        out[r["model"]][point] = float(r["throughput_vs_proportional"])
    return dict(out)


def levels(model: str, gpus: int, cores: int, dram: float) -> dict[tuple[int, float], float]:
    """The CPU/DRAM levels (per GPU) a ``gpus``-GPU job of ``model`` gets on a server of
    ``cores`` and ``dram`` GB with 8 GPUs, and each one's throughput ratio ``W``: the
    proportional share, the best case and the least at the proportional throughput."""
    prof = profiles()[model]
    fits = {p: w for p, w in prof.items() if p[0] * gpus <= cores and p[1] * gpus <= dram + 1e-9}
    share_cpu, share_dram = cores // GPUS_PER_NODE, dram / GPUS_PER_NODE
    within = [p for p in fits if p[0] <= share_cpu and p[1] <= share_dram + 1e-9]
    if not within:
        raise InstanceError(
            "shape", (cores, dram), "leaves no profile level within one GPU's share"
        )
    # the fastest point within the share, the most resources on a tie (what a
    # proportional allocation hands out)
    prop = max(within, key=lambda p: (fits[p], p))
    top = max(fits.values())
    best = min(p for p, w in fits.items() if w == top)
    least = min(p for p, w in fits.items() if w >= fits[prop])
    return {p: fits[p] for p in sorted({prop, best, least})}


@dataclass(frozen=True)
class SynergySpec(GeneratorSpec):
    """Which jobs, on which servers (and :class:`GeneratorSpec`'s options). Times in
    hours. No ``sharing``: Synergy's jobs own their GPUs."""

    jobs: int = 100
    nodes: int = 16
    shape: str = "synergy"
    split: tuple[float, float, float] = (20.0, 70.0, 10.0)  # image, language, speech
    rate: float = 9.0  # jobs per hour, Poisson
    min_hours: float = 0.25
    max_hours: float = 48.0

    BOUNDS: ClassVar[Mapping[str, Bound]] = {
        **GeneratorSpec.BOUNDS,
        "jobs": Bound(1, MAX_JOBS),
        "nodes": Bound(1, MAX_NODES),
        "split": Bound(0, 1e6),
        "rate": Bound(MIN_RATE, 1e6),
        "min_hours": Bound(0, MAX_RUN_HOURS, open_low=True),
        "max_hours": Bound(0, MAX_RUN_HOURS, open_low=True),
    }
    ORDERED: ClassVar[tuple[tuple[str, str], ...]] = (("min_hours", "max_hours"),)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.shape not in SHAPES:
            raise InstanceError("shape", self.shape, f"must be one of {sorted(SHAPES)}")
        if sum(self.split) <= 0:
            raise InstanceError("split", self.split, "must be three shares >= 0, not all 0")


def synergy(spec: SynergySpec, seed: int = 0, name: str | None = None) -> Instance:
    """An instance of Synergy's setting; same seed, same instance."""
    rng = np.random.default_rng(seed)
    cores, dram = SHAPES[spec.shape]
    nodes = [
        Node(f"v100-{i}", "v100", GPUS_PER_NODE, cpu_cores=cores, dram_gb=dram)
        for i in range(spec.nodes)
    ]
    trace = [
        (hours, gpus)
        for _, hours, gpus in philly_jobs()
        if spec.min_hours <= hours <= spec.max_hours and gpus <= GPUS_PER_NODE
    ]
    if not trace:
        raise InstanceError(
            "min_hours",
            spec.min_hours,
            f"no Philly job of the bundled day on at most {GPUS_PER_NODE} GPUs runs "
            f"{spec.min_hours:g} to {spec.max_hours:g} h",
        )
    models = {t: sorted(m for m, task in zoo().items() if task == t) for t in TASKS}
    weights = np.array([spec.split[i] if models[t] else 0.0 for i, t in enumerate(TASKS)])
    if weights.sum() <= 0:
        raise InstanceError("split", spec.split, "gives no weight to a task with models")
    weights = weights / weights.sum()
    jobs = []
    release = 0.0
    for k in range(spec.jobs):
        if k:
            release += float(rng.exponential(1.0 / spec.rate))
        task = TASKS[int(rng.choice(len(TASKS), p=weights))]
        model = str(rng.choice(models[task]))
        hours, gpus = trace[int(rng.integers(len(trace)))]
        E = int(rng.integers(spec.epochs[0], spec.epochs[1] + 1))
        tau = hours / E  # at the proportional share (W = 1)
        times = {
            Config("v100", gpus, cpus=c * gpus, dram_gb=round(m * gpus, 4)): tau / w
            for (c, m), w in levels(model, gpus, cores, dram).items()
        }
        fastest = E * min(times.values())
        delta = None
        if spec.relaunch == "measured":
            delta = MEASURED_SECONDS[RELAUNCH_MODEL[model]] / 3600.0
        at = round(release, 4)
        due = due_date(at, draw_tightness(rng, spec), fastest, spec.slot, delta or 0.0)
        jobs.append(
            Job(
                f"s{k}",
                at,
                due,
                make_distribution(spec.early_stopping, E, spec.blocks),
                times,
                MEMORY_GB[task],
                job_type=model,
                requested=Requested(gpus, "v100"),
                relaunch_hours=delta,
            )
        )
    shape = "" if spec.shape == "synergy" else f"-{spec.shape}"
    return assemble(
        (gpu_specs()["v100"],),
        nodes,
        jobs,
        spec,
        name or f"synergy{shape}-{spec.nodes}n{spec.jobs}j-s{seed}",
    )
