"""Plain-text tables for the terminal, from the evaluator's figures."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from heuristic.core.registry import make_policy
from instances import Instance
from validation.evaluate import Evaluation, evaluate
from validation.simulator import SimulationResult, simulate


def cost_table(ev: Evaluation) -> str:
    """Per-job costs with a total line; money in the instance's currency. The carbon
    columns only where the instance counts carbon."""
    carbon = ["carbon_kg", "carbon_cost"] if ev.carbon_kg > 0 else []
    df = ev.by_job()[
        [
            "energy_kwh",
            "energy_cost",
            *carbon,
            "tardiness_cost",
            "total_cost",
            "completion_h",
            "due_h",
            "missed",
        ]
    ]
    total = pd.DataFrame(
        [
            {
                "energy_kwh": ev.expected_energy_kwh,
                "energy_cost": ev.energy_cost,
                **({"carbon_kg": ev.carbon_kg, "carbon_cost": ev.carbon_cost} if carbon else {}),
                "tardiness_cost": ev.tardiness_cost,
                "total_cost": ev.total_cost,
                "completion_h": df["completion_h"].max(),
                "due_h": float("nan"),
                "missed": ev.missed,
            }
        ],
        index=pd.Index(["TOTAL"], name="job"),
    )
    rows = [df.astype({"missed": int})]
    if ev.idle.kwh != 0:  # the cluster's idle power, charged to no job
        idle = {"energy_kwh": ev.idle.kwh, "energy_cost": ev.idle.energy_cost}
        if carbon:
            idle |= {"carbon_kg": ev.idle.carbon_kg, "carbon_cost": ev.idle.carbon_cost}
        idle["total_cost"] = ev.idle.energy_cost + ev.idle.carbon_cost
        idle["missed"] = 0
        rows.append(pd.DataFrame([idle], index=pd.Index(["IDLE"], name="job")))
    out = pd.concat([*rows, total])
    return out.to_string(float_format=lambda x: f"{x:.4f}", na_rep="")


def summary_line(ev: Evaluation) -> str:
    line = (
        f"expected energy {ev.expected_energy_kwh:.3f} kWh, energy cost "
        f"{ev.energy_cost:.4f}, tardiness cost ({ev.tardiness_mode}) "
        f"{ev.tardiness_cost:.4f}, total {ev.total_cost:.4f}, "
        f"missed due dates {ev.missed}/{len(ev.jobs)}"
    )
    if ev.carbon_kg > 0:  # only where the instance counts carbon
        line += f"; carbon {ev.carbon_kg:.3f} kg CO2-eq, cost {ev.carbon_cost:.4f}"
    if ev.idle.kwh != 0:  # only where the instance charges idle power
        line += f"; idle power {ev.idle.kwh:.3f} kWh (in the energy)"
    if ev.overhead_kwh > 0:  # only where the instance charges relaunches
        line += f"; relaunch overhead {ev.overhead_kwh:.3f} kWh over {ev.relaunches} relaunches"
    return line


def evaluated_rollout(
    instance: Instance, policy: str, *, seed: int = 0, options: Mapping[str, Any] | None = None
) -> tuple[SimulationResult, Evaluation, float]:
    """Worst-case rollout of ``policy`` (with ``options``), the evaluator's costs, and the
    run's seconds."""
    t0 = time.perf_counter()
    run = simulate(instance, make_policy(policy, seed=seed, **(options or {})), mode="rollout")
    seconds = time.perf_counter() - t0
    return run, evaluate(instance, run.plan), seconds


def compare_table(instance: Instance, policies: Iterable[str], *, seed: int = 0) -> pd.DataFrame:
    """Worst-case rollout of each policy, costed by the evaluator, one row per policy."""
    rows = []
    for name in policies:
        run, ev, seconds = evaluated_rollout(instance, name, seed=seed)
        rows.append(
            {
                "policy": name,
                "total_cost": ev.total_cost,
                "energy_cost": ev.energy_cost,
                "carbon_cost": ev.carbon_cost,
                "tardiness_cost": ev.tardiness_cost,
                "energy_kwh": ev.expected_energy_kwh,
                "carbon_kg": ev.carbon_kg,
                "missed": ev.missed,
                "decisions": run.decisions,
                "runtime_s": seconds,
            }
        )
    table = pd.DataFrame(rows).set_index("policy")
    # the carbon columns only where the instance counts carbon
    return table if table["carbon_kg"].any() else table.drop(columns=["carbon_cost", "carbon_kg"])
