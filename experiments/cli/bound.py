"""``gpusched bound``: clairvoyant lower bound (MILP with epochs known)."""

from __future__ import annotations

import argparse

from experiments.cli.common import Subparsers, load_instance, positive_int, random_seed, seconds


def add_parser(sub: Subparsers) -> None:
    b = sub.add_parser("bound", help="clairvoyant lower bound (MILP with epochs known)")
    b.add_argument("instance")
    b.add_argument("--scenarios", type=positive_int, default=10)
    b.add_argument("--seed", type=random_seed, default=0)
    b.add_argument("--time-limit", type=seconds, default=60.0, help="seconds per scenario")
    b.add_argument("--slot", type=float, default=None)
    b.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from experiments.bound import clairvoyant_bound

    inst = load_instance(args.instance, args.slot)
    res = clairvoyant_bound(
        inst, scenarios=args.scenarios, seed=args.seed, time_limit=args.time_limit
    )
    print(
        f"clairvoyant bound of {inst.name!r} over {res.scenarios} scenarios (seed {args.seed}): "
        f"mean {res.bound:.4f} +- {res.stderr:.4f} (std. error); {res.proved}/{res.scenarios} "
        "scenarios proved optimal"
    )
    return 0
