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
the queue empties and a few long jobs run alone) and while jobs wait (the times at which
some released, unfinished job holds no GPU: idle GPUs there are GPUs the policy left
unused with work waiting, fragmentation's and TUNE's cores' share).

``--repack on|off|both``: the policies' round repack (docs/synergy.md, "Placement"),
both switched the same way; ``both`` gives a row for each.

Run: python -m benchmarks.synergy_scenario [--seeds 0,1,2,3,4] [--jobs 100,400,1000]
    [--rate 9] [--rates 4,6,12] [--splits 50/0/50,20/70/10] [--no-bare]
    [--repack on|off|both]
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from benchmarks.common import markdown
from instances import Instance, Plan
from instances.generators.synergy import SynergySpec, synergy
from validation.online import busy_gpus, jobs_present, run_online

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
    "GPU util, jobs waiting",
    f"goal <= {GOAL}",
]


@dataclass(frozen=True)
class Means:
    all: float  # mean JCT over every job (h)
    middle: float  # over the middle third by arrival
    util: float  # busy GPU-hours over the cluster's, over the makespan
    loaded: float  # the same while some released job waits for GPUs


def means(inst: Instance, policy: str, seed: int, repack: bool) -> Means:
    run = run_online(inst, policy, seed=seed, options={"repack": repack})
    jct = run.by_job().sort_values(["release_h"], kind="stable")["jct_h"].to_numpy()
    n = len(jct)
    return Means(
        float(jct.mean()),
        float(jct[n // 3 : 2 * n // 3].mean()),
        run.utilisation,
        busy_while_waiting(inst, run.result.plan, run.result.completions, run.gpus),
    )


def busy_while_waiting(
    inst: Instance, plan: Plan, completions: Mapping[str, float], gpus: int
) -> float:
    """Busy GPU-hours over the cluster's GPU-hours, counted only while some released,
    unfinished job holds no GPU (NaN if no job ever waits)."""
    busy = busy_gpus(plan)
    present = jobs_present(inst, completions)
    holding = _jobs_holding(plan)
    t = np.unique(np.concatenate([busy["time"], present["time"], holding["time"]]))
    width = np.diff(t)
    at = t[:-1]

    def step(df: pd.DataFrame, col: str) -> np.ndarray:
        i = np.searchsorted(df["time"].to_numpy(), at, side="right") - 1
        return np.where(i >= 0, df[col].to_numpy()[np.maximum(i, 0)], 0)

    waiting = step(present, "present") > step(holding, "jobs")
    if not waiting.any():
        return float("nan")
    return float(np.dot(width[waiting], step(busy, "busy")[waiting])) / (
        gpus * float(width[waiting].sum())
    )


def _jobs_holding(plan: Plan) -> pd.DataFrame:
    """The number of jobs holding GPUs over time, a step function (a job's back-to-back
    segments count once)."""
    events = sorted(
        [(s.start, 1) for s in plan] + [(s.end, -1) for s in plan], key=lambda e: (e[0], e[1])
    )
    times: list[float] = []
    jobs: list[int] = []
    count = 0
    for t, delta in events:
        count += delta
        if times and times[-1] == t:
            jobs[-1] = count
        else:
            times.append(t)
            jobs.append(count)
    return pd.DataFrame({"time": times, "jobs": jobs})


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
