"""``gpusched demo``: roll out a policy on a bundled instance, print costs."""

from __future__ import annotations

import argparse

from experiments.cli.common import Subparsers, load_instance, policy_name, random_seed, scenarios
from experiments.cli.solve import run_policy
from heuristic.core.registry import policy_names
from instances.bundled import bundled_names


def add_parser(sub: Subparsers) -> None:
    d = sub.add_parser("demo", help="roll out a policy on a bundled instance, print costs")
    d.add_argument(
        "instance",
        nargs="?",
        default="small",
        help=f"file or bundled name ({', '.join(bundled_names())})",
    )
    d.add_argument(
        "--policy",
        default="fifo",
        type=policy_name,
        help=f"one of {', '.join(policy_names())} (default: fifo)",
    )
    d.add_argument("--seed", type=random_seed, default=0)
    d.add_argument("--mc", type=scenarios, default=2000, help="Monte Carlo scenarios (0: none)")
    d.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    inst = load_instance(args.instance)
    print(
        f"gpusched demo: instance {inst.name!r} ({len(inst.nodes)} nodes, "
        f"{sum(n.num_gpus for n in inst.nodes)} GPUs, {len(inst.jobs)} jobs, "
        f"tardiness {inst.tardiness})"
    )
    return run_policy(inst, args.policy, args.seed, None, mc=args.mc)
