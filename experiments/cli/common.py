"""What the commands share: the error they raise for a bad option value, loading
instances by file or bundled name, and argparse types that check a value's range."""

from __future__ import annotations

import argparse
import math
import os
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from experiments.campaign import MAX_TIME_LIMIT
from heuristic.core.registry import policy_names, unknown_policy
from instances import Instance, read_instance
from instances.bundled import bundled, bundled_names
from instances.fields import SEEDS
from instances.generators.suite import milp_suite

# what ``add_subparsers`` returns: each command module adds its parser to it
Subparsers = argparse._SubParsersAction


class CliError(ValueError):
    """A bad option value found after argparse (the message names the option)."""


def policy_option(text: str) -> tuple[str, Any]:
    """An argparse type: ``KEY=VALUE`` for a policy option, the value read as a TOML
    value (``true``, ``0.3``, ``"fifo"``), or as plain text where it is none (``fifo``).
    The policy checks the name and the type (:func:`heuristic.core.make_policy`)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        parsed = tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = value
    return key.strip(), parsed


def policy_name(text: str) -> str:
    """An argparse type: a registered policy (a retired name is refused naming the one
    it now goes by, which argparse's ``choices`` cannot say)."""
    known = policy_names()
    if text not in known:
        raise argparse.ArgumentTypeError(unknown_policy(text, known))
    return text


def policy_options(pairs: Sequence[tuple[str, Any]] | None) -> dict[str, Any]:
    """``--option`` pairs as keyword options; a key given twice is refused."""
    out: dict[str, Any] = {}
    for key, value in pairs or ():
        if key in out:
            raise CliError(f"--option: {key} is given twice")
        out[key] = value
    return out


def load_instance(source: str, slot: float | None = None) -> Instance:
    """A file path, or the name of a bundled instance; ``slot`` (``--slot``), if given,
    replaces its slot length."""
    if not Path(source).exists() and source in bundled_names():
        inst = bundled(source)
    else:
        inst = read_instance(source)
    return inst if slot is None else inst.replace(slot=slot)


def load_instances(sources: Sequence[str], slot: float | None = None) -> list[Instance]:
    """Files or bundled names; ``suite`` stands for the bundled small MILP suite."""
    out: list[Instance] = []
    for src in sources:
        if src == "suite" and not Path(src).exists():
            out += milp_suite()
        else:
            out.append(load_instance(src))
    return out if slot is None else [i.replace(slot=slot) for i in out]


def checked_type(
    convert: Callable[[str], Any], what: str, ok: Callable[[Any], bool], want: str
) -> Callable[[str], Any]:
    """An argparse type: ``convert`` the text, then check it (usage error otherwise)."""

    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"expected {want}, got {text}")
        return value

    return parse


positive_int = checked_type(int, "a whole number", lambda v: v >= 1, "at least 1")
# local worker processes: each imports the solvers (about 150 MB); more than this is a typo
MAX_WORKERS = 1024
workers = checked_type(
    int, "a whole number", lambda v: 1 <= v <= MAX_WORKERS, f"1 to {MAX_WORKERS} processes"
)
random_seed = checked_type(
    int, "a whole number", lambda v: 0 <= v < SEEDS, f"a seed from 0 to {SEEDS - 1}"
)
# Monte Carlo scenarios a command replays: each one a pass of the evaluator in Python,
# a fraction of a millisecond to milliseconds; past this many a typo, not a check
MAX_SCENARIOS = 100_000
scenarios = checked_type(
    int, "a whole number", lambda v: 0 <= v <= MAX_SCENARIOS, f"0 to {MAX_SCENARIOS:,} scenarios"
)
# a solver's time limit: at most a day, the bound of a campaign file's ``time_limit``
seconds = checked_type(
    float,
    "a number of seconds",
    lambda v: math.isfinite(v) and 0 < v <= MAX_TIME_LIMIT,
    f"a number of seconds in (0, {MAX_TIME_LIMIT:g}]",
)
positive_float = checked_type(
    float, "a number", lambda v: math.isfinite(v) and v > 0, "a positive number"
)
hours = checked_type(
    float, "a number of hours", lambda v: math.isfinite(v) and v >= 0, "0 or more hours"
)
count_seconds = checked_type(
    float,
    "a number of seconds",
    lambda v: math.isfinite(v) and v >= 0,
    "a number of seconds, 0 or more",
)


def scheduler_address(text: str) -> str:
    """An argparse type: a Dask scheduler's address (``tcp://host:port``, or
    ``host:port``), checked before a store is opened; not an in-process one, which only
    its own process could reach."""
    from distributed.comm.addressing import get_address_host_port, parse_address

    try:
        scheme, _ = parse_address(text)
        if scheme == "inproc":
            raise ValueError("an in-process address serves only the process that made it")
        get_address_host_port(text)
    except (ValueError, TypeError, KeyError, ImportError) as exc:
        raise argparse.ArgumentTypeError(
            f"expected a Dask scheduler address such as tcp://host:8786, got {text!r} ({exc})"
        ) from None
    return text


def out_path(text: str) -> str:
    """An argparse type: an output path, not empty (an empty ``--out`` wrote nothing and
    said nothing, or failed on the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a file or folder path, got {text!r}")
    return text


def out_file(text: str) -> str:
    """An argparse type: :func:`out_path` for a file, in a folder that exists, and not a
    folder itself: refused before the work, not after it (a hostile-input hunt: minutes
    of solves, then the write failed)."""
    path = Path(out_path(text))
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a folder, not a file")
    if not path.parent.is_dir():
        folder = str(path.parent)
        raise argparse.ArgumentTypeError(f"{text!r}: its folder {folder!r} does not exist")
    return text


def out_folder(text: str) -> str:
    """An argparse type: :func:`out_path` for a folder (made with its parents where
    missing), not a file, nor inside one."""
    path = Path(out_path(text))
    for p in (path, *path.parents):
        if p.exists() and not p.is_dir():
            raise argparse.ArgumentTypeError(f"{text!r}: {str(p)!r} is a file, not a folder")
    return text


# the arguments that name a file a command reads (a positional or an option)
READ_FILES = ("instance", "plan", "trace", "stops")


def refuse_out_over_input(args: argparse.Namespace) -> None:
    """:class:`CliError` where ``--out`` names a file the command reads (through any
    spelling, symbolic or hard link): the write would replace it (``solve i.json --out
    i.json`` replaced the instance with the plan; a hostile-input review, 2026-12-07)."""
    out = getattr(args, "out", None)
    if not isinstance(out, str):
        return
    for name in READ_FILES:
        value = getattr(args, name, None)
        if isinstance(value, str) and same_file(out, value):
            raise CliError(f"--out = {out!r}: is the {name} read ({value}): name another file")


def same_file(a: str, b: str) -> bool:
    """Whether two paths name one file (any spelling, symbolic or hard link); not where
    either does not exist (yet), nor a bundled name."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
