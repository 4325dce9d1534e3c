"""Plain-text tables for the terminal, from the evaluator's figures."""

from __future__ import annotations

import pandas as pd

from validation.evaluate import Evaluation


def cost_table(ev: Evaluation) -> str:
    """Per-job costs with a total line; money in the instance's currency."""
    df = ev.by_job()[
        [
            "energy_kwh",
            "energy_cost",
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
                "tardiness_cost": ev.tardiness_cost,
                "total_cost": ev.total_cost,
                "completion_h": df["completion_h"].max(),
                "due_h": float("nan"),
                "missed": ev.missed,
            }
        ],
        index=pd.Index(["TOTAL"], name="job"),
    )
    out = pd.concat([df.astype({"missed": int}), total])
    return out.to_string(float_format=lambda x: f"{x:.4f}", na_rep="")


def summary_line(ev: Evaluation) -> str:
    return (
        f"expected energy {ev.expected_energy_kwh:.3f} kWh, energy cost "
        f"{ev.energy_cost:.4f}, tardiness cost ({ev.tardiness_mode}) "
        f"{ev.tardiness_cost:.4f}, total {ev.total_cost:.4f}, "
        f"missed due dates {ev.missed}/{len(ev.jobs)}"
    )
