"""Column generation and branch-and-price (milp.decomposition) beside the bounds we had.

Two tables, each measured in one run:

- ``suite``: the 24 MILP suite instances, each over the compact MILP's horizon (its
  STS warm start's): the compact model's LP bound (its relaxation, with the warm start's
  cost cutting the job windows as in the MILP), the Lagrangian bound (milp.lagrange,
  128 states), the root bound of the column generation and its time and master solves,
  then branch-and-price within the time limit: its plan, bound, nodes and whether it
  proved the plan optimal. ``--milp`` also runs the compact MILP warm-started (60 s) for
  its time to proof.
- ``scale``: the real-data instances of scale_gaps (10-50 jobs, measured relaunch
  overheads; the bundled Philly day has no more) and the synthetic one of 50 jobs on
  16 nodes: STS, STS tuned by its search, the tuned plan improved by the MILP
  neighbourhood search (60 s), the Lagrangian bound, then column generation and
  branch-and-price from the improved plan (``--time-limit``, default 600 s): the root
  bound and its time, the final plan and bound, and the certified gap of the best plan
  against the best bound.

Run: python -m benchmarks.colgen suite [--time-limit 60] [--milp]
     python -m benchmarks.colgen scale [--sizes 10 20 30 50] [--time-limit 600]
"""

from __future__ import annotations

import argparse
import contextlib
import math
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from benchmarks.common import markdown
from heuristic.core.result import certified_gap
from heuristic.sts.policy import StsPolicy
from instances import Instance, InstanceError
from instances.generators import RealDataSpec, SyntheticSpec, real_data, synthetic
from instances.generators.realdata import cluster_mix
from instances.generators.suite import milp_suite
from milp import improve, solve
from milp.decomposition import solve as decompose
from milp.highs import compile_model, run_highs
from milp.improve import tune_sts
from milp.lagrange import lagrangian_bound
from milp.model import build_model
from milp.solve import default_slots
from validation.evaluate import evaluate
from validation.simulator import rollout


def compact_lp_bound(inst: Instance, slots: int, cutoff: float, time_limit: float) -> float:
    """The compact MILP's LP relaxation value over ``slots`` (windows cut at
    ``cutoff``, as its warm-started solve builds them)."""
    model, _ = build_model(inst, slots, cutoff=cutoff)
    mats = compile_model(model)
    mats = replace(mats, integer=np.zeros_like(mats.integer))
    with tempfile.TemporaryDirectory() as tmp:
        answer = run_highs(
            mats,
            start=None,
            time_limit=time_limit,
            mip_gap=1e-6,
            threads=1,
            log_file=Path(tmp) / "lp.log",
            stream=False,
        )
    return answer.objective if answer.objective is not None else math.nan


def suite_row(inst: Instance, time_limit: float, milp: bool) -> list[object]:
    plan = rollout(inst, StsPolicy())
    cost = evaluate(inst, plan).total_cost
    slots = default_slots(inst, plan)
    lp = compact_lp_bound(inst, slots, cost, time_limit)
    lag = lagrangian_bound(inst, slots, upper=cost, time_limit=time_limit)
    res = decompose(inst, initial_plan=plan, slots=slots, time_limit=time_limit)
    row: list[object] = [inst.name, slots, lp, lag.bound, res.root_bound, res.root_seconds]
    row += [res.rounds, res.objective, res.bound, res.nodes, res.optimal, res.runtime]
    if milp:
        exact = solve(inst, initial_plan=plan, time_limit=60, threads=1)
        row += [exact.objective, exact.optimal, exact.runtime]
    return row


def scale_instances(sizes: list[int]) -> list[Instance]:
    """The real-data instances of scale_gaps (where the Philly day has enough jobs) and
    the synthetic 50-job one (16 nodes)."""
    out = []
    for jobs in sizes:
        with contextlib.suppress(InstanceError):
            nodes = cluster_mix(max(2, jobs // 3))
            out.append(real_data(RealDataSpec(jobs=jobs, nodes=nodes, slot=0.25)))
    spec = SyntheticSpec(nodes=16, jobs=50, rate="exponential", slot=0.25)
    return [*out, synthetic(spec)]


def scale_row(inst: Instance, time_limit: float) -> list[object]:
    sts = evaluate(inst, rollout(inst, StsPolicy())).total_cost
    t0 = time.perf_counter()
    found = tune_sts(inst, evaluations=max(50, 4000 // len(inst.jobs)))
    tuned = rollout(inst, StsPolicy(tuning=found.tuning))
    search_s = time.perf_counter() - t0
    slots = default_slots(inst, tuned)
    lag = lagrangian_bound(inst, slots, upper=found.objective, time_limit=60)
    better = improve(inst, initial_plan=tuned, time_limit=60, lagrangian=False)
    res = decompose(inst, initial_plan=better.plan, slots=slots, time_limit=time_limit)
    bound = max(lag.bound, better.bound, res.bound)
    best = min(better.objective, res.objective or math.inf)
    row: list[object] = [inst.name, len(inst.jobs), len(inst.nodes), slots, sts, found.objective]
    row += [better.objective, lag.bound, res.root_bound, res.root_seconds, res.rounds]
    row += [res.objective, res.bound, res.nodes, res.runtime, search_s]
    row += [f"{100 * certified_gap(better.objective, bound):.2f}%"]
    row += [f"{100 * certified_gap(best, bound):.2f}%"]
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("table", choices=("suite", "scale"))
    ap.add_argument("--time-limit", type=float, default=None)
    ap.add_argument("--milp", action="store_true", help="suite: also the compact MILP")
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 30, 50])
    args = ap.parse_args()
    if args.table == "suite":
        limit = args.time_limit or 60.0
        rows = [suite_row(inst, limit, args.milp) for inst in milp_suite()]
        headers = ["instance", "slots", "compact LP", "Lagrange", "CG root", "root s"]
        headers += ["rounds", "B&P plan", "B&P bound", "nodes", "proved", "B&P s"]
        headers += ["MILP", "MILP proved", "MILP s"] if args.milp else []
    else:
        limit = args.time_limit or 600.0
        rows = [scale_row(inst, limit) for inst in scale_instances(args.sizes)]
        headers = ["instance", "jobs", "nodes", "slots", "STS", "tuned", "improved"]
        headers += ["Lagrange", "CG root", "root s", "rounds", "B&P plan", "B&P bound"]
        headers += ["nodes", "B&P s", "search s", "improved gap", "best gap"]
    print(markdown(headers, rows))


if __name__ == "__main__":
    main()
