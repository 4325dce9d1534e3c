"""The ``gpusched`` command: thin subcommands over library calls."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from experiments.campaign import CampaignError
from experiments.store import StoreError
from experiments.tables import compare_table, cost_table, evaluated_rollout, summary_line
from heuristic.core.registry import policy_names
from instances import (
    Instance,
    InstanceError,
    PlanError,
    read_instance,
    read_plan,
    write_instance,
    write_plan,
)
from instances.bundled import bundled, bundled_names
from instances.generators import FAMILIES, RealDataSpec, SyntheticSpec, real_data, synthetic
from instances.generators.liquid import LiquidSpec, liquid
from instances.generators.realdata import cluster_mix
from instances.generators.stops_fit import RUNNING_READINGS, StopsFit, read_fit
from instances.generators.suite import milp_suite
from instances.generators.synergy import SHAPES, SynergySpec, synergy
from instances.generators.synthetic import CALIBRATIONS, RATES
from instances.generators.traces import FITTED, TRACES, TraceSpec, trace_instance
from milp import MilpError
from validation.check import relaunch_notes
from validation.evaluate import evaluate
from validation.montecarlo import replay
from validation.simulator import SimulationError


class CliError(ValueError):
    """A bad option value found after argparse (the message names the option)."""


def _instance(source: str, slot: float | None = None) -> Instance:
    """A file path, or the name of a bundled instance; ``slot`` (``--slot``), if given,
    replaces its slot length."""
    if not Path(source).exists() and source in bundled_names():
        inst = bundled(source)
    else:
        inst = read_instance(source)
    return inst if slot is None else inst.replace(slot=slot)


def cmd_demo(args: argparse.Namespace) -> int:
    inst = _instance(args.instance)
    print(
        f"gpusched demo: instance {inst.name!r} ({len(inst.nodes)} nodes, "
        f"{sum(n.num_gpus for n in inst.nodes)} GPUs, {len(inst.jobs)} jobs, "
        f"tardiness {inst.tardiness})"
    )
    return _run_policy(inst, args.policy, args.seed, None, mc=args.mc)


def _run_policy(inst: Instance, policy: str, seed: int, out: str | None, mc: int = 0) -> int:
    result, ev, seconds = evaluated_rollout(inst, policy, seed=seed)
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


def cmd_solve(args: argparse.Namespace) -> int:
    inst = _instance(args.instance, args.slot)
    return _run_policy(inst, args.policy, args.seed, args.out, mc=args.mc)


def cmd_compare(args: argparse.Namespace) -> int:
    inst = _instance(args.instance, args.slot)
    print(
        compare_table(inst, policy_names(), seed=args.seed).to_string(
            float_format=lambda x: f"{x:.4f}"
        )
    )
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    inst = _instance(args.instance)
    plan = read_plan(args.plan)
    ev = evaluate(inst, plan, tardiness=args.tardiness)
    print(cost_table(ev))
    print(summary_line(ev))
    for note in relaunch_notes(inst, plan):
        print(f"note: {note}")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    if args.kind == "suite":
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        suite = milp_suite()
        for inst in suite:
            write_instance(inst, out / f"{inst.name}.json")
        print(f"wrote {len(suite)} suite instances to {out}/")
        return 0
    inst = _generated(args)
    write_instance(inst, args.out)
    print(f"wrote {args.out}: {inst.name}, {len(inst.nodes)} nodes, {len(inst.jobs)} jobs")
    return 0


def _generated(args: argparse.Namespace) -> Instance:
    """The instance ``gpusched generate KIND`` asks for (any kind but the suite)."""
    seed, name = args.seed, args.name
    if args.stops is not None and args.kind not in TRACES:
        raise CliError(f"--stops: only philly-week and alibaba read a fit, not {args.kind}")
    options = dict(tardiness=args.tardiness, slot=args.slot, relaunch=args.relaunch)
    if args.kind == "synergy":
        syn = SynergySpec(
            jobs=args.jobs,
            nodes=args.nodes,
            shape=args.shape,
            rate=args.jobs_per_hour,
            early_stopping=args.early_stopping or "none",
            **options,
        )
        return synergy(syn, seed=seed, name=name)
    options["sharing"] = not args.no_sharing
    if args.kind == "liquid":
        early = args.early_stopping or "none"
        return liquid(LiquidSpec(jobs=args.jobs, early_stopping=early, **options), seed, name)
    options["early_stopping"] = args.early_stopping or "uniform"
    if args.kind == "synthetic":
        synth = SyntheticSpec(
            nodes=args.nodes,
            jobs=args.jobs,
            rate=args.rate,
            calibration=args.calibration,
            **options,
        )
        return synthetic(synth, seed=seed, name=name)
    if args.kind in TRACES:
        options["early_stopping"] = args.early_stopping or FITTED
        trace = TraceSpec(
            trace=args.kind, start=args.start, hours=args.hours, running=args.running, **options
        )
        return trace_instance(trace, seed=seed, name=name, fit=_stops_fit(args))
    if args.start != int(args.start):
        raise CliError(f"--start: realdata takes a whole job index, got {args.start:g}")
    mix = cluster_mix(args.nodes)
    spec = RealDataSpec(jobs=args.jobs, start=int(args.start), nodes=mix, **options)
    return real_data(spec, seed=seed, name=name)


def _stops_fit(args: argparse.Namespace) -> StopsFit | None:
    """The fit ``--stops`` names (a trace's jobs then stop as it says), if any."""
    if args.stops is None:
        return None
    if (args.early_stopping or FITTED) != FITTED:
        raise CliError(
            f"--stops: a fit is read only with fitted early stopping, not {args.early_stopping}"
        )
    return read_fit(args.stops)


def _instances(sources: Sequence[str], slot: float | None = None) -> list[Instance]:
    """Files or bundled names; ``suite`` stands for the bundled small MILP suite."""
    out: list[Instance] = []
    for src in sources:
        if src == "suite" and not Path(src).exists():
            out += milp_suite()
        else:
            out.append(_instance(src))
    return out if slot is None else [i.replace(slot=slot) for i in out]


def _option(
    convert: Callable[[str], Any], what: str, ok: Callable[[Any], bool], want: str
) -> Callable[[str], Any]:
    """An argparse type: ``convert`` the text, then check it (usage error otherwise)."""

    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"expected {want}, got {text}")
        return value

    return parse


_positive_int = _option(int, "a whole number", lambda v: v >= 1, "at least 1")
_count = _option(int, "a whole number", lambda v: v >= 0, "at least 0")
_seconds = _option(
    float,
    "a number of seconds",
    lambda v: math.isfinite(v) and v > 0,
    "a positive number of seconds",
)
_positive_float = _option(
    float, "a number", lambda v: math.isfinite(v) and v > 0, "a positive number"
)
_hours = _option(
    float, "a number of hours", lambda v: math.isfinite(v) and v >= 0, "0 or more hours"
)
_count_seconds = _option(
    float,
    "a number of seconds",
    lambda v: math.isfinite(v) and v >= 0,
    "a number of seconds, 0 or more",
)


def cmd_gap(args: argparse.Namespace) -> int:
    from experiments.gap import gap_report, summary

    insts = _instances(args.instances, args.slot)
    search = {} if args.search_evaluations is None else {"evaluations": args.search_evaluations}
    df = gap_report(
        insts,
        args.out,
        time_limit=args.time_limit,
        threads=args.threads,
        improve_time=args.improve_time,
        **search,
    )
    print(summary(df))
    print(f"report written to {Path(args.out) / 'index.html'}")
    return 0


def cmd_improve(args: argparse.Namespace) -> int:
    from experiments.improve import run_improve

    inst = _instance(args.instance, args.slot)
    start = read_plan(args.plan) if args.plan is not None else None
    run_improve(
        inst,
        time_limit=args.time_limit,
        out=args.out,
        seed=args.seed,
        search_evaluations=args.search_evaluations,
        initial_plan=start,
        progress=not args.quiet,
    )
    return 0


def cmd_bound(args: argparse.Namespace) -> int:
    from experiments.bound import clairvoyant_bound

    inst = _instance(args.instance, args.slot)
    res = clairvoyant_bound(
        inst, scenarios=args.scenarios, seed=args.seed, time_limit=args.time_limit
    )
    print(
        f"clairvoyant bound of {inst.name!r} over {res.scenarios} scenarios (seed {args.seed}): "
        f"mean {res.mean:.4f} +- {res.stderr:.4f} (std. error); {res.proved}/{res.scenarios} "
        "scenarios proved optimal"
    )
    return 0


def cmd_online(args: argparse.Namespace) -> int:
    from validation.online import run_online

    inst = _instance(args.instance, args.slot)
    names = policy_names() if args.policy == "all" else args.policy.split(",")
    known = policy_names(small_only=True)
    for name in names:
        if name not in known:
            raise CliError(f"--policy: unknown policy {name!r}; known: {', '.join(known)}")
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


def cmd_fit_stops(args: argparse.Namespace) -> int:
    import json

    from instances.generators.stops_fit import alibaba_history, csv_history, fit_stops
    from instances.io import write_atomic

    if args.trace == "philly":
        raise CliError(
            "philly: the bundled Philly week records no job status (the Pollux per-job CSV "
            "dropped Pass/Killed/Failed), so nothing tells a completed job from a stopped "
            "one; fit 'alibaba', or a CSV of your own history (hours,status,gpus)"
        )
    if args.trace == "alibaba":
        hist = alibaba_history(args.running, recent=args.recent)
    else:
        hist = csv_history(args.trace, recent=args.recent)
    fit = fit_stops(hist)
    print(f"early stopping fitted on {hist.source}: {len(hist.hours)} jobs")
    rows = {
        label: {
            **{f"n {s}": c.counts[s] for s in c.counts},
            "P(complete)": c.completion(),
            **{f"P(F>{f:.1f})": c.beyond(f) for f in (0.2, 0.5, 0.8)},
        }
        for label, c in fit.classes.items()
    }
    print(pd.DataFrame.from_dict(rows, orient="index").to_string(float_format=lambda x: f"{x:.3f}"))
    if args.out:
        write_atomic(args.out, json.dumps(fit.to_dict(), indent=1) + "\n")
        print(f"fit written to {args.out}")
    return 0


def cmd_campaign(args: argparse.Namespace) -> int:
    from experiments.campaign import bundled_campaigns, load_campaign
    from experiments.runner import run_campaign

    if args.list:
        print("bundled campaigns: " + ", ".join(bundled_campaigns()))
        return 0
    if args.config is None:
        raise CampaignError("config", None, "give a campaign file or a bundled name (--list)")
    campaign = load_campaign(args.config)
    store = args.store or f"{campaign.name}.sqlite"
    runs = len(campaign.runs())
    where = args.scheduler or f"{args.workers or os.cpu_count()} local processes"
    print(f"campaign {campaign.name!r}: {runs} runs into {store} on {where}")
    out = run_campaign(
        campaign, store, scheduler=args.scheduler, workers=args.workers, progress=not args.quiet
    )
    print(
        f"{out.ran} runs done now, {out.skipped} were already in the store, "
        f"{len(out.errors)} failed"
    )
    for line in out.errors:
        print(f"  failed: {line}", file=sys.stderr)
    return 1 if out.errors else 0


def cmd_report(args: argparse.Namespace) -> int:
    from experiments.report import write_report

    if not Path(args.store).exists():
        raise CampaignError("store", args.store, "no such file")
    if args.markdown:
        from experiments.report import markdown_summary
        from experiments.store import Store

        with Store(args.store, readonly=True) as store:
            names = store.campaign_names(args.campaign)
        for name in names:
            print(markdown_summary(args.store, name) + "\n")
        return 0
    path = write_report(args.store, args.out, campaign=args.campaign)
    print(f"report written to {path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gpusched", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("demo", help="roll out a policy on a bundled instance, print costs")
    d.add_argument(
        "instance",
        nargs="?",
        default="small",
        help=f"file or bundled name ({', '.join(bundled_names())})",
    )
    d.add_argument("--policy", default="fifo", choices=policy_names())
    d.add_argument("--seed", type=_count, default=0)
    d.add_argument("--mc", type=_count, default=2000, help="Monte Carlo scenarios (0: none)")
    d.set_defaults(func=cmd_demo)

    s = sub.add_parser("solve", help="worst-case rollout of a policy: plan + cost table")
    s.add_argument("instance")
    s.add_argument("--policy", default="fifo", choices=policy_names())
    s.add_argument("--seed", type=_count, default=0)
    s.add_argument("--slot", type=float, default=None, help="slot length in hours")
    s.add_argument("--out", help="write the plan (JSON) here")
    s.add_argument("--mc", type=_count, default=0, help="Monte Carlo scenarios to cross-check")
    s.set_defaults(func=cmd_solve)

    c = sub.add_parser("compare", help="every registered policy on one instance, one table")
    c.add_argument("instance")
    c.add_argument("--seed", type=_count, default=0)
    c.add_argument("--slot", type=float, default=None, help="slot length in hours")
    c.set_defaults(func=cmd_compare)

    e = sub.add_parser("evaluate", help="check and cost a plan (the one evaluator)")
    e.add_argument("instance")
    e.add_argument("plan")
    e.add_argument("--tardiness", choices=("worst_case", "expected"), default=None)
    e.set_defaults(func=cmd_evaluate)

    g = sub.add_parser("generate", help="write a seeded instance file")
    g.add_argument("kind", choices=("synthetic", "realdata", "synergy", "liquid", *TRACES, "suite"))
    g.add_argument("--out", required=True)
    g.add_argument("--seed", type=_count, default=0)
    g.add_argument("--name", default=None)
    g.add_argument(
        "--nodes",
        type=_positive_int,
        default=4,
        help="number of nodes (realdata: cycles k80x4, p100x4, v100x4, v100x8)",
    )
    g.add_argument("--jobs", type=_positive_int, default=10)
    g.add_argument(
        "--start",
        type=_hours,
        default=0.0,
        help="realdata: first Philly job index; philly-week, alibaba: hours from the trace start",
    )
    g.add_argument(
        "--hours",
        type=_positive_float,
        default=None,
        help="philly-week, alibaba: the window's length in hours (default: to the end)",
    )
    g.add_argument(
        "--running",
        choices=RUNNING_READINGS,
        default="completed",
        help="philly-week, alibaba with fitted stops: how the Alibaba fit reads pods "
        "deleted while Running (docs/model.md)",
    )
    g.add_argument(
        "--stops",
        metavar="FIT.json",
        default=None,
        help="philly-week, alibaba: the early-stopping fit to use, as written by "
        "gpusched fit-stops --out (default: the bundled Alibaba fit)",
    )
    g.add_argument("--rate", choices=RATES, default="exponential")
    g.add_argument(
        "--calibration",
        choices=tuple(CALIBRATIONS),
        default="offered-load",
        help="synthetic: the offered load of each rate; thesis-peak: the thesis's jobs "
        "present at once (docs/thesis.md)",
    )
    g.add_argument(
        "--early-stopping",
        choices=(*FAMILIES, FITTED),
        default=None,
        help="default: uniform (synthetic, realdata), none (synergy, liquid: their settings), "
        "fitted (philly-week, alibaba: the Alibaba trace's fit, gpusched fit-stops)",
    )
    g.add_argument(
        "--shape",
        choices=sorted(SHAPES),
        default="synergy",
        help="synergy: the 8 x V100 servers' CPU cores and DRAM (Synergy's or Alibaba's)",
    )
    g.add_argument(
        "--jobs-per-hour",
        type=_positive_float,
        default=9.0,
        help="synergy: Poisson arrival rate (Synergy's example: 9)",
    )
    g.add_argument("--tardiness", choices=("worst_case", "expected"), default="worst_case")
    g.add_argument("--slot", type=float, default=None)
    g.add_argument("--no-sharing", action="store_true")
    g.add_argument(
        "--relaunch",
        choices=("measured", "none"),
        default="measured",
        help="per-job relaunch overheads from published measurements (docs/model.md), or none",
    )
    g.set_defaults(func=cmd_generate)

    gp = sub.add_parser("gap", help="STS against the warm-started exact MILP: gaps + report")
    gp.add_argument("instances", nargs="+", help="files or bundled names; 'suite' = MILP suite")
    gp.add_argument(
        "--time-limit", type=_seconds, default=60.0, help="seconds per MILP solve, all included"
    )
    gp.add_argument("--threads", type=_positive_int, default=None)
    gp.add_argument("--slot", type=float, default=None, help="slot length in hours")
    gp.add_argument("--out", default="gap-report", help="directory for CSV, PNGs, HTML")
    gp.add_argument(
        "--search-evaluations",
        type=_positive_int,
        default=None,
        help="rollouts the STS search may cost per instance (default 2000); its tuned "
        "plan is the MILP's warm start",
    )
    gp.add_argument(
        "--improve-time",
        type=_count_seconds,
        default=30.0,
        help="seconds of MILP neighbourhood search on the tuned plan per instance (0: none)",
    )
    gp.set_defaults(func=cmd_gap)

    im = sub.add_parser(
        "improve", help="improve the (tuned) STS plan by MILP neighbourhoods: cost, bound, gap"
    )
    im.add_argument("instance", help="file or bundled name (slotted)")
    im.add_argument("--time-limit", type=_seconds, default=60.0, help="seconds for the whole call")
    im.add_argument("--plan", default=None, help="start from this slot-aligned plan (JSON)")
    im.add_argument("--out", default="improved-plan.json", help="write the plan here")
    im.add_argument("--seed", type=_count, default=0)
    im.add_argument("--slot", type=float, default=None, help="slot length in hours")
    im.add_argument(
        "--search-evaluations",
        type=_positive_int,
        default=None,
        help="rollouts of the STS search that makes the start (default max(50, 4000/jobs))",
    )
    im.add_argument("--quiet", action="store_true", help="no progress bar")
    im.set_defaults(func=cmd_improve)

    b = sub.add_parser("bound", help="clairvoyant lower bound (MILP with epochs known)")
    b.add_argument("instance")
    b.add_argument("--scenarios", type=_positive_int, default=10)
    b.add_argument("--seed", type=_count, default=0)
    b.add_argument("--time-limit", type=_seconds, default=60.0, help="seconds per scenario")
    b.add_argument("--slot", type=float, default=None)
    b.set_defaults(func=cmd_bound)

    o = sub.add_parser("online", help="online runs (sampled stops): metrics per policy")
    o.add_argument("instance")
    o.add_argument("--policy", default="all", help="'all', or names separated by commas")
    o.add_argument("--seed", type=_count, default=0)
    o.add_argument("--slot", type=float, default=None)
    o.add_argument("--jobs", action="store_true", help="also print each run's jobs")
    o.add_argument("--quiet", action="store_true", help="no progress bar")
    o.set_defaults(func=cmd_online)

    fs = sub.add_parser(
        "fit-stops", help="fit early-stopping distributions from a trace's past jobs"
    )
    fs.add_argument(
        "trace", help="'alibaba' (bundled), 'philly' (refused: no status), or a CSV file"
    )
    fs.add_argument("--running", choices=RUNNING_READINGS, default="completed")
    fs.add_argument(
        "--recent",
        type=float,
        default=None,
        metavar="HOURS",
        help="fit only the jobs created in the history's last HOURS hours (a CSV needs a "
        "'created' column, in hours); docs/model.md measures 72 and 168",
    )
    fs.add_argument("--out", default=None, help="write the fit as JSON")
    fs.set_defaults(func=cmd_fit_stops)

    ca = sub.add_parser("campaign", help="run a campaign file (grid of runs) into a store")
    ca.add_argument("config", nargs="?", help="TOML file, or a bundled campaign's name")
    ca.add_argument("--store", help="SQLite results file (default: NAME.sqlite)")
    ca.add_argument("--scheduler", help="Dask scheduler address, e.g. tcp://host:8786")
    ca.add_argument(
        "--workers", type=_positive_int, default=None, help="local processes (default: cores)"
    )
    ca.add_argument("--quiet", action="store_true", help="no progress bar")
    ca.add_argument("--list", action="store_true", help="list the bundled campaigns")
    ca.set_defaults(func=cmd_campaign)

    r = sub.add_parser("report", help="HTML report (plots, tables) of a results store")
    r.add_argument("store")
    r.add_argument("--out", default="report.html")
    r.add_argument("--campaign", default=None, help="one campaign (default: all in the store)")
    r.add_argument("--markdown", action="store_true", help="print the tables as markdown")
    r.set_defaults(func=cmd_report)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except (
        InstanceError,
        PlanError,
        SimulationError,
        MilpError,
        CampaignError,
        StoreError,
        CliError,
    ) as exc:
        print(f"gpusched: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # an output folder that does not exist, a full disk, ...
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"gpusched: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    raise SystemExit(main())
