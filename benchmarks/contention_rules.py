"""STS's contention rules measured side by side on the sets docs/model.md ('STS under
contention') and docs/contended.md quote, as a user makes them.

Sets (each run online with the stops of its seed, realised total cost):

- ``week``: 72 windows of the whole Philly week, as ``gpusched generate realdata
  --source week --jobs J --nodes N --start S`` makes them (uniform stops, measured
  overheads), J in 30, 50, 70, N in 4, 8, 12, S in 0, 750, ..., 5250; seed 0 (the
  seed draws the stops only: the window's jobs are the trace's).
- ``day``: 100 runs on 50 windows of the bundled Philly day: 30-70 jobs x 4, 6, 8, 10, 12 nodes x
  the first and the last start that hold that many usable jobs, seeds 0 and 1 (the
  seed draws the jobs' types, epochs and due dates as well as the stops;
  ``--day-stops`` uniform or helios).
- ``c32`` and ``c128``: the bundled ``contended`` campaign's scenarios (the Philly
  week's jobs from hour 24 on 32 or 128 GPUs, loads 0.3-1.5; ``--loads``), seeds 0-4.
- ``light``: the synthetic family on 10 nodes, 60 jobs, the three rates, with and
  without measured overheads, seeds 0-4.

Every variant (``--variant name='{"option": value}'``, STS's options; ``--policy
name``, another registered policy such as ``sts-full``) runs on the same
instances beside STS's defaults and the references (``lp`` and ``sts-greedy``). The
table gives per set and variant: the total, the runs below ``lp`` and the worst ratio
to it, the runs within 2% of the best of the variant and the references, the runs
cheaper and dearer than the defaults, the ratio of its total to the defaults' with a
95% interval (a paired bootstrap over the runs, :func:`benchmarks.common.paired_ratio`:
where it holds 1, the runs do not tell the two apart), and per window (a set's case but
for its seed: a real-data window, or a load of ``c32``) whether the mean over its seeds
is below ``lp``'s, the measure issue 34's goals are stated in. ``--seeds K`` runs every
window with seeds 0 to K-1 (issue 34 asks for at least 5).

After the table it names the worst run against ``lp`` and every window whose mean is
not below ``lp``'s; ``--csv PATH`` writes every run's total.

``--idle low`` (or ``high``) lays the power of nodes always on over every instance
(docs/model.md, 'Idle power'), as ``gpusched generate ... --idle`` does.

Run: python -m benchmarks.contention_rules [--sets week,day,c32] [--variant ...]
[--policy ...] [--seeds K] [--idle none|low|high] [--workers 2] [--csv PATH]
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import pandas as pd

from benchmarks.common import markdown, paired_ratio
from instances import Instance
from instances.generators import GENERATORS, RealDataSpec, SyntheticSpec, real_data, synthetic
from instances.generators.power import IDLE_LEVELS, lay_idle
from instances.generators.realdata import cluster_mix, philly_jobs, usable
from validation.online import run_online

SETS = ("week", "day", "c32", "c128", "light")
REFERENCES = ("lp", "sts-greedy")
LOADS = (0.3, 0.6, 0.9, 1.2, 1.5)
# a case: (set, a, b, c, seed), its meaning set by set (:func:`instance`)
Case = tuple[str, Any, Any, Any, int]


def cases(name: str, loads: tuple[float, ...], seeds: int | None = None) -> Iterator[Case]:
    """The set's cases, each window with seeds 0 to ``seeds``-1 (``None``: the set's
    own, 1 for ``week``, 2 for ``day`` and 5 for the others)."""
    if name == "week":
        for j, n, s in itertools.product((30, 50, 70), (4, 8, 12), range(0, 5251, 750)):
            for seed in range(seeds or 1):
                yield (name, j, n, s, seed)
    elif name == "day":
        sizes = itertools.product((30, 40, 50, 60, 70), (4, 6, 8, 10, 12), ("first", "last"))
        for (j, n, at), seed in itertools.product(sizes, range(seeds or 2)):
            yield (name, j, n, at, seed)
    elif name in ("c32", "c128"):
        for load, seed in itertools.product(loads, range(seeds or 5)):
            yield (name, load, 0, 0, seed)
    elif name == "light":
        for rl, rate, seed in itertools.product(
            ("measured", "none"), ("low", "exponential", "high"), range(seeds or 5)
        ):
            yield (name, rl, rate, 0, seed)
    else:
        raise ValueError(f"unknown set {name!r} (sets: {', '.join(SETS)})")


def instance(case: Case, day_stops: str, idle: str = "none") -> Instance:
    """The case's instance; with ``idle`` a level of :func:`lay_idle`, the power of
    nodes always on laid over it."""
    inst = _bare(case, day_stops)
    return inst if idle == "none" else lay_idle(inst, idle)


def _bare(case: Case, day_stops: str) -> Instance:
    name, a, b, c, seed = case
    if name == "week":
        spec = RealDataSpec(
            jobs=a, start=c, nodes=cluster_mix(b), source="week", early_stopping="uniform"
        )
        return real_data(spec, 0)
    if name == "day":
        start = 0
        if c == "last":  # the last start that still holds ``a`` usable jobs
            probe = RealDataSpec(jobs=a)
            at = [i for i, job in enumerate(philly_jobs("day")) if usable(probe, job)]
            start = at[len(at) - a]
        spec = RealDataSpec(jobs=a, start=start, nodes=cluster_mix(b), early_stopping=day_stops)
        return real_data(spec, seed)
    if name in ("c32", "c128"):
        k = 2 if name == "c32" else 8
        hours = 6.0 if k == 2 else 10.0
        cluster = f"k80x4:{k},p100x4:{k},v100x8:{k}"
        spec = {"start": 24.0, "hours": hours, "cluster": cluster, "load": a}
        return GENERATORS["philly-week"].instance(spec, seed)
    return synthetic(SyntheticSpec(nodes=10, jobs=60, rate=b, relaunch=a), seed=seed)


def _run(task: tuple[Case, str, str, dict[str, Any], str, str]) -> tuple[Case, str, float]:
    case, label, policy, options, day_stops, idle = task
    inst = instance(case, day_stops, idle)
    run = run_online(inst, policy, seed=case[4], options=options or None)
    return case, label, float(run.summary()["total_cost"])


def run_all(
    sets: list[str],
    variants: dict[str, dict[str, Any]],
    loads: tuple[float, ...],
    day_stops: str,
    workers: int,
    policies: tuple[str, ...] = (),
    seeds: int | None = None,
    idle: str = "none",
) -> dict[tuple[Case, str], float]:
    """Every run's realised total cost by (case, label). ``variants``: STS's options
    by label; ``policies``: other registered names, each with its defaults, compared as
    variants; ``seeds``: per window (:func:`cases`)."""
    runs = {"sts": ("sts", {})} | {k: ("sts", v) for k, v in variants.items()}
    runs |= {p: (p, {}) for p in policies}
    runs |= {r: (r, {}) for r in REFERENCES}
    tasks = [
        (case, label, policy, options, day_stops, idle)
        for name in sets
        for case in cases(name, loads, seeds)
        for label, (policy, options) in runs.items()
    ]
    got: dict[tuple[Case, str], float] = {}
    with ProcessPoolExecutor(workers) as pool:
        for case, label, total in pool.map(_run, tasks):
            got[case, label] = total
    return got


def table(
    sets: list[str],
    labels: list[str],
    got: dict[tuple[Case, str], float],
    loads: tuple[float, ...],
    seeds: int | None = None,
) -> list[list[object]]:
    """The benchmark's rows from :func:`run_all`'s totals: ``labels`` are STS's and
    the variants' (the references get a row each)."""
    rows: list[list[object]] = []
    for name in sets:
        todo = list(cases(name, loads, seeds))
        # per set, not per label: STS's and lp's runs are every label's references
        base = [got[c, "sts"] for c in todo]
        lp = [got[c, "lp"] for c in todo]
        for label in labels:
            means = window_means(todo, got, label)
            mine = [got[c, label] for c in todo]
            best = [min(got[c, label], *(got[c, r] for r in REFERENCES)) for c in todo]
            rows.append(
                [
                    name,
                    label,
                    len(todo),
                    f"{sum(mine):.2f}",
                    "-" if label == "sts" else str(paired_ratio(mine, base)),
                    sum(m < x for m, x in zip(mine, lp, strict=True)),
                    f"{max(m / x for m, x in zip(mine, lp, strict=True)):.3f}",
                    sum(m <= 1.02 * b for m, b in zip(mine, best, strict=True)),
                    sum(m < b - 1e-9 for m, b in zip(mine, base, strict=True)),
                    sum(m > b + 1e-9 for m, b in zip(mine, base, strict=True)),
                    len(means),
                    sum(m < x for m, x in means.values()),
                ]
            )
        for ref in REFERENCES:
            theirs = [got[c, ref] for c in todo]
            ratio = str(paired_ratio(theirs, base))
            rows.append([name, ref, len(todo), f"{sum(theirs):.2f}", ratio, *[""] * 7])
    return rows


def misses(
    sets: list[str],
    labels: list[str],
    got: dict[tuple[Case, str], float],
    loads: tuple[float, ...],
    seeds: int | None = None,
) -> list[str]:
    """What the table only counts, named: per set and label, the run dearest against
    ``lp`` and every window whose mean is not below ``lp``'s (a case names its window as
    :func:`instance` builds it)."""
    lines = []
    for name in sets:
        todo = list(cases(name, loads, seeds))
        for label in labels:
            worst = max(todo, key=lambda c: got[c, label] / got[c, "lp"])
            ratio = got[worst, label] / got[worst, "lp"]
            lines.append(f"{name} {label}: worst run {worst} at {ratio:.3f} times lp")
            for w, (m, x) in window_means(todo, got, label).items():
                if m >= x:
                    lines.append(f"{name} {label}: window {w} mean {m:.4f} against lp's {x:.4f}")
    return lines


def write_runs(path: str, got: dict[tuple[Case, str], float]) -> None:
    """Every run's total, one row per case and label (a case's fields as :data:`Case`)."""
    frame = pd.DataFrame(
        [(*case, label, total) for (case, label), total in got.items()],
        columns=["set", "a", "b", "c", "seed", "policy", "total_cost"],
    )
    frame.to_csv(path, index=False)


def window_means(
    todo: list[Case], got: dict[tuple[Case, str], float], label: str
) -> dict[tuple[object, ...], tuple[float, float]]:
    """Per window (a case but for its seed): the mean over its seeds of ``label``'s
    total cost and of ``lp``'s."""
    by: dict[tuple[object, ...], list[Case]] = {}
    for c in todo:
        by.setdefault(c[:4], []).append(c)
    return {
        w: (
            sum(got[c, label] for c in cs) / len(cs),
            sum(got[c, "lp"] for c in cs) / len(cs),
        )
        for w, cs in by.items()
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sets", default="week,day,c32")
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help='STS\'s options, e.g. relaunch=\'{"displace_cost": "relaunch"}\'',
    )
    ap.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="NAME",
        help="another registered policy compared as a variant, e.g. sts-full",
    )
    ap.add_argument("--loads", default=",".join(map(str, LOADS)))
    ap.add_argument("--day-stops", default="uniform", choices=("uniform", "helios"))
    ap.add_argument(
        "--seeds", type=int, default=None, help="seeds per window (default: each set's own)"
    )
    ap.add_argument(
        "--idle",
        default="none",
        choices=("none", *IDLE_LEVELS),
        help="the power of nodes always on laid over every instance (docs/model.md)",
    )
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--csv", default=None, help="also write every run's total to this CSV")
    args = ap.parse_args()
    if args.seeds is not None and args.seeds < 1:
        ap.error(f"--seeds: {args.seeds} must be at least 1")
    variants = {}
    for v in args.variant:
        name, _, options = v.partition("=")
        variants[name] = json.loads(options)
    loads = tuple(float(x) for x in args.loads.split(","))
    sets = args.sets.split(",")
    got = run_all(
        sets,
        variants,
        loads,
        args.day_stops,
        args.workers,
        tuple(args.policy),
        args.seeds,
        args.idle,
    )
    if args.csv:
        write_runs(args.csv, got)
    labels = ["sts", *variants, *args.policy]
    rows = table(sets, labels, got, loads, args.seeds)
    headers = [
        "set",
        "policy",
        "runs",
        "total",
        "total / sts's [95% CI]",
        "below lp",
        "worst / lp",
        "within 2% of best",
        "cheaper than sts",
        "dearer than sts",
        "windows",
        "window means below lp",
    ]
    print(markdown(headers, rows))
    print()
    print("\n".join(f"- {line}" for line in misses(sets, labels, got, loads, args.seeds)))


if __name__ == "__main__":
    main()
