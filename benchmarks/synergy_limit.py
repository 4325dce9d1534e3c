"""Why Synergy's gain over GPU-proportional fades at 9-12 jobs/h on its CPU-heavy mix
(docs/synergy.md, "At 9 and 12 jobs/h"): the offered load, the most any CPU and DRAM
allocation can serve of the mix, and one round of a run where the cluster is full.

- **Offered load**: the generator's jobs/h times its mean GPU-hours per job at its
  reference level (the Philly pairs it draws from, uniformly), over what the cluster's
  GPUs serve at the proportional share (on Synergy's server the share is the reference
  level; on Alibaba's it is faster). Above 1, the proportional allocation falls behind
  for good.
- **Capacity** (a fluid bound): the largest ``theta`` such that the cluster's GPUs, cores
  and DRAM, shared out over the levels the generator gives each (model, GPU count),
  serve ``theta`` times the offered mix of work, over what they serve with every job
  at its node's share. It relaxes packing into servers and
  time, so no policy that keeps its GPU counts serves more of this mix; where
  ``theta < offered load`` both policies' backlogs grow, at rates ``load - theta`` and
  ``load - 1``.
- **Wait ratio**: at such loads, the fluid lower bound on the ratio of FIFO waits
  (:func:`fluid_wait_ratio`); the mean JCT adds the run's start, before the queue
  builds, and its drain.
- **Snapshot**: ``synergy`` on the benchmark's 1,000-job instance at one time: each
  server's busy GPUs, cores, DRAM, and each job's speed over its share; the jobs
  released and never started; and both policies' share-hours served per hour while
  jobs arrive.

Run: python -m benchmarks.synergy_limit [--rates 4,6,9,12] [--snapshot 9,0,60]
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
from scipy.optimize import linprog

from benchmarks.common import markdown
from benchmarks.synergy_scenario import SPLITS
from heuristic.seeds.synergy_levels import proportional_config
from instances import Instance
from instances.generators.realdata import philly_jobs
from instances.generators.synergy import (
    GPUS_PER_NODE,
    SHAPES,
    TASKS,
    SynergySpec,
    levels,
    synergy,
    zoo,
)
from validation.online import OnlineRun, run_online


def _trace(spec: SynergySpec) -> list[tuple[float, int]]:
    """The (hours, GPUs) pairs the generator draws from, uniformly."""
    return [
        (h, g)
        for _, h, g in philly_jobs()
        if spec.min_hours <= h <= spec.max_hours and g <= GPUS_PER_NODE
    ]


def offered_load(spec: SynergySpec) -> float:
    """Work arriving per hour over what the cluster serves at the proportional share."""
    work = statistics.mean(h * g for h, g in _trace(spec))
    return spec.rate * work / (spec.nodes * GPUS_PER_NODE) / _fluid(spec, share_only=True)


def capacity(spec: SynergySpec) -> float:
    """The fluid bound ``theta`` (module docstring) over the share's own rate."""
    return _fluid(spec, share_only=False) / _fluid(spec, share_only=True)


def _fluid(spec: SynergySpec, *, share_only: bool) -> float:
    """The most of the offered mix of work the cluster serves per hour, per GPU, in
    hours at the generator's reference level (``W = 1``: the proportional share of
    Synergy's server), over the generator's levels or only each node's share; an LP on
    HiGHS through SciPy."""
    cores, dram = SHAPES[spec.shape]
    total = sum(h * g for h, g in _trace(spec))
    by_gpus: dict[int, float] = {}
    for h, g in _trace(spec):
        by_gpus[g] = by_gpus.get(g, 0.0) + h * g / total
    weight = dict(zip(TASKS, np.asarray(spec.split) / sum(spec.split), strict=True))
    models = [m for m, task in sorted(zoo().items()) if weight[task] > 0]
    share = {m: weight[zoo()[m]] / sum(zoo()[n] == zoo()[m] for n in models) for m in models}
    # one column per (model, GPU count, level): GPUs running it, per cluster GPU
    cols = [
        (m, g, c, d, w)
        for m in models
        for g in by_gpus
        for (c, d), w in _levels(m, g, cores, dram, share_only).items()
    ]
    per_gpu = (cores / GPUS_PER_NODE, dram / GPUS_PER_NODE)
    rows = [
        [1.0] * len(cols) + [0.0],
        [c / per_gpu[0] for _, _, c, _, _ in cols] + [0.0],
        [d / per_gpu[1] for _, _, _, d, _ in cols] + [0.0],
    ]
    bounds = [1.0, 1.0, 1.0 + 1e-9]
    for m in models:  # each (model, GPU count) served theta times its share of the work
        for g, part in by_gpus.items():
            rows.append([-w if (mm, gg) == (m, g) else 0.0 for mm, gg, _, _, w in cols])
            rows[-1].append(share[m] * part)
            bounds.append(0.0)
    res = linprog(
        c=[0.0] * len(cols) + [-1.0],
        A_ub=np.array(rows),
        b_ub=np.array(bounds),
        bounds=[(0, None)] * (len(cols) + 1),
        method="highs",
    )
    if res.status != 0:  # pragma: no cover - the shares alone are always feasible
        raise RuntimeError(f"capacity LP: {res.message}")
    return float(-res.fun)


def _levels(
    model: str, gpus: int, cores: int, dram: float, share_only: bool
) -> dict[tuple[int, float], float]:
    """The generator's levels, or only the share among them (the fastest within a
    GPU's part of the server, the most resources on a tie: the generator's rule)."""
    out = levels(model, gpus, cores, dram)
    if not share_only:
        return out
    within = [
        p for p in out if p[0] <= cores // GPUS_PER_NODE and p[1] <= dram / GPUS_PER_NODE + 1e-9
    ]
    prop = max(within, key=lambda p: (out[p], p))
    return {prop: out[prop]}


def fluid_wait_ratio(load: float, theta: float) -> float:
    """Under overload (``load > theta >= 1``), the fluid FIFO wait of a job arriving at
    time ``t`` is the backlog over the service rate: ``(load - theta) t / theta`` at the
    bound, ``(load - 1) t`` at the share. Their ratio is the least any allocation of
    this mix can make of proportional's wait, whatever ``t``."""
    return (load - theta) / theta / (load - 1.0)


def served_per_hour(run: OnlineRun, start: float, end: float) -> float:
    """Share-hours of work served per hour within ``[start, end]``: each segment's GPUs
    times its level's speed over its node's proportional share."""
    inst = run.instance
    total = 0.0
    for s in run.result.plan:
        lo, hi = max(s.start, start), min(s.end, end)
        if hi <= lo:
            continue
        job = inst.job(s.job)
        share = proportional_config(inst, job, inst.node(s.gpus[0][0]))
        w = 1.0 if share is None else inst.epoch_time(job, share) / inst.epoch_time(job, s.config)
        total += (hi - lo) * len(s.gpus) * w
    return total / (end - start)


def snapshot(run: OnlineRun, at: float) -> list[list[str]]:
    """Per server at ``at``: busy GPUs, cores, DRAM, and each job's speed over its share."""
    inst: Instance = run.instance
    rows = []
    for node in inst.nodes:
        segs = [s for s in run.result.plan if s.start <= at < s.end and s.gpus[0][0] == node.id]
        speeds = []
        for s in segs:
            job = inst.job(s.job)
            share = proportional_config(inst, job, node)
            assert share is not None
            speeds.append(f"{inst.epoch_time(job, share) / inst.epoch_time(job, s.config):.2f}")
        rows.append(
            [
                node.id,
                f"{sum(len(s.gpus) for s in segs)}/{node.num_gpus}",
                f"{sum(s.config.cpus or 0 for s in segs)}/{node.cpu_cores}",
                f"{sum(s.config.dram_gb or 0.0 for s in segs):g}/{node.dram_gb:g}",
                " ".join(f"{len(s.gpus)}g:{w}" for s, w in zip(segs, speeds, strict=True)),
            ]
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rates", default="4,6,9,12")
    ap.add_argument("--snapshot", default="9,0,60", help="RATE,SEED,HOUR (1,000 jobs, 50/0/50)")
    args = ap.parse_args()
    rows = []
    for rate in (float(r) for r in args.rates.split(",")):
        for name, split in SPLITS.items():
            spec = SynergySpec(jobs=1000, split=split, rate=rate)
            load, theta = offered_load(spec), capacity(spec)
            wait = f"{fluid_wait_ratio(load, theta):.3f}" if load > max(theta, 1.0) else "-"
            rows.append([f"{rate:g}", name, f"{load:.3f}", f"{theta:.4f}", wait])
    header = ["jobs/h", "split", "offered load", "capacity (fluid bound)", "wait ratio >="]
    print(markdown(header, rows))
    rate, seed, at = (float(x) for x in args.snapshot.split(","))
    spec = SynergySpec(jobs=1000, split=SPLITS["50/0/50"], rate=rate)
    inst = synergy(spec, seed=int(seed))
    releases = [j.release for j in inst.jobs]
    for policy in ("synergy", "synergy-proportional"):
        run = run_online(inst, policy, seed=int(seed))
        served = served_per_hour(run, min(releases), max(releases))
        started = {s.job for s in run.result.plan if s.start <= at}
        waiting = sum(j.release <= at and j.id not in started for j in inst.jobs)
        print(
            f"\n{policy}: {served:.1f} share-hours served per hour while jobs arrive "
            f"({min(releases):.0f}-{max(releases):.0f} h); at {at:g} h, {waiting} jobs "
            "released and never started"
        )
        if policy == "synergy":
            print(
                markdown(["server", "GPUs", "cores", "DRAM GB", "jobs (GPUs:W)"], snapshot(run, at))
            )


if __name__ == "__main__":
    main()
