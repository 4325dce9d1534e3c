"""Synergy against its GPU-proportional baseline (the goal: mean JCT <= 0.8 x
proportional on >= 5 seeds), as the run lengthens and as the load grows: at Synergy's
example rate (9 jobs/h) with 100, 400 and 1,000 jobs, then 1,000 jobs at the other
rates; both of Synergy's splits, and once without relaunch overheads.

Two means per run: over every job (what the campaigns report) and over the middle third
of the jobs by arrival, the steady-state window Synergy's own simulator measures (its
``runner.py`` times the jobs with ids 4,000-5,000 of a continuous stream). The ratio is
``synergy`` over ``synergy-proportional`` on the same instance and stops, from the one
evaluator's per-job table; the mean ratio is the ratio of the seeds' mean JCTs.

Run: python -m benchmarks.synergy_scenario [--seeds 0,1,2,3,4] [--jobs 100,400,1000]
    [--rate 9] [--rates 4,6,12]
"""

from __future__ import annotations

import argparse
import statistics

from benchmarks.common import markdown
from instances.generators.synergy import SynergySpec, synergy
from validation.online import run_online

GOAL = 0.8
SPLITS = {"50/0/50": (50.0, 0.0, 50.0), "20/70/10": (20.0, 70.0, 10.0)}


def means(inst, policy: str, seed: int) -> tuple[float, float, float]:
    """Mean JCT over all jobs and over the middle third by arrival; GPU utilisation."""
    run = run_online(inst, policy, seed=seed)
    jct = run.by_job().sort_values(["release_h"], kind="stable")["jct_h"].to_numpy()
    n = len(jct)
    return float(jct.mean()), float(jct[n // 3 : 2 * n // 3].mean()), run.utilisation


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--jobs", default="100,400,1000")
    ap.add_argument("--rate", type=float, default=9.0, help="jobs/h of the run-length rows")
    ap.add_argument("--rates", default="4,6,12", help="jobs/h of the longest runs' rows")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    lengths = [int(j) for j in args.jobs.split(",")]
    cases = [(j, split, "measured", args.rate) for split in SPLITS for j in lengths]
    cases.append((max(lengths), "50/0/50", "none", args.rate))
    extra = [float(r) for r in args.rates.split(",")] if args.rates else []
    cases += [(max(lengths), split, "measured", r) for r in extra for split in SPLITS]
    rows = []
    for jobs, split, relaunch, rate in cases:
        spec = SynergySpec(jobs=jobs, split=SPLITS[split], rate=rate, relaunch=relaunch)
        tune, prop = [], []
        for seed in seeds:
            inst = synergy(spec, seed=seed)
            tune.append(means(inst, "synergy", seed))
            prop.append(means(inst, "synergy-proportional", seed))
        ratio = [
            statistics.mean(t[k] for t in tune) / statistics.mean(p[k] for p in prop)
            for k in (0, 1)
        ]
        rows.append(
            [
                f"{rate:g}",
                jobs,
                split,
                relaunch,
                f"{statistics.mean(t[0] for t in tune):.2f}",
                f"{statistics.mean(p[0] for p in prop):.2f}",
                f"{ratio[0]:.2f}",
                " ".join(f"{t[0] / p[0]:.2f}" for t, p in zip(tune, prop, strict=True)),
                f"{ratio[1]:.2f}",
                " ".join(f"{t[1] / p[1]:.2f}" for t, p in zip(tune, prop, strict=True)),
                f"{statistics.mean(t[2] for t in tune):.2f}"
                f"/{statistics.mean(p[2] for p in prop):.2f}",
                "met" if ratio[0] <= GOAL else "not met",
            ]
        )
    print(
        markdown(
            [
                "jobs/h",
                "jobs",
                "split",
                "overheads",
                "synergy JCT (h)",
                "proportional (h)",
                "ratio, all",
                "per seed",
                "ratio, middle third",
                "per seed",
                "GPU util",
                f"goal <= {GOAL}",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main()
