"""JSON read and write of instances and plans, checked against the shipped JSON Schemas.

A file's bytes are read and its numbers checked by :mod:`instances.jsonfile`; structure
(missing, unknown or mistyped fields) is checked by the schema; meaning (due after
release, probabilities summing to 1, ...) by the data classes. Both raise
:class:`InstanceError` (or :class:`PlanError`) naming the field path and the value.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from instances.conforms import Check, compile_schema
from instances.distribution import EpochDistribution
from instances.energy import Carbon, Series, carbon_from_dict, series_from_dict
from instances.errors import InstanceError, PlanError
from instances.fields import whole_at_least
from instances.jsonfile import (
    check_numbers,
    encoded,
    file_path,
    json_path,
    load_json_file,
    write_atomic,
)
from instances.limits import MAX_PLAN_HOURS, MAX_PRICE, MIN_BLOCK_EPOCHS
from instances.model import (
    Config,
    GpuType,
    Instance,
    Job,
    Node,
    Requested,
    checked_epoch_time,
    epoch_time_fits,
)
from instances.plan import Plan, Segment
from instances.power import PowerOff, power_off_from_dict
from instances.topology import Domain, Rack, Topology

INSTANCE_FORMAT = "gpusched-instance/1"
PLAN_FORMAT = "gpusched-plan/1"


@cache
def schema(kind: str) -> dict[str, Any]:
    """The published JSON Schema, ``kind`` = ``"instance"`` or ``"plan"``."""
    text = resources.files("instances").joinpath("schema", f"{kind}.schema.json").read_text()
    result: dict[str, Any] = json.loads(text)
    return result


@cache
def _conforms(kind: str) -> Check | None:
    return compile_schema(schema(kind))


def check_structure(doc: Any, kind: str) -> None:
    """The numbers (:func:`check_numbers`) and the JSON Schema of ``kind``, each
    refusing the document with an :class:`InstanceError` naming the field and value.
    A document the compiled schema (:mod:`instances.conforms`) accepts passes both;
    any other is walked by both in full, which word the error."""
    fast = _conforms(kind)
    if fast is not None and fast(doc):
        return
    check_numbers(doc)
    _check_schema(doc, kind)


def _check_schema(doc: Any, kind: str) -> None:
    validator = jsonschema.Draft202012Validator(schema(kind))
    error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if error is None:
        return
    path = json_path(error.absolute_path)
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        name = extra[0] if extra else "?"
        raise InstanceError(
            f"{path}.{name}" if path else name, error.instance.get(name), "unknown field"
        )
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        raise InstanceError(f"{path}.{missing}" if path else missing, None, "missing field")
    if error.validator == "oneOf" and isinstance(error.instance, dict):
        raise InstanceError(
            path,
            error.instance,
            "give exactly one of 'epoch_time' (hours) or 'throughput' (epochs/h)",
        )
    raise InstanceError(path, error.instance, error.message)


# -- instances ---------------------------------------------------------------------------
def _build(path: str, factory: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return factory(*args, **kwargs)
    except InstanceError as exc:
        raise exc.within(path) from None


_CONFIG_FIELDS = ("gpu_type", "gpus", "nodes", "shared", "cpus", "dram_gb", "span", "net_gbps")


def _config(path: str, d: dict[str, Any]) -> Config:
    values = dict(zip(_CONFIG_FIELDS, _config_values(d), strict=True))
    result: Config = _build(path, Config, **values)
    return result


def _config_values(d: dict[str, Any]) -> tuple[Any, ...]:
    """A file's configuration ``d``, field by field (the defaults filled in), in the
    order of ``_CONFIG_FIELDS``. Every field a configuration reads must be here: this
    is also the key by which equal configurations are built once (``_config_key``)."""
    return (
        d["gpu_type"],
        d.get("gpus", 1),
        d.get("nodes", 1),
        d.get("shared", False),
        d.get("cpus"),
        d.get("dram_gb"),
        d.get("span"),
        d.get("net_gbps"),
    )


def _config_key(d: dict[str, Any]) -> tuple[Any, ...]:
    """Equal for two of a file's configurations that build equal ones: the values and
    their types (``1``, ``1.0`` and ``True`` are equal keys of a dict, but not the same
    field value). The jobs of a trace share a few dozen configurations among tens of
    thousands, and an equal configuration passes the same checks: each is built once."""
    values = _config_values(d)
    return (values, tuple(map(type, values)))


def _job(i: int, d: dict[str, Any], known: dict[Any, Config]) -> Job:
    where = f"jobs[{i}]"
    dist = _build(
        f"{where}.distribution",
        EpochDistribution,
        stops=tuple(d["distribution"]["stops"]),
        probabilities=tuple(d["distribution"]["probabilities"]),
    )
    # checked here, not in EpochDistribution: the distribution of a running job's
    # remaining epochs (conditional) may have a first block as short as rounding makes it
    for b, length in enumerate(dist.block_lengths):
        if length < MIN_BLOCK_EPOCHS:
            raise InstanceError(
                f"{where}.distribution.stops[{b}]",
                dist.stops[b],
                f"must be at least {MIN_BLOCK_EPOCHS:g} epochs after the previous stopping "
                "point (or 0) (docs/model.md, bounds)",
            )
    if "max_epochs" in d and d["max_epochs"] != dist.max_epochs:
        raise InstanceError(
            f"{where}.distribution.stops",
            list(dist.stops),
            f"the last stopping point must be the job's max_epochs ({d['max_epochs']})",
        )
    times: dict[Config, float] = {}
    top = dist.max_epochs
    for c, cd in enumerate(d["configs"]):
        # the paths of the messages are written only for an error: a trace has tens
        # of thousands of configurations
        key = _config_key(cd)
        cfg = known.get(key)
        if cfg is None:
            cfg = known[key] = _config(f"{where}.configs[{c}]", cd)
        if cfg in times:
            raise InstanceError(f"{where}.configs[{c}]", cfg.label, "duplicate configuration")
        if "throughput" in cd:
            given = cd["throughput"]
            if given < 0:
                raise InstanceError(
                    f"{where}.configs[{c}].throughput", given, "must not be negative"
                )
            if given == 0:  # measured as not runnable (as in Gavel's data): unavailable
                continue
            field, hours = "throughput", 1.0 / given
        else:
            given = cd["epoch_time"]
            if given <= 0:
                raise InstanceError(
                    f"{where}.configs[{c}].epoch_time", given, "must be a positive number of hours"
                )
            field, hours = "epoch_time", float(given)
        if not epoch_time_fits(hours, top):
            checked_epoch_time(f"{where}.configs[{c}].{field}", given, hours, top, cfg)
        times[cfg] = hours
    if not times:
        raise InstanceError(
            f"{where}.configs",
            d["configs"],
            f"job {d['id']!r} has no available configuration (every throughput is 0)",
        )
    job: Job = _build(
        where,
        Job,
        id=d["id"],
        release=d["release"],
        due=d["due"],
        distribution=dist,
        epoch_times=times,
        memory_gb=d["memory_gb"],
        weight=d.get("weight"),
        priority=d.get("priority", 1.0),
        job_type=d.get("job_type"),
        requested=_requested(where, d.get("requested")),
        relaunch_hours=d.get("relaunch_hours"),
        suspend_hours=d.get("suspend_hours"),
    )
    return job


def _requested(where: str, d: dict[str, Any] | None) -> Requested | None:
    if d is None:
        return None
    req: Requested = _build(
        f"{where}.requested", Requested, gpus=d["gpus"], gpu_type=d.get("gpu_type")
    )
    return req


def instance_from_dict(doc: Any) -> Instance:
    """Build and validate an :class:`Instance` from its JSON document."""
    check_structure(doc, "instance")
    gpus = [_build(f"gpu_types[{i}]", GpuType, **g) for i, g in enumerate(doc["gpu_types"])]
    nodes = [_build(f"nodes[{i}]", Node, **n) for i, n in enumerate(doc["nodes"])]
    known: dict[Any, Config] = {}
    jobs = [_job(i, j, known) for i, j in enumerate(doc["jobs"])]
    inst: Instance = _build(
        "",
        Instance,
        gpu_types=tuple(gpus),
        nodes=tuple(nodes),
        jobs=tuple(jobs),
        energy_price=doc.get("energy_price", 0.2),
        tardiness=doc.get("tardiness", "worst_case"),
        slot=doc.get("slot"),
        max_share=doc.get("max_share", 2),
        name=doc.get("name", "instance"),
        relaunch_hours=doc.get("relaunch_hours", 0.0),
        suspend_hours=doc.get("suspend_hours"),
        cpu_power_w=doc.get("cpu_power_w", 0.0),
        topology=_topology(doc.get("topology")),
        prices=_prices(doc.get("prices")),
        carbon=_carbon(doc.get("carbon")),
        power_off=_power_off(doc.get("power_off")),
    )
    return inst


def _prices(d: dict[str, Any] | None) -> Series | None:
    if d is None:
        return None
    series: Series = _build("prices", series_from_dict, d, upper=MAX_PRICE)
    return series


def _carbon(d: dict[str, Any] | None) -> Carbon | None:
    if d is None:
        return None
    carbon: Carbon = _build("carbon", carbon_from_dict, d)
    return carbon


def _power_off(d: dict[str, Any] | None) -> PowerOff | None:
    if d is None:
        return None
    option: PowerOff = _build("power_off", power_off_from_dict, d)
    return option


def _topology(d: dict[str, Any] | None) -> Topology | None:
    if d is None:
        return None
    racks = [_build(f"topology.racks[{i}]", Rack, **r) for i, r in enumerate(d["racks"])]
    domains = [
        _build(f"topology.domains[{i}]", Domain, **x) for i, x in enumerate(d.get("domains", []))
    ]
    topo: Topology = _build(
        "topology", Topology, nic_gbps=d["nic_gbps"], racks=tuple(racks), domains=tuple(domains)
    )
    return topo


def topology_to_dict(t: Topology) -> dict[str, Any]:
    def rack(r: Rack) -> dict[str, Any]:
        d: dict[str, Any] = {"id": r.id, "uplink_gbps": r.uplink_gbps}
        if r.domain is not None:
            d["domain"] = r.domain
        return d

    doc: dict[str, Any] = {"nic_gbps": t.nic_gbps, "racks": [rack(r) for r in t.racks]}
    if t.domains:
        doc["domains"] = [{"id": x.id, "uplink_gbps": x.uplink_gbps} for x in t.domains]
    return doc


def instance_to_dict(inst: Instance) -> dict[str, Any]:
    """The JSON document of an instance; :func:`instance_from_dict` inverts it exactly."""

    def node(n: Node) -> dict[str, Any]:
        d: dict[str, Any] = {"id": n.id, "gpu_type": n.gpu_type, "num_gpus": n.num_gpus}
        for k in ("cpu_cores", "dram_gb", "rack"):
            if getattr(n, k) is not None:
                d[k] = getattr(n, k)
        if n.base_w > 0:  # absent means 0: files without idle power stay as they were
            d["base_w"] = n.base_w
        return d

    def gpu(g: GpuType) -> dict[str, Any]:
        d: dict[str, Any] = {"name": g.name, "memory_gb": g.memory_gb, "power_w": g.power_w}
        if g.idle_w > 0:
            d["idle_w"] = g.idle_w
        return d

    def job(j: Job) -> dict[str, Any]:
        d: dict[str, Any] = {"id": j.id}
        if j.job_type is not None:
            d["job_type"] = j.job_type
        d.update(
            release=j.release,
            due=j.due,
            weight=j.weight,
            priority=j.priority,
            memory_gb=j.memory_gb,
            max_epochs=j.max_epochs,
            distribution=j.distribution.to_dict(),
            configs=[{**config_to_dict(c), "epoch_time": t} for c, t in j.epoch_times.items()],
        )
        if j.requested is not None:
            d["requested"] = {"gpus": j.requested.gpus, "gpu_type": j.requested.gpu_type}
        if j.relaunch_hours is not None:
            d["relaunch_hours"] = j.relaunch_hours
        if j.suspend_hours is not None:
            d["suspend_hours"] = j.suspend_hours
        return d

    doc = {
        "format": INSTANCE_FORMAT,
        "name": inst.name,
        "energy_price": inst.energy_price,
        "tardiness": inst.tardiness,
        "slot": inst.slot,
        "max_share": inst.max_share,
        "gpu_types": [gpu(g) for g in inst.gpu_types],
        "nodes": [node(n) for n in inst.nodes],
        "jobs": [job(j) for j in inst.jobs],
    }
    if inst.relaunch_hours > 0:  # absent means 0: files without the feature stay as they were
        doc["relaunch_hours"] = inst.relaunch_hours
    if inst.suspend_hours is not None:
        doc["suspend_hours"] = inst.suspend_hours
    if inst.cpu_power_w > 0:
        doc["cpu_power_w"] = inst.cpu_power_w
    if inst.topology is not None:
        doc["topology"] = topology_to_dict(inst.topology)
    if inst.prices is not None:  # absent: energy_price at every hour, as files without it
        doc["prices"] = inst.prices.to_dict()
    if inst.carbon is not None:
        doc["carbon"] = inst.carbon.to_dict()
    if inst.power_off is not None:  # absent: every node always on, as files without it
        doc["power_off"] = inst.power_off.to_dict()
    return doc


def config_to_dict(c: Config) -> dict[str, Any]:
    d: dict[str, Any] = {"gpu_type": c.gpu_type, "gpus": c.gpus, "nodes": c.nodes}
    d["shared"] = c.shared
    # absent unless stated: files without CPU/DRAM stay as they were
    if c.cpus is not None:
        d["cpus"] = c.cpus
    if c.dram_gb is not None:
        d["dram_gb"] = c.dram_gb
    if c.span is not None:
        d["span"] = c.span
        d["net_gbps"] = c.net_gbps
    return d


def read_instance(source: str | Path) -> Instance:
    """Read an instance file; every problem is an :class:`InstanceError` naming the field."""
    file_path(source, "instance")  # (refused as such, not "in" a file)
    try:
        return instance_from_dict(load_json_file(source, "instance"))
    except InstanceError as exc:
        raise InstanceError(exc.path, exc.value, f"{exc.reason} [in {source}]") from None


def write_instance(inst: Instance, target: str | Path) -> None:
    """Write the instance as JSON; gzip-compressed if ``target`` ends in ``.gz``."""
    write_atomic(target, encoded(target, json.dumps(instance_to_dict(inst), indent=1) + "\n"))


# -- plans -------------------------------------------------------------------------------
def plan_to_dict(
    plan: Plan, *, instance: str | None = None, policy: str | None = None
) -> dict[str, Any]:
    doc: dict[str, Any] = {"format": PLAN_FORMAT}
    if instance is not None:
        doc["instance"] = instance
    if policy is not None:
        doc["policy"] = policy
    doc["segments"] = [
        {
            "job": s.job,
            "start": s.start,
            "end": s.end,
            "config": config_to_dict(s.config),
            "gpus": [[n, g] for n, g in s.gpus],
        }
        for s in plan
    ]
    return doc


def plan_from_dict(doc: Any) -> Plan:
    try:
        check_structure(doc, "plan")
        segs = []
        for i, s in enumerate(doc["segments"]):
            for key in ("start", "end"):
                if not 0 <= s[key] <= MAX_PLAN_HOURS:
                    raise InstanceError(
                        f"segments[{i}].{key}",
                        s[key],
                        f"must be a time in [0, {MAX_PLAN_HOURS:g}] hours",
                    )
            cfg = _config(f"segments[{i}].config", s["config"])
            for k, (_, g) in enumerate(s["gpus"]):
                # JSON Schema's integer takes 1.0, which int() then read as GPU 1 (a
                # hostile-input hunt); an instance's counts refuse it, and so does a plan
                if not whole_at_least(g, 0):
                    raise InstanceError(f"segments[{i}].gpus[{k}][1]", g, "must be a GPU index")
            segs.append(
                Segment(
                    float(s["start"]),
                    float(s["end"]),
                    s["job"],
                    cfg,
                    tuple((str(n), int(g)) for n, g in s["gpus"]),
                )
            )
    except InstanceError as exc:
        if not exc.path:  # the document as a whole: it was shown as "<instance>"
            exc = InstanceError("plan", exc.value, exc.reason)
        raise PlanError(f"bad plan: {exc}") from None
    return Plan(tuple(segs))


def read_plan(source: str | Path, *, instance: str | None = None) -> Plan:
    """A plan file; with ``instance`` (the name of the instance it is to be costed on), a
    file that names another instance is refused: its ids may fit that instance while
    its due dates, stops or speeds differ (a plan of seed 0 costed on seed 1)."""
    try:
        doc = load_json_file(source, "plan")
    except InstanceError as exc:
        raise PlanError(f"bad plan: {exc}") from None
    plan = plan_from_dict(doc)
    made = doc.get("instance")  # optional: written by gpusched solve and improve
    if instance is not None and isinstance(made, str) and made != instance:
        raise PlanError(
            f"bad plan: instance = {made!r}: the plan was made for that instance, not for "
            f"{instance!r}"
        )
    return plan


def write_plan(plan: Plan, target: str | Path, **meta: str | None) -> None:
    write_atomic(target, encoded(target, json.dumps(plan_to_dict(plan, **meta), indent=1) + "\n"))
