"""The price of estimating early stopping from history.

The bundled Alibaba GPU trace is cut at its median creation time. The first half is
the history: ``fit-stops`` fits it (``fitted``). The second half is held out: its own
fit stands for the truth (``true``), and its jobs, in windows of ``--hours``, are the
instances. STS plans each window three times, knowing the true distribution, the
fitted one, or assuming no early stopping; each plan's expected cost is taken under the
true distribution by the one evaluator. Regret: that cost over the true-distribution
plan's, minus one. Goal: fitted within 5%, and below no-early-stopping.

Run: python -m benchmarks.stops_regret [--windows 3] [--hours 12] [--running completed]
     [--trace alibaba|philly-week] [--split time|random] [--recent H]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np

from benchmarks.common import markdown
from heuristic.core.registry import make_policy
from instances.generators.histories import RUNNING_READINGS, alibaba_history, alibaba_pods
from instances.generators.stops_fit import StopsFit, fit_stops
from instances.generators.traces import TraceSpec, alibaba_jobs, trace_instance
from validation.evaluate import evaluate
from validation.simulator import rollout

GOAL = 0.05


def halves(
    running: str, split: str = "time", recent: float | None = None
) -> tuple[StopsFit, StopsFit, float]:
    """The history's fit, the held-out half's fit, and the cut (hours). ``split="random"``
    draws the history at random (seeded) instead: a history that resembles the future,
    the control for the drift between the trace's halves in time. ``recent``: the
    history is only the jobs created in that many hours before the cut (a sliding
    window, against drift)."""
    pods = [p for p in alibaba_pods() if p["scheduled_time"] != ""]
    times = sorted(float(p["creation_time"]) for p in pods)
    cut = times[len(times) // 2]
    if split == "time":
        since = -float("inf") if recent is None else cut - 3600.0 * recent
        first = [p for p in pods if since <= float(p["creation_time"]) < cut]
        second = [p for p in pods if float(p["creation_time"]) >= cut]
    else:
        pick = np.random.default_rng(16).permutation(len(pods)) < len(pods) // 2
        first = [p for p, k in zip(pods, pick, strict=True) if k]
        second = [p for p, k in zip(pods, pick, strict=True) if not k]
    fitted = fit_stops(alibaba_history(running, first))
    true = fit_stops(alibaba_history(running, second))
    return fitted, true, cut / 3600.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--windows", type=int, default=3)
    ap.add_argument(
        "--trace",
        choices=("alibaba", "philly-week"),
        default="alibaba",
        help="whose jobs are planned: the held-out Alibaba half, or Philly week windows "
        "(the truth is still the held-out Alibaba half's fit)",
    )
    ap.add_argument("--hours", type=float, default=12.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--running", choices=RUNNING_READINGS, default="completed")
    ap.add_argument(
        "--split",
        choices=("time", "random"),
        default="time",
        help="history = the trace's first half in time, or a random half (the control)",
    )
    ap.add_argument(
        "--recent",
        type=float,
        default=None,
        help="fit only the history's last H hours before the cut (--split time)",
    )
    ap.add_argument(
        "--tightness", default="1.5,3.0", help="due-date factors, low,high (default 1.5,3.0)"
    )
    args = ap.parse_args()
    low, high = (float(x) for x in args.tightness.split(","))
    tight = (low, high)
    fitted, true, cut = halves(args.running, args.split, args.recent)
    for label, fit in (("history (fitted)", fitted), ("held out (true)", true)):
        cells = ", ".join(
            f"{c}: P(complete) {f.completion():.3f}, P(F>0.5) {f.beyond(0.5):.3f}"
            for c, f in fit.classes.items()
        )
        print(f"{label}: {cells}")
    held = (
        [j.submit for j in alibaba_jobs() if j.submit >= cut] if args.trace == "alibaba" else [0.0]
    )
    rows = []
    for w in range(args.windows):
        start = held[0] + w * args.hours
        spec = TraceSpec(trace=args.trace, start=start, hours=args.hours, tightness=tight)
        insts = {
            "true": trace_instance(spec, args.seed, fit=true),
            "fitted": trace_instance(spec, args.seed, fit=fitted),
            "none": trace_instance(
                replace(spec, early_stopping="none"),
                args.seed,
            ),
        }
        truth = insts["true"]
        costs, secs = {}, {}
        for name, inst in insts.items():
            t0 = time.perf_counter()
            plan = rollout(inst, make_policy("sts", seed=args.seed))
            secs[name] = time.perf_counter() - t0
            costs[name] = evaluate(truth, plan).total_cost
        base = costs["true"]
        rows.append(
            [
                f"{start:.0f}-{start + args.hours:.0f} h",
                len(truth.jobs),
                base,
                costs["fitted"],
                costs["none"],
                f"{100 * (costs['fitted'] / base - 1):+.2f}%",
                f"{100 * (costs['none'] / base - 1):+.2f}%",
                sum(secs.values()),
            ]
        )
        print(rows[-1], flush=True)
    print()
    print(
        markdown(
            [
                "window",
                "jobs",
                "true: expected cost",
                "fitted",
                "no early stopping",
                "fitted regret",
                "none regret",
                "STS s (3 plans)",
            ],
            rows,
        )
    )
    print(f"\ngoal: fitted regret <= {100 * GOAL:.0f}% and below the no-early-stopping regret")


if __name__ == "__main__":
    main()
