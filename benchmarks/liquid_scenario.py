"""Liquid on its own setting: the full policy, its ablations and the
topology-blind first fit, side by side on the same instances and stops, and a sweep of
the score's unpublished λ. Goal: Liquid's mean JCT below first fit's on every seed.

Columns: mean JCT (hours) and its ratio to first fit's; the multi-GPU epoch slowdown
(the epoch time of each multi-GPU segment over the job's best epoch time at that GPU
count, weighted by the segment's length: 1 = always as well placed as possible);
energy cost and missed due dates from the one evaluator; wall seconds. Then the
estimators' accuracy on the same jobs: the random forest (trained on the default
history, seeds 1000-1009) against the noisy oracle, both scored on the true knee.

Run: python -m benchmarks.liquid_scenario [--jobs 60] [--seeds 0,1,2,3,4] [--lambdas 0.1,0.5,0.9]
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

import numpy as np

from benchmarks.common import markdown
from heuristic.seeds.liquid_estimate import default_forest, knee_gpus
from instances import Instance
from instances.generators.liquid import LiquidSpec, liquid
from validation.online import OnlineRun, run_online

GOAL_RATIO = 1.0
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "first-fit (baseline)": ("first-fit", {}),
    "liquid": ("liquid", {}),
    "liquid, random-forest estimate": ("liquid-forest", {}),
    "liquid, exact knee (no noise)": ("liquid", {"noise": 0.0}),
    "liquid, no GA": ("liquid", {"batch": False}),
    "estimate only (first fit)": ("liquid", {"placement": "first-fit"}),
    "placement only (request)": ("liquid", {"estimate": "request"}),
    "liquid, sharing at load >= 0.75": ("liquid", {"share_ratio": 0.75}),
    "static (request, consolidated)": ("static", {}),
    "sts": ("sts", {}),
}


def slowdown(inst: Instance, run: OnlineRun) -> float:
    """Length-weighted mean of each multi-GPU segment's epoch time over the job's best
    epoch time at that GPU count (1.0 if no segment uses several GPUs)."""
    num = den = 0.0
    for s in run.result.plan:
        if s.config.gpus < 2:
            continue
        job = inst.job(s.job)
        best = min(t for c, t in job.epoch_times.items() if c.gpus == s.config.gpus)
        num += s.duration * job.epoch_times[s.config] / best
        den += s.duration
    return num / den if den else 1.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jobs", type=int, default=60)
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--lambdas", default="0.1,0.5,0.9")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    variants = dict(VARIANTS)
    for lam in (float(x) for x in args.lambdas.split(",")):
        variants[f"liquid, λ = {lam:g}"] = ("liquid", {"lam": lam})
    runs: dict[str, list[tuple[float, float, float, float, float]]] = {k: [] for k in variants}
    for seed in seeds:
        inst = liquid(LiquidSpec(jobs=args.jobs), seed=seed)
        for label, (policy, options) in variants.items():
            run = run_online(inst, policy, seed=seed, options=options)
            m = run.summary()
            runs[label].append(
                (m["mean_jct_h"], slowdown(inst, run), m["energy_cost"], m["missed"], m["wall_s"])
            )
    base = [r[0] for r in runs["first-fit (baseline)"]]
    rows = []
    for label, rs in runs.items():
        ratios = [r[0] / b for r, b in zip(rs, base, strict=True)]
        rows.append(
            [
                label,
                f"{statistics.mean(r[0] for r in rs):.2f}",
                f"{statistics.mean(r[0] for r in rs) / statistics.mean(base):.2f}",
                " ".join(f"{x:.2f}" for x in ratios),
                f"{statistics.mean(r[1] for r in rs):.2f}",
                f"{statistics.mean(r[2] for r in rs):.1f}",
                f"{statistics.mean(r[3] for r in rs):.1f}",
                f"{statistics.mean(r[4] for r in rs):.2f}",
            ]
        )
    print(
        markdown(
            [
                "policy",
                "mean JCT (h)",
                "vs first fit",
                "per seed",
                "multi-GPU slowdown",
                "energy cost",
                "missed",
                "wall (s)",
            ],
            rows,
        )
    )
    insts = [liquid(LiquidSpec(jobs=args.jobs), seed=seed) for seed in seeds]
    score = default_forest().score(insts)
    oracle = [
        knee_gpus(i, j, 0.1, 0.1, seed) == knee_gpus(i, j, 0.1, 0.0, 0)
        for i, seed in zip(insts, seeds, strict=True)
        for j in i.jobs
    ]
    print(
        f"\nestimators on these {score.jobs} jobs: forest R² (log2 GPUs) {score.r2_log2:.3f}, "
        f"R² (GPUs) {score.r2:.3f}, right knee {score.exact:.1%}; "
        f"noisy oracle right knee {np.mean(oracle):.1%}"
    )
    liq = [r[0] for r in runs["liquid"]]
    met = all(a < GOAL_RATIO * b for a, b in zip(liq, base, strict=True))
    print(
        f"\ngoal: liquid's mean JCT below first fit's on every seed: {'met' if met else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
