"""The plot of when work runs against the price over a week (docs/prices.md): the
expected power a plan draws, hour by hour (each segment's power times the probability
that its job still runs then, as the evaluator bills it), for STS deciding when and for
STS blind to the series, under the bundled ``au-nsw-2023`` prices.

The instance is one of the ``prices`` campaign's contended runs (the Philly week's jobs
from 2017-11-07 00:00, 6 hours, on 32 GPUs at an offered load of 0.6, seed 0), its
worst-case rollout, from hour ``--offset`` of the series.

Run: python -m benchmarks.prices_week [--offset 840] [--out docs/prices-week.png]
"""

from __future__ import annotations

import argparse

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt
import numpy as np

from heuristic.core.registry import make_policy
from instances import Instance, Plan
from instances.generators.prices import lay_prices
from instances.generators.registry import GENERATORS
from validation.billing import exposure
from validation.evaluate import evaluate
from validation.simulator import rollout
from validation.timeline import Timeline

HOURS = 168
CLUSTER = [["k80", 4, 2], ["p100", 4, 2], ["v100", 8, 2]]


def expected_power(inst: Instance, plan: Plan, hours: int) -> np.ndarray:
    """Mean expected kW drawn in each hour from 0 (overheads and epochs, each paid with
    the probability that its job still runs)."""
    out = np.zeros(hours)
    for job in inst.jobs:
        segments = tuple(s for s in plan.segments if s.job == job.id)
        for piece in Timeline.of(inst, job.id, segments).pieces:
            kw = inst.power_w(piece.segment.config) / 1000.0
            for a, b, p in exposure(job.distribution, piece):
                for h in range(max(0, int(a)), min(hours, int(np.ceil(b)))):
                    out[h] += kw * p * max(0.0, min(b, h + 1) - max(a, h))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--offset", type=int, default=840)
    ap.add_argument("--load", type=float, default=0.6)
    ap.add_argument("--out", default="docs/prices-week.png")
    args = ap.parse_args()
    params = {"start": 24.0, "hours": 6.0, "cluster": CLUSTER, "load": args.load}
    inst = lay_prices(
        GENERATORS["philly-week"].instance(params, 0), f"au-nsw-2023:{args.offset}", 100.0
    )
    fig, ax = plt.subplots(figsize=(10, 4.2))
    hours = np.arange(HOURS)
    for policy, colour in (("sts-price-blind", "tab:grey"), ("sts", "tab:green")):
        plan = rollout(inst, make_policy(policy))
        ev = evaluate(inst, plan)
        label = f"{policy}: bill {ev.energy_cost + ev.carbon_cost:.1f}, missed {ev.missed}"
        ax.step(hours, expected_power(inst, plan, HOURS), where="post", color=colour, label=label)
        print(label)
    ax.set_xlabel("hours from the first arrival")
    ax.set_ylabel("expected power drawn (kW)")
    price = ax.twinx()
    assert inst.prices is not None
    per_hour = [inst.prices.integral(h, h + 1) for h in range(HOURS)]
    price.step(hours, per_hour, where="post", color="tab:orange", alpha=0.6, label="price")
    price.set_ylabel("price per kWh (orange)")
    ax.legend(loc="upper right", fontsize=8)
    ax.set_title(f"When work runs: au-nsw-2023 from hour {args.offset}, {inst.name}")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
