"""``gpusched campaign``: run a campaign file (grid of runs) into a store."""

from __future__ import annotations

import argparse
import os
import sys

from experiments.campaign import CampaignError
from experiments.cli.common import Subparsers, positive_int


def add_parser(sub: Subparsers) -> None:
    ca = sub.add_parser("campaign", help="run a campaign file (grid of runs) into a store")
    ca.add_argument("config", nargs="?", help="TOML file, or a bundled campaign's name")
    ca.add_argument("--store", help="SQLite results file (default: NAME.sqlite)")
    ca.add_argument("--scheduler", help="Dask scheduler address, e.g. tcp://host:8786")
    ca.add_argument(
        "--workers", type=positive_int, default=None, help="local processes (default: cores)"
    )
    ca.add_argument("--quiet", action="store_true", help="no progress bar")
    ca.add_argument("--list", action="store_true", help="list the bundled campaigns")
    ca.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from experiments.campaign import bundled_campaigns, load_campaign
    from experiments.runner import run_campaign

    if args.list:
        print("bundled campaigns: " + ", ".join(bundled_campaigns()))
        return 0
    if args.config is None:
        raise CampaignError("config", None, "give a campaign file or a bundled name (--list)")
    campaign = load_campaign(args.config)
    store = args.store or f"{campaign.name}.sqlite"
    runs = len(campaign.runs())
    where = args.scheduler or f"{args.workers or os.cpu_count()} local processes"
    print(f"campaign {campaign.name!r}: {runs} runs into {store} on {where}")
    out = run_campaign(
        campaign, store, scheduler=args.scheduler, workers=args.workers, progress=not args.quiet
    )
    print(
        f"{out.ran} runs done now, {out.skipped} were already in the store, "
        f"{len(out.errors)} failed"
    )
    for line in out.errors:
        print(f"  failed: {line}", file=sys.stderr)
    return 1 if out.errors else 0
