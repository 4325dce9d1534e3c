"""A whole trace as a user runs it, before and after, side by side in one run:
``gpusched generate philly-week --out philly-week.json.gz`` once (or ``alibaba``), then
reading it back (phases: the bytes and JSON, the numbers and schema checks, building and
checking the data classes) and, with ``--online``, ``gpusched online FILE --policy
sts`` (reading, replay, evaluation; a tree before c21dc6c named STS's incremental form
``sts-incremental``: ``--before-policy``). Goals (the Philly week, docs/benchmarks.md):
reading within 2 s, the online command within 60 s end to end.

"Before" is the source tree of a git revision (``--before``, default the commit before
the reading work), unpacked into a temporary folder and run in its own processes with
the same interpreter; "after" is this tree. Each measurement is a fresh process, before
and after alternating, so that a machine shared with other work slows both alike; each
gives wall and CPU seconds (CPU: what the process itself ran, less sensitive to other
work on the machine than wall).

Run: python -m benchmarks.read_trace [--before REV] [--repeats 3] [--online]
     [--policy sts] [--before-policy NAME] [--trace philly-week|alibaba] [--instance FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.common import markdown

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "ad7c95d"  # contend's head before the reading work
READ_GOAL_S, ONLINE_GOAL_S = 2.0, 60.0

# Run in the tree measured: the phases of read_instance, then the whole call. A tree
# without check_structure (before) checks the numbers and the schema in two walks.
READ = r"""
import json, sys, time
from instances import io

def timed(fn, *args):
    w, c = time.perf_counter(), time.process_time()
    out = fn(*args)
    return out, time.perf_counter() - w, time.process_time() - c

path = sys.argv[1]
out = {}
doc, out["load_s"], out["load_cpu"] = timed(io.load_json_file, path, "instance")
if hasattr(io, "check_structure"):
    _, out["checks_s"], out["checks_cpu"] = timed(io.check_structure, doc, "instance")
else:
    def both(d):
        io.check_numbers(d)
        io._check_schema(d, "instance")
    _, out["checks_s"], out["checks_cpu"] = timed(both, doc)
saved = (io.check_numbers, io._check_schema, getattr(io, "check_structure", None))
io.check_numbers = lambda d: None
io._check_schema = lambda d, k: None
if saved[2] is not None:
    io.check_structure = lambda d, k: None
_, out["build_s"], out["build_cpu"] = timed(io.instance_from_dict, doc)
io.check_numbers, io._check_schema = saved[0], saved[1]
if saved[2] is not None:
    io.check_structure = saved[2]
inst, out["read_s"], out["read_cpu"] = timed(io.read_instance, path)
out["jobs"] = len(inst.jobs)
print(json.dumps(out))
"""

# Run in the tree measured: the ``gpusched online`` command itself (experiments.cli's
# main, as the console script calls it), its phases timed by wrapping the functions it
# calls; the table it prints is dropped.
ONLINE = r"""
import contextlib, io as text, json, sys, time
w0, c0 = time.perf_counter(), time.process_time()
import experiments.cli.online as command
import validation.online as online
from experiments.cli import main

phases = {}
runs = []

def timed(name, fn):
    def wrapper(*args, **kwargs):
        w, c = time.perf_counter(), time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            dw, dc = time.perf_counter() - w, time.process_time() - c
            pw, pc = phases.get(name, (0.0, 0.0))
            phases[name] = (pw + dw, pc + dc)
    return wrapper

def kept(fn):
    def wrapper(*args, **kwargs):
        run = fn(*args, **kwargs)
        runs.append(run)
        return run
    return wrapper

command.load_instance = timed("read", command.load_instance)
online.simulate = timed("replay", online.simulate)
online.scenario_instance = timed("evaluate", online.scenario_instance)
online.evaluate = timed("evaluate", online.evaluate)
online.run_online = kept(online.run_online)  # the command imports it when it runs
policies = []
def made(fn):
    def wrapper(*args, **kwargs):
        policies.append(fn(*args, **kwargs))
        return policies[-1]
    return wrapper
online.make_policy = made(online.make_policy)
with contextlib.redirect_stdout(text.StringIO()):
    code = main(["online", sys.argv[1], "--policy", sys.argv[2], "--quiet"])
out = {name: list(v) for name, v in phases.items()}
out["total"] = [time.perf_counter() - w0, time.process_time() - c0]
out["code"] = code
s = runs[-1].summary()
out["total_cost"] = s["total_cost"]
out["decisions"] = s["decisions"]
out["full_decisions"] = getattr(policies[-1], "full_decisions", None)
print(json.dumps(out))
"""


def unpack(rev: str, into: Path) -> Path:
    """The source tree of ``rev`` (this repository's), unpacked into ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=False
    )
    if archive.returncode:
        sys.exit(f"read_trace: --before {rev}: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def in_tree(tree: Path, code: str, *args: str) -> dict[str, Any]:
    """Run ``code`` in a fresh process importing the packages of ``tree``."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        sys.exit(f"read_trace: a run in {tree} failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def generate(where: Path, trace: str) -> Path:
    """``gpusched generate TRACE --out TRACE.json.gz`` (the whole trace), with this
    tree."""
    out = where / f"{trace}.json.gz"
    subprocess.run(
        [sys.executable, "-m", "experiments.cli", "generate", trace, "--out", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    return out


def _verdict(wall: float, cpu: float, goal: float) -> str:
    """Met on the wall clock, or only on CPU time (the machine busy with other work)."""
    if wall <= goal:
        return "met"
    return "met on CPU, not on wall" if cpu <= goal else "missed"


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def reading(trees: dict[str, Path], trace: Path, repeats: int) -> list[list[object]]:
    """The rows of the reading table: median wall and CPU seconds of each phase."""
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in trees}
    for r in range(repeats):
        for side in list(trees)[:: 1 if r % 2 == 0 else -1]:  # alternating who goes first
            runs[side].append(in_tree(trees[side], READ, str(trace)))
    rows: list[list[object]] = []
    for side, rs in runs.items():
        row: list[object] = [side, rs[0]["jobs"]]
        for phase in ("load", "checks", "build", "read"):
            row += [_median(rs, f"{phase}_s"), _median(rs, f"{phase}_cpu")]
        row.append(_verdict(_median(rs, "read_s"), _median(rs, "read_cpu"), READ_GOAL_S))
        rows.append(row)
    before, after = (_median(runs[s], "read_s") for s in trees)
    cpu_before, cpu_after = (_median(runs[s], "read_cpu") for s in trees)
    rows.append(["ratio before/after", "", *[""] * 6, before / after, cpu_before / cpu_after, ""])
    return rows


def online(
    trees: dict[str, Path], trace: Path, policies: dict[str, str], repeats: int
) -> list[list[object]]:
    """The rows of the end-to-end table: the command's wall and CPU seconds, and its
    phases (the rest is starting Python, importing, printing); ``policies`` per tree."""
    rows: list[list[object]] = []
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in trees}
    for r in range(repeats):
        for side in list(trees)[:: 1 if r % 2 == 0 else -1]:
            runs[side].append(in_tree(trees[side], ONLINE, str(trace), policies[side]))
    for side, rs in runs.items():
        for o in rs:
            wall, cpu = o["total"]
            verdict = _verdict(wall, cpu, ONLINE_GOAL_S)
            row: list[object] = [side, policies[side], wall, cpu]
            for phase in ("read", "replay", "evaluate"):
                row += o[phase]
            full = o["full_decisions"]
            cost = f"{o['total_cost']:.12g}"  # to the digits that show a change
            row += [int(o["decisions"]), "" if full is None else full, cost, verdict]
            rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--before", default=BEFORE, help="git revision of the code before")
    ap.add_argument("--repeats", type=int, default=3, help="reading runs per side")
    ap.add_argument("--online", action="store_true", help="also the online command")
    ap.add_argument("--online-repeats", type=int, default=1)
    ap.add_argument("--policy", default="sts")
    ap.add_argument("--before-policy", default=None, help="its name in the tree before")
    ap.add_argument("--trace", choices=("philly-week", "alibaba"), default="philly-week")
    ap.add_argument("--instance", default=None, help="a trace file already generated")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="read_trace.") as tmp:
        here = Path(tmp)
        (here / "before").mkdir()
        trees = {f"before ({args.before})": unpack(args.before, here / "before"), "after": ROOT}
        trace = Path(args.instance) if args.instance else generate(here, args.trace)
        headers = ["code", "jobs"]
        for phase in ("bytes+JSON", "numbers+schema", "build", "read_instance"):
            headers += [f"{phase} s", f"{phase} CPU s"]
        print(f"reading {trace.name} back, median of {args.repeats} fresh processes per side")
        print(
            markdown([*headers, f"read <= {READ_GOAL_S:g} s"], reading(trees, trace, args.repeats))
        )
        if args.online:
            print(f"\ngpusched online {trace.name} --policy {args.policy} --quiet")
            headers = ["code", "policy", "wall s", "CPU s"]
            for phase in ("read", "replay", "evaluate"):
                headers += [f"{phase} s", f"{phase} CPU s"]
            headers += ["decisions", "full STS decisions", "total cost", f"<= {ONLINE_GOAL_S:g} s"]
            names = dict.fromkeys(trees, args.policy)
            names[next(iter(trees))] = args.before_policy or args.policy
            print(markdown(headers, online(trees, trace, names, args.online_repeats)))


if __name__ == "__main__":
    main()
