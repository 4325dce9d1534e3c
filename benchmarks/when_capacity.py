"""How much of the bill STS moves as the cluster grows (docs/prices.md, 'Why the
contended family stops near 9%').

The ``prices`` campaign's contended family (the Philly week's jobs from hour 24, 6
hours, on 32 GPUs: two nodes each of 4 x K80, 4 x P100 and 8 x V100, at offered loads
0.6 and 1.2; the ``au-nsw-2023`` series at offsets 0, 840 and 1,512 hours, carbon at 100
a tonne) replayed online, the stops of each seed sampled as the campaign samples them,
on that cluster and on clusters with every node kind multiplied (``--scale 1 2``: 32
and 64 GPUs). The load is divided by the scale, so the same jobs arrive at the same
times and only the capacity changes. STS against price-blind STS: per cluster and
load, their bills (energy and priced carbon), STS's cut, total costs, missed due dates
and how many of those are missed by at most a minute, and by jobs whose whole window
(release to due date) is under a minute.

Run: python -m benchmarks.when_capacity [--scale 1 2] [--seeds 3] [--workers 2]
"""

from __future__ import annotations

import argparse
import itertools
from concurrent.futures import ProcessPoolExecutor

import pandas as pd

from benchmarks.common import markdown
from benchmarks.when import CLUSTER
from instances import Instance
from instances.generators.prices import lay_prices
from instances.generators.registry import GENERATORS
from validation.online import run_online

# the campaign's contended scenario (experiments/campaigns/prices.toml; its cluster is
# benchmarks.when's)
LOADS = (0.6, 1.2)
OFFSETS = (0, 840, 1512)
CARBON = 100.0
POLICIES = ("sts", "sts-price-blind")
MINUTE = 1.0 / 60.0
# a run: (scale, load on the 32 GPUs (the arrivals), seed, offset, policy)
Run = tuple[int, float, int, int, str]


def instance(scale: int, load: float, seed: int, offset: int) -> Instance:
    """The campaign's instance at ``load`` on 32 GPUs, on ``scale`` times its nodes (the
    same arrival times), under the series from ``offset``."""
    cluster = [[t, g, n * scale] for t, g, n in CLUSTER]
    params = {"start": 24.0, "hours": 6.0, "cluster": cluster, "load": load / scale}
    inst = GENERATORS["philly-week"].instance(params, seed)
    return lay_prices(inst, f"au-nsw-2023:{offset}", CARBON)


def one(run: Run) -> dict[str, object]:
    scale, load, seed, offset, policy = run
    inst = instance(scale, load, seed, offset)
    result = run_online(inst, policy, seed=seed)
    jobs = result.by_job()
    late = jobs[jobs["missed"]]
    window = late["due_h"] - late["release_h"]
    summary = result.summary()
    return {
        "gpus": result.gpus,
        "load on 32 GPUs": load,
        "seed": seed,
        "offset_h": offset,
        "policy": policy,
        "bill": summary["energy_cost"] + summary["carbon_cost"],
        "total": summary["total_cost"],
        "missed": len(late),
        "by a minute": int((late["late_h"] <= MINUTE).sum()),
        "window under a minute": int((window < MINUTE).sum()),
    }


def table(df: pd.DataFrame) -> pd.DataFrame:
    """Per cluster and load (and in all per cluster): the sums of each policy's runs and
    STS's cut of the bill and of the total against price-blind STS."""
    cols = ["bill", "total", "missed", "by a minute", "window under a minute"]
    sums = df.groupby(["gpus", "load on 32 GPUs", "policy"])[cols].sum()
    whole = df.groupby(["gpus", "policy"])[cols].sum()
    whole.index = pd.MultiIndex.from_tuples(
        [(g, "all", p) for g, p in whole.index], names=sums.index.names
    )
    both = pd.concat([sums, whole]).unstack("policy")
    out = pd.DataFrame(index=both.index)
    for col in cols:
        for policy in POLICIES:
            out[f"{col} ({policy})"] = both[(col, policy)]
    out["STS's cut of the bill"] = 1 - both[("bill", "sts")] / both[("bill", "sts-price-blind")]
    out["of the total"] = 1 - both[("total", "sts")] / both[("total", "sts-price-blind")]
    return out.sort_index()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--scale", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--csv", help="write every run's figures here")
    args = ap.parse_args()
    if any(s < 1 for s in args.scale):
        ap.error(f"--scale {args.scale}: every scale must be a whole number of at least 1")
    if args.seeds < 1:
        ap.error(f"--seeds {args.seeds}: must be at least 1")
    runs = list(itertools.product(args.scale, LOADS, range(args.seeds), OFFSETS, POLICIES))
    with ProcessPoolExecutor(args.workers) as ex:
        rows = list(ex.map(one, runs))
    df = pd.DataFrame(rows)
    if args.csv:
        df.to_csv(args.csv, index=False)
    out = table(df).reset_index()
    print(markdown(list(out.columns), out.to_numpy().tolist()))


if __name__ == "__main__":
    main()
