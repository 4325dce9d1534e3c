"""Quality check: STS against EDF, RG (and FIFO, PR, LP) on synthetic thesis-style
scenarios, several seeds per arrival rate. Each policy's worst-case rollout is costed by
the evaluator (expected energy through early stopping + worst-case tardiness). Each
instance is run with its measured relaunch overheads and without, on the same
jobs and stops, so the table shows how much of STS's saving survives the overhead.

Run: python -m benchmarks.quality [--seeds 5] [--nodes 10] [--jobs 60] [--relaunch both]
"""

from __future__ import annotations

import argparse

import pandas as pd

from benchmarks.common import RELAUNCH_CHOICES, relaunch_modes
from experiments.tables import evaluated_rollout
from instances.generators import SyntheticSpec, synthetic

POLICIES = ("sts", "lp", "edf", "rg", "pr", "fifo")


def runs(seeds: int, nodes: int, jobs: int, modes: tuple[str, ...]) -> pd.DataFrame:
    rows = []
    for rate in ("high", "exponential", "low"):
        for relaunch in modes:
            for seed in range(seeds):
                spec = SyntheticSpec(nodes=nodes, jobs=jobs, rate=rate, relaunch=relaunch)
                inst = synthetic(spec, seed=seed)
                for name in POLICIES:
                    _, ev, seconds = evaluated_rollout(inst, name, seed=seed)
                    rows.append(
                        {
                            "rate": rate,
                            "relaunch": relaunch,
                            "seed": seed,
                            "policy": name,
                            "total": ev.total_cost,
                            "energy": ev.energy_cost,
                            "tardiness": ev.tardiness_cost,
                            "missed": ev.missed,
                            "relaunches": ev.relaunches,
                            "seconds": seconds,
                        }
                    )
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--nodes", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=60)
    ap.add_argument("--relaunch", choices=RELAUNCH_CHOICES, default="both")
    args = ap.parse_args()
    df = runs(args.seeds, args.nodes, args.jobs, relaunch_modes(args.relaunch))
    mean = df.groupby(["rate", "relaunch", "policy"], sort=False)[
        ["total", "energy", "tardiness", "missed", "relaunches", "seconds"]
    ].mean()
    print(f"{args.nodes} nodes, {args.jobs} jobs, seeds 0..{args.seeds - 1}; means per rate\n")
    print(mean.to_markdown(floatfmt=".4g"))
    wide = df.pivot_table(
        index=["rate", "relaunch", "seed"], columns="policy", values=["energy", "total"]
    )
    rows = []
    for (rate, relaunch), grp in wide.groupby(level=["rate", "relaunch"], sort=False):
        row = {"rate": rate, "relaunch": relaunch}
        for other in ("edf", "rg"):
            for what in ("energy", "total"):
                cut = 1 - grp[(what, "sts")] / grp[(what, other)]
                row[f"STS {what} vs {other.upper()}"] = f"{100 * cut.mean():+.1f}%"
        rows.append(row)
    print("\nSTS reduction (mean over seeds of 1 - STS/other; positive = STS cheaper)\n")
    cuts = pd.DataFrame(rows).set_index(["rate", "relaunch"])
    print(cuts.to_markdown())
    if len(relaunch_modes(args.relaunch)) == 2:
        # the goal: STS keeps at least 80% of its energy saving against EDF
        energy = df.groupby(["rate", "relaunch", "policy"])["energy"].mean().unstack()
        saving = 1 - energy["sts"] / energy["edf"]
        kept = pd.DataFrame(
            {
                "saving with overheads": saving.xs("measured", level="relaunch"),
                "saving without": saving.xs("none", level="relaunch"),
            }
        )
        kept["kept"] = kept["saving with overheads"] / kept["saving without"]
        print("\nSTS energy saving against EDF (of the means), with and without overheads\n")
        print(kept.to_markdown(floatfmt=".3f"))


if __name__ == "__main__":
    main()
