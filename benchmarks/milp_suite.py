"""The small MILP suite: STS gap to the exact optimum (greedy STS and STS tuned by its
local search), and time to optimality with the tuned-STS warm start divided by without
it, measured in the same run, for the MILP alone and with the search counted.

The tuned plan is also improved by the MILP neighbourhood search (``milp.improve``, 30
s at most, stopping once it reaches the MILP's bound): the goal is the improved
plan within 1% of the optimum in at most 30 s where the MILP proves optimality.

Beside the compact MILP, column generation and branch-and-price (``milp.decomposition``)
from the improved plan, with ``--colgen-time`` (default 60 s): its plan, its bound and
whether it proved the plan optimal (``B&P proved``: within 1e-6 of its own bound).

Goals: every instance proved optimal within 60 s; warm / cold time <= 0.7; STS gap
median <= 2%, max <= 10%.
The suite's seed-2 half pays measured relaunch overheads; ``--relaunch all``
gives every instance its measured overheads, ``--relaunch none`` none.
Run: python -m benchmarks.milp_suite [--time-limit 60] [--out gap-report] [--relaunch all]
[--only s2] [--colgen-time 60]
"""

from __future__ import annotations

import argparse

from benchmarks.common import SUITE_RELAUNCH, suite_instances
from experiments.gap import gap_report, summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--out", default="gap-report")
    ap.add_argument("--first", type=int, default=None, help="only the first N instances")
    ap.add_argument("--relaunch", choices=SUITE_RELAUNCH, default="suite")
    ap.add_argument("--only", default=None, help="only the instances whose name contains this text")
    ap.add_argument("--colgen-time", type=float, default=60.0, help="0: no branch-and-price")
    args = ap.parse_args()
    suite = suite_instances(args.relaunch)
    suite = [i for i in suite if args.only is None or args.only in i.name][: args.first]
    df = gap_report(
        suite,
        args.out,
        time_limit=args.time_limit,
        colgen_time=args.colgen_time,
        echo=lambda s: None,
    )
    df["improved_gap"] = (df["improved_cost"] - df["best_cost"]) / df["best_cost"]
    # the plan meets branch-and-price's own bound (its gap is relative, as its status's)
    df["bp_proved"] = df["colgen_cost"] - df["colgen_bound"] <= 1e-6 * df["colgen_cost"]
    cols = ["slots", "sts_cost", "tuned_cost", "improved_cost", "milp_cost", "milp_bound"]
    cols += ["colgen_cost", "colgen_bound", "bp_proved", "seconds_colgen"]
    cols += ["sts_gap", "tuned_gap", "improved_gap", "proved", "seconds_search"]
    cols += ["seconds_improve", "seconds_warm", "seconds_cold", "solver_ratio", "warm_ratio"]
    table = df[cols].copy()
    for gap in ("sts_gap", "tuned_gap", "improved_gap"):
        table[gap] = (100 * table[gap]).map(lambda x: f"{x:.2f}%")
    print(table.to_markdown(floatfmt=".4g"))
    print()
    print(summary(df))
    if args.colgen_time > 0:
        bp = df["bp_proved"]
        print(
            f"branch-and-price proved {int(bp.sum())} of {len(df)} in at most "
            f"{args.colgen_time:g} s (slowest proof {df['seconds_colgen'][bp].max():.1f} s); "
            f"the compact MILP {int(df['proved'].sum())}"
        )
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
