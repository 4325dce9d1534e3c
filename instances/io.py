"""JSON read and write of instances and plans, checked against the shipped JSON Schemas.

Structure (missing, unknown or mistyped fields) is checked by the schema; meaning (due
after release, probabilities summing to 1, ...) by the data classes. Both raise
:class:`InstanceError` (or :class:`PlanError`) naming the field path and the value.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from instances.distribution import EpochDistribution
from instances.errors import InstanceError, PlanError
from instances.model import Config, GpuType, Instance, Job, Node
from instances.plan import Plan, Segment

INSTANCE_FORMAT = "gpusched-instance/1"
PLAN_FORMAT = "gpusched-plan/1"


@cache
def schema(kind: str) -> dict[str, Any]:
    """The published JSON Schema, ``kind`` = ``"instance"`` or ``"plan"``."""
    text = resources.files("instances").joinpath("schema", f"{kind}.schema.json").read_text()
    result: dict[str, Any] = json.loads(text)
    return result


def _json_path(path: Any) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _check_schema(doc: Any, kind: str) -> None:
    validator = jsonschema.Draft202012Validator(schema(kind))
    error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if error is None:
        return
    path = _json_path(error.absolute_path)
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


def _load_text(source: str | Path, what: str) -> Any:
    path = Path(source)
    try:
        text = path.read_text()
    except OSError as exc:
        raise InstanceError("", str(path), f"cannot read {what} file: {exc.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InstanceError(
            "", str(path), f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None


# -- instances ---------------------------------------------------------------------------
def _build(path: str, factory: Any, **kwargs: Any) -> Any:
    try:
        return factory(**kwargs)
    except InstanceError as exc:
        raise exc.within(path) from None


def _config(path: str, d: dict[str, Any]) -> Config:
    result: Config = _build(
        path,
        Config,
        gpu_type=d["gpu_type"],
        gpus=d.get("gpus", 1),
        nodes=d.get("nodes", 1),
        shared=d.get("shared", False),
    )
    return result


def _job(i: int, d: dict[str, Any]) -> Job:
    where = f"jobs[{i}]"
    dist = _build(
        f"{where}.distribution",
        EpochDistribution,
        stops=tuple(d["distribution"]["stops"]),
        probabilities=tuple(d["distribution"]["probabilities"]),
    )
    if "max_epochs" in d and d["max_epochs"] != dist.max_epochs:
        raise InstanceError(
            f"{where}.distribution.stops",
            list(dist.stops),
            f"the last stopping point must be the job's max_epochs ({d['max_epochs']})",
        )
    times: dict[Config, float] = {}
    for c, cd in enumerate(d["configs"]):
        cpath = f"{where}.configs[{c}]"
        cfg = _config(cpath, cd)
        if cfg in times:
            raise InstanceError(cpath, cfg.label, "duplicate configuration")
        if "throughput" in cd:
            tput = cd["throughput"]
            if tput < 0:
                raise InstanceError(f"{cpath}.throughput", tput, "must not be negative")
            if tput == 0:  # measured as not runnable (as in Gavel's data): unavailable
                continue
            times[cfg] = 1.0 / tput
        else:
            t = cd["epoch_time"]
            if t <= 0:
                raise InstanceError(f"{cpath}.epoch_time", t, "must be a positive number of hours")
            times[cfg] = t
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
    )
    return job


def instance_from_dict(doc: Any) -> Instance:
    """Build and validate an :class:`Instance` from its JSON document."""
    _check_schema(doc, "instance")
    gpus = [_build(f"gpu_types[{i}]", GpuType, **g) for i, g in enumerate(doc["gpu_types"])]
    nodes = [_build(f"nodes[{i}]", Node, **n) for i, n in enumerate(doc["nodes"])]
    jobs = [_job(i, j) for i, j in enumerate(doc["jobs"])]
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
    )
    return inst


def instance_to_dict(inst: Instance) -> dict[str, Any]:
    """The JSON document of an instance; :func:`instance_from_dict` inverts it exactly."""

    def node(n: Node) -> dict[str, Any]:
        d: dict[str, Any] = {"id": n.id, "gpu_type": n.gpu_type, "num_gpus": n.num_gpus}
        for k in ("cpu_cores", "dram_gb", "rack"):
            if getattr(n, k) is not None:
                d[k] = getattr(n, k)
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
        return d

    return {
        "format": INSTANCE_FORMAT,
        "name": inst.name,
        "energy_price": inst.energy_price,
        "tardiness": inst.tardiness,
        "slot": inst.slot,
        "max_share": inst.max_share,
        "gpu_types": [
            {"name": g.name, "memory_gb": g.memory_gb, "power_w": g.power_w} for g in inst.gpu_types
        ],
        "nodes": [node(n) for n in inst.nodes],
        "jobs": [job(j) for j in inst.jobs],
    }


def config_to_dict(c: Config) -> dict[str, Any]:
    return {"gpu_type": c.gpu_type, "gpus": c.gpus, "nodes": c.nodes, "shared": c.shared}


def read_instance(source: str | Path) -> Instance:
    """Read an instance file; every problem is an :class:`InstanceError` naming the field."""
    try:
        return instance_from_dict(_load_text(source, "instance"))
    except InstanceError as exc:
        raise InstanceError(exc.path, exc.value, f"{exc.reason} [in {source}]") from None


def write_instance(inst: Instance, target: str | Path) -> None:
    Path(target).write_text(json.dumps(instance_to_dict(inst), indent=1) + "\n")


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
        _check_schema(doc, "plan")
        segs = []
        for i, s in enumerate(doc["segments"]):
            cfg = _config(f"segments[{i}].config", s["config"])
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
        raise PlanError(f"bad plan: {exc}") from None
    return Plan(tuple(segs))


def read_plan(source: str | Path) -> Plan:
    try:
        doc = _load_text(source, "plan")
    except InstanceError as exc:
        raise PlanError(f"bad plan: {exc}") from None
    return plan_from_dict(doc)


def write_plan(plan: Plan, target: str | Path, **meta: str | None) -> None:
    Path(target).write_text(json.dumps(plan_to_dict(plan, **meta), indent=1) + "\n")
