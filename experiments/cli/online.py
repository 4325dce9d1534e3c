"""``gpusched online``: online runs (sampled stops): metrics per policy."""

from __future__ import annotations

import argparse
import sys

import pandas as pd
from tqdm import tqdm

from experiments.cli.common import CliError, Subparsers, load_instance, random_seed
from heuristic.core.registry import policy_names, unknown_policy


def add_parser(sub: Subparsers) -> None:
    o = sub.add_parser("online", help="online runs (sampled stops): metrics per policy")
    o.add_argument("instance")
    o.add_argument("--policy", default="all", help="'all', or names separated by commas")
    o.add_argument("--seed", type=random_seed, default=0)
    o.add_argument("--slot", type=float, default=None)
    o.add_argument("--jobs", action="store_true", help="also print each run's jobs")
    o.add_argument("--quiet", action="store_true", help="no progress bar")
    o.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from validation.online import run_online

    inst = load_instance(args.instance, args.slot)
    names = policy_names() if args.policy == "all" else args.policy.split(",")
    known = policy_names(small_only=True)
    for name in names:
        if name not in known:
            raise CliError(f"--policy: {unknown_policy(name, known)}")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:  # its row would be written once: the second run's figures lost unseen
        raise CliError(f"--policy: {', '.join(map(repr, twice))} named more than once")
    rows = {}
    for name in names:
        with tqdm(
            total=len(inst.jobs), desc=name, unit="job", disable=args.quiet, file=sys.stderr
        ) as bar:

            def done(n: int, bar: tqdm = bar) -> None:
                bar.update(n - bar.n)

            run = run_online(inst, name, seed=args.seed, progress=done)
        rows[name] = run.summary()
        if args.jobs:
            print(f"{name}: per job")
            print(run.by_job().to_string(float_format=lambda x: f"{x:.4f}"))
    table = pd.DataFrame(rows).T
    print(f"online runs on {inst.name!r}, stops of seed {args.seed} (realised costs, evaluator)")
    print(table.to_string(float_format=lambda x: f"{x:.4g}"))
    return 0
