"""The MILP's time limit against the wall time of the whole call.

On a 60-job, 6-node synthetic instance (rate exponential, 0.25 h slots, seed 0), far too
large to prove: ``milp.solve`` with time limits of 1, 5 and 30 s, with and without the
STS warm start. Printed side by side: wall time, wall / limit, where the call stopped,
what it returned. Goal: ``time_limit=1`` returns within 5 s wall.
The instance carries measured relaunch overheads unless ``--relaunch none``.
Run: python -m benchmarks.milp_time_limit [--limits 1 5 30] [--jobs 60 --nodes 6]
     [--relaunch none]
"""

from __future__ import annotations

import argparse
import time

from benchmarks.common import markdown, max_rss_mib
from heuristic.sts.policy import StsPolicy
from instances.generators import SyntheticSpec, synthetic
from milp import solve
from validation.simulator import rollout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--limits", type=float, nargs="+", default=[1.0, 5.0, 30.0])
    ap.add_argument("--jobs", type=int, default=60)
    ap.add_argument("--nodes", type=int, default=6)
    ap.add_argument("--relaunch", choices=("measured", "none"), default="measured")
    args = ap.parse_args()
    spec = SyntheticSpec(
        nodes=args.nodes, jobs=args.jobs, rate="exponential", slot=0.25, relaunch=args.relaunch
    )
    inst = synthetic(spec, seed=0)
    start = rollout(inst, StsPolicy())
    rows = []
    for limit in args.limits:
        for warm in (False, True):
            t0 = time.perf_counter()
            res = solve(inst, initial_plan=start if warm else None, time_limit=limit, threads=1)
            wall = time.perf_counter() - t0
            stage = res.note.split(" ran out ")[1].split(" (")[0] if res.note else "HiGHS ran"
            rows.append(
                [
                    limit,
                    "STS" if warm else "none",
                    wall,
                    wall / limit,
                    res.termination.value,
                    res.status.value,
                    stage,
                    "-" if res.objective is None else res.objective,
                    res.bound if res.bound is not None else "-",
                ]
            )
    print(f"{inst.name}: {len(inst.jobs)} jobs, {len(inst.nodes)} nodes, slot {inst.slot} h")
    headers = ["limit_s", "start", "wall_s", "wall/limit", "termination", "status"]
    print(markdown([*headers, "stopped", "objective", "bound"], rows))
    print(f"peak RSS {max_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
