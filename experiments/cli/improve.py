"""``gpusched improve``: improve the (tuned) STS plan by MILP neighbourhoods: cost, bound, gap."""

from __future__ import annotations

import argparse

from experiments.cli.common import (
    Subparsers,
    load_instance,
    out_file,
    positive_int,
    random_seed,
    seconds,
)
from instances import read_plan


def add_parser(sub: Subparsers) -> None:
    im = sub.add_parser(
        "improve", help="improve the (tuned) STS plan by MILP neighbourhoods: cost, bound, gap"
    )
    im.add_argument("instance", help="file or bundled name (slotted)")
    im.add_argument("--time-limit", type=seconds, default=60.0, help="seconds for the whole call")
    im.add_argument("--plan", default=None, help="start from this slot-aligned plan (JSON)")
    im.add_argument(
        "--out",
        type=out_file,
        default="improved-plan.json",
        help="write the plan here (default: improved-plan.json)",
    )
    im.add_argument("--seed", type=random_seed, default=0)
    im.add_argument("--slot", type=float, default=None, help="slot length in hours")
    im.add_argument(
        "--search-evaluations",
        type=positive_int,
        default=None,
        help="rollouts of the STS search that makes the start (default max(50, 4000/jobs))",
    )
    im.add_argument(
        "--method",
        choices=("lns", "colgen"),
        default="lns",
        help="lns: MILP neighbourhoods (default); colgen: column generation and "
        "branch-and-price (plan and certified bound)",
    )
    im.add_argument("--quiet", action="store_true", help="no progress bar")
    im.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from experiments.improve import run_colgen, run_improve

    inst = load_instance(args.instance, args.slot)
    start = read_plan(args.plan, instance=inst.name) if args.plan is not None else None
    if args.method == "colgen":
        run_colgen(
            inst,
            time_limit=args.time_limit,
            out=args.out,
            search_evaluations=args.search_evaluations,
            initial_plan=start,
        )
        return 0
    run_improve(
        inst,
        time_limit=args.time_limit,
        out=args.out,
        seed=args.seed,
        search_evaluations=args.search_evaluations,
        initial_plan=start,
        progress=not args.quiet,
    )
    return 0
