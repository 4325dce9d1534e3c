"""Calibrate the synthetic arrival rates to the thesis: for 1,000 jobs on 100
nodes the largest number of jobs present at once is "about 400 at the high rate, 200 at
the exponential rate and 100 at the low rate" (seed text, section 8).

For each rate, the offered load is found by bisection (on its logarithm) such that EDF's
peak number of jobs present, with sampled stops and averaged over the seeds, meets the
target. With one seed the jobs and the exponential gaps are the same at every load, and
the gaps scale as 1/load, so the peak only grows with the load and the bisection is
sound. The loads found go into ``THESIS_PEAK_LOAD``
(instances/generators/synthetic.py); the table shows the peak each seed reaches there,
beside the default loads' peaks.

Run: python -m benchmarks.calibrate_load [--seeds 5] [--nodes 100] [--jobs 1000]
    [--tolerance 0.01]
"""

from __future__ import annotations

import argparse
import math
from dataclasses import replace

import numpy as np

from benchmarks.common import markdown
from instances.generators.synthetic import (
    ARRIVAL_LOAD,
    THESIS_PEAK_LOAD,
    SyntheticSpec,
    synthetic,
)
from validation.online import run_online

TARGET_PEAK = {"high": 400, "exponential": 200, "low": 100}  # 1,000 jobs, 100 nodes
POLICY = "edf"


def peaks(spec: SyntheticSpec, seeds: int) -> tuple[list[int], float]:
    """EDF's peak jobs present per seed, and the mean GPU utilisation."""
    runs = [run_online(synthetic(spec, s), POLICY, seed=s) for s in range(seeds)]
    return [r.peak_jobs for r in runs], float(np.mean([r.utilisation for r in runs]))


def calibrate(spec: SyntheticSpec, target: float, seeds: int, tolerance: float) -> float:
    """The load at which the mean peak first reaches ``target`` (relative ``tolerance``)."""
    lo, hi = math.log(0.01), math.log(5.0)
    while hi - lo > math.log1p(tolerance):
        mid = (lo + hi) / 2
        found, _ = peaks(replace(spec, load=math.exp(mid)), seeds)
        lo, hi = (mid, hi) if np.mean(found) < target else (lo, mid)
    return math.exp(hi)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--nodes", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--tolerance", type=float, default=0.01)
    args = ap.parse_args()
    rows = []
    for rate, target in TARGET_PEAK.items():
        spec = SyntheticSpec(nodes=args.nodes, jobs=args.jobs, rate=rate)
        load = calibrate(spec, target, args.seeds, args.tolerance)
        found, util = peaks(replace(spec, load=load), args.seeds)
        default, default_util = peaks(spec, args.seeds)
        rows.append(
            [
                *(rate, target, f"{load:.3g}", THESIS_PEAK_LOAD[rate], f"{np.mean(found):.0f}"),
                *(" ".join(map(str, found)), f"{util:.3f}", ARRIVAL_LOAD[rate]),
                *(f"{np.mean(default):.0f}", f"{default_util:.3f}"),
            ]
        )
        print(f"{rate}: load {load:.4f}", flush=True)
    print()
    print(
        markdown(
            [
                *("rate", "thesis peak", "load found", "load in use", "mean peak"),
                *("peak per seed", "utilisation", "default load", "default peak"),
                "default utilisation",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main()
