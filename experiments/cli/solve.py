"""``gpusched solve``: worst-case rollout of a policy: plan + cost table."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from experiments.cli.common import (
    Subparsers,
    load_instance,
    out_file,
    policy_name,
    policy_option,
    policy_options,
    random_seed,
    scenarios,
)
from experiments.tables import cost_table, evaluated_rollout, summary_line
from heuristic.core.registry import policy_names
from instances import Instance, write_plan
from validation.montecarlo import replay


def add_parser(sub: Subparsers) -> None:
    s = sub.add_parser("solve", help="worst-case rollout of a policy: plan + cost table")
    s.add_argument("instance")
    s.add_argument(
        "--policy",
        default="fifo",
        type=policy_name,
        help=f"one of {', '.join(policy_names())} (default: fifo)",
    )
    s.add_argument("--seed", type=random_seed, default=0)
    s.add_argument("--slot", type=float, default=None, help="slot length in hours")
    s.add_argument("--out", type=out_file, help="write the plan (JSON) here")
    s.add_argument("--mc", type=scenarios, default=0, help="Monte Carlo scenarios to cross-check")
    s.add_argument(
        "--option",
        type=policy_option,
        action="append",
        metavar="KEY=VALUE",
        help="a policy option, e.g. --option reserve=0.3 (docs/policies.md lists them)",
    )
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    inst = load_instance(args.instance, args.slot)
    options = policy_options(args.option)
    return run_policy(inst, args.policy, args.seed, args.out, mc=args.mc, options=options)


def run_policy(
    inst: Instance,
    policy: str,
    seed: int,
    out: str | None,
    mc: int = 0,
    options: Mapping[str, Any] | None = None,
) -> int:
    result, ev, seconds = evaluated_rollout(inst, policy, seed=seed, options=options)
    print(
        f"policy {policy}: worst-case rollout, {len(result.plan)} segments, "
        f"{result.decisions} decisions in {seconds:.3f} s"
    )
    print(cost_table(ev))
    print(summary_line(ev))
    if mc:
        r = replay(inst, result.plan, samples=mc, seed=seed)
        lo, hi = r.interval
        print(
            f"Monte Carlo ({mc} scenarios, seed {seed}): mean total {r.mean_total:.4f}, "
            f"99% CI [{lo:.4f}, {hi:.4f}] "
            f"({'contains' if r.contains(ev.total_cost) else 'DOES NOT contain'} the exact "
            f"{ev.total_cost:.4f})"
        )
    if out:
        write_plan(result.plan, out, instance=inst.name, policy=policy)
        print(f"plan written to {out}")
    return 0
