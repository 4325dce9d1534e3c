"""What-if runs taken rather than made again (``sts``'s ``reuse``,
:mod:`validation.rollout_choice`): the same decisions in less CPU, measured side by side.

Each case is run twice by ``sts`` in one process (after a warm-up run), with every
what-if run made afresh and with the runs the winning copy foresaw taken: the plans
must be the same (the column ``same``), and the table gives each run's CPU, their
ratio, the decisions weighed by what-if runs and the runs made. Cases: the contended family of
:mod:`benchmarks.idle` (the Philly week's jobs on 32 GPUs at loads 0.6 and 1.2), at
the flat price, under the bundled ``au-nsw-2023`` series (from hour 840, carbon
unpriced) and with idle power at ``low`` on nodes always on; the worst-case rollout
and an online run (the stops of seed 1).

Run: python -m benchmarks.whatif_reuse [--seeds 2] [--bills flat,series,idle]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator

import pandas as pd

import validation.rollout_choice as rc
from benchmarks.idle import cases
from experiments.cli.common import positive_int
from heuristic.core.registry import make_policy
from instances import Instance
from instances.generators.power import lay_idle
from instances.generators.prices import lay_prices
from validation.evaluate import evaluate
from validation.scenario import scenario_instance
from validation.simulator import simulate

BILLS: dict[str, Callable[[Instance], Instance]] = {
    "flat": lambda inst: inst,
    "series": lambda inst: lay_prices(inst, "au-nsw-2023:840"),
    "idle": lambda inst: lay_idle(inst, "low"),
}
MODES = (("worst case", "rollout"), ("online", "sampled"))


def _contended(seeds: int) -> Iterator[tuple[str, Instance]]:
    for family, name, inst in cases(seeds):
        if family == "contended":
            yield name, inst


def _run(inst: Instance, mode: str, reuse: bool) -> tuple[object, float, float, int, int]:
    """One run of ``sts``: its plan, realised cost, CPU seconds, decisions weighed and
    what-if runs made."""
    made = [0]
    what_if = rc.what_if

    def counted(*args: object) -> object:
        made[0] += 1
        return what_if(*args)  # type: ignore[arg-type]

    policy = make_policy("sts")
    policy.reuse = reuse
    rc.what_if = counted  # type: ignore[assignment]
    try:
        clock = time.process_time()
        res = simulate(inst, policy, mode=mode, seed=1)  # type: ignore[arg-type]
        cpu = time.process_time() - clock
    finally:
        rc.what_if = what_if
    cost = evaluate(scenario_instance(inst, res.epochs), res.plan, check=False).total_cost
    return res.plan, cost, cpu, policy.what_ifs, made[0]


def measure(seeds: int, bills: list[str]) -> pd.DataFrame:
    rows = []
    # one run first, not measured: the compiled loops load and the profile tables warm
    # up in it, which would otherwise count against the first run made afresh
    _, first = next(_contended(1))
    _run(BILLS[bills[0]](first), "rollout", reuse=True)
    for name, inst in _contended(seeds):
        for bill in bills:
            laid = BILLS[bill](inst)
            for label, mode in MODES:
                plan0, cost0, cpu0, weighed, made0 = _run(laid, mode, reuse=False)
                plan1, cost1, cpu1, _, made1 = _run(laid, mode, reuse=True)
                rows.append(
                    {
                        "case": name,
                        "bill": bill,
                        "run": label,
                        "same": plan0 == plan1 and cost0 == cost1,
                        "cost": cost1,
                        "cpu made afresh": cpu0,
                        "cpu reused": cpu1,
                        "ratio": cpu1 / cpu0,
                        "weighed": weighed,
                        "runs afresh": made0,
                        "runs reused": made1,
                    }
                )
                print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=positive_int, default=2)
    ap.add_argument("--bills", default=",".join(BILLS))
    args = ap.parse_args()
    bills = args.bills.split(",")
    unknown = [b for b in bills if b not in BILLS]
    if unknown:
        ap.error(f"--bills: {unknown[0]!r} is not one of {', '.join(BILLS)}")
    df = measure(args.seeds, bills)
    print(df.to_markdown(index=False, floatfmt=".4g"))
    sums = df.groupby(["bill", "run"], sort=False)[["cpu made afresh", "cpu reused"]].sum()
    sums["ratio"] = sums["cpu reused"] / sums["cpu made afresh"]
    print()
    print(sums.to_markdown(floatfmt=".4g"))
    print(f"\nevery plan the same: {bool(df['same'].all())}")


if __name__ == "__main__":
    main()
