"""Exact single-job profile (greedy) vs the cyipopt reference on the same problems.

Goal: the exact algorithm at least 100x faster, same objective.
Run: python -m benchmarks.profile_vs_ipopt [--problems N] [--seed S]
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.common import markdown, max_rss_mib, measure
from heuristic.sts.profile import Option, exact_profile
from heuristic.sts.profile_ipopt import ipopt_profile
from instances import Config, EpochDistribution


def problems(n: int, seed: int) -> list[tuple[list[Option], EpochDistribution, float, float]]:
    """Random v100 jobs: 1-8 GPUs with diminishing returns plus a shared slot, 10 blocks,
    budgets from very tight (tardy) to loose."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        tau1, alpha = rng.uniform(0.1, 1.5), rng.uniform(0.5, 0.95)
        opts = [
            Option(Config("v100", g), tau1 / g**alpha, 0.06 * g ** (1 - alpha) * tau1)
            for g in (1, 2, 4, 8)
        ]
        opts.append(Option(Config("v100", 1, shared=True), tau1 / 0.7, 0.03 * tau1 / 0.7))
        stops = np.sort(rng.choice(np.arange(1, 101), 10, replace=False))
        p = rng.dirichlet(np.ones(10))
        dist = EpochDistribution(tuple(float(s) for s in stops), tuple(float(x) for x in p))
        slowest = max(o.time for o in opts) * dist.max_epochs
        budget = rng.uniform(0.05, 1.1) * slowest
        out.append((opts, dist, budget, 10 * 0.2 * 2.4))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--problems", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    probs = problems(args.problems, args.seed)
    exact = measure(lambda: [exact_profile(*p).objective for p in probs], repeats=5)
    ipopt = measure(lambda: [ipopt_profile(*p)[0] for p in probs], repeats=1)
    pairs = zip(exact.result, ipopt.result, strict=True)
    rel = max(abs(a - b) / max(abs(b), 1e-12) for a, b in pairs)
    n = len(probs)
    print(f"{n} problems (5 configurations, 10 blocks each), seed {args.seed}\n")
    print(
        markdown(
            ["solver", "per solve (ms)", "peak heap (MiB)", "speed-up", "max rel. objective diff"],
            [
                [
                    "exact greedy",
                    1e3 * exact.seconds / n,
                    exact.peak_mib,
                    ipopt.seconds / exact.seconds,
                    rel,
                ],
                ["cyipopt", 1e3 * ipopt.seconds / n, ipopt.peak_mib, 1.0, 0.0],
            ],
        )
    )
    print(f"\nprocess peak RSS {max_rss_mib():.0f} MiB; goal: speed-up >= 100, diff <= 1e-6")


if __name__ == "__main__":
    main()
