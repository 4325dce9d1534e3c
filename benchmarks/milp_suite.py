"""The small MILP suite: STS gap to the exact optimum (greedy STS and STS tuned by its
local search), and time to optimality with the tuned-STS warm start divided by without
it, measured in the same run, for the MILP alone and with the search counted.

The tuned plan is also improved by the MILP neighbourhood search (``milp.improve``, 30
s at most, stopping once it reaches the MILP's bound): the goal is the improved
plan within 1% of the optimum in at most 30 s where the MILP proves optimality.

Goals: every instance proved optimal within 60 s; warm / cold time <= 0.7; STS gap
median <= 2%, max <= 10%.
The suite's seed-2 half pays measured relaunch overheads; ``--relaunch all``
gives every instance its measured overheads, ``--relaunch none`` none.
Run: python -m benchmarks.milp_suite [--time-limit 60] [--out gap-report] [--relaunch all]
[--only s2]
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from experiments.gap import gap_report, summary
from instances.generators.suite import milp_suite, suite_specs
from instances.generators.synthetic import synthetic


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--out", default="gap-report")
    ap.add_argument("--first", type=int, default=None, help="only the first N instances")
    ap.add_argument("--relaunch", choices=("suite", "all", "none"), default="suite")
    ap.add_argument("--only", default=None, help="only the instances whose name contains this text")
    args = ap.parse_args()
    if args.relaunch == "suite":
        suite = milp_suite()
    else:
        mode = "measured" if args.relaunch == "all" else "none"
        suite = [
            synthetic(replace(spec, relaunch=mode), seed, name)
            for name, spec, seed in suite_specs()
        ]
    suite = [i for i in suite if args.only is None or args.only in i.name][: args.first]
    df = gap_report(suite, args.out, time_limit=args.time_limit, echo=lambda s: None)
    df["improved_gap"] = (df["improved_cost"] - df["best_cost"]) / df["best_cost"]
    cols = ["slots", "sts_cost", "tuned_cost", "improved_cost", "milp_cost", "milp_bound"]
    cols += ["sts_gap", "tuned_gap", "improved_gap", "proved", "seconds_search"]
    cols += ["seconds_improve", "seconds_warm", "seconds_cold", "solver_ratio", "warm_ratio"]
    table = df[cols].copy()
    for gap in ("sts_gap", "tuned_gap", "improved_gap"):
        table[gap] = (100 * table[gap]).map(lambda x: f"{x:.2f}%")
    print(table.to_markdown(floatfmt=".4g"))
    print()
    print(summary(df))
    proved = df[df["proved"].astype(bool)]
    near = (proved["improved_gap"] <= 0.01) & (proved["seconds_improve"] <= 30)
    print(
        f"improved plan within 1% of the proved optimum in <= 30 s: {int(near.sum())} of "
        f"{len(proved)}; slowest to get there {proved['seconds_improve'][near].max():.1f} s"
    )
    for gap, label in (
        ("sts_gap", "STS"),
        ("tuned_gap", "tuned STS"),
        ("improved_gap", "improved"),
    ):
        g = 100 * df[gap]
        q = g.quantile([0.5, 0.9, 1.0])
        print(
            f"{label} gap: median {q[0.5]:.2f}%, p90 {q[0.9]:.2f}%, max {q[1.0]:.2f}%; "
            f"{int((g <= 2).sum())} within 2%, {int((g <= 10).sum())} within 10%"
        )


if __name__ == "__main__":
    main()
