"""The ``gpusched`` command: thin subcommands over library calls, one module each."""

from __future__ import annotations

import argparse
import os
import re
import select
import signal
import sys
from collections.abc import Sequence
from typing import Any

# Ctrl-C in the second or two these imports take (numpy, pandas, Pyomo, HiGHS) ended in
# a KeyboardInterrupt traceback: the command ends quietly instead, with the status a
# shell shows for it (130), as it does once running
try:
    from experiments.campaign import CampaignError
    from experiments.cli import (
        bound,
        campaign,
        compare,
        demo,
        evaluate,
        fit_stops,
        gap,
        generate,
        improve,
        online,
        report,
        solve,
    )
    from experiments.cli.common import CliError, refuse_out_over_input
    from experiments.store import StoreError
    from heuristic.core import highs_run
    from heuristic.core.options import OptionError
    from instances import InstanceError, PlanError
    from milp import MilpError
    from validation.simulator import SimulationError
except KeyboardInterrupt:
    raise SystemExit(130) from None

# in the order ``gpusched --help`` lists them
COMMANDS = (
    demo,
    solve,
    compare,
    evaluate,
    generate,
    gap,
    improve,
    bound,
    online,
    fit_stops,
    campaign,
    report,
)


class _Parser(argparse.ArgumentParser):
    """argparse takes a value that starts with a minus sign for an option unless it is a
    plain negative number: ``--power-off -0.5,0.1`` was refused as 'expected one
    argument', without the value. No option of ours starts with a digit, so a minus
    sign and a digit (or a point) always begin a value, which the option's own check
    then refuses naming it. (argparse keeps the rule in a private attribute, the same
    since Python 3.2; its subcommands are built with this class.)"""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-\.?\d")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="gpusched", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:  # checked before any work, so that a bad value stops nothing half-way
        highs_run.default_threads()
    except ValueError as exc:
        print(f"gpusched: error: {exc}", file=sys.stderr)
        return 2
    try:
        refuse_out_over_input(args)
        code: int = args.func(args)
    except (
        InstanceError,
        PlanError,
        SimulationError,
        MilpError,
        CampaignError,
        StoreError,
        CliError,
        OptionError,
    ) as exc:
        print(f"gpusched: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        if _stdout_closed():  # a reader such as ``head`` stopped reading: not a fault
            return 128 + signal.SIGPIPE  # what a shell shows for a tool the pipe ended
        print("gpusched: error: a pipe to another process broke", file=sys.stderr)
        return 2
    except OSError as exc:  # an output folder that does not exist, a full disk, ...
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"gpusched: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    return code


def _stdout_closed() -> bool:
    """Whether standard output is a pipe whose reader has gone (Linux sets ``POLLERR``
    on such a write end); if so it is pointed at the null device, so that Python's
    flush at exit does not report the same broken pipe."""
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError):  # not a file (captured in tests)
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    if not dict(poller.poll(0)).get(fd, 0) & select.POLLERR:
        return False
    os.dup2(os.open(os.devnull, os.O_WRONLY), fd)
    return True


__all__ = ["CliError", "build_parser", "main"]
