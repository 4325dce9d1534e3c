"""Whole-trace online replay: the Philly week (or a window of it) on
Philly's cluster, each policy in a fresh process, side by side: wall time, decisions,
scheduler milliseconds per decision (p50, p95, max), the process's peak RSS, costs.
Goals on this 2-core machine: STS <= 60 s with p95 <= 20 ms and <= 2 GB; EDF <= 10 s.
``sts`` re-plans only the jobs an event concerns while capacity does not bind;
``sts-full`` (every job at every event) has no goal.

Run: python -m benchmarks.trace_replay [--trace philly-week] [--start 0] [--hours H]
     [--policies sts,edf,fifo,static] [--seed 0]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import multiprocessing as mp
from typing import Any

import numpy as np

from benchmarks.common import markdown, max_rss_mib
from instances.generators.traces import TRACES, TraceSpec, trace_instance
from validation.online import run_online

# wall seconds, and for STS p95 milliseconds per decision and peak RSS MiB
GOALS = {"sts": 60.0, "edf": 10.0}
STS_P95_MS, STS_RSS_MIB = 20.0, 2048.0


def replay(spec: TraceSpec, policy: str, seed: int) -> dict[str, Any]:
    """One policy's run, in the calling (fresh) process."""
    inst = trace_instance(spec, seed)
    run = run_online(inst, policy, seed=seed)
    s = run.summary()
    ms = 1e3 * np.asarray(run.result.decision_seconds)
    return {
        "jobs": len(inst.jobs),
        "nodes": len(inst.nodes),
        "wall_s": s["wall_s"],
        "decisions": int(s["decisions"]),
        "p50": float(np.percentile(ms, 50)) if ms.size else 0.0,
        "p95": float(np.percentile(ms, 95)) if ms.size else 0.0,
        "max": float(ms.max()) if ms.size else 0.0,
        "rss_mib": max_rss_mib(),
        "peak_jobs": int(s["peak_jobs"]),
        "energy": s["energy_cost"],
        "tardiness": s["tardiness_cost"],
        "missed": int(s["missed"]),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--trace", choices=TRACES, default="philly-week")
    ap.add_argument("--start", type=float, default=0.0)
    ap.add_argument("--hours", type=float, default=None)
    ap.add_argument("--policies", default="sts,edf,fifo,static")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    spec = TraceSpec(trace=args.trace, start=args.start, hours=args.hours)
    rows = []
    ctx = mp.get_context("spawn")  # a fresh process each: its peak RSS is its own
    for name in args.policies.split(","):
        with cf.ProcessPoolExecutor(max_workers=1, mp_context=ctx) as ex:
            r = ex.submit(replay, spec, name, args.seed).result()
        goal = GOALS.get(name)
        met = goal is not None and r["wall_s"] <= goal
        if name.startswith("sts"):
            met = met and r["p95"] <= STS_P95_MS and r["rss_mib"] <= STS_RSS_MIB
        verdict = "" if goal is None else ("met" if met else "missed")
        rows.append(
            [
                name,
                r["jobs"],
                r["nodes"],
                r["wall_s"],
                r["decisions"],
                r["p50"],
                r["p95"],
                r["max"],
                r["rss_mib"],
                r["peak_jobs"],
                r["energy"],
                r["tardiness"],
                r["missed"],
                _goal(name, goal, verdict),
            ]
        )
        print(rows[-1], flush=True)
    headers = [
        "policy",
        "jobs",
        "nodes",
        "wall s",
        "decisions",
        "ms p50",
        "ms p95",
        "ms max",
        "peak RSS MiB",
        "peak jobs",
        "energy cost",
        "tardiness cost",
        "missed",
        "goal",
    ]
    print()
    print(markdown(headers, rows))


def _goal(name: str, goal: float | None, verdict: str) -> str:
    if goal is None:
        return ""
    extra = f", p95 {STS_P95_MS:g} ms, {STS_RSS_MIB:g} MiB" if name.startswith("sts") else ""
    return f"{goal:g} s{extra}: {verdict}"


if __name__ == "__main__":
    main()
