"""``gpusched campaign``: run a campaign file (grid of runs) into a store."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType

from experiments.campaign import CampaignError
from experiments.cli.common import Subparsers, out_path, scheduler_address, workers


def add_parser(sub: Subparsers) -> None:
    ca = sub.add_parser("campaign", help="run a campaign file (grid of runs) into a store")
    ca.add_argument("config", nargs="?", help="TOML file, or a bundled campaign's name")
    ca.add_argument("--store", type=out_path, help="SQLite results file (default: NAME.sqlite)")
    ca.add_argument(
        "--scheduler", type=scheduler_address, help="Dask scheduler address, e.g. tcp://host:8786"
    )
    ca.add_argument(
        "--workers", type=workers, default=None, help="local processes (default: cores)"
    )
    ca.add_argument("--quiet", action="store_true", help="no progress bar")
    ca.add_argument("--list", action="store_true", help="list the bundled campaigns")
    ca.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from experiments.campaign import bundled_campaigns, load_campaign
    from experiments.runner import run_campaign

    if args.list:
        if args.config is not None:  # it was ignored: nothing said what the file holds
            raise CampaignError(
                "config", args.config, "--list takes no campaign; give one or the other"
            )
        print("bundled campaigns: " + ", ".join(bundled_campaigns()))
        return 0
    if args.config is None:
        raise CampaignError("config", None, "give a campaign file or a bundled name (--list)")
    campaign = load_campaign(args.config)
    store = f"{campaign.name}.sqlite" if args.store is None else args.store
    specs = campaign.runs()
    where = args.scheduler or f"{args.workers or os.cpu_count()} local processes"

    def started(todo: int, skipped: int) -> None:
        # said once the store has accepted the campaign: a refused resume announces nothing
        done = f" ({skipped} already there)" if skipped else ""
        print(
            f"campaign {campaign.name!r}: {todo} of {len(specs)} runs into {store}{done} on {where}"
        )

    try:
        with _stopped_by_signals():
            out = run_campaign(
                campaign,
                store,
                scheduler=args.scheduler,
                workers=args.workers,
                progress=not args.quiet,
                started=started,
            )
    except KeyboardInterrupt as exc:  # the pool is killed; the finished runs are stored
        how = f"stopped by {exc.signal.name}" if isinstance(exc, _Signalled) else "interrupted"
        left = _left(campaign.name, store, {s.key for s in specs})
        then = (
            f"all {len(specs)} runs are in the store"
            if left == 0
            else "the same command resumes it"
        )
        print(f"\ngpusched: campaign {campaign.name!r} {how}; {then}", file=sys.stderr)
        return 128 + (exc.signal if isinstance(exc, _Signalled) else signal.SIGINT)
    print(
        f"{out.ran} runs done now, {out.skipped} were already in the store, "
        f"{len(out.errors)} failed"
    )
    for line in out.errors:
        print(f"  failed: {line}", file=sys.stderr)
    return 1 if out.errors else 0


def _left(name: str, store: str, keys: set[str]) -> int | None:
    """How many of the campaign's runs the store lacks after an interrupt (None where
    it cannot be read): a signal that comes after the last run was saved should not
    ask for a resume that has nothing to do."""
    from experiments.store import Store, StoreError

    try:
        with Store(store, readonly=True) as s:
            return len(keys - s.finished(name))
    except (StoreError, OSError):
        return None


class _Signalled(KeyboardInterrupt):
    """SIGTERM or SIGHUP, handled as Ctrl-C is: the campaign stops its pool and says so
    (their default action would end this process at once, the pool with it by the
    parent-death signal, but the pool's queues then leak and Python warns)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signal = signal.Signals(signum)


def _raise(signum: int, frame: FrameType | None) -> None:
    raise _Signalled(signum)


@contextlib.contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP raise :class:`_Signalled` here (in the main thread: Python
    runs signal handlers only there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, _raise) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
