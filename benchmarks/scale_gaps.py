"""Gaps at every size: how far STS is from the best bound we have.

For 10, 20, 30, 50, 100 and 200 jobs (nodes about jobs/3), a suite-like synthetic
instance (rate exponential) and a real-data one, both with 0.25 h slots: greedy STS,
STS tuned by its search (a budget of rollouts shrinking with size), the tuned plan
improved by the MILP neighbourhood search (:func:`milp.improve`; 30 s up to 20 jobs, 60 s
beyond), the MILP warm-started by the tuned plan (60 s for the whole call; refused where
the model would not fit in memory), and the lower bounds: the capacity relaxation (each
job alone), the Lagrangian bound (:mod:`milp.lagrange`) and the best of those and the
MILP's. Certified gaps are ``(cost - bound) / bound``; a large one may be the bound's
fault as much as the plan's.
The instances carry measured relaunch overheads; ``--relaunch none`` gives
the figures without them.
Run: python -m benchmarks.scale_gaps [--sizes 10 20 ...] [--time-limit 60] [--relaunch none]
"""

from __future__ import annotations

import argparse
import contextlib
import time

from benchmarks.common import markdown
from heuristic.core.result import certified_gap
from heuristic.sts.policy import StsPolicy
from instances import Instance, InstanceError
from instances.generators import RealDataSpec, SyntheticSpec, real_data, synthetic
from instances.generators.realdata import cluster_mix
from milp import MilpError, improve, solve
from milp.improve import tune_sts
from milp.lagrange import lagrangian_bound
from milp.solve import default_slots
from validation.evaluate import evaluate
from validation.simulator import rollout


def instances(jobs: int, relaunch: str = "measured") -> list[Instance]:
    """The synthetic instance of this size, and the real-data one where the bundled
    Philly day has that many jobs fitting the filters (78)."""
    nodes = max(2, jobs // 3)
    spec = SyntheticSpec(nodes=nodes, jobs=jobs, rate="exponential", slot=0.25, relaunch=relaunch)
    out = [synthetic(spec)]
    with contextlib.suppress(InstanceError):
        real = RealDataSpec(jobs=jobs, nodes=cluster_mix(nodes), slot=0.25, relaunch=relaunch)
        out.append(real_data(real))
    return out


def row(inst: Instance, time_limit: float) -> list[object]:
    sts = evaluate(inst, rollout(inst, StsPolicy())).total_cost
    t0 = time.perf_counter()
    found = tune_sts(inst, evaluations=max(50, 4000 // len(inst.jobs)))
    tuned_plan = rollout(inst, StsPolicy(tuning=found.tuning))
    tune_s = time.perf_counter() - t0
    slots = default_slots(inst, tuned_plan)
    lag = lagrangian_bound(inst, slots, upper=found.objective, time_limit=time_limit)
    # the goals give 30 s where the MILP proves optimality (<= 20 jobs), 60 s beyond
    budget = time_limit / 2 if len(inst.jobs) <= 20 else time_limit
    better = improve(inst, initial_plan=tuned_plan, time_limit=budget, lagrangian=False)
    milp: object = "too large"
    milp_s: object = "-"
    bound = max(lag.bound, better.bound)
    try:
        res = solve(inst, initial_plan=tuned_plan, time_limit=time_limit, threads=1)
        milp_s = res.runtime
        milp = res.objective if res.solver_objective is not None else "no better"
        assert res.bound is not None  # never below the capacity relaxation
        bound = max(bound, res.bound)
    except MilpError:  # too large to build
        pass
    best = min(better.objective, milp if isinstance(milp, float) else better.objective)

    def gap(cost: float) -> str:
        return f"{100 * certified_gap(cost, bound):.1f}%"

    return [
        inst.name,
        len(inst.jobs),
        len(inst.nodes),
        sts,
        found.objective,
        better.objective,
        milp,
        lag.capacity_relaxation,
        lag.bound,
        bound,
        gap(sts),
        gap(found.objective),
        gap(better.objective),
        gap(best),
        tune_s,
        lag.runtime,
        better.runtime,
        milp_s,
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 30, 50, 100, 200])
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--relaunch", choices=("measured", "none"), default="measured")
    args = ap.parse_args()
    rows = [
        row(inst, args.time_limit) for jobs in args.sizes for inst in instances(jobs, args.relaunch)
    ]
    headers = ["instance", "jobs", "nodes", "STS", "tuned", "improved", "MILP", "capacity"]
    headers += ["Lagrange", "best bound", "STS gap", "tuned gap", "improved gap", "best gap"]
    headers += ["search s", "Lagrange s", "improve s", "MILP s"]
    print(markdown(headers, rows))


if __name__ == "__main__":
    main()
