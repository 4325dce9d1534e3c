"""Quality check (issue 3): STS against EDF, RG (and FIFO, PR, LP) on synthetic thesis-style
scenarios, several seeds per arrival rate. Each policy's worst-case rollout is costed by
the evaluator (expected energy through early stopping + worst-case tardiness).

Run: python -m benchmarks.quality [--seeds 5] [--nodes 10] [--jobs 60]
"""

from __future__ import annotations

import argparse

import pandas as pd

from experiments.tables import evaluated_rollout
from instances.generators import SyntheticSpec, synthetic

POLICIES = ("sts", "lp", "edf", "rg", "pr", "fifo")


def runs(seeds: int, nodes: int, jobs: int) -> pd.DataFrame:
    rows = []
    for rate in ("high", "exponential", "low"):
        for seed in range(seeds):
            inst = synthetic(SyntheticSpec(nodes=nodes, jobs=jobs, rate=rate), seed=seed)
            for name in POLICIES:
                _, ev, seconds = evaluated_rollout(inst, name, seed=seed)
                rows.append(
                    {
                        "rate": rate,
                        "seed": seed,
                        "policy": name,
                        "total": ev.total_cost,
                        "energy": ev.energy_cost,
                        "tardiness": ev.tardiness_cost,
                        "missed": ev.missed,
                        "seconds": seconds,
                    }
                )
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--nodes", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=60)
    args = ap.parse_args()
    df = runs(args.seeds, args.nodes, args.jobs)
    mean = df.groupby(["rate", "policy"], sort=False)[
        ["total", "energy", "tardiness", "missed", "seconds"]
    ].mean()
    print(f"{args.nodes} nodes, {args.jobs} jobs, seeds 0..{args.seeds - 1}; means per rate\n")
    print(mean.to_markdown(floatfmt=".4g"))
    wide = df.pivot_table(index=["rate", "seed"], columns="policy", values=["energy", "total"])
    rows = []
    for rate, grp in wide.groupby(level="rate", sort=False):
        row = {"rate": rate}
        for other in ("edf", "rg"):
            for what in ("energy", "total"):
                cut = 1 - grp[(what, "sts")] / grp[(what, other)]
                row[f"STS {what} vs {other.upper()}"] = f"{100 * cut.mean():+.1f}%"
        rows.append(row)
    print("\nSTS reduction (mean over seeds of 1 - STS/other; positive = STS cheaper)\n")
    print(pd.DataFrame(rows).set_index("rate").to_markdown())


if __name__ == "__main__":
    main()
