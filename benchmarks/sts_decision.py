"""Time of one scheduling decision on a busy cluster snapshot, STS side by side with EDF.

Snapshot: a synthetic cluster (k80/p100/v100 nodes of 2-8 GPUs) where every job has
arrived; jobs in order of release are placed by EDF's rule (running, with random
progress) until half the GPUs or half the jobs are taken; the rest wait, so the decision
must place up to half of the jobs. Goals: STS decision
at most 0.5 s at 100 nodes x 400 jobs and at most 5 s at 16,000 nodes x 4,000 jobs,
and with the jobs' measured relaunch overheads at most 0.1 s and 2 s.
Each size is measured with those overheads and without: with overheads STS's profile
searches configuration chains. Optimus' round (a
fresh policy, so its speed fits are in the time) has the paper's anchor, 5 s at
16,000 nodes x 4,000 jobs.
Run: python -m benchmarks.sts_decision [--sizes 100x400,16000x4000] [--relaunch both]
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.common import RELAUNCH_CHOICES, markdown, max_rss_mib, measure, relaunch_modes
from heuristic.baselines.edf import EdfPolicy
from heuristic.core.choice import cheapest_placement
from heuristic.core.occupancy import Occupancy
from heuristic.core.policy import JobStatus, SchedulerState
from heuristic.seeds.optimus import OptimusPolicy
from heuristic.sts.policy import StsPolicy
from instances.generators import SyntheticSpec, synthetic

GOALS = {(100, 400): 0.5, (16000, 4000): 5.0}
GOALS_MEASURED = {(100, 400): 0.1, (16000, 4000): 2.0}  # with measured overheads


def snapshot(nodes: int, jobs: int, seed: int = 0, relaunch: str = "measured") -> SchedulerState:
    spec = SyntheticSpec(nodes=nodes, jobs=jobs, rate="high", relaunch=relaunch)
    inst = synthetic(spec, seed=seed)
    now = max(j.release for j in inst.jobs)
    rng = np.random.default_rng(seed)
    occ = Occupancy(inst)
    capacity = sum(n.num_gpus for n in inst.nodes)
    statuses = []
    for k, job in enumerate(sorted(inst.jobs, key=lambda j: (j.release, j.id))):
        busy = capacity - sum(len(f) for f in occ.free.values())
        alloc = None
        progress = 0.0
        if busy < capacity / 2 and k < jobs / 2:
            progress = float(rng.uniform(0, 0.8)) * job.max_epochs
            alloc = cheapest_placement(inst, job, job.max_epochs - progress, now, occ)
            if alloc is not None:
                occ.place(job, alloc)
            else:
                progress = 0.0
        statuses.append(JobStatus(job, progress, alloc))
    return SchedulerState(now, inst, tuple(statuses), occ)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="100x400,16000x4000")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--relaunch", choices=RELAUNCH_CHOICES, default="both")
    args = ap.parse_args()
    rows = []
    sizes = [tuple(int(x) for x in size.split("x")) for size in args.sizes.split(",")]
    for (n, j), relaunch in ((s, r) for s in sizes for r in relaunch_modes(args.relaunch)):
        state = snapshot(n, j, args.seed, relaunch)
        waiting = sum(s.allocation is None for s in state.jobs)

        def fresh(st: SchedulerState = state) -> SchedulerState:
            return SchedulerState(st.time, st.instance, st.jobs, st.occupancy.copy())

        sts = measure(lambda: StsPolicy().decide(fresh()), repeats=3)
        edf = measure(lambda: EdfPolicy().decide(fresh()), repeats=3)
        optimus = measure(lambda: OptimusPolicy().decide(fresh()), repeats=3)
        goal = (GOALS_MEASURED if relaunch == "measured" else GOALS).get((n, j))
        rows.append(
            [
                f"{n} x {j}",
                relaunch,
                f"{j - waiting} running, {waiting} waiting",
                sts.seconds,
                edf.seconds,
                sts.seconds / edf.seconds,
                sts.peak_mib,
                "-" if goal is None else f"{goal:g}",
                "-" if goal is None else ("met" if sts.seconds <= goal else "MISSED"),
                optimus.seconds,
                "met" if (n, j) != (16000, 4000) or optimus.seconds <= 5.0 else "MISSED",
            ]
        )
    print(
        markdown(
            [
                "nodes x jobs",
                "relaunch",
                "snapshot",
                "STS decision (s)",
                "EDF decision (s)",
                "STS / EDF",
                "STS peak heap (MiB)",
                "goal (s)",
                "",
                "Optimus round (s)",
                "Optimus <= 5 s",
            ],
            rows,
        )
    )
    print(f"\nprocess peak RSS {max_rss_mib():.0f} MiB (includes building the snapshots)")


if __name__ == "__main__":
    main()
