"""Idle power charged on always-on nodes (docs/model.md, 'Idle power'): every policy's
figures and STS's relative cut with it, and whether it explains the thesis's 38-40%
(docs/thesis.md).

Each instance is run three ways: busy GPUs only (the model's default), and with idle
power charged at two levels, each policy rolled out on each (STS prices the hours its
last job keeps an idle cluster powered, ``idle_tail``; ``sts-idle-blind`` is STS
without that rule; the other policies do not see idle power, so their plans are the
same at every level):

- ``low``: each GPU idles at 15% of its busy power (K80 22.5 W, P100 37.5 W, V100 45 W,
  about what ``nvidia-smi`` reads on an idle board) and a node draws 50 W per GPU slot
  of its own (CPUs, memory, fans, power supplies: 200 W for a 4-GPU server, 400 W for
  an 8-GPU one);
- ``high``: 30% and 100 W per slot (older boards, servers with large CPUs).

Nodes are powered from time 0 until the last job completes (in expectation over the
stops). Families: the thesis's calibrated family at the exponential rate (the
``thesis-sensitivity`` setting, 100 jobs on 10 nodes for speed), the synthetic family at
the three rates (10 nodes, 60 jobs) and the contended family (the Philly week's jobs on
32 GPUs at loads 0.6 and 1.2). Worst-case rollouts, costed by the one evaluator.

Run: python -m benchmarks.idle [--seeds 2] [--csv out.csv]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator

import pandas as pd

from heuristic.core.registry import make_policy
from instances import Instance
from instances.generators.power import IDLE_LEVELS, lay_idle
from instances.generators.registry import GENERATORS
from validation.evaluate import evaluate
from validation.simulator import rollout

POLICIES = ("sts", "sts-idle-blind", "edf", "edf-fastest", "rg", "lp", "static")
# labels for a registered policy with options
VARIANTS = {"sts-idle-blind": ("sts", {"idle_tail": False})}
LEVELS = tuple(IDLE_LEVELS)  # none, low, high: the generator option --idle's levels
CLUSTER = [["k80", 4, 2], ["p100", 4, 2], ["v100", 8, 2]]


def cases(seeds: int) -> Iterator[tuple[str, str, Instance]]:
    syn = GENERATORS["synthetic"]
    for s in range(seeds):
        params = {"nodes": 10, "jobs": 100, "rate": "exponential", "calibration": "thesis-peak"}
        yield "calibrated", f"s{s}", syn.instance(params, s)
    for rate in ("high", "exponential", "low"):
        for s in range(seeds):
            params = {"nodes": 10, "jobs": 60, "rate": rate}
            yield "synthetic", f"{rate}-s{s}", syn.instance(params, s)
    for load in (0.6, 1.2):
        for s in range(seeds):
            params = {"start": 24.0, "hours": 6.0, "cluster": CLUSTER, "load": load}
            yield "contended", f"load{load}-s{s}", GENERATORS["philly-week"].instance(params, s)


def measure(seeds: int, policies: list[str]) -> pd.DataFrame:
    rows = []
    for family, name, inst in cases(seeds):
        for policy in policies:
            registered, options = VARIANTS.get(policy, (policy, {}))
            for level in LEVELS:
                laid = lay_idle(inst, level)
                clock = time.process_time()
                plan = rollout(laid, make_policy(registered, **options))
                cpu = time.process_time() - clock
                ev = evaluate(laid, plan)
                rows.append(
                    {
                        "family": family,
                        "case": name,
                        "policy": policy,
                        "idle": level,
                        "energy": ev.energy_cost,
                        "idle_kwh": ev.idle.kwh,
                        "idle_cost": ev.idle.energy_cost,
                        "total": ev.total_cost,
                        "missed": ev.missed,
                        "cpu_s": cpu,
                    }
                )
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def table(df: pd.DataFrame) -> pd.DataFrame:
    """Per family and idle level: each policy's energy and total summed over the
    cases, the idle share of its energy, and STS's energy cut against it."""
    out = []
    for (family, level), part in df.groupby(["family", "idle"], sort=False):
        cols = ["energy", "idle_cost", "total", "missed", "cpu_s"]
        sums = part.groupby("policy", sort=False)[cols].sum()
        for policy, r in sums.iterrows():
            out.append(
                {
                    "family": family,
                    "idle": level,
                    "policy": policy,
                    "energy": r["energy"],
                    "idle share": r["idle_cost"] / r["energy"],
                    "total": r["total"],
                    "missed": r["missed"],
                    "STS energy cut": 1 - sums.loc["sts", "energy"] / r["energy"],
                    "STS total cut": 1 - sums.loc["sts", "total"] / r["total"],
                    "cpu s": r["cpu_s"],
                }
            )
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--csv")
    args = ap.parse_args()
    df = measure(args.seeds, args.policies.split(","))
    if args.csv:
        df.to_csv(args.csv, index=False)
    print(table(df).to_markdown(index=False, floatfmt=".4g"))


if __name__ == "__main__":
    main()
