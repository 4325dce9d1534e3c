"""``gpusched generate``: write a seeded instance file."""

from __future__ import annotations

import argparse
from pathlib import Path

from experiments.cli.common import CliError, Subparsers, count, hours, positive_float, positive_int
from instances import Instance, write_instance
from instances.generators import FAMILIES, RealDataSpec, SyntheticSpec, real_data, synthetic
from instances.generators.liquid import LiquidSpec, liquid
from instances.generators.realdata import cluster_mix
from instances.generators.stops_fit import RUNNING_READINGS, StopsFit, read_fit
from instances.generators.suite import milp_suite
from instances.generators.synergy import SHAPES, SynergySpec, synergy
from instances.generators.synthetic import CALIBRATIONS, RATES
from instances.generators.traces import FITTED, TRACES, TraceSpec, trace_instance


def add_parser(sub: Subparsers) -> None:
    g = sub.add_parser("generate", help="write a seeded instance file")
    g.add_argument("kind", choices=("synthetic", "realdata", "synergy", "liquid", *TRACES, "suite"))
    g.add_argument("--out", required=True)
    g.add_argument("--seed", type=count, default=0)
    g.add_argument("--name", default=None)
    g.add_argument(
        "--nodes",
        type=positive_int,
        default=4,
        help="number of nodes (realdata: cycles k80x4, p100x4, v100x4, v100x8)",
    )
    g.add_argument("--jobs", type=positive_int, default=10)
    g.add_argument(
        "--start",
        type=hours,
        default=0.0,
        help="realdata: first Philly job index; philly-week, alibaba: hours from the trace start",
    )
    g.add_argument(
        "--hours",
        type=positive_float,
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
        type=positive_float,
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
    g.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.kind == "suite":
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        suite = milp_suite()
        for inst in suite:
            write_instance(inst, out / f"{inst.name}.json")
        print(f"wrote {len(suite)} suite instances to {out}/")
        return 0
    inst = generated(args)
    write_instance(inst, args.out)
    print(f"wrote {args.out}: {inst.name}, {len(inst.nodes)} nodes, {len(inst.jobs)} jobs")
    return 0


def generated(args: argparse.Namespace) -> Instance:
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
        return trace_instance(trace, seed=seed, name=name, fit=stops_fit(args))
    if args.start != int(args.start):
        raise CliError(f"--start: realdata takes a whole job index, got {args.start:g}")
    mix = cluster_mix(args.nodes)
    spec = RealDataSpec(jobs=args.jobs, start=int(args.start), nodes=mix, **options)
    return real_data(spec, seed=seed, name=name)


def stops_fit(args: argparse.Namespace) -> StopsFit | None:
    """The fit ``--stops`` names (a trace's jobs then stop as it says), if any."""
    if args.stops is None:
        return None
    if (args.early_stopping or FITTED) != FITTED:
        raise CliError(
            f"--stops: a fit is read only with fitted early stopping, not {args.early_stopping}"
        )
    return read_fit(args.stops)
