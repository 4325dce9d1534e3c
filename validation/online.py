"""Online runs (docs/model.md, 'The event engine'): a policy in the event engine's sampled
mode, with the metrics a cluster operator reads.

Costs come from the one evaluator, applied to the segments really run on the scenario's
instance (each job's epochs known): realised energy and tardiness. Utilisation and
completion times come from the same segments; scheduler time from the engine's clock
around each decision.
"""

from __future__ import annotations

import math
import time as clock
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from heuristic.core.registry import make_policy
from instances import Instance, Plan
from instances.sums import dot
from validation.check import require_plan
from validation.evaluate import Evaluation, evaluate
from validation.scenario import scenario_instance
from validation.simulator import SimulationResult, simulate


def busy_gpus(plan: Plan) -> pd.DataFrame:
    """The number of busy GPUs over time, a step function: ``busy`` holds from ``time``
    to the next row. A shared GPU counts once, however many tenants it has."""
    require_plan(plan)
    events: list[tuple[float, int, tuple[str, int]]] = []
    for s in plan:
        for ref in s.gpus:
            events.append((s.start, 1, ref))
            events.append((s.end, -1, ref))
    events.sort(key=lambda e: (e[0], e[1]))  # ends before starts at the same time
    tenants: Counter[tuple[str, int]] = Counter()
    times: list[float] = []
    busy: list[int] = []
    for t, delta, ref in events:
        tenants[ref] += delta
        if tenants[ref] == 0:
            del tenants[ref]
        if times and times[-1] == t:
            busy[-1] = len(tenants)
        else:
            times.append(t)
            busy.append(len(tenants))
    return pd.DataFrame({"time": times, "busy": busy})


def jobs_present(instance: Instance, completions: Mapping[str, float]) -> pd.DataFrame:
    """The number of jobs released and not yet complete over time, a step function:
    ``present`` holds from ``time`` to the next row. A job that completes at the moment
    another is released has left first."""
    events = [(j.release, 1) for j in instance.jobs]
    events += [(completions[j.id], -1) for j in instance.jobs]
    events.sort()  # -1 sorts before +1 at the same time
    times: list[float] = []
    present: list[int] = []
    count = 0
    for t, delta in events:
        count += delta
        if times and times[-1] == t:
            present[-1] = count
        else:
            times.append(t)
            present.append(count)
    return pd.DataFrame({"time": times, "present": present})


def job_table(
    instance: Instance, evaluation: Evaluation, epochs: Mapping[str, float]
) -> pd.DataFrame:
    """Per job of a run with known stops (``epochs``): realised costs from the
    evaluator, epochs run, release, completion and job completion time (JCT)."""
    df = evaluation.by_job()
    jobs = {j.id: j for j in instance.jobs}
    df.insert(0, "release_h", [jobs[j].release for j in df.index])
    df.insert(1, "epochs_run", [epochs[j] for j in df.index])
    df.insert(2, "max_epochs", [jobs[j].max_epochs for j in df.index])
    df["jct_h"] = df["completion_h"] - df["release_h"]
    return df.drop(columns=["worst_energy_kwh"])


@dataclass(frozen=True)
class OnlineRun:
    """One sampled run of one policy: what happened and what it cost."""

    instance: Instance
    result: SimulationResult
    evaluation: Evaluation  # realised costs (the evaluator on the scenario's instance)
    wall_seconds: float

    @property
    def gpus(self) -> int:
        return sum(n.num_gpus for n in self.instance.nodes)

    @property
    def makespan(self) -> float:
        """From the first release to the last completion (hours)."""
        first = min((j.release for j in self.instance.jobs), default=0.0)
        return max(self.result.completions.values(), default=first) - first

    @property
    def utilisation(self) -> float:
        """Busy GPU-hours over the cluster's GPU-hours during the makespan."""
        steps = busy_gpus(self.result.plan)
        if steps.empty or self.makespan <= 0:
            return 0.0
        widths = np.diff(steps["time"].to_numpy())
        busy_hours = dot(widths, steps["busy"].to_numpy()[:-1])
        return busy_hours / (self.gpus * self.makespan)

    @property
    def peak_jobs(self) -> int:
        """The largest number of jobs present (released, not complete) at once: the
        thesis's measure of a scenario's load (seed text, section 8)."""
        steps = jobs_present(self.instance, self.result.completions)
        return int(steps["present"].max()) if not steps.empty else 0

    def by_job(self) -> pd.DataFrame:
        """One row per job: realised costs, epochs run, release, completion, JCT."""
        return job_table(self.instance, self.evaluation, self.result.epochs)

    def summary(self) -> dict[str, float]:
        """The run's metrics, flat (one row of a campaign's results)."""
        ev = self.evaluation
        seconds = np.asarray(self.result.decision_seconds, dtype=float)
        jct = self.by_job()["jct_h"].to_numpy() if self.instance.jobs else np.zeros(1)
        return {
            "energy_cost": ev.energy_cost,
            "tardiness_cost": ev.tardiness_cost,
            "total_cost": ev.total_cost,
            "energy_kwh": ev.expected_energy_kwh,
            "carbon_cost": ev.carbon_cost,
            "carbon_kg": ev.carbon_kg,
            **ev.idle.figures(),
            "missed": float(ev.missed),
            "relaunches": float(ev.relaunches),
            "overhead_kwh": ev.overhead_kwh,
            "jobs": float(len(self.instance.jobs)),
            "utilisation": self.utilisation,
            "peak_jobs": float(self.peak_jobs),
            "makespan_h": self.makespan,
            "mean_jct_h": float(jct.mean()),
            "max_jct_h": float(jct.max()),
            "decisions": float(seconds.size),
            "scheduler_s": float(seconds.sum()),
            "decision_mean_ms": 1e3 * float(seconds.mean()) if seconds.size else 0.0,
            "decision_p95_ms": 1e3 * float(np.quantile(seconds, 0.95)) if seconds.size else 0.0,
            "decision_max_ms": 1e3 * float(seconds.max()) if seconds.size else 0.0,
            "wall_s": self.wall_seconds,
        }


def run_online(
    instance: Instance,
    policy: str,
    *,
    seed: int = 0,
    slot: float | None = None,
    options: Mapping[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
) -> OnlineRun:
    """Run ``policy`` (a registered name, built with ``options``) on ``instance`` with
    the stops of ``seed``."""
    if not isinstance(policy, str):
        raise TypeError(f"policy = {policy!r:.60}: must be a registered policy's name")
    if options is not None and not isinstance(options, Mapping):
        raise TypeError(f"options = {options!r:.60}: must map option names to values")
    if options is not None and "seed" in options:  # make_policy's duplicate keyword
        raise TypeError("options = {'seed': ...}: the seed is run_online's own argument")
    if slot is not None:
        instance = instance.replace(slot=slot)
    t0 = clock.perf_counter()
    result = simulate(
        instance,
        make_policy(policy, seed=seed, **(options or {})),
        mode="sampled",
        seed=seed,
        progress=progress,
    )
    wall = clock.perf_counter() - t0
    if any(math.isinf(c) for c in result.completions.values()):  # pragma: no cover
        raise RuntimeError(f"policy {policy!r} left jobs unfinished")  # the engine forbids it
    ev = evaluate(scenario_instance(instance, result.epochs), result.plan)
    return OnlineRun(instance, result, ev, wall)
