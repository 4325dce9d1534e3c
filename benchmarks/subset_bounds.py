"""How much of the MILP's gap small groups of jobs hold.

The cost is a sum over jobs, and leaving jobs out only frees GPUs, so for any set ``S``
of jobs the optimum of ``S`` alone (same cluster, same slots) is at most what ``S``
costs in any plan of all the jobs. Weights ``y_S >= 0`` with ``sum_{S contains j} y_S =
1`` for every job then give a lower bound ``sum_S y_S OPT(S)`` on the whole optimum;
the best such cover (an LP) is the most that cuts ``sum_{j in S} cost_j >= OPT(S)``
over sets of at most ``--size`` jobs could lift the MILP's bound to. Printed per set
size: the sets solved, their time, and the best cover's bound, beside the full MILP's
bound after ``--time-limit`` seconds on the same slots. A subset that is not proved
within ``--subset-limit`` counts with its bound, still a valid one.
Run: python -m benchmarks.subset_bounds [--instance suite-share-2n6j-s2] [--size 3]
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
from scipy.optimize import linprog

from benchmarks.common import markdown
from heuristic.sts.policy import StsPolicy
from instances import Plan
from instances.generators.suite import milp_suite
from milp import solve
from milp.solve import default_slots
from validation.simulator import rollout


def best_cover(jobs: int, bounds: dict[tuple[int, ...], float]) -> tuple[float, list]:
    """The largest ``sum y_S bound_S`` over weights covering every job exactly once."""
    sets = list(bounds)
    cover = np.array([[1.0 if j in s else 0.0 for s in sets] for j in range(jobs)])
    cost = -np.array([bounds[s] for s in sets])
    lp = linprog(cost, A_eq=cover, b_eq=np.ones(jobs), bounds=(0, None), method="highs")
    if lp.status != 0:
        raise RuntimeError(f"the cover LP failed: {lp.message}")
    used = [(s, round(float(y), 3)) for s, y in zip(sets, lp.x, strict=True) if y > 1e-6]
    return float(-lp.fun), used


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--instance", default="suite-share-2n6j-s2")
    ap.add_argument("--size", type=int, default=3)
    ap.add_argument("--subset-limit", type=float, default=30.0)
    ap.add_argument("--time-limit", type=float, default=60.0)
    args = ap.parse_args()
    inst = next(i for i in milp_suite() if i.name == args.instance)
    start = rollout(inst, StsPolicy())
    slots = default_slots(inst, start)
    ids = [j.id for j in inst.jobs]
    bounds: dict[tuple[int, ...], float] = {}
    rows = []
    for size in range(1, args.size + 1):
        t0, unproved = time.perf_counter(), 0
        for subset in itertools.combinations(range(len(ids)), size):
            keep = {ids[i] for i in subset}
            part = inst.replace(jobs=tuple(inst.jobs[i] for i in subset))
            own = Plan.of(s for s in start if s.job in keep)
            res = solve(
                part, initial_plan=own, slots=slots, time_limit=args.subset_limit, threads=1
            )
            assert res.bound is not None  # the capacity relaxation at worst
            bounds[subset] = res.bound
            unproved += not res.optimal
        seconds = time.perf_counter() - t0
        value, used = best_cover(len(ids), bounds)
        rows.append([size, sum(len(s) == size for s in bounds), unproved, seconds, value])
        print(f"sets of up to {size}: best cover {value:.6f} from {used}")
    full = solve(inst, initial_plan=start, slots=slots, time_limit=args.time_limit, threads=1)
    print(f"{inst.name}: {len(ids)} jobs, {slots} slots")
    print(markdown(["up to", "sets", "not proved", "seconds", "cover bound"], rows))
    print(
        f"full MILP, {args.time_limit:g} s from the STS start: cost {full.objective:.6f}, "
        f"bound {full.bound:.6f} ({full.termination.value})"
    )


if __name__ == "__main__":
    main()
