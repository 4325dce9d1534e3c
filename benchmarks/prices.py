"""Energy billed at real hourly prices (docs/model.md, 'Energy prices and carbon over
time'): what the price-blind policies' plans cost when the bundled
``au-nsw-2023`` series is laid over an instance, and what the MILP, which sees the
prices per slot, makes of the same instances.

- ``reprice``: every policy's worst-case rollout on each instance, its expected energy
  bill at the flat price and under the series (the same plan: the policies are blind to
  it), the bill's ratio, and the carbon (kg) of the energy, at several offsets into the
  series (weeks apart, so over different weather). The prices are scaled to a mean of
  the instance's energy price: a ratio above 1 means the plan's hours are dearer than
  the mean hour.
- ``milp``: the MILP suite under the series, warm-started from STS, against the same
  instances at the flat price: proved or not within the time limit, seconds (wall and
  CPU), and STS's cost over the MILP's (the most a price-aware STS could gain on these
  instances). ``--methods milp,bp`` solves each instance by the compact MILP and by
  branch-and-price (:mod:`milp.decomposition`) from the same STS plan, and says where
  both proved an optimum whether the two agree.

Run: python -m benchmarks.prices reprice [--offsets 0 168 ...] [--policies sts,edf,...]
     python -m benchmarks.prices milp [--time-limit 60] [--offset 17] [--threads 1]
         [--bills flat,series] [--only NAME,...] [--methods milp,bp]
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from heuristic.core.registry import make_policy
from heuristic.sts.policy import StsPolicy
from instances import Instance
from instances.bundled import bundled
from instances.generators import SyntheticSpec, synthetic
from instances.generators.prices import lay_prices
from instances.generators.suite import milp_suite
from milp import solve
from milp.decomposition import solve as decompose
from validation.evaluate import evaluate
from validation.simulator import rollout

SERIES = "au-nsw-2023"
POLICIES = ("sts", "sts-greedy", "edf", "fifo", "lp", "static", "optimus", "gandiva")


def instances() -> list[Instance]:
    """The bundled small and medium, and two synthetic instances of 40 jobs over a day
    or two (exponential and high rates), slotted at a quarter hour."""
    spec = SyntheticSpec(nodes=10, jobs=40, slot=0.25)
    high = SyntheticSpec(nodes=10, jobs=40, slot=0.25, rate="high")
    return [
        bundled("small"),
        bundled("medium"),
        synthetic(spec, seed=1, name="synthetic-40"),
        synthetic(high, seed=1, name="synthetic-40-high"),
    ]


def reprice(offsets: list[int], policies: list[str]) -> pd.DataFrame:
    rows = []
    for inst in instances():
        for name in policies:
            plan = rollout(inst, make_policy(name, seed=0))
            flat = evaluate(inst, plan)
            for offset in offsets:
                priced = evaluate(lay_prices(inst, f"{SERIES}:{offset}"), plan)
                rows.append(
                    {
                        "instance": inst.name,
                        "policy": name,
                        "offset_h": offset,
                        "flat_bill": flat.energy_cost,
                        "series_bill": priced.energy_cost,
                        "ratio": priced.energy_cost / flat.energy_cost,
                        "carbon_kg": priced.carbon_kg,
                        "missed": flat.missed,
                    }
                )
    return pd.DataFrame(rows)


def milp(
    time_limit: float,
    offset: int,
    threads: int,
    bills: list[str],
    only: list[str] | None = None,
    methods: tuple[str, ...] = ("milp",),
) -> pd.DataFrame:
    rows = []
    for inst in milp_suite():
        if only is not None and inst.name not in only:
            continue
        cases = {"flat": inst, "series": lay_prices(inst, f"{SERIES}:{offset}")}
        for label in bills:
            case = cases[label]
            start = rollout(case, StsPolicy())
            sts = evaluate(case, start).total_cost
            for method in methods:
                t0, c0 = time.perf_counter(), time.process_time()
                if method == "bp":  # its HiGHS masters run on one thread
                    res = decompose(case, initial_plan=start, time_limit=time_limit)
                    proved, cost = res.optimal, res.objective
                else:
                    one = solve(case, initial_plan=start, time_limit=time_limit, threads=threads)
                    proved, cost = one.optimal, one.objective
                # CPU time beside the wall clock: on a shared machine the wall clock
                # counts other processes' time too (HiGHS runs in this process, its
                # threads counted)
                seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
                assert cost is not None
                rows.append(
                    {
                        "instance": inst.name,
                        "bill": label,
                        "method": method,
                        "proved": proved,
                        "seconds": seconds,
                        "cpu_s": cpu,
                        "sts_cost": sts,
                        "milp_cost": cost,
                        "sts_over_milp": sts / cost,
                    }
                )
    return pd.DataFrame(rows)


def agreement(df: pd.DataFrame) -> pd.DataFrame:
    """Per instance and bill proved by both methods, the two optima and their relative
    difference."""
    both = df[df["proved"]].pivot_table(
        index=["instance", "bill"], columns="method", values="milp_cost"
    )
    both = both.dropna()
    if not {"milp", "bp"} <= set(both.columns):
        return pd.DataFrame()
    both["relative"] = (both["bp"] - both["milp"]).abs() / both["milp"]
    return both


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("part", choices=("reprice", "milp"))
    ap.add_argument("--offsets", type=int, nargs="+", default=[0, 168, 840, 1512, 2184])
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--offset", type=int, default=17)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--bills", default="flat,series", help="milp: flat, series or both")
    ap.add_argument("--only", help="milp: these suite instances only (comma-separated names)")
    ap.add_argument(
        "--methods", default="milp", help="milp: milp (the compact MILP), bp (branch-and-price)"
    )
    args = ap.parse_args()
    if args.part == "reprice":
        df = reprice(args.offsets, args.policies.split(","))
        print(df.to_markdown(index=False, floatfmt=".4g"))
        by = df.groupby(["instance", "policy"])["ratio"].agg(["mean", "min", "max"])
        print()
        print(by.to_markdown(floatfmt=".3f"))
        return
    only = args.only.split(",") if args.only else None
    methods = tuple(args.methods.split(","))
    df = milp(args.time_limit, args.offset, args.threads, args.bills.split(","), only, methods)
    print(df.to_markdown(index=False, floatfmt=".6g"))
    print()
    for (label, method), part in df.groupby(["bill", "method"]):
        print(
            f"{label} {method}: proved {int(part['proved'].sum())} of {len(part)}, slowest "
            f"{part['seconds'].max():.1f} s ({part['cpu_s'].max():.1f} s CPU), total "
            f"{part['seconds'].sum():.0f} s ({part['cpu_s'].sum():.0f} s CPU), STS over "
            f"plan mean {part['sts_over_milp'].mean():.4f}, max {part['sts_over_milp'].max():.4f}"
        )
    both = agreement(df)
    if len(both):
        print()
        print(both.to_markdown(floatfmt=".9g"))
        worst = both["relative"].max()
        print(f"proved by both: {len(both)}, largest relative difference {worst:.2e}")


if __name__ == "__main__":
    main()
