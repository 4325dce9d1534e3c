"""Price spikes: where running on time costs more than being late (docs/prices.md, 'Late
for a price spike').

Each job of small synthetic instances (6 jobs on 3 nodes, hourly slots, no relaunch
overhead; seeds 1 to ``--seeds``) alone on its cluster, under the bundled
``au-nsw-2023`` series from hour 840, with ``--count`` hours in a row, from an hour of
its window (release to due date) chosen at random, priced ``factor`` times the series'
mean (a spike lasts hours: the price cap's events on the bundled market do); a factor
of 1 leaves the series as it is. Each policy's worst-case rollout is costed by
the one evaluator (total = bill + tardiness, missed due dates) beside the MILP, which
chooses speed, time and lateness jointly on the slot grid, warm-started from the
cheaper of the two STS plans; a row counts only where the MILP proved its optimum.
``sts`` weighs late runs by default (``late_for_price``); ``sts (on time)`` is STS with
it off, whose timed runs end by the due date.

Run: python -m benchmarks.spikes [--seeds 6] [--factors 1 10 30 100 1000]
     [--count 4] [--time-limit 60]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from heuristic.core.registry import make_policy
from instances import Instance
from instances.energy import Series
from instances.generators import SyntheticSpec, synthetic
from instances.generators.prices import lay_prices
from milp import solve
from validation.evaluate import evaluate
from validation.simulator import rollout

POLICIES = {
    "sts": {},
    "sts (on time)": {"late_for_price": False},
    "sts-price-blind": {},
    "edf": {},
}


def cases(seeds: int) -> list[tuple[int, Instance]]:
    """Each job of the seeds' instances alone on its cluster, under the series."""
    spec = SyntheticSpec(nodes=3, jobs=6, slot=1.0)
    out = []
    for seed in range(1, seeds + 1):
        inst = lay_prices(synthetic(spec, seed=seed), "au-nsw-2023:840")
        out += [
            (seed, inst.replace(jobs=(job,), name=f"{inst.name}-{job.id}")) for job in inst.jobs
        ]
    return out


def spiked(inst: Instance, seed: int, factor: float, count: int) -> Instance:
    """``inst`` with ``count`` hours in a row from an hour of its job's window (chosen
    by ``seed`` and the job, the same for every factor) at ``factor`` times the series'
    mean."""
    if factor == 1.0:
        return inst
    series = inst.price_series
    job = inst.jobs[0]
    first, last = int(np.floor(job.release)), int(np.ceil(job.due))
    start = int(np.random.default_rng([seed, first, last]).integers(first, last))
    values = list(series.values)
    for h in range(start, start + count):
        values[int(h) % len(values)] = factor * series.mean()
    return inst.replace(prices=Series.regular(1.0, values, series.after))


def run(seeds: int, factors: list[float], count: int, time_limit: float) -> pd.DataFrame:
    rows = []
    alone = cases(seeds)
    for factor in factors:
        for seed, case in alone:
            inst = spiked(case, seed, factor, count)
            plans = {}
            for label, options in POLICIES.items():
                name = label.split(" ")[0]
                t0 = time.process_time()
                plans[label] = rollout(inst, make_policy(name, **options))
                ev = evaluate(inst, plans[label])
                rows.append(
                    {
                        "factor": factor,
                        "case": inst.name,
                        "policy": label,
                        "total": ev.total_cost,
                        "tardiness": ev.tardiness_cost,
                        "missed": ev.missed,
                        "cpu_s": time.process_time() - t0,
                    }
                )
            start = min(
                (plans["sts"], plans["sts (on time)"]),
                key=lambda p: evaluate(inst, p).total_cost,
            )
            t0 = time.process_time()
            res = solve(inst, initial_plan=start, time_limit=time_limit, threads=1)
            assert res.objective is not None
            rows.append(
                {
                    "factor": factor,
                    "case": inst.name,
                    "policy": "milp",
                    "total": res.objective,
                    "tardiness": float("nan"),
                    "missed": -1,
                    "cpu_s": time.process_time() - t0,
                    "proved": res.optimal,
                }
            )
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per factor, over the instances whose MILP proved its optimum: each policy's sum
    of totals, its mean and worst ratio to the optimum, and its missed due dates."""
    milp = df[df.policy == "milp"].set_index(["factor", "case"])
    proved = milp[milp.proved.astype(bool)]
    out = []
    for (factor, policy), part in df[df.policy != "milp"].groupby(["factor", "policy"]):
        part = part.set_index(["factor", "case"])
        keep = part.index.intersection(proved.index)
        ratio = part.loc[keep, "total"] / proved.loc[keep, "total"]
        out.append(
            {
                "factor": factor,
                "policy": policy,
                "proved": len(keep),
                "sum": part.loc[keep, "total"].sum(),
                "optimum": proved.loc[keep, "total"].sum(),
                "mean_ratio": ratio.mean(),
                "worst_ratio": ratio.max(),
                "missed": int(part.loc[keep, "missed"].sum()),
            }
        )
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--factors", type=float, nargs="+", default=[1.0, 10.0, 30.0, 100.0, 1000.0])
    ap.add_argument("--count", type=int, default=4)
    ap.add_argument("--time-limit", type=float, default=60.0)
    args = ap.parse_args()
    df = run(args.seeds, args.factors, args.count, args.time_limit)
    pd.set_option("display.width", 200)
    print(summary(df).to_string(index=False, float_format=lambda x: f"{x:.4g}"))


if __name__ == "__main__":
    main()
