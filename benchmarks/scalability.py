"""The thesis's scalability figure: one STS solve on N nodes with N, 2N and
4N jobs all submitted at time 0 (the seed text, section 8: "under 60 s for 100 nodes
and 400 concurrent jobs", linear in the number of jobs), N from 10 to 16,000.

A solve is one STS decision on the empty cluster with every job waiting: it computes
each job's profiles and places as many as fit (a fresh policy, so its per-instance
tables are in the time). EDF's decision on the same state is beside it. The slope is
that of log(time) against log(jobs) over the sizes of at least 100 jobs: 1 is linear.

Run: python -m benchmarks.scalability [--nodes 10,25,50,100,1000,4000,16000]
    [--multiples 1,2,4] [--relaunch none|measured|both] [--plot docs/scalability.png]
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.common import RELAUNCH_CHOICES, markdown, max_rss_mib, measure, relaunch_modes
from heuristic.baselines.edf import EdfPolicy
from heuristic.core.occupancy import Occupancy
from heuristic.core.policy import JobStatus, SchedulerState
from heuristic.sts.policy import StsPolicy
from instances.generators import SyntheticSpec, synthetic

THESIS_SECONDS = 60.0  # one solve, 100 nodes and 400 jobs
BIG = 5000  # jobs from which a size is timed once, not best of three, and untraced


def at_time_zero(nodes: int, jobs: int, seed: int, relaunch: str) -> SchedulerState:
    inst = synthetic(
        SyntheticSpec(nodes=nodes, jobs=jobs, rate="batch", relaunch=relaunch), seed=seed
    )
    return SchedulerState(
        0.0, inst, tuple(JobStatus(j, 0.0, None) for j in inst.jobs), Occupancy(inst)
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nodes", default="10,25,50,100,1000,4000,16000")
    ap.add_argument("--multiples", default="1,2,4")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--relaunch", choices=RELAUNCH_CHOICES, default="none")
    ap.add_argument("--plot", default=None, help="write time against jobs to this PNG")
    args = ap.parse_args()
    rows = []
    measured: list[tuple[str, int, float, float]] = []  # relaunch, jobs, STS s, EDF s
    for relaunch in relaunch_modes(args.relaunch):
        points = []
        for n in (int(x) for x in args.nodes.split(",")):
            for k in (int(x) for x in args.multiples.split(",")):
                state = at_time_zero(n, k * n, args.seed, relaunch)

                def fresh(st: SchedulerState = state) -> SchedulerState:
                    return SchedulerState(st.time, st.instance, st.jobs, st.occupancy.copy())

                small = k * n < BIG  # big sizes: timed once, heap not traced
                repeats = 3 if small else 1
                sts = measure(lambda: StsPolicy().decide(fresh()), repeats, trace=small)
                edf = measure(lambda: EdfPolicy().decide(fresh()), repeats, trace=False)
                placed = sum(a is not None for a in sts.result.assign.values())
                measured.append((relaunch, k * n, sts.seconds, edf.seconds))
                if k * n >= 100:
                    points.append((k * n, sts.seconds))
                rows.append(
                    [
                        relaunch,
                        n,
                        f"{k}N = {k * n}",
                        placed,
                        sts.seconds,
                        1e3 * sts.seconds / (k * n),
                        edf.seconds,
                        sts.seconds / edf.seconds,
                        sts.peak_mib,
                        "met"
                        if (n, k * n) != (100, 400) or sts.seconds <= THESIS_SECONDS
                        else "NO",
                    ]
                )
        if len(points) >= 2:
            x, y = np.log([p[0] for p in points]), np.log([p[1] for p in points])
            slope = float(np.polyfit(x, y, 1)[0])
            rows.append(
                [relaunch, "", "slope log t / log jobs", "", f"{slope:.2f}", "", "", "", "", ""]
            )
    print(
        markdown(
            [
                "relaunch",
                "nodes N",
                "jobs",
                "placed",
                "STS solve (s)",
                "ms per job",
                "EDF (s)",
                "STS / EDF",
                "STS peak heap (MiB)",
                "thesis: < 60 s at 100 x 400",
            ],
            rows,
        )
    )
    print(f"\nprocess peak RSS {max_rss_mib():.0f} MiB (includes building the instances)")
    if args.plot:
        plot(measured, args.plot)


def plot(measured: list[tuple[str, int, float, float]], path: str) -> None:
    """Time of one solve against the number of jobs, log-log, with the thesis's claim."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for relaunch in dict.fromkeys(m[0] for m in measured):
        pts = sorted((j, s, e) for r, j, s, e in measured if r == relaunch)
        jobs = [p[0] for p in pts]
        ax.plot(jobs, [p[1] for p in pts], "o-", label=f"STS (relaunch {relaunch})")
        ax.plot(jobs, [p[2] for p in pts], "s--", alpha=0.6, label=f"EDF (relaunch {relaunch})")
    ax.plot([400], [THESIS_SECONDS], "r*", markersize=12, label="thesis: < 60 s at 100 x 400")
    ax.set(xscale="log", yscale="log", xlabel="jobs at time 0 (N, 2N, 4N on N nodes)")
    ax.set(ylabel="one solve (s)", title="STS scalability (benchmarks/scalability.py)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
