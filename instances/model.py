"""The immutable, validated problem data (docs/model.md, from "Units" to "Early stopping").

Units: time in hours, energy in kWh, power in W, memory in GB, money in the
instance's currency. Every constructor validates its fields and raises
:class:`InstanceError` naming the field and the bad value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cached_property, total_ordering
from typing import Any, Literal

import numpy as np

from instances.distribution import EpochDistribution
from instances.energy import Carbon, Series, at_most
from instances.errors import InstanceError
from instances.fields import count as _count
from instances.fields import ident as _ident
from instances.fields import index as _index
from instances.fields import items_of as _items_of
from instances.fields import positive as _positive
from instances.limits import (
    MAX_CPU_CORES,
    MAX_EPOCH_HOURS,
    MAX_GPUS_PER_NODE,
    MAX_HOURS,
    MAX_JOBS,
    MAX_MEMORY_GB,
    MAX_NODE_POWER_W,
    MAX_NODES,
    MAX_POWER_W,
    MAX_PRICE,
    MAX_PRIORITY,
    MAX_RELAUNCH_HOURS,
    MAX_RUN_HOURS,
    MAX_SHARE,
    MAX_SLOT_HOURS,
    MAX_WEIGHT,
    MIN_EPOCH_HOURS,
    MIN_PRICE,
    MIN_SLOT_HOURS,
)
from instances.power import PowerOff
from instances.topology import SPANS, Network, Span, Topology, gbps, within

TardinessMode = Literal["worst_case", "expected"]
TARDINESS_MODES: tuple[str, ...] = ("worst_case", "expected")
# docs/model.md: the default tardiness weight is ten times the job's most expensive hourly
# energy cost ("an order of magnitude above energy").
DEFAULT_TARDINESS_FACTOR = 10.0


def _check_overheads(obj: object, *names: str) -> None:
    """Each overhead field of ``obj`` named, hours in ``[0, MAX_RELAUNCH_HOURS]`` or
    absent (``None``), refused naming the field, stored as a float."""
    for name in names:
        value = getattr(obj, name)
        if value is not None:
            hours = _positive(name, value, allow_zero=True, upper=MAX_RELAUNCH_HOURS)
            object.__setattr__(obj, name, hours)


@dataclass(frozen=True)
class GpuType:
    """A GPU model: memory per GPU (GB), busy power per GPU (W) and the power of a GPU
    powered but idle (W; 0: idle power not charged)."""

    name: str
    memory_gb: float
    power_w: float
    idle_w: float = 0.0

    def __post_init__(self) -> None:
        _ident("name", self.name)
        memory = _positive("memory_gb", self.memory_gb, upper=MAX_MEMORY_GB)
        object.__setattr__(self, "memory_gb", memory)
        object.__setattr__(self, "power_w", _positive("power_w", self.power_w, upper=MAX_POWER_W))
        idle = _positive("idle_w", self.idle_w, allow_zero=True, upper=MAX_POWER_W)
        if idle > self.power_w:
            raise InstanceError(
                "idle_w",
                self.idle_w,
                f"an idle GPU draws at most its busy power ({self.power_w:g} W)",
            )
        object.__setattr__(self, "idle_w", idle)


@dataclass(frozen=True)
class Node:
    """A server with ``num_gpus`` GPUs of one type. CPU, DRAM and rack are optional."""

    id: str
    gpu_type: str
    num_gpus: int
    cpu_cores: int | None = None
    dram_gb: float | None = None
    rack: str | None = None
    base_w: float = 0.0  # drawn while the node is powered, whatever runs (docs/model.md)

    def __post_init__(self) -> None:
        _ident("id", self.id)
        _ident("gpu_type", self.gpu_type)
        # stored as Python's numbers: numpy's are accepted, and json writes neither
        object.__setattr__(self, "num_gpus", _count("num_gpus", self.num_gpus, MAX_GPUS_PER_NODE))
        if self.cpu_cores is not None:
            cores = _count("cpu_cores", self.cpu_cores, MAX_CPU_CORES)
            object.__setattr__(self, "cpu_cores", cores)
        if self.dram_gb is not None:
            dram = _positive("dram_gb", self.dram_gb, upper=MAX_MEMORY_GB)
            object.__setattr__(self, "dram_gb", dram)
        if self.rack is not None:
            _ident("rack", self.rack)
        base = _positive("base_w", self.base_w, allow_zero=True, upper=MAX_NODE_POWER_W)
        object.__setattr__(self, "base_w", base)


ConfigKind = Literal["exclusive", "multi_node", "shared", "distributed"]


@total_ordering
@dataclass(frozen=True)
class Config:
    """How a job runs: ``gpus`` GPUs of ``gpu_type`` over ``nodes`` nodes, or a shared slot.

    - exclusive: ``nodes == 1``, ``gpus`` whole GPUs on one node;
    - multi-node: ``nodes > 1``, ``gpus / nodes`` GPUs on each of ``nodes`` whole nodes
      of the type (those nodes host nothing else);
    - shared ("mini-job"): one slot of one GPU shared by up to ``K_max`` jobs.

    ``cpus`` and ``dram_gb`` (E3, optional) are the CPU cores and host memory the job
    holds while it runs so, in all (split evenly over the nodes of a multi-node
    configuration; a shared tenant holds its own). Absent: it needs none that counts.

    - distributed (E4, ``span`` given): ``gpus`` whole GPUs of the type on any nodes
      within one rack, one domain or the cluster (``span``), as many per node as the
      placer chooses, the rest of each node free for others. Spread over more than one
      node, it holds ``net_gbps`` on every link between its nodes; its epoch time is
      the one for the slowest spread its span allows (docs/model.md, E4).
    """

    gpu_type: str
    gpus: int = 1
    nodes: int = 1
    shared: bool = False
    cpus: int | None = None
    dram_gb: float | None = None
    span: Span | None = None
    net_gbps: float | None = None

    def __post_init__(self) -> None:
        _ident("gpu_type", self.gpu_type)
        if not isinstance(self.shared, bool):  # "no" was truthy: a shared slot
            raise InstanceError("shared", self.shared, "must be true or false")
        object.__setattr__(self, "nodes", _count("nodes", self.nodes, MAX_NODES))
        if self.span is not None or self.net_gbps is not None:
            self._check_distributed()
        most = MAX_GPUS_PER_NODE * (MAX_NODES if self.span else self.nodes)
        object.__setattr__(self, "gpus", _count("gpus", self.gpus, most))
        if self.cpus is not None:
            object.__setattr__(self, "cpus", _count("cpus", self.cpus, MAX_CPU_CORES * self.nodes))
            if self.cpus % self.nodes:
                raise InstanceError(
                    "cpus",
                    self.cpus,
                    f"a multi-node configuration needs cpus divisible by nodes ({self.nodes})",
                )
        if self.dram_gb is not None:
            dram = _positive("dram_gb", self.dram_gb, upper=MAX_MEMORY_GB * self.nodes)
            object.__setattr__(self, "dram_gb", dram)
        if self.nodes > 1 and self.gpus % self.nodes:
            raise InstanceError(
                "gpus",
                self.gpus,
                f"a multi-node configuration needs gpus divisible by nodes ({self.nodes})",
            )
        if self.shared and (self.gpus != 1 or self.nodes != 1):
            raise InstanceError(
                "shared",
                self.shared,
                "a shared configuration uses one slot of one GPU "
                f"(got gpus={self.gpus}, nodes={self.nodes})",
            )
        # hashed once, as the dataclass would hash it each time: every job's epoch_times
        # and every policy's lookups hash configurations, millions of times in a replay
        # of a whole trace
        values = tuple(getattr(self, f.name) for f in fields(self) if f.compare)
        object.__setattr__(self, "_hash", hash(values))

    def __hash__(self) -> int:
        h: int = self.__dict__["_hash"]  # not a field: fields(), asdict() stay as they were
        return h

    def __reduce__(self) -> tuple[type[Config], tuple[Any, ...]]:
        # rebuilt from the fields, so hashed anew: a string's hash differs between
        # processes (campaign workers pickle plans and results)
        return (type(self), tuple(getattr(self, f.name) for f in fields(self) if f.init))

    def _check_distributed(self) -> None:
        if self.span not in SPANS[1:]:
            raise InstanceError("span", self.span, f"must be one of {list(SPANS[1:])}")
        if self.net_gbps is None:
            raise InstanceError(
                "net_gbps", None, "a distributed configuration (span) needs the Gb/s it holds"
            )
        object.__setattr__(self, "net_gbps", gbps("net_gbps", self.net_gbps))
        for name, bad in (
            ("nodes", self.nodes != 1),
            ("shared", self.shared),
            ("cpus", self.cpus is not None),
            ("dram_gb", self.dram_gb is not None),
        ):
            if bad:
                raise InstanceError(
                    name,
                    getattr(self, name),
                    "a distributed configuration (span) places its GPUs itself: it states "
                    "no node count, no sharing, no CPU cores and no DRAM",
                )

    def _key(self) -> tuple[str, int, int, bool, int, float, int, float]:
        # absent CPU/DRAM and span sort first; an instance without them sorts as it did
        cpus = -1 if self.cpus is None else self.cpus
        span = -1 if self.span is None else SPANS.index(self.span)
        return (
            self.gpu_type,
            self.gpus,
            self.nodes,
            self.shared,
            cpus,
            self.dram_gb or -1.0,
            span,
            self.net_gbps or -1.0,
        )

    def __lt__(self, other: Config) -> bool:
        return self._key() < other._key()

    @property
    def host_resources(self) -> bool:
        """Whether the configuration states CPU cores or DRAM (E3)."""
        return self.cpus is not None or self.dram_gb is not None

    @property
    def cpus_per_node(self) -> int:
        """CPU cores it holds on each of its nodes (0 if it states none)."""
        return (self.cpus or 0) // self.nodes

    @property
    def dram_per_node(self) -> float:
        """DRAM (GB) it holds on each of its nodes (0 if it states none)."""
        return (self.dram_gb or 0.0) / self.nodes

    @property
    def kind(self) -> ConfigKind:
        if self.shared:
            return "shared"
        if self.span is not None:
            return "distributed"
        return "multi_node" if self.nodes > 1 else "exclusive"

    @property
    def distributed(self) -> bool:
        """Whether the placer chooses its nodes within a span (E4)."""
        return self.span is not None

    @property
    def one_node(self) -> bool:
        """Whether it is exclusive GPUs on one node (not shared, not spread)."""
        return self.nodes == 1 and not self.shared and self.span is None

    @property
    def gpus_per_node(self) -> int:
        return self.gpus // self.nodes

    @property
    def label(self) -> str:
        """Short human name: ``v100x4``, ``v100x16/2n``, ``v100:shared``, ``v100x4@rack``."""
        if self.shared:
            return f"{self.gpu_type}:shared" + self._host_suffix()
        base = f"{self.gpu_type}x{self.gpus}"
        if self.span is not None:
            return f"{base}@{self.span}" + (
                "" if self.net_gbps is None else f"/{self.net_gbps:g}gbps"
            )
        if self.nodes > 1:
            base += f"/{self.nodes}n"
        return base + self._host_suffix()

    def _host_suffix(self) -> str:
        out = "" if self.cpus is None else f"+{self.cpus}cpu"
        return out if self.dram_gb is None else out + f"+{self.dram_gb:g}gb"

    def power_w(self, gpu: GpuType, max_share: int) -> float:
        """Busy power (W). A shared GPU's power is split evenly over its ``K_max`` slots."""
        return gpu.power_w / max_share if self.shared else self.gpus * gpu.power_w


def fits_node(cfg: Config, node: Node) -> bool:
    """Whether one node of ``cfg`` fits on ``node`` when it is empty: its type, its GPUs
    per node, and its CPU cores and DRAM per node where the node states them (a node
    that states none has as many as anything asks)."""
    if cfg.distributed:  # any of its GPUs may sit on this node
        return node.gpu_type == cfg.gpu_type
    return (
        node.gpu_type == cfg.gpu_type
        and node.num_gpus >= cfg.gpus_per_node
        and (node.cpu_cores is None or cfg.cpus_per_node <= node.cpu_cores)
        and (node.dram_gb is None or cfg.dram_per_node <= node.dram_gb + 1e-9)
    )


def epoch_time_fits(hours: float, max_epochs: float) -> bool:
    """Whether ``hours`` per epoch is within the bounds, alone and for all
    ``max_epochs`` (:func:`checked_epoch_time` says which bound it is not within)."""
    return MIN_EPOCH_HOURS <= hours <= MAX_EPOCH_HOURS and hours * max_epochs <= MAX_RUN_HOURS


def checked_epoch_time(
    path: str, given: Any, hours: float, max_epochs: float, cfg: Config
) -> float:
    """``hours`` per epoch within the bounds, alone and for all ``max_epochs``; ``given``
    is what the file holds at ``path`` (an epoch time, or a throughput)."""
    if epoch_time_fits(hours, max_epochs):
        return hours
    if not MIN_EPOCH_HOURS <= hours <= MAX_EPOCH_HOURS:
        raise InstanceError(
            path,
            given,
            f"gives {hours:g} h per epoch on {cfg.label}: must be between {MIN_EPOCH_HOURS:g} "
            f"and {MAX_EPOCH_HOURS:g} h (docs/model.md, bounds)",
        )
    if hours * max_epochs > MAX_RUN_HOURS:
        raise InstanceError(
            path,
            given,
            f"all {max_epochs:g} epochs would take {hours * max_epochs:g} h on {cfg.label}, "
            f"more than {MAX_RUN_HOURS:g} h (docs/model.md, bounds)",
        )
    return hours


def _config_order(item: tuple[Config, float]) -> tuple[Any, ...]:
    return item[0]._key()


@dataclass(frozen=True)
class Requested:
    """The size a job's user asked for (E0 of the seed-systems notes): ``gpus`` GPUs of
    ``gpu_type``, or of any type when ``gpu_type`` is ``None``. Only the ``static``
    policy reads it; no cost depends on it."""

    gpus: int
    gpu_type: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpus", _count("gpus", self.gpus, MAX_GPUS_PER_NODE * MAX_NODES))
        if self.gpu_type is not None:
            _ident("gpu_type", self.gpu_type)

    def matches(self, cfg: Config) -> bool:
        """Whether an exclusive configuration is of the requested size."""
        return (
            not cfg.shared
            and cfg.gpus == self.gpus
            and (self.gpu_type is None or cfg.gpu_type == self.gpu_type)
        )


@dataclass(frozen=True)
class Job:
    """A training job (docs/model.md).

    ``epoch_times`` maps each configuration the job may use to its epoch time (hours).
    ``weight`` is the tardiness weight (currency per hour late); ``None`` means the
    default of docs/model.md, resolved by :class:`Instance` and scaled by ``priority``.
    """

    id: str
    release: float
    due: float
    distribution: EpochDistribution
    epoch_times: Mapping[Config, float]
    memory_gb: float
    weight: float | None = None
    priority: float = 1.0
    job_type: str | None = None
    requested: Requested | None = None
    relaunch_hours: float | None = None  # None: the instance's default
    suspend_hours: float | None = None  # a resume on the same GPUs; None: the instance's

    def __post_init__(self) -> None:
        _ident("id", self.id)
        if self.job_type is not None and not isinstance(self.job_type, str):
            # a file written from it would be refused by the reader's schema
            raise InstanceError("job_type", self.job_type, "must be text")
        if self.requested is not None and not isinstance(self.requested, Requested):
            raise InstanceError("requested", self.requested, "must be a Requested")
        release = _positive("release", self.release, allow_zero=True, upper=MAX_HOURS)
        due = _positive("due", self.due, allow_zero=True, upper=MAX_HOURS)
        if due <= release:
            raise InstanceError(
                "due", self.due, f"the due date must be after the release time ({self.release})"
            )
        object.__setattr__(self, "release", release)
        object.__setattr__(self, "due", due)
        memory = _positive("memory_gb", self.memory_gb, upper=MAX_MEMORY_GB)
        object.__setattr__(self, "memory_gb", memory)
        priority = _positive("priority", self.priority, upper=MAX_PRIORITY)
        object.__setattr__(self, "priority", priority)
        if self.weight is not None:
            weight = _positive("weight", self.weight, allow_zero=True, upper=MAX_WEIGHT)
            object.__setattr__(self, "weight", weight)
        _check_overheads(self, "relaunch_hours", "suspend_hours")
        if not isinstance(self.distribution, EpochDistribution):
            raise InstanceError("distribution", self.distribution, "must be an EpochDistribution")
        if not isinstance(self.epoch_times, Mapping):
            raise InstanceError(
                "epoch_times", self.epoch_times, "must map each Config to its epoch time (hours)"
            )
        if not self.epoch_times:
            raise InstanceError("configs", [], "the job has no available configuration")
        times: dict[Config, float] = {}
        top = self.distribution.max_epochs
        for i, (cfg, t) in enumerate(self.epoch_times.items()):
            if not isinstance(cfg, Config):
                raise InstanceError(f"configs[{i}]", cfg, "must be a Config")
            if cfg in times:
                raise InstanceError(f"configs[{i}]", cfg.label, "duplicate configuration")
            if type(t) is float and epoch_time_fits(t, top):
                times[cfg] = t  # the common case, without writing a path for no error
                continue
            where = f"configs[{i}].epoch_time"
            hours = _positive(where, t)
            times[cfg] = checked_epoch_time(where, t, hours, top, cfg)
        # Sorted for a canonical order (stable JSON, deterministic policies); by each
        # configuration's key, computed once, the order of Config.__lt__
        object.__setattr__(self, "epoch_times", dict(sorted(times.items(), key=_config_order)))

    @property
    def max_epochs(self) -> float:
        return self.distribution.max_epochs

    @property
    def configs(self) -> tuple[Config, ...]:
        return tuple(self.epoch_times)

    def __hash__(self) -> int:  # epoch_times is a dict; ids are unique within an instance
        return hash(self.id)


@dataclass(frozen=True)
class Instance:
    """A whole problem: GPU types, nodes, jobs, energy price and the cost options.

    ``slot`` (hours) is the time resolution Δ; ``None`` means exact (continuous) time.
    ``max_share`` is ``K_max``, the number of jobs a shared GPU may host.
    """

    gpu_types: tuple[GpuType, ...]
    nodes: tuple[Node, ...]
    jobs: tuple[Job, ...]
    energy_price: float = 0.2
    tardiness: TardinessMode = "worst_case"
    slot: float | None = None
    max_share: int = 2
    name: str = "instance"
    # E1: hours a (re)started segment runs before it makes progress (docs/model.md)
    relaunch_hours: float = 0.0
    # hours a job resumed on the very GPUs it was suspended from runs before it makes
    # progress (Gandiva's suspend/resume); None: a resume pays the relaunch overhead
    suspend_hours: float | None = None
    # E3: busy power of one CPU core a configuration holds (W); 0: CPU energy not charged
    cpu_power_w: float = 0.0
    # E4: racks, domains and link bandwidths; None: no network is modelled
    topology: Topology | None = None
    # the bill (docs/model.md, 'Energy prices and carbon'): the price of a kWh over time
    # (None: energy_price at every hour) and the grid's carbon intensity with its price
    prices: Series | None = None
    carbon: Carbon | None = None
    # whether an empty node is powered off (docs/model.md, 'Idle power'); None: always on
    power_off: PowerOff | None = None
    # Derived lookups, built once.
    _gpu: dict[str, GpuType] = field(init=False, repr=False, compare=False)
    _node: dict[str, Node] = field(init=False, repr=False, compare=False)
    _job: dict[str, Job] = field(init=False, repr=False, compare=False)
    _weights: dict[str, float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpu_types", _items_of("gpu_types", self.gpu_types, GpuType))
        object.__setattr__(self, "nodes", _items_of("nodes", self.nodes, Node))
        object.__setattr__(self, "jobs", _items_of("jobs", self.jobs, Job))
        if not isinstance(self.name, str) or not self.name.isprintable():
            raise InstanceError("name", self.name, "must be printable text (no control codes)")
        price = _positive("energy_price", self.energy_price, allow_zero=True, upper=MAX_PRICE)
        if 0 < price < MIN_PRICE:
            # STS's searches compare costs to an absolute 1e-15 and chose another plan
            # at a price of 2e-16 (found by a probe, 2026-12-05): a unit that small is a
            # typo in any currency; 0 (free energy) is a price
            raise InstanceError(
                "energy_price", price, f"must be 0 or at least {MIN_PRICE:g} per kWh"
            )
        object.__setattr__(self, "energy_price", price)
        if self.tardiness not in TARDINESS_MODES:
            raise InstanceError("tardiness", self.tardiness, f"must be one of {TARDINESS_MODES}")
        if self.slot is not None:
            slot = _positive("slot", self.slot, upper=MAX_SLOT_HOURS)
            if slot < MIN_SLOT_HOURS:
                raise InstanceError(
                    "slot",
                    self.slot,
                    f"must be at least {MIN_SLOT_HOURS:g} h (docs/model.md, bounds)",
                )
            object.__setattr__(self, "slot", slot)
        object.__setattr__(self, "max_share", _count("max_share", self.max_share, MAX_SHARE))
        delta = _positive(  # the instance's default is a number (0: none), never absent
            "relaunch_hours", self.relaunch_hours, allow_zero=True, upper=MAX_RELAUNCH_HOURS
        )
        object.__setattr__(self, "relaunch_hours", delta)
        _check_overheads(self, "suspend_hours")
        cpu_power = _positive("cpu_power_w", self.cpu_power_w, allow_zero=True, upper=MAX_POWER_W)
        object.__setattr__(self, "cpu_power_w", cpu_power)
        if not self.nodes:
            raise InstanceError("nodes", [], "the cluster needs at least one node")
        if not self.jobs:
            raise InstanceError("jobs", [], "the instance needs at least one job")
        if len(self.nodes) > MAX_NODES:
            raise InstanceError("nodes", len(self.nodes), f"at most {MAX_NODES} nodes")
        if len(self.jobs) > MAX_JOBS:
            raise InstanceError("jobs", len(self.jobs), f"at most {MAX_JOBS} jobs")
        object.__setattr__(self, "_gpu", _index("gpu_types", self.gpu_types, "name"))
        object.__setattr__(self, "_node", _index("nodes", self.nodes, "id"))
        object.__setattr__(self, "_job", _index("jobs", self.jobs, "id"))
        for i, n in enumerate(self.nodes):
            if n.gpu_type not in self._gpu:
                raise InstanceError(
                    f"nodes[{i}].gpu_type",
                    n.gpu_type,
                    f"unknown GPU type (known: {sorted(self._gpu)})",
                )
        if self.topology is not None:
            self._check_topology()
        if self.prices is not None and not isinstance(self.prices, Series):
            raise InstanceError("prices", self.prices, "must be a Series")
        if self.prices is not None:  # as for energy_price, above
            values = self.prices.values_array
            at_most("prices", values, MAX_PRICE, "per kWh")
            tiny = np.flatnonzero((values > 0) & (values < MIN_PRICE))
            if len(tiny):
                i = int(tiny[0])
                raise InstanceError(
                    f"prices.values[{i}]",
                    float(values[i]),
                    f"must be 0 or at least {MIN_PRICE:g} per kWh",
                )
        if self.carbon is not None and not isinstance(self.carbon, Carbon):
            raise InstanceError("carbon", self.carbon, "must be a Carbon")
        self._check_reference_price()
        if self.power_off is not None and not isinstance(self.power_off, PowerOff):
            raise InstanceError("power_off", self.power_off, "must be a PowerOff")
        for i, j in enumerate(self.jobs):
            self._check_job(i, j)
        # after every job is checked: a default weight reads the allowed configurations
        weights = {j.id: self._resolve_weight(j) for j in self.jobs}
        for i, j in enumerate(self.jobs):
            if weights[j.id] > MAX_WEIGHT:
                # each within its bound, their product may not be: a derived instance
                # (online, the bounds) pins the product as the job's weight and refused it
                raise InstanceError(
                    f"jobs[{i}].priority",
                    j.priority,
                    f"the tardiness weight of job {j.id!r} times its priority is "
                    f"{weights[j.id]:g}, above the most a weight may be ({MAX_WEIGHT:g})",
                )
        object.__setattr__(self, "_weights", weights)

    def _check_topology(self) -> None:
        assert self.topology is not None
        if not isinstance(self.topology, Topology):
            raise InstanceError("topology", self.topology, "must be a Topology")
        racks = {r.id for r in self.topology.racks}
        for i, n in enumerate(self.nodes):
            if n.rack not in racks:
                raise InstanceError(
                    f"nodes[{i}].rack",
                    n.rack,
                    f"with a topology every node names one of its racks (known: {sorted(racks)})",
                )

    @cached_property
    def network(self) -> Network | None:
        """The topology joined with the nodes (E4), or ``None`` without a topology."""
        if self.topology is None:
            return None
        return Network(self.topology, {n.id: n.rack for n in self.nodes if n.rack is not None})

    def _check_job(self, i: int, job: Job) -> None:
        hostable = 0
        for c, cfg in enumerate(job.epoch_times):
            where = f"jobs[{i}].configs[{c}]"
            if cfg.distributed and self.topology is None:
                raise InstanceError(
                    f"{where}.span",
                    cfg.span,
                    "a distributed configuration needs the instance's topology (racks, links)",
                )
            gpu = self._gpu.get(cfg.gpu_type)
            if gpu is None:
                raise InstanceError(
                    f"{where}.gpu_type",
                    cfg.gpu_type,
                    f"unknown GPU type (known: {sorted(self._gpu)})",
                )
            if cfg.shared and job.memory_gb > gpu.memory_gb:
                # either field may be the wrong one: name both
                g = next(k for k, t in enumerate(self.gpu_types) if t.name == cfg.gpu_type)
                raise InstanceError(
                    f"jobs[{i}].memory_gb",
                    job.memory_gb,
                    f"a shared configuration on {cfg.gpu_type} needs the job's "
                    f"memory to fit one GPU (gpu_types[{g}].memory_gb = {gpu.memory_gb} GB)",
                )
            if self.hosts(cfg):
                hostable += 1
        if self.resume(job) > self.relaunch(job):
            own = job.suspend_hours is not None
            raise InstanceError(
                f"jobs[{i}].suspend_hours" if own else "suspend_hours",
                self.resume(job),
                f"job {job.id!r}: a resume cannot take longer than a relaunch "
                f"({self.relaunch(job):g} h), which it could do instead",
            )
        req = job.requested
        if req is not None and not any(req.matches(c) and self.hosts(c) for c in job.epoch_times):
            raise InstanceError(
                f"jobs[{i}].requested",
                {"gpus": req.gpus, "gpu_type": req.gpu_type},
                f"job {job.id!r} has no exclusive configuration of the requested size that "
                "the cluster can host",
            )
        if hostable == 0:
            if any(c.host_resources for c in job.epoch_times):
                shapes = sorted(
                    {(n.gpu_type, n.num_gpus, n.cpu_cores, n.dram_gb) for n in self.nodes},
                    key=str,
                )
                what = f"nodes by type, GPUs, CPU cores and DRAM GB: {shapes}"
            else:
                sizes = sorted({(n.gpu_type, n.num_gpus) for n in self.nodes})
                what = f"nodes by type and GPUs: {sizes}"
            raise InstanceError(
                f"jobs[{i}].configs",
                [c.label for c in job.epoch_times],
                f"job {job.id!r} fits no node of the cluster ({what})",
            )

    def _check_reference_price(self) -> None:
        """``energy_price`` sets the default tardiness weights (docs/model.md): at 0 beside
        a price series or a priced carbon series that bills energy, every due date of a
        job without a ``weight`` would be free while the energy is billed (hostile-input
        reviews found jobs 500,000 h and 5,000 h late costing nothing)."""
        if self.energy_price != 0 or all(j.weight is not None for j in self.jobs):
            return
        carbon = self.carbon
        if self.prices is not None and bool(np.any(self.prices.values_array > 0)):
            bills = "a price series that bills energy"
        elif (
            carbon is not None
            and carbon.price > 0
            and bool(np.any(carbon.intensity.values_array > 0))
        ):
            bills = f"a carbon series with a price (carbon.price = {carbon.price:g})"
        else:
            return
        raise InstanceError(
            "energy_price",
            self.energy_price,
            f"must be above 0 beside {bills}: it sets the tardiness weight of each job "
            "without a 'weight', which would be 0",
        )

    def _resolve_weight(self, job: Job) -> float:
        if job.weight is not None:
            return job.weight * job.priority
        # docs/model.md: a configuration no node can host is ignored, here too
        top = self.top_power_w(job)
        return DEFAULT_TARDINESS_FACTOR * self.energy_price * top / 1000.0 * job.priority

    def top_power_w(self, job: Job | str) -> float:
        """The power (W) of the job's most powerful allowed configuration: what its
        default tardiness weight is counted at."""
        return max(self.power_w(cfg) for cfg in self.allowed_configs(job))

    # -- lookups ---------------------------------------------------------------------------
    def gpu(self, name: str) -> GpuType:
        return self._gpu[name]

    def node(self, node_id: str) -> Node:
        return self._node[node_id]

    def job(self, job_id: str) -> Job:
        return self._job[job_id]

    def has_job(self, job_id: str) -> bool:
        return job_id in self._job

    def has_node(self, node_id: str) -> bool:
        return node_id in self._node

    def relaunch(self, job: Job | str) -> float:
        """``δ_j``: hours a segment that does not continue the job's previous one runs
        before it makes progress (the job's own value, else the instance's)."""
        j = self._job[job] if isinstance(job, str) else job
        return self.relaunch_hours if j.relaunch_hours is None else j.relaunch_hours

    def resume(self, job: Job | str) -> float:
        """Hours a segment that resumes the job on the configuration and GPUs of its
        previous segment, after a pause, runs before it makes progress: the job's own
        suspend overhead, else the instance's, else its relaunch overhead."""
        j = self._job[job] if isinstance(job, str) else job
        if j.suspend_hours is not None:
            return j.suspend_hours
        return self.relaunch(j) if self.suspend_hours is None else self.suspend_hours

    def suspends(self, job: Job | str) -> bool:
        """Whether a resume of the job on the same GPUs is a suspend/resume (it has a
        suspend overhead of its own or the instance's) rather than a relaunch."""
        j = self._job[job] if isinstance(job, str) else job
        return j.suspend_hours is not None or self.suspend_hours is not None

    @cached_property
    def has_relaunch(self) -> bool:
        """Whether any job pays a relaunch overhead (``δ_j > 0``)."""
        return any(self.relaunch(j) > 0 for j in self.jobs)

    def tardiness_mode(self, override: str | None = None) -> TardinessMode:
        """The tardiness mode a cost is computed in: ``override`` where given (one of
        ``TARDINESS_MODES``; any other string was read as ``expected``), else the
        instance's own."""
        if override is None:
            return self.tardiness
        if override not in TARDINESS_MODES:
            raise InstanceError("tardiness", override, f"must be one of {TARDINESS_MODES}")
        return override  # type: ignore[return-value]

    def tardiness_weight(self, job_id: str) -> float:
        """``ω_j`` (currency per hour late), the default resolved and priority applied."""
        return self._weights[job_id]

    @cached_property
    def nodes_by_type(self) -> dict[str, tuple[Node, ...]]:
        out: dict[str, list[Node]] = {g.name: [] for g in self.gpu_types}
        for n in self.nodes:
            out[n.gpu_type].append(n)
        return {k: tuple(v) for k, v in out.items()}

    @cached_property
    def gpus_by_type(self) -> dict[str, int]:
        """GPUs of each type, summed over its nodes (every type listed, 0 if no node)."""
        return {t: sum(n.num_gpus for n in ns) for t, ns in self.nodes_by_type.items()}

    @cached_property
    def _hosted(self) -> dict[Config, bool]:
        # jobs of one trace share few configurations, and the cluster may have a
        # thousand nodes: each configuration is looked up once per instance
        return {}

    def hosts(self, cfg: Config) -> bool:
        """Whether some node (or set of whole nodes) of the cluster can ever host ``cfg``."""
        known = self._hosted.get(cfg)
        if known is None:
            known = self._hosted[cfg] = self._hosts(cfg)
        return known

    def _hosts(self, cfg: Config) -> bool:
        nodes = self.nodes_by_type.get(cfg.gpu_type, ())
        if cfg.distributed:
            return self._hosts_spread(cfg)
        if cfg.nodes == 1:  # short-circuits: called per job and configuration
            return any(fits_node(cfg, n) for n in nodes)
        return sum(1 for n in nodes if fits_node(cfg, n)) >= cfg.nodes

    def _hosts_spread(self, cfg: Config) -> bool:
        """Whether some set of nodes within the span of a distributed ``cfg`` has its
        GPUs, on links that each carry its ``net_gbps`` (none needed on one node)."""
        net = self.network
        assert net is not None and cfg.span is not None and cfg.net_gbps is not None
        for level in SPANS:
            if not within(level, cfg.span):
                break
            for group in net.groups(level):
                mine = [n for n in group if self._node[n].gpu_type == cfg.gpu_type]
                if sum(self._node[n].num_gpus for n in mine) < cfg.gpus:
                    continue
                if all(net.capacity[k] >= cfg.net_gbps for k in net.links(mine)):
                    return True
        return False

    @cached_property
    def _allowed(self) -> dict[str, tuple[Config, ...]]:
        # schedulers ask at every decision for every job: compute once per instance
        return {j.id: tuple(c for c in j.epoch_times if self.hosts(c)) for j in self.jobs}

    def allowed_configs(self, job: Job | str) -> tuple[Config, ...]:
        """The job's configurations this cluster can host (others are never used)."""
        j = self._job[job] if isinstance(job, str) else job
        if self._job.get(j.id) is j:
            return self._allowed[j.id]
        return tuple(c for c in j.epoch_times if self.hosts(c))

    def config_of_shape(
        self, job: Job | str, gpu_type: str, gpus: int = 1, *, shared: bool = False
    ) -> Config | None:
        """The job's allowed one-node configuration of this GPU shape (``gpus`` GPUs of
        ``gpu_type``, or a shared slot), for policies that decide in GPUs alone: where
        CPU/DRAM levels (E3) give several, the fastest (then the first in order);
        ``None`` if it has none."""
        j = self._job[job] if isinstance(job, str) else job
        same = [
            c
            for c in self.allowed_configs(j)
            if c.gpu_type == gpu_type and c.shared == shared and c.nodes == 1 and c.gpus == gpus
        ]
        return min(same, key=lambda c: (j.epoch_times[c], c), default=None)

    # -- cost primitives (docs/model.md, 'Plans and their cost') ----------------------------
    def power_w(self, cfg: Config) -> float:
        """Busy power of a configuration (W): its GPUs', plus its CPU cores' at
        ``cpu_power_w`` each (E3; 0 by default, so GPU energy alone as in docs/model.md)."""
        power = cfg.power_w(self._gpu[cfg.gpu_type], self.max_share)
        if self.cpu_power_w and cfg.cpus:
            power += cfg.cpus * self.cpu_power_w
        return power

    def epoch_time(self, job: Job | str, cfg: Config) -> float:
        """``τ_j(c)``, hours per epoch."""
        j = self._job[job] if isinstance(job, str) else job
        return j.epoch_times[cfg]

    def epoch_energy(self, job: Job | str, cfg: Config) -> float:
        """``e_c = P_c · τ_j(c) / 1000``, kWh per epoch."""
        return self.power_w(cfg) * self.epoch_time(job, cfg) / 1000.0

    @cached_property
    def idle_power(self) -> bool:
        """Whether powered nodes draw power of their own: a base power, or idle GPUs."""
        return any(n.base_w > 0 for n in self.nodes) or any(g.idle_w > 0 for g in self.gpu_types)

    @cached_property
    def powered_kw(self) -> float:
        """The nodes' base power and their GPUs' idle power (kW): what the cluster draws
        of its own while powered and idle (0 where idle power is not charged)."""
        return sum(n.base_w + self.gpu(n.gpu_type).idle_w * n.num_gpus for n in self.nodes) / 1000.0

    @property
    def node_power(self) -> bool:
        """Whether nodes cost anything of their own: idle power, or boots of nodes
        powered off when empty (docs/model.md, 'Idle power')."""
        return self.idle_power or (self.power_off is not None and self.power_off.boot_kwh > 0)

    def busy_share(self, cfg: Config) -> float:
        """GPUs a configuration keeps from idling: its GPUs, or ``1/K_max`` of one for a
        shared slot (a shared GPU idles by the slots its tenants leave free)."""
        return 1.0 / self.max_share if cfg.shared else float(cfg.gpus)

    @cached_property
    def price_series(self) -> Series:
        """The price of a kWh over time: the series, or ``energy_price`` for ever."""
        return Series.flat(self.energy_price) if self.prices is None else self.prices

    def epoch_cost(self, job: Job | str, cfg: Config) -> float:
        """``π · e_c``: energy cost of one epoch (currency)."""
        return self.energy_price * self.epoch_energy(job, cfg)

    def pinned_job(self, job_id: str, **changes: Any) -> Job:
        """A validated copy of the job with ``changes`` and its tardiness weight fixed at
        this instance's ``ω_j`` (default resolved, priority applied): the default depends
        on the configurations, so a job moved to a derived instance keeps its weight."""
        w = self.tardiness_weight(job_id)
        return replace(self._job[job_id], weight=w, priority=1.0, **changes)

    def replace(self, **changes: Any) -> Instance:
        """A validated copy with some fields changed."""
        return replace(self, **changes)
