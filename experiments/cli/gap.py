"""``gpusched gap``: STS against the warm-started exact MILP: gaps + report."""

from __future__ import annotations

import argparse
from pathlib import Path

from experiments.cli.common import (
    Subparsers,
    count_seconds,
    load_instances,
    out_folder,
    positive_int,
    seconds,
)


def add_parser(sub: Subparsers) -> None:
    gp = sub.add_parser("gap", help="STS against the warm-started exact MILP: gaps + report")
    gp.add_argument("instances", nargs="+", help="files or bundled names; 'suite' = MILP suite")
    gp.add_argument(
        "--time-limit", type=seconds, default=60.0, help="seconds per MILP solve, all included"
    )
    gp.add_argument("--threads", type=positive_int, default=None)
    gp.add_argument("--slot", type=float, default=None, help="slot length in hours")
    gp.add_argument(
        "--out", type=out_folder, default="gap-report", help="directory for CSV, PNGs, HTML"
    )
    gp.add_argument(
        "--search-evaluations",
        type=positive_int,
        default=None,
        help="rollouts the STS search may cost per instance (default 2000); its tuned "
        "plan is the MILP's warm start",
    )
    gp.add_argument(
        "--improve-time",
        type=count_seconds,
        default=30.0,
        help="seconds of MILP neighbourhood search on the tuned plan per instance (0: none)",
    )
    gp.add_argument(
        "--colgen-time",
        type=count_seconds,
        default=30.0,
        help="seconds of column generation and branch-and-price from the improved plan per "
        "instance (0: none); its bound joins the best bound",
    )
    gp.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from experiments.gap import gap_report, summary

    insts = load_instances(args.instances, args.slot)
    search = {} if args.search_evaluations is None else {"evaluations": args.search_evaluations}
    df = gap_report(
        insts,
        args.out,
        time_limit=args.time_limit,
        threads=args.threads,
        improve_time=args.improve_time,
        colgen_time=args.colgen_time,
        **search,
    )
    print(summary(df))
    print(f"report written to {Path(args.out) / 'index.html'}")
    return 0
