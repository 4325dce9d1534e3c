"""``gpusched fit-stops``: fit early-stopping distributions from a trace's past jobs."""

from __future__ import annotations

import argparse

import pandas as pd

from experiments.cli.common import CliError, Subparsers, out_path
from instances.generators.histories import RUNNING_READINGS


def add_parser(sub: Subparsers) -> None:
    fs = sub.add_parser(
        "fit-stops", help="fit early-stopping distributions from a trace's past jobs"
    )
    fs.add_argument(
        "trace", help="'alibaba' (bundled), 'philly' (refused: no status), or a CSV file"
    )
    fs.add_argument("--running", choices=RUNNING_READINGS, default="completed")
    fs.add_argument(
        "--recent",
        type=float,
        default=None,
        metavar="HOURS",
        help="fit only the jobs created in the history's last HOURS hours (a CSV needs a "
        "'created' column, in hours); docs/model.md measures 72 and 168",
    )
    fs.add_argument("--out", type=out_path, default=None, help="write the fit as JSON")
    fs.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import json

    from instances.generators.histories import alibaba_history, csv_history
    from instances.generators.stops_fit import fit_stops
    from instances.jsonfile import write_atomic

    if args.trace == "philly":
        raise CliError(
            "philly: the bundled Philly week records no job status (the Pollux per-job CSV "
            "dropped Pass/Killed/Failed), so nothing tells a completed job from a stopped "
            "one; fit 'alibaba', or a CSV of your own history (hours,status,gpus)"
        )
    if args.trace == "alibaba":
        hist = alibaba_history(args.running, recent=args.recent)
    else:
        hist = csv_history(args.trace, recent=args.recent)
    fit = fit_stops(hist)
    print(f"early stopping fitted on {hist.source}: {len(hist.hours)} jobs")
    rows = {
        label: {
            **{f"n {s}": c.counts[s] for s in c.counts},
            "P(complete)": c.completion(),
            **{f"P(F>{f:.1f})": c.beyond(f) for f in (0.2, 0.5, 0.8)},
        }
        for label, c in fit.classes.items()
    }
    print(pd.DataFrame.from_dict(rows, orient="index").to_string(float_format=lambda x: f"{x:.3f}"))
    if args.out:
        write_atomic(args.out, json.dumps(fit.to_dict(), indent=1) + "\n")
        print(f"fit written to {args.out}")
    return 0
