"""STS's decision time before and after a change of its code, side by side in one run
(the speed goals of docs/benchmarks.md), on the same decisions.

``--before REF`` (a git commit; default: STS without the speed work) is
unpacked into a temporary folder with ``git archive``. Each measurement runs in a fresh
process on that tree and on this one, alternately, so that both see the machine as it
is then; each fingerprints the decisions it made, and the two must be the same where
the change is meant to be exact. The online run also gives its realised total cost, for
changes that move decisions (STS deciding incrementally: ``--before c21dc6c``).

- ``snapshot``: one decision of a fresh STS on the ``sts_decision`` snapshot (every job
  arrived, half running), best of ``--repeats`` in a process, best of ``--rounds``
  processes. Goals: 0.1 s at 100 x 400, 2 s at 16,000 x 4,000.
- ``online``: the ``online_large`` run (1,000 jobs on 100 nodes, sampled stops, seed 0):
  the median time of one decision over the run. Goal: 20 ms.
- ``--priced RATE:OFFSET:SEED``: STS deciding when, on an instance of the ``prices``
  campaign's thesis family under the bundled series: the time of all the run's
  decisions (no goal; docs/prices.md, 'Decision time'). ``contended@LOAD:OFFSET:SEED``
  instead of a rate: the campaign's contended family (the Philly week on 32 GPUs at
  offered load ``LOAD``). ``none`` for the offset: no series (``contended@LOAD:none``
  is then the ``contended`` campaign's 32-GPU scenario).

Both with the jobs' measured relaunch overheads (the goals'; ``--relaunch none`` for the
figures without). Times are wall clock and the process's CPU time: on a shared machine
the wall clock also counts the time the process waits for a core, CPU time does not.

Run: python -m benchmarks.sts_speed [--before REF] [--sizes 100x400,16000x4000]
     [--online 1000x100] [--priced high:0:0] [--rounds 2] [--repeats 3]
     [--relaunch measured]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

# STS without the speed work (the branch contend's tip when that work was
# merged into it): the decisions pinned in tests/heuristic/sts/test_decisions_pinned.py
BEFORE = "5298401"
# seconds, with measured relaunch overheads
GOALS = {("snapshot", 100, 400): 0.1, ("snapshot", 16000, 4000): 2.0, ("online", 1000, 100): 0.02}
ROOT = Path(__file__).resolve().parent.parent


def _digest(h: Any, decision: Any, when: float | None = None) -> None:
    """Add a decision to the fingerprint ``h`` (floats by ``repr``)."""
    assign = sorted(
        (j, None if a is None else (a.config, a.gpus)) for j, a in decision.assign.items()
    )
    h.update(repr((when, assign, decision.wake_at)).encode())


def snapshot_run(nodes: int, jobs: int, relaunch: str, repeats: int) -> dict[str, Any]:
    """One decision of a fresh STS on the snapshot, best of ``repeats`` (in this
    process, which imports the tree it was started on)."""
    from benchmarks.sts_decision import snapshot
    from heuristic.core.policy import SchedulerState
    from heuristic.sts.policy import StsPolicy

    state = snapshot(nodes, jobs, 0, relaunch)
    wall, cpu, h = [], [], hashlib.sha256()
    for _ in range(repeats):
        fresh = SchedulerState(state.time, state.instance, state.jobs, state.occupancy.copy())
        t0, c0 = time.perf_counter(), time.process_time()
        decision = StsPolicy().decide(fresh)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
    _digest(h, decision)
    return {"wall": min(wall), "cpu": min(cpu), "digest": h.hexdigest()[:16]}


def _timed_run(inst: Any, seed: int) -> tuple[list[float], list[float], dict[str, Any]]:
    """STS online on ``inst`` (sampled stops, ``seed``): the wall and CPU time of each
    decision, the decisions' fingerprint and the realised total cost."""
    from heuristic import make_policy
    from validation.evaluate import evaluate
    from validation.scenario import scenario_instance
    from validation.simulator import simulate

    policy = make_policy("sts", seed=seed)
    wall: list[float] = []
    cpu: list[float] = []
    h = hashlib.sha256()

    class Timed:
        name = "sts"

        def decide(self, state: Any) -> Any:
            t0, c0 = time.perf_counter(), time.process_time()
            decision = policy.decide(state)
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - t0)
            _digest(h, decision, state.time)
            return decision

    run = simulate(inst, Timed(), mode="sampled", seed=seed)
    return (
        wall,
        cpu,
        {
            "decisions": len(wall),
            "digest": h.hexdigest()[:16],
            # realised, by the one evaluator: where a change moves decisions, its cost
            "cost": evaluate(scenario_instance(inst, run.epochs), run.plan).total_cost,
        },
    )


def online_run(jobs: int, nodes: int, relaunch: str) -> dict[str, Any]:
    """The median time of one STS decision over the online run."""
    from instances.generators import SyntheticSpec, synthetic

    inst = synthetic(SyntheticSpec(nodes=nodes, jobs=jobs, relaunch=relaunch), seed=0)
    wall, cpu, rest = _timed_run(inst, 0)
    return {"wall": statistics.median(wall), "cpu": statistics.median(cpu), **rest}


def priced_run(rate: str, offset: int | None, seed: int) -> dict[str, Any]:
    """The whole of STS's decisions over an online run under the bundled price series:
    the ``prices`` campaign's thesis family (synthetic, 10 nodes, 60 jobs, ``rate``),
    or its contended family (``contended@LOAD``: the Philly week's jobs from hour 24,
    six hours of them, on 32 GPUs at offered load ``LOAD``), ``au-nsw-2023`` from hour
    ``offset``, carbon at 100 per tonne (``None``: no series), sampled stops."""
    from instances.generators import GENERATORS

    prices = {"prices": f"au-nsw-2023:{offset}", "carbon_price": 100.0}
    if offset is None:
        prices = {}
    if rate.startswith("contended@"):
        cluster = [["k80", 4, 2], ["p100", 4, 2], ["v100", 8, 2]]
        params = {"start": 24.0, "hours": 6.0, "cluster": cluster, "load": float(rate[10:])}
        inst = GENERATORS["philly-week"].instance({**params, **prices}, seed)
    else:
        params = {"nodes": 10, "jobs": 60, "rate": rate}
        inst = GENERATORS["synthetic"].instance({**params, **prices}, seed)
    wall, cpu, rest = _timed_run(inst, seed)
    return {"wall": sum(wall), "cpu": sum(cpu), **rest}


def in_tree(tree: Path, task: dict[str, Any]) -> dict[str, Any]:
    """Run ``task`` in a fresh process importing the code of ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--task", json.dumps(task)],
        cwd=tree,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def unpack(ref: str, into: Path) -> Path:
    """The tree of commit ``ref`` of this repository, unpacked under ``into``."""
    archive = into / "before.tar"
    with archive.open("wb") as f:
        subprocess.run(["git", "archive", ref], cwd=ROOT, stdout=f, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    return into / "tree"


def compare(before: Path, task: dict[str, Any], rounds: int) -> dict[str, dict[str, Any]]:
    """The best of ``rounds`` alternate runs of ``task`` on each tree."""
    best: dict[str, dict[str, Any]] = {}
    for _ in range(rounds):
        for name, tree in (("before", before), ("after", ROOT)):
            r = in_tree(tree, task)
            if name not in best or r["cpu"] < best[name]["cpu"]:
                best[name] = {**r, "wall": min(r["wall"], best.get(name, r)["wall"])}
    return best


def row(task: dict[str, Any], res: dict[str, dict[str, Any]], relaunch: str) -> list[object]:
    b, a = res["before"], res["after"]
    if task["kind"] == "priced":
        rate, offset, seed = task["size"]
        series = "no series" if offset is None else f"priced from hour {offset}"
        name, goal, unit = f"{rate}, {series}, seed {seed}", None, 1.0
        what = f"all {a['decisions']} decisions (s)"
    else:
        n, m = task["size"]
        name = f"{task['kind']} {n} x {m}"
        goal = GOALS.get((task["kind"], n, m)) if relaunch == "measured" else None
        unit = 1e3 if task["kind"] == "online" else 1.0
        what = "one decision (s)" if task["kind"] == "snapshot" else "median decision (ms)"
    return [
        name,
        what,
        "-" if goal is None else f"{goal * unit:g}",
        b["wall"] * unit,
        a["wall"] * unit,
        b["cpu"] * unit,
        a["cpu"] * unit,
        f"{b['cpu'] / a['cpu']:.2f}x",
        "-" if goal is None else ("met" if a["wall"] <= goal else "MISSED"),
        "-" if goal is None else ("met" if a["cpu"] <= goal else "MISSED"),
        "yes" if a["digest"] == b["digest"] else "NO",
        b.get("cost", "-"),
        a.get("cost", "-"),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--task", help=argparse.SUPPRESS)  # a worker process's measurement
    ap.add_argument("--before", default=BEFORE)
    ap.add_argument("--sizes", default="100x400,16000x4000")
    ap.add_argument("--online", default="1000x100", help="jobs x nodes, or '' for none")
    ap.add_argument(
        "--priced",
        default="",
        help="online runs under the price series, RATE:OFFSET:SEED,... (e.g. high:0:0;"
        " OFFSET none: no series)",
    )
    ap.add_argument("--relaunch", choices=("measured", "none"), default="measured")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    if args.task:
        t = json.loads(args.task)
        if t["kind"] == "snapshot":
            print(json.dumps(snapshot_run(*t["size"], t["relaunch"], t["repeats"])))
        elif t["kind"] == "priced":
            print(json.dumps(priced_run(*t["size"])))
        else:
            print(json.dumps(online_run(*t["size"], t["relaunch"])))
        return
    from benchmarks.common import markdown

    tasks = [
        {"kind": "snapshot", "size": [int(x) for x in s.split("x")], "rounds": args.rounds}
        for s in args.sizes.split(",")
        if s
    ]
    tasks += [
        {"kind": "online", "size": [int(x) for x in s.split("x")], "rounds": 1}
        for s in args.online.split(",")
        if s
    ]
    for spec in args.priced.split(","):
        if spec:
            rate, offset, seed = spec.split(":")
            hour = None if offset == "none" else int(offset)
            tasks.append({"kind": "priced", "size": [rate, hour, int(seed)], "rounds": 1})
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        before = unpack(args.before, Path(tmp))
        for task in tasks:
            spec = {**task, "relaunch": args.relaunch, "repeats": args.repeats}
            rows.append(row(task, compare(before, spec, task["rounds"]), args.relaunch))
    headers = [
        "measurement", "figure", "goal", "before wall", "after wall", "before CPU",
        "after CPU", "speed-up (CPU)", "goal (wall)", "goal (CPU)", "same decisions",
        "before cost", "after cost",
    ]  # fmt: skip
    print(f"before: {args.before}; relaunch overheads: {args.relaunch}\n")
    print(markdown(headers, rows))


if __name__ == "__main__":
    main()
