"""The root column generation traced, round by round: where its bound comes from.

On one ``scale_gaps`` instance (``--family``, ``--jobs``), from the improved plan as
``scale_gaps`` makes it, the root alone (no integer master, no search) for
``--seconds`` of wall time. Every pricing prints its kind (heuristic or exact), its
Lagrangian value, CPU seconds and labels, and for an exact one the jobs left unproved
by their label budget (or the deadline) with their completion bound beside the best
schedule found (the most a larger budget could add); every tenth master solve its LP
value, which no root bound can pass. Figures: docs/benchmarks.md ("the overloaded 20-job bound").
Run: python -m benchmarks.colgen_trace [--family realdata] [--jobs 20] [--seconds 480]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks.scale_gaps import instances
from heuristic.sts.policy import StsPolicy
from milp import improve
from milp.decomposition.colgen import CgOptions, generate
from milp.decomposition.master import Master, label_terms
from milp.decomposition.oracle import Oracle, Round
from milp.decomposition.solve import FINAL_SHARE, _start
from milp.decomposition.spread import cores
from milp.improve import tune_sts
from milp.solve import default_slots
from validation.simulator import rollout


class _Traced(Oracle):
    """The oracle, printing each pricing's bound and its jobs out of labels."""

    def __init__(self, *args: object, t0: float, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.t0 = t0

    def price(self, lam: np.ndarray, upper: np.ndarray, **kw: object) -> Round:  # type: ignore[override]
        c = time.process_time()
        got = super().price(lam, upper, **kw)  # type: ignore[arg-type]
        bound = float(np.sum(got.proved)) + label_terms(self.space, lam)
        kind = "heuristic" if kw.get("beam") is not None else "exact"
        line = f"[{time.perf_counter() - self.t0:6.0f} s] {kind:9s} bound {bound:10.4f}"
        line += f" cpu {time.process_time() - c:5.2f} labels {got.labels}"
        if kind == "exact":
            short = np.flatnonzero(~got.exact)
            pairs = [f"{j}: {got.lower[j]:.3f} < {got.value[j]:.3f}" for j in short]
            line += f" unproved (label budget or deadline) {{{', '.join(pairs)}}}"
        print(line, flush=True)
        return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--family", default="realdata")
    ap.add_argument("--jobs", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=480.0)
    ap.add_argument("--method", default="auto", choices=("auto", "simplex", "ipm"))
    args = ap.parse_args()
    inst = instances(args.jobs, "measured", [args.family])[0]
    found = tune_sts(inst, evaluations=max(50, 4000 // len(inst.jobs)))
    tuned = rollout(inst, StsPolicy(tuning=found.tuning))
    slots = default_slots(inst, tuned)
    plan = improve(inst, initial_plan=tuned, time_limit=30, lagrangian=False).plan
    t0, c0 = time.perf_counter(), time.process_time()
    start = _start(inst, plan, slots, None)
    big = 10.0 * max(1.0, start.evaluation.total_cost)
    master = Master(start.space, big=big, method=args.method)
    master.add(start.columns)
    solve, count = master.solve, [0]

    def traced() -> tuple[float, np.ndarray, np.ndarray]:
        out = solve()
        count[0] += 1
        if count[0] % 10 == 0:
            print(f"master solve {count[0]}: LP {out[0]:.4f}", flush=True)
        return out

    master.solve = traced  # type: ignore[method-assign]
    oracle = _Traced(start.space, CgOptions().grid, cores(), t0=t0)
    gen = generate(
        master, oracle, CgOptions(), start.d.separable_bound(), t0 + args.seconds, final=FINAL_SHARE
    )
    print(
        f"{inst.name}: plan {start.evaluation.total_cost:.4f} bound {gen.bound:.4f} "
        f"LP {gen.lp_value:.4f} master solves {gen.rounds} exact {gen.exact_rounds} "
        f"cpu {time.process_time() - c0:.1f} s wall {time.perf_counter() - t0:.1f} s"
    )


if __name__ == "__main__":
    main()
