"""The MILP with idle power on nodes always on (milp/idle.py) or powered off when empty
(``--power-off AFTER_H,BOOT_H,BOOT_KWH``: milp/power_off.py; docs/milp.md, 'Idle
power: a bound, not a price'): the 24 suite instances with idle power at a level of
``--idle`` (docs/model.md), warm-started by STS, each with a time limit: the plan (the
evaluator's cost), HiGHS's bound, the certified gap, and whether the plan meets the
bound (proved), beside the same instance without idle power. CPU time beside wall.

Run: python -m benchmarks.milp_idle [--idle low] [--power-off 0.25,0.1,0.05]
[--time-limit 60] [--only NAME ...] [--idle-only]
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from heuristic.sts.policy import StsPolicy
from instances.generators.power import lay_idle, lay_power_off
from instances.generators.suite import milp_suite
from milp import solve
from validation.evaluate import evaluate
from validation.simulator import rollout


def measure(
    level: str,
    time_limit: float,
    only: list[str] | None,
    plain_too: bool = True,
    power_off: str | None = None,
) -> pd.DataFrame:
    rows = []
    for plain in milp_suite():
        if only and plain.name not in only:
            continue
        cases = [("none", plain)] if plain_too else []
        charged, name = lay_idle(plain, level), level
        if power_off is not None:
            charged, name = lay_power_off(charged, power_off), f"{level}, off {power_off}"
        for label, inst in [*cases, (name, charged)]:
            start = rollout(inst, StsPolicy())
            t0, c0 = time.perf_counter(), time.process_time()
            res = solve(inst, initial_plan=start, time_limit=time_limit, threads=1)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            assert res.objective is not None and res.bound is not None
            rows.append(
                {
                    "instance": plain.name,
                    "idle": label,
                    "sts": evaluate(inst, start).total_cost,
                    "plan": res.objective,
                    "bound": res.bound,
                    "gap": res.gap,
                    "proved": res.optimal,
                    "wall_s": wall,
                    "cpu_s": cpu,
                }
            )
            print(pd.DataFrame(rows[-1:]).to_string(header=len(rows) == 1), flush=True)
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--idle", default="low")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--power-off", help="AFTER_H[,BOOT_H[,BOOT_KWH]] (default: always on)")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--idle-only", action="store_true", help="not the instances without")
    args = ap.parse_args()
    df = measure(args.idle, args.time_limit, args.only, not args.idle_only, args.power_off)
    print(df.to_markdown(index=False, floatfmt=".4g"))
    for label, g in df.groupby("idle", sort=False):
        print(
            f"{label}: proved {int(g.proved.sum())} of {len(g)}, gap max {g.gap.max():.4%}, "
            f"CPU max {g.cpu_s.max():.1f} s"
        )


if __name__ == "__main__":
    main()
