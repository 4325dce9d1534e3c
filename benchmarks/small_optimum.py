"""The proved optimum on small contended slices of the Philly week: how far each policy
is from it where capacity binds, and how much of the bill the optimum itself moves
under a real hourly price series (docs/contended.md, docs/prices.md).

A slice is the first ``--jobs`` jobs of the contended family's window (the Philly
week from hour 24, measured relaunch overheads, a quarter-hour slot) on a small
cluster (by default one node of 4 P100s and one of 8 V100s), arrivals scaled to an
offered load. Every plan is costed by the one evaluator; the policies' plans are
their worst-case rollouts, the optimum is branch-and-price's
(:mod:`milp.decomposition`) over slot-aligned plans, warm-started from the cheapest
policy plan. The optimum knows every release in advance and the policies do not, so it
is a lower bound on what any online policy can reach, not a target it could always
meet.

- ``gaps``: per slice, each policy's total cost against the optimum (or against the
  best bound where the time limit stopped the search: the ratio is then an upper bound
  on the policy's excess), and per load the sums, the mean and worst ratios, and on how
  many slices each policy is the cheapest of the policies.
- ``prices``: the same slices under the bundled ``au-nsw-2023`` series (carbon at
  ``--carbon-price`` per tonne): the bill (energy + carbon) of STS against price-blind
  STS, and of the optimum under the series against the optimum at the flat price
  (billed by the series), with missed due dates: how much of the bill timing can move
  on these slices at all.

Run: python -m benchmarks.small_optimum gaps [--jobs 8] [--loads 0.6 0.9 1.2] [--seeds 5]
     python -m benchmarks.small_optimum prices [--offsets 0 840 1512] [--seeds 3]
"""

from __future__ import annotations

import argparse
import json
import time

import pandas as pd

from heuristic.core.registry import make_policy
from instances import Instance, Plan
from instances.generators.prices import lay_prices
from instances.generators.registry import GENERATORS
from milp.decomposition import solve as decompose
from milp.decomposition.result import DecompositionResult
from validation.evaluate import evaluate
from validation.simulator import rollout

POLICIES = ("sts", "sts-greedy", "lp", "edf", "fifo")
CLUSTER = [["p100", 4, 1], ["v100", 8, 1]]


def slice_instance(jobs: int, load: float, seed: int, cluster: list[list[object]]) -> Instance:
    """The first ``jobs`` jobs of the contended family's window on ``cluster``."""
    params = {
        "start": 24.0,
        "hours": 6.0,
        "jobs": jobs,
        "cluster": cluster,
        "load": load,
        "slot": 0.25,
    }
    return GENERATORS["philly-week"].instance(params, seed)


def optimum(inst: Instance, start: Plan, time_limit: float) -> DecompositionResult:
    return decompose(inst, initial_plan=start, time_limit=time_limit)


def gaps(args: argparse.Namespace) -> pd.DataFrame:
    rows = []
    for load in args.loads:
        for seed in range(args.seeds):
            inst = slice_instance(args.jobs, load, seed, args.cluster)
            plans = {p: rollout(inst, make_policy(p)) for p in args.policies}
            costs = {p: evaluate(inst, plan).total_cost for p, plan in plans.items()}
            best = min(costs, key=lambda p: costs[p])
            t0 = time.perf_counter()
            opt = optimum(inst, plans[best], args.time_limit)
            row = {
                "load": load,
                "seed": seed,
                "optimum": opt.objective,
                "bound": opt.bound,
                "proved": opt.termination.name == "OPTIMAL",
                "seconds": time.perf_counter() - t0,
                **costs,
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    return pd.DataFrame(rows)


def gaps_summary(df: pd.DataFrame, policies: list[str]) -> pd.DataFrame:
    """Per load and policy: total cost summed, its ratio to the bounds summed, the mean
    and worst ratio per slice, and the slices where it is the cheapest policy (ties
    within 1e-9 count for each)."""
    out = []
    for load, part in df.groupby("load"):
        cheapest = part[policies].min(axis=1)
        for p in [*policies, "optimum"]:
            ratio = part[p] / part["bound"]
            out.append(
                {
                    "load": load,
                    "policy": p,
                    "total": part[p].sum(),
                    "over bound (sums)": part[p].sum() / part["bound"].sum(),
                    "mean ratio": ratio.mean(),
                    "worst ratio": ratio.max(),
                    "cheapest": int((part[p] <= cheapest + 1e-9).sum()) if p in policies else None,
                    "slices": len(part),
                    "proved": int(part["proved"].sum()),
                }
            )
    return pd.DataFrame(out)


def prices(args: argparse.Namespace) -> pd.DataFrame:
    rows = []
    for load in args.loads:
        for seed in range(args.seeds):
            inst = slice_instance(args.jobs, load, seed, args.cluster)
            blind_start = rollout(inst, make_policy("sts"))
            blind_opt = optimum(inst, blind_start, args.time_limit)
            for offset in args.offsets:
                priced = lay_prices(inst, f"au-nsw-2023:{offset}", args.carbon_price)
                sts = rollout(priced, make_policy("sts"))
                opt = optimum(priced, sts, args.time_limit)
                row: dict[str, object] = {"load": load, "seed": seed, "offset_h": offset}
                for name, plan in (
                    ("sts", sts),
                    ("sts-price-blind", rollout(priced, make_policy("sts-price-blind"))),
                    ("optimum", opt.plan),
                    ("optimum-blind", blind_opt.plan),
                ):
                    assert plan is not None
                    ev = evaluate(priced, plan)
                    row[f"{name} bill"] = ev.energy_cost + ev.carbon_cost
                    row[f"{name} total"] = ev.total_cost
                    row[f"{name} missed"] = ev.missed
                row["proved"] = (opt.termination.name == "OPTIMAL") + (
                    blind_opt.termination.name == "OPTIMAL"
                )
                rows.append(row)
                print(json.dumps(row), flush=True)
    return pd.DataFrame(rows)


def prices_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per load: bills, totals and missed due dates summed, and the cut of the bill
    (STS against price-blind STS, the optimum against the flat-price optimum)."""
    out = []
    for load, part in df.groupby("load"):
        s = part.sum(numeric_only=True)
        out.append(
            {
                "load": load,
                "instances": len(part),
                "both optima proved": int((part["proved"] == 2).sum()),
                **{
                    f"{n} {f}": s[f"{n} {f}"]
                    for n in ("sts", "sts-price-blind", "optimum", "optimum-blind")
                    for f in ("bill", "total", "missed")
                },
                "STS's cut": 1 - s["sts bill"] / s["sts-price-blind bill"],
                "optimum's cut": 1 - s["optimum bill"] / s["optimum-blind bill"],
            }
        )
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("part", choices=("gaps", "prices"))
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--loads", type=float, nargs="+", default=[0.6, 0.9, 1.2])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--offsets", type=int, nargs="+", default=[0, 840, 1512])
    ap.add_argument("--carbon-price", type=float, default=100.0)
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--cluster", type=json.loads, default=CLUSTER, help="JSON node kinds")
    ap.add_argument("--csv")
    args = ap.parse_args()
    args.policies = args.policies.split(",")
    if args.part == "gaps":
        df = gaps(args)
        table = gaps_summary(df, args.policies)
    else:
        df = prices(args)
        table = prices_summary(df)
    if args.csv:
        df.to_csv(args.csv, index=False)
    print(table.to_markdown(index=False, floatfmt=".4g"))


if __name__ == "__main__":
    main()
