"""STS that sees the nodes' power states against STS blind to them (docs/model.md,
'Nodes powered off when empty'), online, with idle power charged: ``planned`` is STS
(it plans the boot's wait, heuristic/sts/boots.py), ``aware`` STS seeing power states
without planning boots (``plan_boots = false``, STS before it did), ``blind`` STS with
``power_states = false``.

Idle power at the ``low`` level (GPUs idle at 15% of their busy power, 50 W of node base
power per GPU slot) and empty nodes powered off after 0.5 h, booting 0.1 h and 0.2 kWh
(``--idle low --power-off 0.5,0.1,0.2``). Families: the synthetic 300 jobs on 30 nodes,
and the contended family (the Philly week's jobs from hour 24 for 6 hours on
k80x4:2,p100x4:2,v100x8:2 at an offered load of 0.6). Seed ``s`` draws the instance and
the run's stops. Each run is costed by the one evaluator on its realised scenario;
``always-on`` is STS on the same instance with nodes never powered off. ``cpu_s``: the
run's CPU time (the engine, the policy and the evaluation of its plan).

Run: nice -n 10 python -m benchmarks.power_aware [--seeds 5] [--csv out.csv]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from typing import Any

import pandas as pd

from instances import Instance
from instances.generators.registry import GENERATORS
from validation.online import run_online

IDLE, POWER_OFF = "low", "0.5,0.1,0.2"
FAMILIES = {
    "synthetic": ("synthetic", {"nodes": 30, "jobs": 300}),
    "contended": (
        "philly-week",
        {"start": 24.0, "hours": 6.0, "cluster": "k80x4:2,p100x4:2,v100x8:2", "load": 0.6},
    ),
}
VARIANTS: dict[str, dict[str, Any]] = {
    "planned": {},
    "aware": {"plan_boots": False},
    "blind": {"power_states": False},
}
FIGURES = ("total_cost", "energy_cost", "tardiness_cost", "idle_kwh", "boots", "missed", "cpu_s")


def cases(seeds: int) -> Iterator[tuple[str, int, Instance]]:
    for family, (gen, params) in FAMILIES.items():
        for s in range(seeds):
            laid = {**params, "idle": IDLE, "power_off": POWER_OFF}
            yield family, s, GENERATORS[gen].instance(laid, s)


def measure(seeds: int) -> pd.DataFrame:
    rows = []
    for family, seed, inst in cases(seeds):
        runs = {name: (inst, options) for name, options in VARIANTS.items()} | {
            "always-on": (inst.replace(power_off=None), {})
        }
        for name, (case, options) in runs.items():
            cpu = time.process_time()
            run = run_online(case, "sts", seed=seed, options=options)
            s = {**run.summary(), "cpu_s": time.process_time() - cpu}
            rows.append({"family": family, "seed": seed, "sts": name, **{k: s[k] for k in FIGURES}})
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def table(df: pd.DataFrame) -> pd.DataFrame:
    """Per family and variant: the figures summed over the seeds."""
    order = {name: k for k, name in enumerate([*VARIANTS, "always-on"])}
    sums = df.groupby(["family", "sts"], sort=False)[list(FIGURES)].sum().reset_index()
    return sums.sort_values(["family", "sts"], key=lambda c: c.map(order) if c.name == "sts" else c)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--csv")
    args = ap.parse_args()
    df = measure(args.seeds)
    if args.csv:
        df.to_csv(args.csv, index=False)
    print(table(df).to_string(index=False, float_format=lambda x: f"{x:.2f}"))


if __name__ == "__main__":
    main()
