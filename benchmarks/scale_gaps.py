"""Gaps at every size: how far STS is from the best bound we have.

Three families, 0.25 h slots:

- ``synthetic``: suite-like (rate exponential), 10 to 200 jobs on about jobs/3 nodes;
- ``realdata``: Philly arrivals and Gavel throughputs, where the bundled Philly day has
  that many jobs fitting the filters (78: up to 50 jobs);
- ``contended``: the Philly week's jobs from hour 24 replayed on a small cluster of
  three GPU types at an offered load of 0.9 (docs/model.md, "Contended replays"), as
  the campaign ``contended`` does: 100 jobs on its 32-GPU cluster (K80 x4, P100 x4,
  V100 x8 nodes, two of each), 200 on its 128-GPU one (eight of each).

Per instance: greedy STS, STS tuned by its search (a budget of rollouts shrinking with
size), the tuned plan improved by the MILP neighbourhood search (:func:`milp.improve`;
30 s up to 20 jobs, 60 s beyond), the MILP warm-started by the tuned plan (60 s for the
whole call; "too large" where the model would not fit in memory), then column
generation and branch-and-price from the improved plan (:mod:`milp.decomposition`,
``--colgen-time``, default 600 s): its root (master LP value, Lagrangian bound, master
solves, seconds), its plan and bound. The lower bounds: the capacity relaxation (each
job alone), the Lagrangian bound (:mod:`milp.lagrange`), the MILP's and branch-and-
price's; the best bound is the highest. Certified gaps are ``(cost - bound) / bound``
against the best bound: the improved plan's, and the best plan's (the cheapest of the
improved plan, the MILP's and branch-and-price's). A large gap may be the bound's fault
as much as the plan's.
The instances carry measured relaunch overheads; ``--relaunch none`` gives the figures
without them.
Run: python -m benchmarks.scale_gaps [--families realdata contended] [--sizes 10 20 ...]
     [--time-limit 60] [--colgen-time 600] [--relaunch none]
"""

from __future__ import annotations

import argparse
import contextlib
import math
import time
from collections.abc import Sequence

from benchmarks.common import markdown
from heuristic.core.result import certified_gap
from heuristic.sts.policy import StsPolicy
from instances import Instance, InstanceError, Plan
from instances.generators import RealDataSpec, SyntheticSpec, real_data, synthetic
from instances.generators.realdata import cluster_mix
from instances.generators.traces import TraceSpec, trace_instance
from milp import MilpError, improve, solve
from milp.decomposition import DecompositionResult
from milp.decomposition import solve as decompose
from milp.improve import tune_sts
from milp.lagrange import lagrangian_bound
from milp.solve import default_slots
from validation.evaluate import evaluate
from validation.simulator import rollout

FAMILIES = ("synthetic", "realdata", "contended")
# the contended campaign's scenarios (experiments/campaigns/contended.toml): a window of
# the Philly week from hour 24, long enough for the jobs asked, on 32 or 128 GPUs
CONTENDED_LOAD = 0.9
CLUSTER_32 = (("k80", 4, 2), ("p100", 4, 2), ("v100", 8, 2))
CLUSTER_128 = (("k80", 4, 8), ("p100", 4, 8), ("v100", 8, 8))


def instances(
    jobs: int, relaunch: str = "measured", families: Sequence[str] = FAMILIES
) -> list[Instance]:
    """The instances of this size in each family that has one (real data up to the
    bundled Philly day's 78 jobs, contended from 100 jobs on)."""
    nodes = max(2, jobs // 3)
    out = []
    if "synthetic" in families:
        spec = SyntheticSpec(
            nodes=nodes, jobs=jobs, rate="exponential", slot=0.25, relaunch=relaunch
        )
        out.append(synthetic(spec))
    if "realdata" in families:
        with contextlib.suppress(InstanceError):
            real = RealDataSpec(jobs=jobs, nodes=cluster_mix(nodes), slot=0.25, relaunch=relaunch)
            out.append(real_data(real))
    if "contended" in families and jobs >= 100:
        out.append(contended(jobs, relaunch))
    return out


def contended(jobs: int, relaunch: str = "measured") -> Instance:
    """The first ``jobs`` jobs of the Philly week from hour 24 on the contended
    campaign's 32-GPU cluster (up to its 6-hour window's 104 jobs) or its 128-GPU one
    (a 10-hour window), arrivals scaled to an offered load of 0.9."""
    small = jobs <= 104
    spec = TraceSpec(
        start=24.0,
        hours=6.0 if small else 10.0,
        jobs=jobs,
        cluster=CLUSTER_32 if small else CLUSTER_128,
        load=CONTENDED_LOAD,
        slot=0.25,
        relaunch=relaunch,
    )
    return trace_instance(spec, 0, None)


def row(inst: Instance, time_limit: float, colgen_time: float) -> list[object]:
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
    milp, milp_bound, milp_s = _milp(inst, tuned_plan, time_limit)
    cg: DecompositionResult | None = None
    if colgen_time > 0:
        cg = decompose(inst, initial_plan=better.plan, slots=slots, time_limit=colgen_time)
    bounds = [lag.bound, better.bound, milp_bound, cg.bound if cg is not None else -math.inf]
    bound = max(b for b in bounds if b is not None)
    plans = [better.objective, milp, cg.objective if cg is not None else None]
    best = min(c for c in plans if isinstance(c, float))

    def gap(cost: float) -> str:
        return f"{100 * certified_gap(cost, bound):.1f}%"

    out: list[object] = [inst.name, len(inst.jobs), len(inst.nodes), slots, sts]
    out += [found.objective, better.objective, milp, lag.capacity_relaxation, lag.bound]
    out += [*_colgen_cells(cg), bound, gap(sts), gap(found.objective)]
    out += [gap(better.objective), gap(best), tune_s, lag.runtime, better.runtime, milp_s]
    return out


def _milp(inst: Instance, start: Plan, time_limit: float) -> tuple[object, float | None, object]:
    """The warm-started MILP: its cost ("no better": it did not improve the start; "too
    large": the model is not built), its bound and its seconds."""
    try:
        res = solve(inst, initial_plan=start, time_limit=time_limit, threads=1)
    except MilpError:  # too large to build
        return "too large", None, "-"
    assert res.bound is not None  # never below the capacity relaxation
    cost = res.objective if res.solver_objective is not None else "no better"
    return cost, res.bound, res.runtime


def _colgen_cells(cg: DecompositionResult | None) -> list[object]:
    """The root's master LP value, its Lagrangian bound, master solves and seconds;
    branch-and-price's plan, bound, nodes and seconds ("-": not run)."""
    if cg is None:
        return ["-"] * 8
    plan = cg.objective if cg.objective is not None else "none"
    root = [cg.root_lp, cg.root_bound, cg.rounds, cg.root_seconds]
    return [*root, plan, cg.bound, cg.nodes, cg.runtime]


HEADERS = [
    "instance",
    "jobs",
    "nodes",
    "slots",
    "STS",
    "tuned",
    "improved",
    "MILP",
    "capacity",
    "Lagrange",
    "CG root LP",
    "CG root bound",
    "rounds",
    "root s",
    "B&P plan",
    "B&P bound",
    "B&P nodes",
    "B&P s",
    "best bound",
    "STS gap",
    "tuned gap",
    "improved gap",
    "best gap",
    "search s",
    "Lagrange s",
    "improve s",
    "MILP s",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 30, 50, 100, 200])
    ap.add_argument("--families", nargs="+", choices=FAMILIES, default=list(FAMILIES))
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--colgen-time", type=float, default=600.0, help="0: no column generation")
    ap.add_argument("--relaunch", choices=("measured", "none"), default="measured")
    args = ap.parse_args()
    print("\n".join(markdown(HEADERS, []).splitlines()[:2]), flush=True)
    for jobs in args.sizes:  # a row as soon as it is measured: the runs are long
        for inst in instances(jobs, args.relaunch, args.families):
            cells = row(inst, args.time_limit, args.colgen_time)
            print(markdown(HEADERS, [cells]).splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()
