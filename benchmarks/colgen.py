"""Column generation and branch-and-price (milp.decomposition) on the MILP suite, beside
the bounds we had, measured in one run.

The 24 MILP suite instances (``--relaunch``: as bundled, the seed-2 half with measured
relaunch overheads; ``all``: every one with them; ``none``: none), each over the compact
MILP's horizon (its STS warm start's): the compact model's LP bound (its relaxation,
with the warm start's cost cutting the job windows as in the MILP), the Lagrangian bound
(milp.lagrange, 128 states), the root of the column generation (its Lagrangian bound,
time and master solves), then branch-and-price from the STS plan within the time limit:
its plan, bound, nodes and whether it proved the plan optimal. ``--milp`` also runs the
compact MILP warm-started (60 s) for its time to proof. Larger instances are in
``scale_gaps`` (with ``--colgen-time``).

Run: python -m benchmarks.colgen [--time-limit 60] [--milp] [--relaunch all]
"""

from __future__ import annotations

import argparse
import math
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

from benchmarks.common import SUITE_RELAUNCH, markdown, suite_instances
from heuristic.sts.policy import StsPolicy
from instances import Instance
from milp import solve
from milp.decomposition import solve as decompose
from milp.highs import compile_model, run_highs
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--milp", action="store_true", help="also the compact MILP")
    ap.add_argument("--relaunch", choices=SUITE_RELAUNCH, default="suite")
    args = ap.parse_args()
    headers = ["instance", "slots", "compact LP", "Lagrange", "CG root", "root s"]
    headers += ["rounds", "B&P plan", "B&P bound", "nodes", "proved", "B&P s"]
    headers += ["MILP", "MILP proved", "MILP s"] if args.milp else []
    print("\n".join(markdown(headers, []).splitlines()[:2]), flush=True)
    for inst in suite_instances(args.relaunch):  # a row as soon as it is measured
        row = suite_row(inst, args.time_limit, args.milp)
        print(markdown(headers, [row]).splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()
