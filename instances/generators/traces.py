"""Whole-trace instances: the Philly week and the Alibaba GPU trace, on their clusters.

- **Philly** (``philly-week``): the 6,391 jobs submitted 2017-11-06 to 2017-11-12 (the
  Pollux per-job CSV, CC-BY-4.0, bundled gzipped) on Philly's documented machines: 321
  servers with 2 GPUs of 12 GB and 231 with 8 GPUs of 24 GB (the trace's
  ``cluster_machine_list``; 552 servers, 2,490 GPUs). The trace names no GPU model; we
  follow Hu et al. (2024) in reading them as P100 12 GB and P40 24 GB. Gavel measured
  no P40: it takes the P100's throughputs (the same Pascal generation), with its own
  memory and board power (250 W, datasheet).
- **Alibaba** (``alibaba``): the 6,203 GPU pods of the v2023 "openb" trace that ran
  (the 861 never scheduled are left out) on its 1,213 GPU nodes (6,212 GPUs) of the
  trace's node list. Types Gavel measured keep their throughputs (P100, V100 16 and 32
  GB); the others take those of the measured GPU with the nearest FP32 peak (datasheets:
  T4 8.1 TFLOPS -> P100 9.3; A10 31.2 -> V100 15.7), and the undisclosed G2 and G3 those
  and the power of a V100 (an assumption: the trace says nothing of them). A pod asking
  for a fraction of a GPU did that fraction of a whole GPU's work per hour.

Every job keeps its trace submission time (hours from the window's start) and its run
time as its work at its GPU count on the trace's reference GPU (P100 for Philly, V100
for Alibaba). Its Gavel job type is drawn, seeded, among the types measured at that GPU
count on the reference GPU, by duration class: under an hour, the small-data families
(ResNet-18 on CIFAR-10, A3C, LM, Recommendation); ten hours or more, the large ones
(ResNet-50 on ImageNet, Transformer, CycleGAN, LM); between, any family. A job on more
than 8 GPUs (Philly has 31 of 16 and 32) keeps its GPU time: its work is that of 8 GPUs
for ``gpus/8`` times as long, since Gavel measured nothing wider. Epochs, due dates and
relaunch overheads are drawn as for ``realdata``; early stopping is the fit of the
Alibaba trace (``stops_fit``) by GPU class unless a family is named.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import ClassVar

import numpy as np

from instances.distribution import EpochDistribution
from instances.errors import InstanceError
from instances.generators.clusters import (
    MAX_LOAD,
    MAX_TIME_SCALE,
    Arrival,
    Machine,
    cycled,
    epoch_gpu_hours,
    named,
    scale_for,
)
from instances.generators.common import assemble, draw_tightness, due_date
from instances.generators.early_stopping import FAMILIES, make_distribution
from instances.generators.histories import RUNNING_READINGS, alibaba_pods, alibaba_runs
from instances.generators.measured_overheads import family_relaunch_hours
from instances.generators.realdata import (
    MEMORY_GB,
    bundled_rows,
    cluster_hosts,
    family,
    gavel_throughputs,
    job_configs,
    philly_jobs,
    with_requests,
)
from instances.generators.spec import Bound, GeneratorSpec
from instances.generators.stops_fit import StopsFit, bundled_fit, read_fit
from instances.limits import MAX_GPUS_PER_NODE, MAX_HOURS, MAX_JOBS, MAX_NODES, MIN_EPOCH_HOURS
from instances.model import Config, GpuType, Instance, Job, Node

TRACES = ("philly-week", "alibaba")
FITTED = "fitted"  # the early-stopping option that reads the Alibaba fit
SHORT_HOURS, LONG_HOURS = 1.0, 10.0
SHORT_FAMILIES = ("ResNet-18", "A3C", "LM", "Recommendation")
LONG_FAMILIES = ("ResNet-50", "Transformer", "CycleGAN", "LM")
WIDEST = 8  # Gavel's widest measurement


PHILLY_MACHINES = (
    Machine("p100", "p100", 12.0, 250.0, 2, 321),
    Machine("p40", "p100", 24.0, 250.0, 8, 231),
)
# Alibaba model -> (our type, measured as, GB, W). G2 and G3: undisclosed (V100 assumed).
ALIBABA_TYPES = {
    "P100": ("p100", "p100", 16.0, 250.0),
    "V100M16": ("v100", "v100", 16.0, 300.0),
    "V100M32": ("v100m32", "v100", 32.0, 300.0),
    "T4": ("t4", "p100", 16.0, 70.0),
    "A10": ("a10", "v100", 24.0, 150.0),
    "G2": ("g2", "v100", 16.0, 300.0),
    "G3": ("g3", "v100", 16.0, 300.0),
}


@dataclass(frozen=True)
class TraceJob:
    """One trace job: submission (hours from the trace start), run hours, GPUs."""

    key: str
    submit: float
    hours: float
    gpus: int
    share: float = 1.0  # the fraction of a GPU it asked for (Alibaba), else 1


@dataclass(frozen=True)
class TraceSpec(GeneratorSpec):
    """Which window of which trace (and :class:`GeneratorSpec`'s options). Times in
    hours."""

    trace: str = "philly-week"
    start: float = 0.0  # hours from the trace's first submission
    hours: float | None = None  # the window's length (None: to the end)
    jobs: int | None = None  # at most this many of the window's jobs, the first ones
    # the cluster (generators/clusters.py): the trace's own (both None), this many nodes
    # of its kinds in proportion, or node kinds (GPU type, GPUs per node, nodes)
    nodes: int | None = None
    cluster: tuple[tuple[str, int, int], ...] | None = None
    # each job's time since the window's start, multiplied (>1 spreads the arrivals); or
    # the offered load to scale them to
    time_scale: float = 1.0
    load: float | None = None
    early_stopping: str = FITTED
    running: str = "completed"  # how the fit reads Alibaba pods deleted while Running
    sharing: bool = True
    # a fit file (gpusched fit-stops --out) whose stops the jobs take instead of the
    # bundled Alibaba fit; read when the instance is built
    stops: str | None = None

    BOUNDS: ClassVar[Mapping[str, Bound]] = {
        **GeneratorSpec.BOUNDS,
        "start": Bound(0, MAX_HOURS),
        "hours": Bound(0, MAX_HOURS, open_low=True),
        "jobs": Bound(1, MAX_JOBS),
        "nodes": Bound(1, MAX_NODES),
        "time_scale": Bound(0, MAX_TIME_SCALE, open_low=True),
        "load": Bound(0, MAX_LOAD, open_low=True),
    }
    EARLY_STOPPING: ClassVar[tuple[str, ...]] = (FITTED, *FAMILIES)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.stops is not None and self.early_stopping != FITTED:
            raise InstanceError(
                "stops", self.stops, f"a fit is read only with early_stopping = {FITTED!r}"
            )
        if self.trace not in TRACES:
            raise InstanceError("trace", self.trace, f"must be one of {TRACES}")
        if self.running not in RUNNING_READINGS:
            raise InstanceError("running", self.running, f"must be one of {RUNNING_READINGS}")
        if self.running != "completed" and (self.early_stopping != FITTED or self.stops):
            # a reading of the bundled Alibaba fit: refused where it would change nothing
            raise InstanceError(
                "running",
                self.running,
                f"is read only by the bundled fit (early_stopping = {FITTED!r}, no stops file)",
            )
        check_cluster_options(self)


def check_cluster_options(spec: TraceSpec) -> None:
    """One way to give the cluster and one to give the load; sane node kinds."""
    if spec.nodes is not None and spec.cluster is not None:
        raise InstanceError("cluster", list(spec.cluster), "give nodes or cluster, not both")
    if spec.load is not None and spec.time_scale != 1.0:
        raise InstanceError("load", spec.load, "give load or time_scale, not both")
    for k, (_, gpus, count) in enumerate(spec.cluster or ()):
        if not 1 <= gpus <= MAX_GPUS_PER_NODE:
            top = MAX_GPUS_PER_NODE
            raise InstanceError(f"cluster[{k}]", gpus, f"GPUs per node must be 1 to {top}")
        if not 1 <= count <= MAX_NODES:
            raise InstanceError(f"cluster[{k}]", count, f"nodes must be 1 to {MAX_NODES}")
    if spec.cluster is not None and sum(n for _, _, n in spec.cluster) > MAX_NODES:
        raise InstanceError("cluster", list(spec.cluster), f"at most {MAX_NODES} nodes in all")


@cache
def philly_week() -> tuple[TraceJob, ...]:
    """The bundled Philly week, in submission order."""
    return tuple(TraceJob(f"ph{i}", *job) for i, job in enumerate(philly_jobs("week")))


@cache
def alibaba_jobs() -> tuple[TraceJob, ...]:
    """The bundled Alibaba GPU pods that ran, in creation order."""
    out = [
        TraceJob(
            r["name"].replace("openb-pod-", "ali"),
            float(r["creation_time"]) / 3600.0,
            hours,
            int(r["num_gpu"]),
            int(r["gpu_milli"]) / 1000.0 if int(r["num_gpu"]) == 1 else 1.0,
        )
        for r, hours in alibaba_runs(alibaba_pods())
    ]
    out.sort(key=lambda j: j.submit)
    return tuple(out)


@cache
def alibaba_machines() -> tuple[Machine, ...]:
    out: dict[tuple[str, int], int] = {}
    for r in bundled_rows("alibaba_openb_gpu_nodes.csv"):
        key = (r["model"], int(r["gpu"]))
        out[key] = out.get(key, 0) + int(r["count"])
    return tuple(
        Machine(*ALIBABA_TYPES[model], gpus, count) for (model, gpus), count in sorted(out.items())
    )


def _types_for(hours: float, gpus: int, reference: str) -> list[str]:
    """The Gavel types a job of this run time and GPU count may be (module docstring)."""
    tput = gavel_throughputs()
    fams = SHORT_FAMILIES if hours < SHORT_HOURS else LONG_FAMILIES if hours >= LONG_HOURS else None
    measured = sorted(t for t, m in tput.items() if m.get((reference, gpus), 0.0) > 0)
    chosen = [t for t in measured if fams is None or family(t) in fams]
    return chosen or measured


def trace_window(spec: TraceSpec) -> list[TraceJob]:
    jobs = philly_week() if spec.trace == "philly-week" else alibaba_jobs()
    end = math.inf if spec.hours is None else spec.start + spec.hours
    window = [j for j in jobs if spec.start <= j.submit < end]
    if not window:
        raise InstanceError("start", spec.start, f"no {spec.trace} job is submitted in this window")
    return window if spec.jobs is None else window[: spec.jobs]


def trace_machines(spec: TraceSpec) -> tuple[Machine, ...]:
    """The cluster: the trace's own, ``nodes`` of its kinds, or the ``cluster`` named."""
    own = PHILLY_MACHINES if spec.trace == "philly-week" else alibaba_machines()
    if spec.cluster is not None:
        return named(spec.cluster, own)
    return own if spec.nodes is None else cycled(own, spec.nodes)


@dataclass(frozen=True)
class _Drawn:
    """A trace job's seeded draws, before its release is placed on the time scale."""

    trace: TraceJob
    job_type: str
    times: dict[Config, float]
    epochs: int
    tightness: float


def trace_instance(
    spec: TraceSpec,
    seed: int = 0,
    name: str | None = None,
    fit: StopsFit | None = None,
) -> Instance:
    """The window's jobs on the cluster; same seed, same instance. ``fit``, if given,
    replaces the bundled fit (``early_stopping = "fitted"``): the jobs, their epochs and
    due dates do not depend on it; without it, ``spec.stops`` names one."""
    rng = np.random.default_rng([seed, 0x7ACE])
    machines = trace_machines(spec)
    nodes = [
        Node(f"{m.gpu_type}x{m.gpus}-{i}", m.gpu_type, m.gpus)
        for m in machines
        for i in range(m.count)
    ]
    if spec.early_stopping != FITTED:
        fit = None
    elif fit is None:
        fit = bundled_fit(spec.running) if spec.stops is None else read_fit(spec.stops)
    drawn = _draw(spec, rng, machines, nodes)
    stops = [
        fit.for_gpus(d.trace.gpus).distribution(d.epochs, spec.blocks)
        if fit is not None
        else make_distribution(spec.early_stopping, d.epochs, spec.blocks)
        for d in drawn
    ]
    scale = _time_scale(spec, drawn, stops, nodes)
    hosts = cluster_hosts(nodes)
    jobs = [_job(spec, d, s, scale, hosts) for d, s in zip(drawn, stops, strict=True)]
    types = {m.gpu_type: GpuType(m.gpu_type, m.memory_gb, m.power_w) for m in machines}
    inst = assemble(
        tuple(types.values()),
        nodes,
        jobs,
        spec,
        name or f"{spec.trace}-{spec.start:g}h-{len(jobs)}j-s{seed}",
    )
    return with_requests(inst, {d.trace.key: min(d.trace.gpus, WIDEST) for d in drawn})


def _draw(
    spec: TraceSpec, rng: np.random.Generator, machines: Sequence[Machine], nodes: list[Node]
) -> list[_Drawn]:
    """Each window job's type, epoch times, epochs and tightness, drawn in trace order."""
    reference = "p100" if spec.trace == "philly-week" else "v100"
    measured_as = {m.gpu_type: m.measured_as for m in machines}
    memory = {m.gpu_type: m.memory_gb for m in machines}
    tput = gavel_throughputs()
    # epoch hours per iteration, by configuration: the same for every job of a type
    per_iteration: dict[str, dict[Config, float]] = {}
    out = []
    for tj in trace_window(spec):
        wide = min(tj.gpus, WIDEST)
        job_type = str(rng.choice(_types_for(tj.hours, wide, reference)))
        # the run's work in iterations at its GPU count (its GPU time kept above 8 GPUs)
        iterations = (
            tj.hours * 3600.0 * tput[job_type][(reference, wide)] * tj.share * tj.gpus / wide
        )
        if job_type not in per_iteration:
            # with the shared configurations whether or not the instance allows them:
            # the load's scale counts them (``_load_scale``), so that forbidding sharing
            # keeps the same jobs at the same times; ``_job`` leaves them out
            per_iteration[job_type] = job_configs(job_type, 1.0, nodes, True, measured_as, memory)
        unit = per_iteration[job_type]
        drawn = int(rng.integers(spec.epochs[0], spec.epochs[1] + 1))
        fastest_all = iterations * min(unit.values())
        # a run of seconds cannot hold dozens of epochs above the bound on epoch time
        E = max(1, min(drawn, int(fastest_all / (10 * MIN_EPOCH_HOURS))))
        times = {c: iterations / E * h for c, h in unit.items()}
        out.append(_Drawn(tj, job_type, times, E, draw_tightness(rng, spec)))
    return out


def _time_scale(
    spec: TraceSpec, drawn: list[_Drawn], stops: list[EpochDistribution], nodes: list[Node]
) -> float:
    """``spec.time_scale``, or the scale giving the jobs the offered ``spec.load``; one
    that would put a release past the bound on times is refused, naming the field."""
    last = max(d.trace.submit for d in drawn) - spec.start
    if spec.load is None:
        scale, field, value = spec.time_scale, "time_scale", spec.time_scale
    else:
        scale, field, value = _load_scale(spec, drawn, stops, nodes), "load", spec.load
    if not last * scale <= MAX_HOURS:
        why = f"puts the last arrival {last * scale:.3g} h from the start (at most {MAX_HOURS:g})"
        raise InstanceError(field, value, why)
    return scale


def _load_scale(
    spec: TraceSpec, drawn: list[_Drawn], stops: list[EpochDistribution], nodes: list[Node]
) -> float:
    assert spec.load is not None
    hosts = cluster_hosts(nodes)
    arrivals = [
        Arrival(
            d.trace.submit - spec.start,
            s.mean(),
            epoch_gpu_hours(d.times, hosts, spec.max_share),
        )
        for d, s in zip(drawn, stops, strict=True)
    ]
    return scale_for(arrivals, sum(n.num_gpus for n in nodes), spec.load)


def _job(
    spec: TraceSpec,
    d: _Drawn,
    stops: EpochDistribution,
    scale: float,
    hosts: Callable[[Config], bool],
) -> Job:
    """The job of a draw, released at its scaled time since the window's start."""
    fam = family(d.job_type)
    delta = family_relaunch_hours(fam) if spec.relaunch == "measured" else None
    release = round((d.trace.submit - spec.start) * scale, 4)
    # a shared slot is never faster than its GPU alone (Gavel's interference is at most
    # 1), so leaving the shared configurations out moves neither figure
    fastest = d.epochs * min(d.times.values())
    alone = d.epochs * min(t for c, t in d.times.items() if hosts(c))
    due = due_date(release, d.tightness, fastest, spec.slot, delta or 0.0, alone)
    times = d.times if spec.sharing else {c: t for c, t in d.times.items() if not c.shared}
    return Job(
        d.trace.key,
        release,
        due,
        stops,
        times,
        MEMORY_GB[fam],
        job_type=d.job_type,
        relaunch_hours=delta,
    )
