"""``gpusched compare``: every registered policy on one instance, one table."""

from __future__ import annotations

import argparse

from experiments.cli.common import Subparsers, load_instance, random_seed
from experiments.tables import compare_table
from heuristic.core.registry import policy_names


def add_parser(sub: Subparsers) -> None:
    c = sub.add_parser("compare", help="every registered policy on one instance, one table")
    c.add_argument("instance")
    c.add_argument("--seed", type=random_seed, default=0)
    c.add_argument("--slot", type=float, default=None, help="slot length in hours")
    c.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    inst = load_instance(args.instance, args.slot)
    print(
        compare_table(inst, policy_names(), seed=args.seed).to_string(
            float_format=lambda x: f"{x:.4f}"
        )
    )
    return 0
