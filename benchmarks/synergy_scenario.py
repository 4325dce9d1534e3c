"""Synergy against its GPU-proportional baseline (the goal: mean JCT <= 0.8 x
proportional on >= 5 seeds), as the run lengthens and as the load grows: at Synergy's
example rate (9 jobs/h) with 100, 400 and 1,000 jobs, then 1,000 jobs at the other
rates; both of Synergy's splits, and once without relaunch overheads.

Two means per run: over every job (what the campaigns report) and over the middle third
of the jobs by arrival, the steady-state window Synergy's own simulator measures (its
``runner.py`` times the jobs with ids 4,000-5,000 of a continuous stream). The ratio is
``synergy`` over ``synergy-proportional`` on the same instance and stops, from the one
evaluator's per-job table; the mean ratio is the ratio of the seeds' mean JCTs.

Two GPU utilisations per policy: over the makespan (busy GPU-hours over the cluster's,
first release to last completion: it includes the drain after the last arrival, when
the queue empties and a few long jobs run alone) and while jobs arrive (first to last
release: the loaded part of the run).

``--repack on|off|both``: the policies' round repack (docs/synergy.md, "Placement"),
both switched the same way; ``both`` gives a row for each.

Run: python -m benchmarks.synergy_scenario [--seeds 0,1,2,3,4] [--jobs 100,400,1000]
    [--rate 9] [--rates 4,6,12] [--splits 50/0/50,20/70/10] [--no-bare]
    [--repack on|off|both]
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import dataclass

import numpy as np

from benchmarks.common import markdown
from instances import Instance, Plan
from instances.generators.synergy import SynergySpec, synergy
from validation.online import busy_gpus, run_online

GOAL = 0.8
SPLITS = {"50/0/50": (50.0, 0.0, 50.0), "20/70/10": (20.0, 70.0, 10.0)}
HEADER = [
    "jobs/h",
    "jobs",
    "split",
    "overheads",
    "repack",
    "synergy JCT (h)",
    "proportional (h)",
    "ratio, all",
    "per seed",
    "ratio, middle third",
    "per seed",
    "GPU util, makespan",
    "GPU util, arrivals",
    f"goal <= {GOAL}",
]


@dataclass(frozen=True)
class Means:
    all: float  # mean JCT over every job (h)
    middle: float  # over the middle third by arrival
    util: float  # busy GPU-hours over the cluster's, over the makespan
    loaded: float  # the same while jobs arrive


def means(inst: Instance, policy: str, seed: int, repack: bool) -> Means:
    run = run_online(inst, policy, seed=seed, options={"repack": repack})
    jct = run.by_job().sort_values(["release_h"], kind="stable")["jct_h"].to_numpy()
    n = len(jct)
    releases = [j.release for j in inst.jobs]
    return Means(
        float(jct.mean()),
        float(jct[n // 3 : 2 * n // 3].mean()),
        run.utilisation,
        busy_share(run.result.plan, run.gpus, min(releases), max(releases)),
    )


def busy_share(plan: Plan, gpus: int, start: float, end: float) -> float:
    """Busy GPU-hours over the cluster's GPU-hours within ``[start, end]``."""
    steps = busy_gpus(plan)
    if steps.empty or end <= start:
        return 0.0
    t = steps["time"].to_numpy()
    lo, hi = np.clip(t[:-1], start, end), np.clip(t[1:], start, end)
    return float(np.dot(hi - lo, steps["busy"].to_numpy()[:-1])) / (gpus * (end - start))


def row(case: tuple[int, str, str, float, bool], seeds: list[int]) -> list[object]:
    """One table row: ``synergy`` and ``synergy-proportional`` on the same seeds."""
    jobs, split, relaunch, rate, repack = case
    spec = SynergySpec(jobs=jobs, split=SPLITS[split], rate=rate, relaunch=relaunch)
    tune, prop = [], []
    for seed in seeds:
        inst = synergy(spec, seed=seed)
        tune.append(means(inst, "synergy", seed, repack))
        prop.append(means(inst, "synergy-proportional", seed, repack))

    def avg(ms: list[Means], key: str) -> float:
        return statistics.mean(getattr(m, key) for m in ms)

    ratio = {k: avg(tune, k) / avg(prop, k) for k in ("all", "middle")}
    return [
        f"{rate:g}",
        jobs,
        split,
        relaunch,
        "on" if repack else "off",
        f"{avg(tune, 'all'):.2f}",
        f"{avg(prop, 'all'):.2f}",
        f"{ratio['all']:.2f}",
        " ".join(f"{t.all / p.all:.2f}" for t, p in zip(tune, prop, strict=True)),
        f"{ratio['middle']:.2f}",
        " ".join(f"{t.middle / p.middle:.2f}" for t, p in zip(tune, prop, strict=True)),
        f"{avg(tune, 'util'):.3f}/{avg(prop, 'util'):.3f}",
        f"{avg(tune, 'loaded'):.3f}/{avg(prop, 'loaded'):.3f}",
        "met" if ratio["all"] <= GOAL else "not met",
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--jobs", default="100,400,1000")
    ap.add_argument("--rate", type=float, default=9.0, help="jobs/h of the run-length rows")
    ap.add_argument("--rates", default="4,6,12", help="jobs/h of the longest runs' rows")
    ap.add_argument("--splits", default=",".join(SPLITS), help="of " + ", ".join(SPLITS))
    ap.add_argument("--no-bare", action="store_true", help="no row without overheads")
    ap.add_argument("--repack", choices=("on", "off", "both"), default="on")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    lengths = [int(j) for j in args.jobs.split(",")]
    splits = args.splits.split(",")
    unknown = sorted(set(splits) - set(SPLITS))
    if unknown:
        ap.error(f"--splits: unknown {unknown}; use {sorted(SPLITS)}")
    cases = [(j, split, "measured", args.rate) for split in splits for j in lengths]
    if not args.no_bare and "50/0/50" in splits:
        cases.append((max(lengths), "50/0/50", "none", args.rate))
    extra = [float(r) for r in args.rates.split(",")] if args.rates else []
    cases += [(max(lengths), split, "measured", r) for r in extra for split in splits]
    modes = {"on": [True], "off": [False], "both": [False, True]}[args.repack]
    rows = [row((*case, repack), seeds) for case in cases for repack in modes]
    print(markdown(HEADER, rows))


if __name__ == "__main__":
    main()
