"""A trace's jobs on a cluster of the user's choice, at an offered load of the user's
choice: what makes a replay contended (docs/model.md, "Contended replays").

A trace's own cluster is large for its jobs (Philly's 2,490 GPUs ran its week at 2-4%
busy here), so a replay on it says little about scheduling. Researchers replay traces on
small clusters with arrivals scaled to load them (Gavel: 36 GPUs of three types; Sia:
44-64 GPUs of three types). Here:

- **the cluster**: ``nodes = N`` cycles the trace's own machine kinds in proportion to
  their counts (largest remainders); ``cluster`` names the node kinds outright, as
  ``(GPU type, GPUs per node, nodes)``, of the trace's own types or Gavel's (``k80``,
  ``p100``, ``v100``: their vendor memory and power, their own throughputs);
- **the load**: ``time_scale`` multiplies every job's time since the window's start (the
  same jobs, spread or packed), or ``load`` asks for an offered load and the scale is
  solved for it.

The offered load is the work the jobs bring over the cluster's GPU-hours while they
arrive: ``sum_j E[N_j] w_j / (G * span)``, where ``w_j`` is the least GPU-hours one
epoch of the job takes on any configuration the cluster hosts (a shared slot counts
``1 / K_max`` of its GPU), ``E[N_j]`` its expected epochs (early stopping counts: the
work that really arrives), ``G`` the cluster's GPUs and ``span`` the hours from the
first release to the last. So at a load of 1 the cluster is saturated while jobs arrive
even if every job ran on its most GPU-efficient configuration, which no deadline-driven
policy does; scaling the times by ``f`` divides the load by ``f``. It is the
arrival-rate measure of the queueing literature; with heavy-tailed traces (Philly's
longest 1% of jobs hold 63% of its GPU-hours) a window's jobs may run well past
``span``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from instances.errors import InstanceError
from instances.generators.realdata import GAVEL_TYPES
from instances.generators.synthetic import gpu_specs
from instances.model import Config, Instance

# a week spread over two centuries, or packed into seconds, is no replay
MAX_TIME_SCALE = 1e4
MAX_LOAD = 1e3  # offered load: a thousand times what the cluster serves


@dataclass(frozen=True)
class Machine:
    """A kind of node in a cluster and the Gavel type whose speed it has."""

    gpu_type: str
    measured_as: str
    memory_gb: float
    power_w: float
    gpus: int
    count: int


def cycled(machines: Sequence[Machine], count: int) -> tuple[Machine, ...]:
    """``count`` nodes of the kinds in ``machines``, in proportion to their counts
    (largest remainders; ties to the kind listed first). A kind may get none."""
    total = sum(m.count for m in machines)
    quotas = [count * m.count / total for m in machines]
    counts = [math.floor(q) for q in quotas]
    left = count - sum(counts)
    by_remainder = sorted(range(len(machines)), key=lambda k: (counts[k] - quotas[k], k))
    for k in by_remainder[:left]:
        counts[k] += 1
    return tuple(
        Machine(m.gpu_type, m.measured_as, m.memory_gb, m.power_w, m.gpus, c)
        for m, c in zip(machines, counts, strict=True)
        if c > 0
    )


def named(
    kinds: Sequence[tuple[str, int, int]], machines: Sequence[Machine]
) -> tuple[Machine, ...]:
    """The node kinds ``(GPU type, GPUs per node, nodes)``: a type of the trace's own
    cluster keeps its memory, power and measured speed; a Gavel type takes its vendor
    figures and its own throughputs. Any other type is refused, naming it."""
    own = {m.gpu_type: m for m in machines}
    specs = gpu_specs()
    out = []
    seen: dict[tuple[str, int], int] = {}
    for k, (gpu_type, gpus, count) in enumerate(kinds):
        # a kind's nodes are named after its type and size: a repeat would clash
        first = seen.setdefault((gpu_type, gpus), k)
        if first != k:
            raise InstanceError(
                f"cluster[{k}]",
                f"{gpu_type}x{gpus}",
                f"repeats cluster[{first}]: give each kind's nodes once",
            )
        if gpu_type in own:
            m = own[gpu_type]
            out.append(Machine(gpu_type, m.measured_as, m.memory_gb, m.power_w, gpus, count))
        elif gpu_type in GAVEL_TYPES:
            s = specs[gpu_type]
            out.append(Machine(gpu_type, gpu_type, s.memory_gb, s.power_w, gpus, count))
        else:
            known = sorted({*own, *GAVEL_TYPES})
            raise InstanceError(f"cluster[{k}]", gpu_type, f"GPU type must be one of {known}")
    return tuple(out)


def parse_cluster(text: str) -> tuple[tuple[str, int, int], ...]:
    """``"v100x8:2,p100x4:4"`` as ``(("v100", 8, 2), ("p100", 4, 4))``: node kinds as
    TYPExGPUS:NODES, comma-separated (the command line's form of ``cluster``)."""
    out = []
    for k, part in enumerate(p.strip() for p in text.split(",")):
        kind, _, count = part.partition(":")
        gpu_type, _, gpus = kind.rpartition("x")
        if not (gpu_type and gpus.isdigit() and count.isdigit()):
            raise InstanceError(f"cluster[{k}]", part, "must be TYPExGPUS:NODES, e.g. v100x8:2")
        out.append((gpu_type, int(gpus), int(count)))
    return tuple(out)


@dataclass(frozen=True)
class Arrival:
    """What the load depends on, per job: its time since the window's start (trace
    hours), its expected epochs and the GPU-hours of one epoch (the module docstring)."""

    since_start: float
    expected_epochs: float
    epoch_gpu_hours: float


def epoch_gpu_hours(
    times: Mapping[Config, float], hosts: Callable[[Config], bool], share: int
) -> float:
    """The least GPU-hours one epoch takes on any configuration the cluster hosts (a
    shared slot counts ``1 / share`` of its GPU)."""
    return min(t * (1.0 / share if c.shared else c.gpus) for c, t in times.items() if hosts(c))


def offered_load(arrivals: Sequence[Arrival], gpus: int, scale: float) -> float:
    """The offered load of ``arrivals`` on ``gpus`` GPUs with times scaled by ``scale``."""
    span = scale * (max(a.since_start for a in arrivals) - min(a.since_start for a in arrivals))
    work = sum(a.expected_epochs * a.epoch_gpu_hours for a in arrivals)
    return math.inf if span <= 0 else work / (gpus * span)


def scale_for(arrivals: Sequence[Arrival], gpus: int, load: float) -> float:
    """The time scale giving ``arrivals`` the offered ``load`` on ``gpus`` GPUs."""
    at_one = offered_load(arrivals, gpus, 1.0)
    if len(arrivals) < 2 or math.isinf(at_one):
        raise InstanceError("load", load, "needs jobs arriving at two times at least")
    return at_one / load


def instance_load(inst: Instance) -> float:
    """The offered load of an instance's jobs on its cluster (the module docstring)."""
    arrivals = []
    for job in inst.jobs:
        allowed = set(inst.allowed_configs(job))
        times = {c: inst.epoch_time(job, c) for c in allowed}
        hours = epoch_gpu_hours(times, allowed.__contains__, inst.max_share)
        arrivals.append(Arrival(job.release, job.distribution.mean(), hours))
    return offered_load(arrivals, sum(n.num_gpus for n in inst.nodes), 1.0)
