"""``gpusched report``: HTML report (plots, tables) of a results store."""

from __future__ import annotations

import argparse
from pathlib import Path

from experiments.campaign import CampaignError
from experiments.cli.common import Subparsers, out_file, same_file


def add_parser(sub: Subparsers) -> None:
    r = sub.add_parser("report", help="HTML report (plots, tables) of a results store")
    r.add_argument("store")
    r.add_argument(
        "--out", type=out_file, default=None, help="default: report.html (--markdown: print)"
    )
    r.add_argument("--campaign", default=None, help="one campaign (default: all in the store)")
    r.add_argument(
        "--markdown", action="store_true", help="the tables as markdown (printed, or to --out)"
    )
    r.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from experiments.report import write_report

    if not Path(args.store).exists():
        raise CampaignError("store", args.store, "no such file")
    # the markdown is printed without --out; the page goes to report.html
    out = args.out if args.markdown else args.out or "report.html"
    if out is not None and _same_file(out, args.store):  # it would replace the results
        raise CampaignError("--out", out, f"is the store read ({args.store}): name another file")
    if args.markdown:
        from experiments.report import markdown_summary
        from experiments.store import Store

        with Store(args.store, readonly=True) as store:
            names = store.campaign_names(args.campaign)
        text = "".join(markdown_summary(args.store, name) + "\n\n" for name in names)
        if out is None:
            print(text, end="")
            return 0
        from instances.jsonfile import write_atomic

        print(f"markdown written to {write_atomic(out, text)}")
        return 0
    path = write_report(args.store, out, campaign=args.campaign)
    print(f"report written to {path}")
    return 0


def _same_file(out: str, store: str) -> bool:
    """Whether ``out`` names the store or one of SQLite's files beside it."""
    return any(same_file(out, p) for p in (store, f"{store}-wal", f"{store}-shm"))
