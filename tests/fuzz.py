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
import dataclasses
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

from instances.jsonfile import json_path

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


# -- what is fuzzed: read from the schemas and the tables --------------------------------
# A field added later is fuzzed with no new fuzzing code: the instance and plan fields
# are the JSON schemas' (tests/test_fuzz.py fails if no fuzz base holds one of them, so
# a new field asks only for a value in a base), the campaign fields are the generator
# table's (instances.generators.GENERATORS: each spec field at its default, or for a
# field whose default is None, at its value in OPTIONAL below), the history columns are
# histories.COLUMNS and the fit fields are what StopsFit.to_dict writes.
def schema_fields(kind: str) -> set[str]:
    """Every field the JSON schema of ``kind`` ("instance", "plan") defines, as a
    normalized path: ``jobs[].configs[].cpus``."""
    text = resources.files("instances.schema").joinpath(f"{kind}.schema.json").read_text()
    out: set[str] = set()

    def walk(node: Any, prefix: str) -> None:
        if not isinstance(node, dict):
            return
        for key in ("oneOf", "anyOf", "allOf"):
            for sub in node.get(key, []):
                walk(sub, prefix)
        for name, sub in node.get("properties", {}).items():
            path = f"{prefix}.{name}" if prefix else name
            out.add(path)
            walk(sub, path)
        if isinstance(node.get("items"), dict):
            walk(node["items"], prefix + "[]")
        if isinstance(node.get("additionalProperties"), dict):
            walk(node["additionalProperties"], prefix + ".*")

    walk(json.loads(text), "")
    return out


def normalized(path: JsonPath) -> str:
    """A document path as :func:`schema_fields` writes it (list indices as ``[]``)."""
    text = ""
    for key in path:
        text += "[]" if isinstance(key, int) else (f".{key}" if text else key)
    return text


# Campaign scenarios fuzzed field by field: sizes small enough to build at every
# example, and a value for each field whose default is None (TOML has no null).
SMALL: dict[str, dict[str, Any]] = {
    "synthetic": {"nodes": 2, "jobs": 4},
    "realdata": {"jobs": 4, "nodes": [["k80", 4], ["v100", 8]]},
    "synergy": {"nodes": 2, "jobs": 4},
    "liquid": {"jobs": 4, "racks": 2, "nodes_per_rack": 2, "domains": 1},
    "philly-week": {"start": 30.0, "hours": 1.0},
    "alibaba": {"start": 3200.0, "hours": 1.0},
}
OPTIONAL: dict[str, Any] = {
    "slot": 0.25,
    "load": 0.5,
    "families": ["ResNet-18", "ResNet-50", "Transformer", "LM"],
    "philly_gpus": [1, 2],
    "suspend_hours": 0.001,
    "hours": 1.0,
    "stops": "fit.json",  # a fit file beside the campaign (the tests write one)
    "jobs": 6,  # a trace window's first jobs
    "nodes": 2,
    "cluster": [["k80", 4, 1], ["v100", 8, 1]],
    "prices": "au-nsw-2023:100",
    "idle": "low",
    "power_off": "0.5,0.1,0.2",
}
# fields that give one thing two ways and exclude each other: the first of each pair is
# in a generator's fuzzed scenario, the second in its alternative scenario
EXCLUSIVE: tuple[tuple[str, str], ...] = (("nodes", "cluster"),)


# the scenarios that read instances rather than generate them: every key they take
# (experiments.campaign's _EXTRA_KEYS; "instances" of the suite is the suite's own)
READERS: dict[str, dict[str, Any]] = {
    "file": {"path": "tiny.json", "slot": 0.5},  # a copy of the bundled tiny (the tests')
    "suite": {
        "instances": ["suite-share-2n4j-s1"],
        "slot": 0.5,
        "relaunch": "none",
        "prices": "au-nsw-2023:17",
        "carbon_price": 50.0,
        "idle": "low",
        "power_off": "0.5,0.1",
    },
}


def _plain(value: Any) -> Any:
    """A spec default as TOML gives it: tuples as lists."""
    return [_plain(v) for v in value] if isinstance(value, tuple) else value


def generator_scenario(name: str, alternative: bool = False) -> dict[str, Any]:
    """A ``[[scenarios]]`` table of generator ``name`` setting every field it has:
    ``SMALL``'s value, the spec's default, or ``OPTIONAL``'s where that is None (a
    field missing here has no entry in OPTIONAL: the tests say so); of two fields that
    exclude each other (``EXCLUSIVE``), the first, or the second if ``alternative``."""
    from instances.generators import GENERATORS  # the generators only where fuzzed

    gen = GENERATORS[name]
    defaults = {f.name: f.default for f in dataclasses.fields(gen.spec)}
    table: dict[str, Any] = {"generator": name}
    left_out = {
        pair[0] if alternative else pair[1] for pair in EXCLUSIVE if set(pair) <= set(gen.fields)
    }
    for field in gen.fields:
        if field in left_out:
            continue
        value = SMALL[name].get(field, defaults[field])
        value = OPTIONAL.get(field) if value is None else value
        if value is not None:
            table[field] = _plain(value)
    if name in ("philly-week", "alibaba"):  # a fit is read only with fitted stops
        table["early_stopping"] = "fitted"
    return table


# -- history files ----------------------------------------------------------------------
HISTORY_NASTY = (
    "",
    " ",
    "x",
    "nan",
    "inf",
    "-inf",
    "-1",
    "0",
    "1e400",
    "1e308",
    "5e-324",
    "2.5",
    "Running",
    "done?",
    "\u0000",
    "é",
    ",",
    '"',
    "1,2",
    "10**400",
    "9" * 5000,
)
# (kind, read whole?): whole-file mutants of a history CSV; the readable ones give the
# same history as the file they came from
HISTORY_BYTES = {
    "crlf": True,
    "cr": True,
    "mixed": True,
    "bom": True,
    "gzip": True,
    "utf16": False,
    "bad_utf8": False,
    "long_field": False,
    "long_line": False,
    "gzip_cut": False,
    "gzip_junk": False,
    "gzip_corrupt": False,
    "nul": False,
}


def history_text(rows: list[dict[str, Any]]) -> str:
    """A history CSV of ``rows`` (their keys the columns), LF line ends."""
    columns = list(rows[0])
    return (
        "\n".join([",".join(columns)] + [",".join(str(r[c]) for c in columns) for r in rows]) + "\n"
    )


def history_bytes(text: str, kind: str) -> bytes:
    """Whole-file mutants of a history CSV: line ends, encodings, compression, sizes."""
    lines = text.splitlines()
    if kind in ("crlf", "cr"):
        return text.replace("\n", "\r\n" if kind == "crlf" else "\r").encode()
    if kind == "mixed":
        return "".join(ln + ("\r\n", "\r", "\n")[k % 3] for k, ln in enumerate(lines)).encode()
    if kind == "bom":
        return b"\xef\xbb\xbf" + text.encode()
    if kind == "utf16":
        return text.encode("utf-16")
    if kind == "bad_utf8":
        return text.encode()[:30] + b"\xff" + text.encode()[30:]
    if kind == "long_field":
        return (text + lines[1] + "," + "x" * 200_000 + "\n").encode()
    if kind == "long_line":
        return (text + "2,Pass,1" + "," * (2 << 20) + "\n").encode()
    if kind == "nul":
        return (text + "2,Pa\x00ss,1\n").encode()
    zipped = gzip.compress(text.encode())
    if kind == "gzip":
        return zipped
    if kind == "gzip_cut":
        return zipped[:-12]
    if kind == "gzip_junk":
        return zipped + b"\x00junk"
    if kind == "gzip_corrupt":
        return zipped[:20] + b"\xff" * 20 + zipped[40:]
    raise ValueError(kind)


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
    p.add_argument("--format", choices=("instance", "history", "campaign"), default="instance")
    p.add_argument("--count", type=int, default=300, help="mutants")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--base", default="tiny", help="instance: the bundled file mutated")
    p.add_argument("--show", type=int, default=3, help="examples printed per bad outcome")
    p.add_argument("--mutations", type=int, default=1, help="changes per mutant")
    args = p.parse_args(argv)
    rng = random.Random(args.seed)
    t0 = time.perf_counter()
    fuzz = {"instance": _fuzz_instances, "history": _fuzz_histories, "campaign": _fuzz_campaigns}
    with tempfile.TemporaryDirectory() as tmp:
        tally = fuzz[args.format](args, rng, Path(tmp))
    print(f"{args.count} {args.format} mutants in {time.perf_counter() - t0:.0f} s")
    for key, n in sorted(tally.items()):
        print(f"  {key}: {n}")
    bad = sum(n for k, n in tally.items() if ":" not in k and k not in ("ok", "refused"))
    return 1 if bad else 0


def _fuzz_instances(args: argparse.Namespace, rng: random.Random, tmp: Path) -> Counter[str]:
    """Mutants of a bundled instance through every command."""
    doc = base_document(args.base)
    tally: Counter[str] = Counter()  # outcome, command:outcome, and what refusals name
    shown: Counter[str] = Counter()
    good, plan = tmp / "good.json", tmp / "plan.json"
    good.write_text(json.dumps(doc))
    run_command(["solve", str(good), "--policy", "fifo", "--out", str(plan)])
    for k in range(args.count):
        path = tmp / f"m{k}.json"
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
        (tmp / f"out{k}").mkdir()
        for i, cmd in enumerate(commands(str(path), str(plan), f"{tmp}/out{k}")):
            outcome, _, _, err = run_command(cmd)
            tally[f"{cmd[0]}:{outcome}"] += 1
            tally[outcome] += 1
            if outcome == "refused" and where and i == 0 and args.mutations == 1:
                names = names_field(err, where)
                tally[f"refused (solve):naming {'the mutated' if names else 'another'} field"] += 1
                if not names and shown["unnamed"] < args.show:
                    shown["unnamed"] += 1
                    print(f"unnamed: {what} | {err.strip()[:300]}")
            if outcome not in ("ok", "refused") and shown[outcome] < args.show:
                shown[outcome] += 1
                print(f"{outcome}: {what} | {' '.join(cmd[:2])} | {err.strip()[-300:]}")
    return tally


HISTORY_ROWS = [
    {"hours": h, "status": s, "gpus": g, "created": 100 + i}
    for i, (h, s, g) in enumerate([(2, "Pass", 1), (1, "Killed", 1), (3, "Pass", 2)] * 10)
]


def _fuzz_histories(args: argparse.Namespace, rng: random.Random, tmp: Path) -> Counter[str]:
    """Mutants of a history CSV (cells, and whole-file bytes) through ``fit-stops``."""
    tally: Counter[str] = Counter()
    text = history_text(HISTORY_ROWS)
    for k in range(args.count):
        path, out = tmp / f"h{k}.csv", tmp / f"fit{k}.json"
        if rng.random() < 0.3:
            kind = rng.choice(sorted(HISTORY_BYTES))
            path.write_bytes(history_bytes(text, kind))
            what = f"bytes:{kind}"
        else:
            rows = [dict(r) for r in HISTORY_ROWS]
            for _ in range(args.mutations):
                row = rng.randrange(len(rows))
                rows[row][rng.choice(list(rows[row]))] = rng.choice(HISTORY_NASTY)
            path.write_text(history_text(rows))
            what = "cells"
        recent = ["--recent", "24"] if rng.random() < 0.5 else []
        outcome, _, _, err = run_command(["fit-stops", str(path), "--out", str(out), *recent])
        if outcome == "refused" and out.exists():
            outcome = "refused-but-written"
        tally[outcome] += 1
        if outcome not in ("ok", "refused") and tally[f"shown:{outcome}"] < args.show:
            tally[f"shown:{outcome}"] += 1
            print(f"{outcome}: {what} | {err.strip()[-300:]}")
    return tally


def _fuzz_campaigns(args: argparse.Namespace, rng: random.Random, tmp: Path) -> Counter[str]:
    """Mutants of a campaign of one generator of the table (every field set), loaded
    (the library's parse: running them would be a campaign each)."""
    from experiments.campaign import CampaignError, parse_campaign
    from instances.generators import GENERATORS

    tally: Counter[str] = Counter()
    tables = [generator_scenario(n) for n in GENERATORS]
    tables += [{"generator": n, **keys} for n, keys in READERS.items()]
    docs = {t["generator"]: {"policies": ["fifo"], "seeds": [0], "scenarios": [t]} for t in tables}
    (tmp / "fit.json").write_text(json.dumps(_bundled_fit()))
    (tmp / "tiny.json").write_text(json.dumps(base_document("tiny")))
    for _ in range(args.count):
        mutant = docs[rng.choice(sorted(docs))]
        for _ in range(args.mutations):
            where = rng.choice(list(paths(mutant)))
            mutant = mutate(mutant, where, rng.choice(OPS), rng.choice(NASTY))
        text = toml_text(mutant)
        if text is None:
            continue
        try:
            with deadline(60):
                parse_campaign(text, base=tmp, default_name="fuzz")
            outcome, err = "ok", ""
        except CampaignError as exc:
            outcome, err = ("refused" if " = " in str(exc) else "unnamed"), str(exc)
        except Hang:
            outcome, err = "hang", ""
        except Exception as exc:  # the point of the fuzzer: nothing else may escape
            outcome, err = "crash", f"{type(exc).__name__}: {exc}"
        tally[outcome] += 1
        if outcome not in ("ok", "refused") and tally[f"shown:{outcome}"] < args.show:
            tally[f"shown:{outcome}"] += 1
            print(f"{outcome}: {path_text(where)} | {err[-300:]}")
    return tally


def _bundled_fit() -> dict[str, Any]:
    from instances.generators.stops_fit import bundled_fit

    return bundled_fit("completed").to_dict()


if __name__ == "__main__":
    sys.exit(main())
