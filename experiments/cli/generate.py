"""``gpusched generate``: write a seeded instance file, from a generator of the one
table (``instances.generators.GENERATORS``, which campaigns read too), or the MILP
suite."""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from experiments.cli.common import (
    CliError,
    Subparsers,
    hours,
    out_path,
    positive_float,
    positive_int,
    random_seed,
)
from experiments.paths import output_folder
from instances import Instance, InstanceError, write_instance
from instances.generators import FAMILIES, GENERATORS
from instances.generators.clusters import parse_cluster
from instances.generators.histories import RUNNING_READINGS
from instances.generators.measured_overheads import RELAUNCH_MODES
from instances.generators.power import IDLE_LEVELS
from instances.generators.prices import SERIES
from instances.generators.realdata import PHILLY_FILES
from instances.generators.suite import LAYERS as SUITE_LAYERS
from instances.generators.suite import suite_instance, suite_specs
from instances.generators.synergy import SHAPES
from instances.generators.synthetic import CALIBRATIONS, RATES
from instances.generators.traces import FITTED, TRACES
from instances.model import TARDINESS_MODES

SUITE = "suite"
_COSTS = {
    "tardiness": "tardiness",
    "slot": "slot",
    "relaunch": "relaunch",
    "prices": "prices",
    "carbon_price": "carbon_price",
    "idle": "idle",
    "power_off": "power_off",
}
_JOBS = {**_COSTS, "early_stopping": "early_stopping", "seed": "", "name": ""}
_TRACE = {
    "start": "start",
    "hours": "hours",
    "running": "running",
    "stops": "stops",
    "jobs": "jobs",
    "nodes": "nodes",
    "cluster": "cluster",
    "load": "load",
    "time_scale": "time_scale",
}
_OWN: dict[str, dict[str, str]] = {
    "synthetic": {"nodes": "nodes", "jobs": "jobs", "rate": "rate", "calibration": "calibration"},
    "realdata": {"nodes": "nodes", "jobs": "jobs", "start": "start", "source": "source"},
    "synergy": {"nodes": "nodes", "jobs": "jobs", "shape": "shape", "jobs_per_hour": "rate"},
    "liquid": {"jobs": "jobs"},
    **{t: _TRACE for t in TRACES},
}


def _sharing(kind: str) -> dict[str, str]:
    return {"no_sharing": "sharing"} if "sharing" in GENERATORS[kind].fields else {}


# Which spec field each option sets, per kind ("": an option that is no spec field). An
# option a kind does not read is refused when given (so the options read by some kinds
# only default to None here, and the spec's own default applies where none is given).
READS: dict[str, dict[str, str]] = {
    **{kind: {**own, **_JOBS, **_sharing(kind)} for kind, own in _OWN.items()},
    SUITE: {
        "slot": "slot",
        "relaunch": "relaunch",
        "prices": "",
        "carbon_price": "",
        "idle": "",
        "power_off": "",
    },
}
# this command's defaults, where they are not the spec's
DEFAULTS: dict[str, Any] = {"nodes": 4, "jobs": 10, "seed": 0}
KIND_DEFAULTS: dict[str, dict[str, Any]] = {
    "realdata": {"early_stopping": "uniform"},
    # a trace runs on its own cluster, with all its window's jobs, unless told otherwise
    **{t: {"nodes": None, "jobs": None} for t in TRACES},
}


def add_parser(sub: Subparsers) -> None:
    g = sub.add_parser("generate", help="write a seeded instance file")
    g.add_argument("kind", choices=(*GENERATORS, SUITE))
    g.add_argument("--out", type=out_path, required=True)
    g.add_argument("--seed", type=random_seed, default=None, help="default: 0")
    g.add_argument("--name", default=None)
    _cluster_options(g)
    _trace_options(g)
    _job_options(g)
    g.set_defaults(func=run)


def _cluster_options(g: argparse.ArgumentParser) -> None:
    g.add_argument(
        "--nodes",
        type=positive_int,
        default=None,
        help=(
            "number of nodes, default 4 (realdata: cycles k80x4, p100x4, v100x4, v100x8; "
            f"{' and '.join(TRACES)}: the trace's own cluster)"
        ),
    )
    g.add_argument(
        "--jobs",
        type=positive_int,
        default=None,
        help=f"default: 10 ({' and '.join(TRACES)}: every job of the window)",
    )
    g.add_argument(
        "--shape",
        choices=sorted(SHAPES),
        default=None,
        help="synergy: the 8 x V100 servers' CPU cores and DRAM (Synergy's or Alibaba's)",
    )
    g.add_argument("--no-sharing", action="store_true", default=None)


def _trace_options(g: argparse.ArgumentParser) -> None:
    g.add_argument(
        "--start",
        type=hours,
        default=None,
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
        default=None,
        help="philly-week, alibaba with fitted stops: how the Alibaba fit reads pods "
        "deleted while Running (docs/model.md; default: completed)",
    )
    g.add_argument(
        "--stops",
        metavar="FIT.json",
        default=None,
        help="philly-week, alibaba: the early-stopping fit to use, as written by "
        "gpusched fit-stops --out (default: the bundled Alibaba fit)",
    )
    g.add_argument(
        "--cluster",
        type=_cluster,
        default=None,
        metavar="TYPExGPUS:NODES,...",
        help="philly-week, alibaba: the nodes, e.g. k80x4:2,p100x4:2,v100x8:2 (the trace's "
        "own types or k80, p100, v100); --nodes N instead takes N of the trace's own mix",
    )
    g.add_argument(
        "--load",
        type=positive_float,
        default=None,
        help="philly-week, alibaba: the offered load to scale the arrivals to (docs/model.md)",
    )
    g.add_argument(
        "--time-scale",
        type=positive_float,
        default=None,
        help="philly-week, alibaba: multiply each job's time since the window's start",
    )
    g.add_argument(
        "--source",
        choices=tuple(PHILLY_FILES),
        default=None,
        help="realdata: the Philly jobs of the bundled day (default) or the whole week",
    )


def _cluster(text: str) -> tuple[tuple[str, int, int], ...]:
    try:
        return parse_cluster(text)
    except InstanceError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _job_options(g: argparse.ArgumentParser) -> None:
    g.add_argument("--rate", choices=RATES, default=None, help="default: exponential")
    g.add_argument(
        "--calibration",
        choices=tuple(CALIBRATIONS),
        default=None,
        help="synthetic: the offered load of each rate (default); thesis-peak: the "
        "thesis's jobs present at once (docs/thesis.md)",
    )
    g.add_argument(
        "--early-stopping",
        choices=(*FAMILIES, FITTED),
        default=None,
        help="default: uniform (synthetic, realdata), none (synergy, liquid: their settings), "
        "fitted (philly-week, alibaba: the Alibaba trace's fit, gpusched fit-stops)",
    )
    g.add_argument(
        "--jobs-per-hour",
        type=positive_float,
        default=None,
        help="synergy: Poisson arrival rate (default: Synergy's example, 9)",
    )
    g.add_argument("--tardiness", choices=TARDINESS_MODES, default=None)
    g.add_argument("--slot", type=float, default=None)
    g.add_argument(
        "--relaunch",
        choices=RELAUNCH_MODES,
        default=None,
        help="per-job relaunch overheads from published measurements (docs/model.md), or "
        "none; default: measured (suite: each instance's own, measured in half of them)",
    )
    g.add_argument(
        "--prices",
        metavar="NAME[:OFFSET]",
        default=None,
        help=f"bill energy at a bundled real series ({', '.join(SERIES)}), from OFFSET hours "
        "into it, its prices scaled to a mean of the instance's energy price, with its "
        "carbon intensity (docs/model.md; default: one price at every hour)",
    )
    g.add_argument(
        "--carbon-price",
        type=_non_negative,
        default=None,
        help="with --prices: the price of a tonne of CO2-eq (default 0: counted, not charged)",
    )
    _power_options(g)


def _power_options(g: argparse.ArgumentParser) -> None:
    g.add_argument(
        "--idle",
        metavar="LEVEL|IDLE_FRACTION,BASE_W_PER_GPU",
        default=None,
        help=f"charge idle power: a level ({', '.join(IDLE_LEVELS)}: low is 15%% of busy "
        "power per idle GPU and 50 W per GPU slot of node base power, high 30%% and 100 W) "
        "or the fraction and the watts, e.g. 0.15,50 (docs/model.md; default: busy GPUs only)",
    )
    g.add_argument(
        "--power-off",
        metavar="AFTER_H[,BOOT_H[,BOOT_KWH]]",
        default=None,
        help="power an empty node off after AFTER_H hours; it boots for BOOT_H hours "
        "drawing BOOT_KWH before its next work (both default 0; docs/model.md; default: "
        "every node always on)",
    )


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text}")
    return value


def run(args: argparse.Namespace) -> int:
    given = _given(args)
    if args.kind == SUITE:
        out = Path(args.out)
        layers = {k: v for k, v in given.items() if k in SUITE_LAYERS}
        try:  # one path with campaigns: the layers laid as on any generated instance
            suite = [suite_instance(name, **layers) for name, _, _ in suite_specs()]
        except InstanceError as exc:
            option = exc.path.split("[")[0].split(".")[0]
            raise CliError(f"--{option.replace('_', '-')}: {exc}") from None
        if "slot" in given:
            suite = [inst.replace(slot=given["slot"]) for inst in suite]
        _write_all(suite, out)
        print(f"wrote {len(suite)} suite instances to {out}/")
        return 0
    if Path(args.out).is_dir():  # refused before the work (a suite's --out is a folder)
        raise CliError(f"--out: {args.out!r} is a folder, not a file")
    inst = generated(args.kind, given)
    write_instance(inst, args.out)
    print(f"wrote {args.out}: {inst.name}, {len(inst.nodes)} nodes, {len(inst.jobs)} jobs")
    return 0


def _write_all(suite: list[Instance], out: Path) -> None:
    """Every instance into ``out``, or none: written into a scratch folder there first,
    then moved into place (a write that fails, a full disk, leaves no part of the set)."""
    targets = [out / f"{inst.name}.json" for inst in suite]
    for t in targets:
        if t.is_dir():
            raise CliError(f"{t}: is a directory")
    try:
        with (
            output_folder(out),
            tempfile.TemporaryDirectory(dir=out, prefix=".suite-") as scratch,
        ):
            for inst, t in zip(suite, targets, strict=True):
                write_instance(inst, Path(scratch) / t.name)
            for t in targets:
                os.replace(Path(scratch) / t.name, t)
    except OSError as exc:
        raise CliError(f"{out}: {exc.strerror or exc}") from None


def _given(args: argparse.Namespace) -> dict[str, Any]:
    """The options ``args.kind`` reads, given or defaulted by this command; one it does
    not read, given, is refused naming the kinds that do."""
    reads = READS[args.kind]
    # in a fixed order: the first option refused is the same in every process
    for option in sorted({o for kind in READS.values() for o in kind} - set(reads)):
        if getattr(args, option) is not None:
            takers = [k for k, r in READS.items() if option in r]
            raise CliError(
                f"--{option.replace('_', '-')}: only {_listed(takers)} read it, not {args.kind}"
            )
    defaults = {**DEFAULTS, **KIND_DEFAULTS.get(args.kind, {})}
    given = {o: getattr(args, o) for o in reads if getattr(args, o) is not None}
    return {**{o: v for o, v in defaults.items() if o in reads}, **given}


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def generated(kind: str, given: dict[str, Any]) -> Instance:
    """The instance of generator ``kind`` with the options ``given`` (by option name);
    a value its spec refuses is refused naming the option."""
    reads = READS[kind]
    params = {reads[o]: v for o, v in given.items() if reads[o]}
    if "sharing" in params:
        params["sharing"] = not given["no_sharing"]
    if kind == "realdata" and "start" in params:
        if params["start"] != int(params["start"]):
            raise CliError(f"--start: realdata takes a whole job index, got {params['start']:g}")
        params["start"] = int(params["start"])
    gen = GENERATORS[kind]
    if given.get("name") is not None and not given["name"].strip():
        raise CliError(f"--name: {given['name']!r} is empty (leave it out for the default name)")
    try:
        return gen.instance(params, given["seed"], given.get("name"))
    except InstanceError as exc:
        field = exc.path.split("[")[0].split(".")[0]
        option = next((o for o, f in reads.items() if f == field and f in params), None)
        if option is None:
            raise
        raise CliError(f"--{option.replace('_', '-')}: {exc}") from None
