"""One campaign run, executed where a worker runs it (a local process or a Dask worker).

It takes a :class:`RunSpec` and returns a :class:`RunRecord` of plain data (picklable,
JSON-able), which the campaign's process writes to the store. A run that fails becomes
a record with its error, so one bad run never stops a campaign.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import socket
import time as clock
from dataclasses import dataclass, field
from typing import Any

from experiments.campaign import RunSpec
from heuristic.core.registry import policy_names
from instances import Instance, InstanceError, PlanError
from instances.io import instance_to_dict, plan_to_dict
from validation.online import job_table, run_online
from validation.scenario import scenario_epochs
from validation.simulator import SimulationError


@dataclass(frozen=True)
class RunRecord:
    spec: RunSpec
    status: str  # "ok" or "error"
    error: str = ""
    metrics: dict[str, float] = field(default_factory=dict)
    jobs: list[dict[str, Any]] = field(default_factory=list)
    plan_json: str = ""
    instance_id: str = ""
    instance_json: str = ""
    worker: str = ""


def _instance_doc(inst: Instance) -> tuple[str, str]:
    text = json.dumps(instance_to_dict(inst), sort_keys=True)
    return hashlib.sha1(text.encode()).hexdigest()[:16], text


def instance_id(inst: Instance) -> str:
    """The id a run's instance is stored under: a digest of its JSON form."""
    return _instance_doc(inst)[0]


def _clairvoyant(inst: Instance, spec: RunSpec) -> tuple[dict[str, float], Any, Any]:
    """The MILP with the seed's stops known: a lower bound for every online policy."""
    from experiments.bound import scenario_optimum  # the MILP only where a campaign asks

    t0 = clock.perf_counter()
    epochs = scenario_epochs(inst, spec.seed)
    res = scenario_optimum(inst, epochs, time_limit=spec.time_limit, threads=1)
    ev = res.evaluation
    assert ev is not None and res.plan is not None and res.bound is not None  # warm-started
    by_job = job_table(inst, ev, epochs)
    metrics = {
        **ev.summary(),
        "jobs": float(len(inst.jobs)),
        "mean_jct_h": float(by_job["jct_h"].mean()),
        "max_jct_h": float(by_job["jct_h"].max()),
        "bound": res.bound,
        "proved": float(res.optimal),
        "wall_s": clock.perf_counter() - t0,
    }
    return metrics, by_job, res.plan


def _online(inst: Instance, spec: RunSpec) -> tuple[dict[str, float], Any, Any]:
    # the small-instance (exact) policies solve MILPs under the campaign's time limit
    exact = spec.policy not in policy_names()
    options = {"time_limit_seconds": spec.time_limit} if exact else {}
    run = run_online(inst, spec.policy, seed=spec.seed, options={**options, **dict(spec.options)})
    return run.summary(), run.by_job(), run.result.plan


_REFERENCES = {"clairvoyant": _clairvoyant}


def execute(spec: RunSpec) -> RunRecord:
    """Run ``spec``; errors in the run come back as an error record."""
    worker = f"{socket.gethostname()}:{os.getpid()}"
    try:
        inst = spec.scenario.instance(spec.seed)
        inst_id, inst_json = _instance_doc(inst)
        metrics, by_job, plan = _REFERENCES.get(spec.policy, _online)(inst, spec)
    except (InstanceError, PlanError, SimulationError, ValueError, RuntimeError) as exc:
        # ValueError covers MilpError (e.g. an instance too large for the rolling MILP)
        return RunRecord(spec, "error", error=f"{type(exc).__name__}: {exc}", worker=worker)
    jobs = [
        {"job": j, **{k: _plain(v) for k, v in row.items()}}
        for j, row in by_job.to_dict(orient="index").items()
    ]
    return RunRecord(
        spec,
        "ok",
        metrics={k: float(v) for k, v in metrics.items()},
        jobs=jobs,
        plan_json=json.dumps(plan_to_dict(plan, instance=inst.name, policy=spec.policy)),
        instance_id=inst_id,
        instance_json=inst_json,
        worker=worker,
    )


def _plain(v: Any) -> Any:
    """numpy scalars to Python; inf (a job that never ended) to None."""
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v
