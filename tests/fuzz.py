"""Mutants of the bundled instance and plan files, and what a command must do with them.

A mutant changes one field of a valid file (a nasty value, a deletion, an emptied or
duplicated list) or its bytes (encoding, nesting, huge numbers). A command given a
mutant must either refuse it cleanly (exit status 2, one ``gpusched: error:`` line that
names the field) or accept it and print only finite figures. ``tests/test_fuzz.py``
draws mutants with hypothesis; ``python -m tests.fuzz --count N`` runs many more through
every command and prints the outcome counts.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import gzip
import io
import json
import math
import random
import re
import signal
import sys
import tempfile
import time
import tomllib
from collections import Counter
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from instances.io import json_path

JsonPath = tuple[str | int, ...]

NASTY: tuple[Any, ...] = (
    10**400,
    -(10**400),
    1e308,
    -1e308,
    5e-324,
    1e-9,
    1e9,
    1e307,
    0,
    -1,
    0.5,
    1,
    2**63,
    True,
    None,
    "",
    "x",
    "../../escape",
    "/tmp/abs",
    "$a$",
    "a$b$c$",
    "\u0000",
    "é" * 3,
    [],
    {},
    [1, 2],
    math.nan,
    math.inf,
    -math.inf,
    # the edges of the bounds (instances/limits.py): accepted, and must stay sound
    1e-5,
    1e-3,
    1000.0,
    1024,
    64,
    99_999.0,
    1e6,
)


def base_document(name: str) -> dict[str, Any]:
    text = resources.files("instances.data").joinpath(f"{name}.json").read_text()
    doc: dict[str, Any] = json.loads(text)
    return doc


def paths(doc: Any, prefix: JsonPath = ()) -> Iterator[JsonPath]:
    """Every path below the root, containers and leaves (depth first)."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield (*prefix, k)
            yield from paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield (*prefix, i)
            yield from paths(v, (*prefix, i))


def _parent(doc: Any, path: JsonPath) -> Any:
    for p in path[:-1]:
        doc = doc[p]
    return doc


OPS = ("replace", "delete", "empty", "duplicate")


def mutate(doc: Any, path: JsonPath, op: str, value: Any = None) -> Any:
    """A copy of ``doc`` with one change at ``path``."""
    out = copy.deepcopy(doc)
    parent = _parent(out, path)
    key = path[-1]
    if op == "replace":
        parent[key] = value
    elif op == "delete":
        del parent[key]
    elif op == "empty":
        parent[key] = type(parent[key])() if isinstance(parent[key], list | dict | str) else None
    elif op == "duplicate" and isinstance(parent, list):
        parent.insert(key, copy.deepcopy(parent[key]))
    elif op == "duplicate":
        parent[key] = [parent[key], parent[key]]
    return out


def path_text(path: JsonPath) -> str:
    """The path as gpusched's errors write it: ``jobs[3].configs[0].epoch_time``."""
    return json_path(path)


BYTE_MUTANTS = (
    "utf16",
    "latin1",
    "bad_utf8",
    "deep",
    "long_number",
    "nan_literal",
    "bom",
    "gzip",
    "gzip_cut",
    "gzip_junk",
    "gzip_nan",
)
READABLE_MUTANTS = ("bom", "gzip")  # mutants that are still a valid file


def byte_mutant(doc: Any, kind: str) -> bytes:
    """Whole-file mutants: encodings, nesting and number sizes a JSON writer never makes."""
    text = json.dumps(doc)
    if kind == "utf16":
        return text.encode("utf-16")
    if kind == "latin1":
        return text.replace('"name": "', '"name": "\u00e9', 1).encode("latin-1")
    if kind == "bad_utf8":
        return text.encode()[:40] + b"\xff\xfe\xc3" + text.encode()[40:]
    if kind == "deep":
        return text.replace('"jobs": [', '"jobs": ' + "[" * 1000 + "[", 1).encode() + b"]" * 1000
    if kind == "long_number":
        return re.sub(r'"release": [0-9.e+-]+', '"release": ' + "9" * 5000, text, count=1).encode()
    if kind == "nan_literal":
        return re.sub(r'"due": [0-9.e+-]+', '"due": NaN', text, count=1).encode()
    if kind == "bom":
        return b"\xef\xbb\xbf" + text.encode()
    if kind == "gzip":
        return gzip.compress(text.encode())
    if kind == "gzip_cut":
        return gzip.compress(text.encode())[:-9]
    if kind == "gzip_junk":
        return gzip.compress(text.encode()) + b"\x00junk"
    if kind == "gzip_nan":
        return gzip.compress(byte_mutant(doc, "nan_literal"))
    raise ValueError(kind)


# -- campaign files ---------------------------------------------------------------------
def campaign_document(name: str) -> dict[str, Any]:
    text = (resources.files("experiments.campaigns") / f"{name}.toml").read_text()
    return tomllib.loads(text)


def toml_text(doc: dict[str, Any]) -> str | None:
    """A campaign document as TOML (``None`` if it holds what TOML cannot: null)."""

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float) and not math.isfinite(v):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        if isinstance(v, int | float):
            return repr(v)
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{json.dumps(k)} = {value(x)}" for k, x in v.items()) + "}"
        raise TypeError(v)

    try:
        return "\n".join(f"{json.dumps(k)} = {value(v)}" for k, v in doc.items())
    except TypeError:
        return None


# -- running commands on a mutant -------------------------------------------------------
class Hang(Exception):
    pass


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    def ring(*_: Any) -> None:
        raise Hang(f"no answer within {seconds:g} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:nan|inf|infinity)(?![\w])", re.IGNORECASE)


def run_command(argv: list[str], seconds: float = 60.0) -> tuple[str, int | None, str, str]:
    """(outcome, exit status, stdout, stderr) of ``gpusched argv`` run in this process.

    outcome: ``ok`` (exit 0, finite figures), ``refused`` (exit 2 with one clean error
    line), ``crash`` (an exception escaped), ``hang``, ``nonfinite`` (exit 0 but a
    nan/inf figure printed) or ``bad-exit``.
    """
    from experiments.cli import main

    out, err = io.StringIO(), io.StringIO()
    try:
        with deadline(seconds), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code: int | None = main(argv)
    except SystemExit as exc:  # argparse
        code = exc.code if isinstance(exc.code, int) else 2
    except Hang:
        return "hang", None, out.getvalue(), err.getvalue()
    except BaseException as exc:  # the point of the fuzzer: nothing may escape
        return "crash", None, out.getvalue(), f"{type(exc).__name__}: {exc}"
    if code == 0:
        return ("nonfinite" if _NUMBER.search(out.getvalue()) else "ok"), 0, out.getvalue(), ""
    if code == 2 and err.getvalue().startswith("gpusched: error:"):
        return "refused", 2, out.getvalue(), err.getvalue()
    return "bad-exit", code, out.getvalue(), err.getvalue()


def commands(instance: str, plan: str, out_dir: str) -> list[list[str]]:
    """Every command a user points at an instance file (the MILP ones on a 1 s limit)."""
    gap = ["gap", instance, "--time-limit", "1", "--search-evaluations", "5"]
    return [
        ["solve", instance, "--policy", "sts", "--mc", "50", "--out", f"{out_dir}/p.json"],
        ["solve", instance, "--policy", "edf"],
        ["evaluate", instance, plan],
        ["compare", instance],
        ["online", instance, "--policy", "fifo,sts"],
        [*gap, "--improve-time", "1", "--out", out_dir],
        ["improve", instance, "--time-limit", "2", "--quiet", "--out", f"{out_dir}/i.json"],
        ["bound", instance, "--scenarios", "1", "--time-limit", "1"],
    ]


def names_field(error: str, where: JsonPath) -> bool:
    """Whether a refusal names the mutated field, or the object holding it (a deleted
    list item, or a field whose meaning is checked against its siblings)."""
    return any(path_text(where[:n]) in error for n in range(len(where), 0, -1))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--count", type=int, default=300, help="mutants")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--base", default="tiny")
    p.add_argument("--show", type=int, default=3, help="examples printed per bad outcome")
    p.add_argument("--mutations", type=int, default=1, help="changes per mutant")
    args = p.parse_args(argv)
    rng = random.Random(args.seed)
    doc = base_document(args.base)
    tally: Counter[str] = Counter()  # outcome, and command:outcome
    named: Counter[str] = Counter()  # refusals of one-field mutants, by what they name
    shown: Counter[str] = Counter()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        good = Path(tmp) / "good.json"
        good.write_text(json.dumps(doc))
        plan = Path(tmp) / "plan.json"
        run_command(["solve", str(good), "--policy", "fifo", "--out", str(plan)])
        for k in range(args.count):
            path = Path(tmp) / f"m{k}.json"
            where: JsonPath = ()
            if rng.random() < 0.1:
                kind = rng.choice(BYTE_MUTANTS)
                path.write_bytes(byte_mutant(doc, kind))
                what = f"bytes:{kind}"
            else:
                mutant, what = doc, ""
                for _ in range(args.mutations):
                    where = rng.choice(list(paths(mutant)))
                    op = rng.choice(OPS)
                    value = rng.choice(NASTY)
                    mutant = mutate(mutant, where, op, value)
                    what += f"{op} {path_text(where)} = {value!r}"[:120] + "; "
                path.write_text(json.dumps(mutant))
            (Path(tmp) / f"out{k}").mkdir()
            for i, cmd in enumerate(commands(str(path), str(plan), f"{tmp}/out{k}")):
                outcome, _, _, err = run_command(cmd)
                tally[f"{cmd[0]}:{outcome}"] += 1
                tally[outcome] += 1
                if outcome == "refused" and where and i == 0 and args.mutations == 1:
                    names = names_field(err, where)
                    named["naming the mutated field" if names else "naming another field"] += 1
                    if not names and shown["unnamed"] < args.show:
                        shown["unnamed"] += 1
                        print(f"unnamed: {what} | {err.strip()[:300]}")
                if outcome not in ("ok", "refused") and shown[outcome] < args.show:
                    shown[outcome] += 1
                    print(f"{outcome}: {what} | {' '.join(cmd[:2])} | {err.strip()[-300:]}")
    print(f"{args.count} mutants in {time.perf_counter() - t0:.0f} s")
    for key, n in sorted(tally.items()):
        print(f"  {key}: {n}")
    for key, n in sorted(named.items()):
        print(f"  refused (solve) {key}: {n}")
    bad = sum(n for k, n in tally.items() if ":" not in k and k not in ("ok", "refused"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
