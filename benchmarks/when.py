"""STS deciding when under real hourly prices (docs/prices.md): its bill against STS
blind to the series (``sts-price-blind``, billed by it) and against the baselines, and
how much of the bill can move at all.

- ``families``: worst-case rollouts, costed by the one evaluator (expected energy bill =
  energy + priced carbon, total cost, missed due dates, seconds), on the thesis family
  (synthetic, 10 nodes, 60 jobs, the three rates) and the contended family (the Philly
  week's jobs on 32 GPUs at offered loads 0.6 and 1.2), with the bundled
  ``au-nsw-2023`` series at several offsets and carbon at ``--carbon-price`` per tonne.
- ``alone``: each job of the same instances alone at its release, the cluster all its
  own: the bill of its price-blind profile run back to back, against its timed
  profile's (the single-job search, heuristic/sts/timing.py) with the four shares STS
  uses and with twelve (those and eight more): how much a job alone can move, and
  what the coarse search of speed budgets leaves.

- ``store``: the tables of docs/prices.md from a ``prices`` campaign's store: per
  family, each policy's online figures summed over the scenarios and seeds run (bill =
  energy + carbon, carbon, total cost, missed due dates), the cut of STS, and of
  price-blind STS, against each, and STS's bill over price-blind STS's with a 95%
  paired-bootstrap interval over the runs.

- ``punctual``: the same rollouts as ``families`` (STS and price-blind STS), the bills
  job by job summed over the jobs on time in both, late in one only, late in both:
  how much of the cut is bought back as punctuality.

- ``floor``: from a ``prices`` store, for each run of price-blind STS that missed no due
  date, a floor under the realised bill of any plan that misses none either: each job
  alone with its realised epochs known in advance (clairvoyant), its configurations
  mixed fractionally within each cell of the series, no relaunch overhead, finishing by
  its due date (:func:`bill_floor`, an LP). So ``1 - floor / bill`` bounds the cut any
  policy can make there without missing a due date; a loose bound, since no online
  policy knows the stops.

Run: python -m benchmarks.when families [--offsets 0 840 1512] [--seeds 2]
     python -m benchmarks.when alone [--offsets 840]
     python -m benchmarks.when punctual --seeds 1
     python -m benchmarks.when store prices.sqlite
     python -m benchmarks.when floor prices.sqlite
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterable, Iterator

import numpy as np
import pandas as pd
from scipy.optimize import linprog
from scipy.sparse import csr_array, hstack, identity, kron

from benchmarks.common import paired_ratio
from heuristic.core.policy import JobStatus
from heuristic.core.registry import make_policy
from heuristic.sts import timing
from heuristic.sts.hulls import HullTable, JobProfiles
from heuristic.sts.tariff import Tariff
from instances import Instance, Job
from instances.generators.prices import lay_prices
from instances.generators.registry import GENERATORS
from validation.evaluate import evaluate
from validation.simulator import rollout

POLICIES = ("sts", "sts-price-blind", "sts-greedy", "lp", "edf", "fifo", "static", "optimus")
CLUSTER = [["k80", 4, 2], ["p100", 4, 2], ["v100", 8, 2]]


def cases(seeds: int) -> Iterator[tuple[str, str, Instance]]:
    """(family, name, instance without a series)."""
    for rate in ("high", "exponential", "low"):
        for s in range(seeds):
            params = {"nodes": 10, "jobs": 60, "rate": rate}
            yield "thesis", f"{rate}-s{s}", GENERATORS["synthetic"].instance(params, s)
    for load in (0.6, 1.2):
        for s in range(seeds):
            params = {"start": 24.0, "hours": 6.0, "cluster": CLUSTER, "load": load}
            yield "contended", f"load{load}-s{s}", GENERATORS["philly-week"].instance(params, s)


def families(offsets: list[int], seeds: int, carbon: float, policies: list[str]) -> pd.DataFrame:
    rows = []
    for family, name, inst in cases(seeds):
        for offset in offsets:
            priced = lay_prices(inst, f"au-nsw-2023:{offset}", carbon)
            for policy in policies:
                t0 = time.perf_counter()
                ev = evaluate(priced, rollout(priced, make_policy(policy)))
                rows.append(
                    {
                        "family": family,
                        "case": name,
                        "offset_h": offset,
                        "policy": policy,
                        "bill": ev.energy_cost + ev.carbon_cost,
                        "carbon_kg": ev.carbon_kg,
                        "total": ev.total_cost,
                        "missed": ev.missed,
                        "seconds": time.perf_counter() - t0,
                    }
                )
                print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per family: each policy's bill, total and missed due dates summed over the cases,
    and STS's cut of the bill and of the total against it, with timing and without."""
    out = []
    for family, part in df.groupby("family", sort=False):
        sums = part.groupby("policy")[["bill", "total", "missed", "seconds"]].sum()
        for policy, r in sums.iterrows():
            row = {"family": family, "policy": policy, **r.to_dict()}
            for sts in ("sts", "sts-price-blind"):
                row[f"{sts} bill cut"] = 1 - sums.loc[sts, "bill"] / r["bill"]
                row[f"{sts} total cut"] = 1 - sums.loc[sts, "total"] / r["total"]
            out.append(row)
    return pd.DataFrame(out)


def punctual(offsets: list[int], seeds: int, carbon: float) -> pd.DataFrame:
    """STS's bill against price-blind STS's, job by job, summed per family over four
    groups: jobs on time in both rollouts, late in one only, late in both (a job is late
    where its worst-case completion passes its due date)."""
    rows = []
    for family, _, inst in cases(seeds):
        for offset in offsets:
            priced = lay_prices(inst, f"au-nsw-2023:{offset}", carbon)
            per = {}
            for policy in ("sts", "sts-price-blind"):
                ev = evaluate(priced, rollout(priced, make_policy(policy)))
                per[policy] = {c.job: c for c in ev.jobs}
            for job, mine in per["sts"].items():
                blind = per["sts-price-blind"][job]
                late = (mine.missed, blind.missed)
                group = {
                    (False, False): "on time in both",
                    (True, False): "late under STS only",
                    (False, True): "late under price-blind STS only",
                    (True, True): "late in both",
                }[late]
                rows.append(
                    {
                        "family": family,
                        "group": group,
                        "jobs": 1,
                        "sts bill": mine.energy_cost + mine.carbon_cost,
                        "price-blind bill": blind.energy_cost + blind.carbon_cost,
                    }
                )
    sums = pd.DataFrame(rows).groupby(["family", "group"], sort=False).sum()
    sums["cut"] = 1 - sums["sts bill"] / sums["price-blind bill"]
    return sums


def alone(offsets: list[int], seeds: int, carbon: float) -> pd.DataFrame:
    rows = []
    for family, name, inst in cases(seeds):
        for offset in offsets:
            priced = lay_prices(inst, f"au-nsw-2023:{offset}", carbon)
            row = {"family": family, "case": name, "offset_h": offset}
            for label, shares in (("blind", None), ("four", timing.FRACTIONS), ("fine", FINE)):
                row[label] = _alone_bill(priced, shares)
            rows.append(row)
            print(row, flush=True)
    return pd.DataFrame(rows)


# the four shares and eight more: a finer search of the speed budgets
FINE = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.45, 0.4, 0.3, 0.25, 0.2, 0.1)


def _alone_bill(inst: Instance, shares: tuple[float, ...] | None) -> float:
    """The sum over jobs of each one's profile bill, alone from its release: price-blind
    back to back (``None``) or timed with these shares of its window."""
    rule = timing.TimingRule(shares) if shares is not None else timing.PLAIN
    table = HullTable(inst, timing=shares is not None, rule=rule)
    blind = HullTable(inst, timing=False)
    types = tuple(g.name for g in inst.gpu_types)
    tariff = Tariff.of(inst)
    assert tariff is not None
    total = 0.0
    for job in inst.jobs:
        status = JobStatus(job, 0.0, None)
        if shares is None:
            p = next(iter(JobProfiles(inst, status, job.release, types, blind).in_order()))
            rows = timing.load(inst, job, p.profile, job.distribution)
            total += timing.contiguous(rows, tariff, job.release)
        else:
            p = next(iter(JobProfiles(inst, status, job.release, types, table).in_order()))
            total += p.profile.energy_cost
    return total


def store_tables(path: str) -> str:
    """docs/prices.md's tables from a ``prices`` store (runs that finished)."""
    from experiments.store import Store

    with Store(path, readonly=True) as store:
        runs = store.runs("prices")
    runs = runs[runs["status"] == "ok"].copy()
    runs["family"] = runs["scenario"].str.split("[").str[0]
    runs["bill"] = runs["energy_cost"] + runs["carbon_cost"]
    # only scenarios and seeds every policy finished, so that sums compare
    per = runs.groupby(["scenario", "seed"])["policy"].nunique()
    whole = per[per == runs["policy"].nunique()].index
    runs = runs.set_index(["scenario", "seed"]).loc[whole].reset_index()
    out = []
    for family, part in runs.groupby("family", sort=False):
        cols = ["bill", "carbon_kg", "total_cost", "missed"]
        sums = part.groupby("policy")[cols].sum()
        sums = sums.sort_values("total_cost")
        for sts in ("sts", "sts-price-blind"):
            sums[f"{sts} bill cut"] = 1 - sums.loc[sts, "bill"] / sums["bill"]
            sums[f"{sts} total cut"] = 1 - sums.loc[sts, "total_cost"] / sums["total_cost"]
        runs_in = part.groupby(["scenario", "seed"]).ngroups
        out.append(f"{family}: {runs_in} scenario runs per policy\n")
        out.append(sums.to_markdown(floatfmt=".4g") + "\n")
        out.append(bill_cut_interval(part) + "\n")
    return "\n".join(out)


def bill_cut_interval(part: pd.DataFrame) -> str:
    """STS's bill over price-blind STS's on the same runs, with its 95% paired-bootstrap
    interval (:func:`benchmarks.common.paired_ratio`): whether the runs resolve the cut
    against the goal's 15%, not only its point."""
    bills = part.pivot_table(index=["scenario", "seed"], columns="policy", values="bill")
    r = paired_ratio(bills["sts"], bills["sts-price-blind"])
    return (
        f"STS's bill over price-blind STS's, run by run: {r} (a cut of {1 - r.ratio:.1%}; "
        f"95% interval {1 - r.high:.1%} to {1 - r.low:.1%})"
    )


def bill_tariff(inst: Instance) -> Tariff:
    """The bill of a kWh over time on ``inst``: its price series plus its carbon priced
    (STS's tariff, whatever its cell: only its integrals are read)."""
    carbon = None if inst.carbon is None else inst.carbon.intensity
    per_gram = 0.0 if inst.carbon is None else inst.carbon.price_per_gram
    return Tariff(inst.price_series, carbon, per_gram, 1.0)


def bill_cells(
    tariff: Tariff, a: float, b: float, extra: Iterable[float] = ()
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cells over ``[a, b]`` where ``tariff``'s bill of a kWh is constant (cut also
    at ``extra``): their edges, their hours and the bill of a kW held over each, per
    hour (0 on an empty cell, which no plan uses)."""
    points = {a, b, *tariff.price.breakpoints(a, b), *extra}
    if tariff.carbon is not None:
        points.update(tariff.carbon.breakpoints(a, b))
    edges = np.array(sorted(points))
    hours = np.diff(edges)
    per_hour = np.where(hours > 0, tariff.cost(edges) / np.where(hours > 0, hours, 1.0), 0.0)
    return edges, hours, per_hour


def bill_floor(inst: Instance, job: Job, epochs: float) -> float:
    """The least bill (energy and priced carbon) of ``epochs`` epochs of ``job`` run
    between its release and its due date, alone, on its allowed configurations, mixed
    fractionally within each cell where the bill of a kWh is constant, with no relaunch
    overhead: an LP over the hours ``x[k, c]`` configuration ``c`` runs in cell ``k``
    (``sum_c x[k, c] <= len_k``, ``sum x[k, c] / tau_c = epochs``). Every schedule of the
    job that finishes by its due date is a solution, so its realised bill is at least
    this (``inf`` where none finishes)."""
    if epochs <= 0:
        return 0.0
    a, b = job.release, job.due  # b > a: a job's due date follows its release
    _, hours, per_hour = bill_cells(bill_tariff(inst), a, b)
    keep = hours > 0
    hours, per_hour = hours[keep], per_hour[keep]
    configs = inst.allowed_configs(job)
    kw = np.array([inst.power_w(c) / 1000.0 for c in configs])
    tau = np.array([job.epoch_times[c] for c in configs])
    cells, n = len(hours), len(configs)
    time_rows = kron(identity(cells), csr_array(np.ones((1, n))))  # one row per cell
    work_row = hstack([csr_array(1.0 / tau[None, :])] * cells)
    cost = np.outer(per_hour, kw).ravel()
    # costs scaled to at most 1 and tight tolerances: HiGHS stops within its tolerance
    # on reduced costs (1e-7 by default), which on tiny prices is a floor too high
    scale = float(np.max(np.abs(cost), initial=0.0)) or 1.0
    r = linprog(
        cost / scale,
        A_ub=time_rows,
        b_ub=hours,
        A_eq=work_row,
        b_eq=[epochs],
        bounds=(0, None),
        method="highs",
        options={"dual_feasibility_tolerance": 1e-10, "primal_feasibility_tolerance": 1e-10},
    )
    if r.status == 2:  # infeasible: no schedule finishes by the due date
        return float("inf")
    if r.status != 0:  # a floor of inf would be the least safe answer
        raise RuntimeError(f"bill_floor: the LP of job {job.id!r} ended: {r.message}")
    return float(r.fun) * scale


def floor_table(path: str) -> pd.DataFrame:
    """Per seed of a ``prices`` store's scenarios where price-blind STS missed no due
    date: its bill, STS's, and the floor (:func:`bill_floor`, summed over the jobs with
    the epochs they ran), and the cuts of STS and of the floor against it."""
    from experiments.store import Store

    rows = []
    with Store(path, readonly=True) as store:
        runs = store.runs("prices")
        runs = runs[(runs["status"] == "ok") & runs["policy"].isin(["sts", "sts-price-blind"])]
        for (scenario, seed), part in runs.groupby(["scenario", "seed"]):
            by = part.set_index("policy")
            if len(by) < 2 or by.loc["sts-price-blind", "missed"] > 0:
                continue
            key = str(by.loc["sts-price-blind", "key"])
            inst, _ = store.plan_of("prices", key)
            jobs = store.jobs("prices", key)
            pairs = zip(jobs["job"], jobs["epochs_run"], strict=True)
            floor = sum(bill_floor(inst, inst.job(j), e) for j, e in pairs)
            bills = by["energy_cost"] + by["carbon_cost"]
            rows.append(
                {
                    "scenario": scenario,
                    "seed": seed,
                    "price-blind": bills["sts-price-blind"],
                    "sts": bills["sts"],
                    "floor": floor,
                }
            )
    if not rows:
        raise SystemExit(
            f"{path}: no prices run where price-blind STS missed no due date and STS ran"
        )
    df = pd.DataFrame(rows).groupby("seed")[["price-blind", "sts", "floor"]].sum()
    df.loc["all"] = df.sum()
    df["sts cut"] = 1 - df["sts"] / df["price-blind"]
    df["floor's cut"] = 1 - df["floor"] / df["price-blind"]
    return df


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("part", choices=("families", "alone", "punctual", "store", "floor"))
    ap.add_argument("store", nargs="?", help="a prices campaign's store (parts store, floor)")
    ap.add_argument("--offsets", type=int, nargs="+", default=[0, 840, 1512])
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--carbon-price", type=float, default=100.0)
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--csv")
    args = ap.parse_args()
    if args.part in ("store", "floor"):
        from experiments.store import StoreError

        if args.store is None:
            ap.error(f"part {args.part} reads a prices campaign's store: give its path")
        try:
            table = store_tables(args.store) if args.part == "store" else floor_table(args.store)
        except StoreError as exc:
            raise SystemExit(str(exc)) from None
        print(table if isinstance(table, str) else table.to_markdown(floatfmt=".4g"))
        return
    if args.part == "families":
        df = families(args.offsets, args.seeds, args.carbon_price, args.policies.split(","))
        if args.csv:
            df.to_csv(args.csv, index=False)
        print(summary(df).to_markdown(index=False, floatfmt=".4g"))
        return
    if args.part == "punctual":
        print(punctual(args.offsets, args.seeds, args.carbon_price).to_markdown(floatfmt=".4g"))
        return
    df = alone(args.offsets, args.seeds, args.carbon_price)
    if args.csv:
        df.to_csv(args.csv, index=False)
    sums = df.groupby("family")[["blind", "four", "fine"]].sum()
    sums["four cut"] = 1 - sums["four"] / sums["blind"]
    sums["fine cut"] = 1 - sums["fine"] / sums["blind"]
    print(sums.to_markdown(floatfmt=".4g"))


if __name__ == "__main__":
    main()
