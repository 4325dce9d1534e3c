"""``gpusched evaluate``: check and cost a plan (the one evaluator)."""

from __future__ import annotations

import argparse

from experiments.cli.common import Subparsers, load_instance
from experiments.tables import cost_table, summary_line
from instances import read_plan
from validation.check import relaunch_notes
from validation.evaluate import evaluate


def add_parser(sub: Subparsers) -> None:
    e = sub.add_parser("evaluate", help="check and cost a plan (the one evaluator)")
    e.add_argument("instance")
    e.add_argument("plan")
    e.add_argument("--tardiness", choices=("worst_case", "expected"), default=None)
    e.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    inst = load_instance(args.instance)
    plan = read_plan(args.plan, instance=inst.name)
    ev = evaluate(inst, plan, tardiness=args.tardiness)
    print(cost_table(ev))
    print(summary_line(ev))
    for note in relaunch_notes(inst, plan):
        print(f"note: {note}")
    return 0
