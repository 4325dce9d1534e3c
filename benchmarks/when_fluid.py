"""How much of a contended run's bill timing could move at all: a floor under the bill
of a whole run with the cluster's GPUs shared out (docs/prices.md, 'How much a whole
contended run could cut').

:func:`benchmarks.when.bill_floor` bounds one job alone. Here every job of a run is
planned at once, in one LP, on the GPUs each type really has:

- each job runs the epochs it ran in the run (known in advance: clairvoyant), on its
  allowed configurations mixed fractionally within each cell where the bill of a kWh
  is constant (the series' cells cut at every release and due date), one
  configuration's worth of time per cell at most, no relaunch overhead;
- in every cell, the GPUs the jobs hold on a type (a shared slot holds ``1/K_max`` of
  one, :meth:`Instance.busy_share`) are at most the type's GPUs times ``scale``; which
  node holds them is not asked (no packing);
- a job in ``late`` may also run after its due date: those epochs hold no GPU and pay
  the cheapest cell between its due date and ``late_hours`` after the last due date.

Every plan of the run that keeps on time each job not in ``late`` and ends by then is a
solution, so its bill (energy and priced carbon; idle power, where charged, on top) is
at least the LP's. With ``blind`` the same LP chooses the plan of least energy, the
earliest among them (a cost a millionth per hour later), and is billed at the series:
the fluid plan of a scheduler blind to the price, so that the two together say what
timing alone buys within the relaxation.

``python -m benchmarks.when_fluid STORE``: for every run of the contended family (or
``--family``) in a ``prices`` store where STS and price-blind STS both ran, their
bills, the floor under the plans that keep on time every job price-blind STS kept on
time, with the GPUs of the cluster times each ``--scales`` (``inf``: none shared out),
and its price-blind twin; per run and summed, with the cuts against price-blind STS.

With ``--work max`` every job runs its maximum epochs instead: not a floor under any
run's bill, but what timing buys for the work a plan must make room for before it
knows the stops.

Run: python -m benchmarks.when_fluid STORE [--campaign prices] [--family contended]
         [--scales 1 2 inf] [--work run|max]
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import linprog
from scipy.sparse import csr_array

from benchmarks.common import markdown
from benchmarks.when import bill_cells, bill_floor, bill_tariff
from instances import Instance
from instances.distribution import STOP_TOL
from validation.timeline import TIME_TOL

# a blind plan's cost of running an hour later, per kWh: enough to pick the earliest
# of the plans of least energy, too little to trade energy for time (a run spans weeks
# at most: 1e-6 * 1,000 h moves a kWh's weight by 0.1%)
LATER = 1e-6
# how long after the last due date late work may run (a week: every hour of the series'
# daily and weekly cycles)
LATE_HOURS = 168.0


class NoFluidPlan(ValueError):
    """No fluid plan keeps the jobs asked on time on the GPUs given."""


@dataclass(frozen=True)
class Fluid:
    """A fluid plan of a run: its bill (energy and priced carbon), energy (kWh), and
    each job's bill (by job id; where a plan loses against the floor)."""

    bill: float
    kwh: float
    by_job: Mapping[str, float]


class _Columns:
    """The LP's columns and rows as they are made (sparse triplets)."""

    def __init__(self) -> None:
        self.cost: list[float] = []
        self.blind: list[float] = []
        self.kwh: list[float] = []  # kWh a unit of the column draws
        self.job: list[str] = []  # whose the column is
        self.b_ub: list[float] = []
        self.b_eq: list[float] = []
        self.ub: list[tuple[int, int, float]] = []
        self.eq: list[tuple[int, int, float]] = []

    def column(self, job: str, cost: float, blind: float, kwh: float) -> int:
        self.job.append(job)
        self.cost.append(cost)
        self.blind.append(blind)
        self.kwh.append(kwh)
        return len(self.cost) - 1

    def row_ub(self, rhs: float) -> int:
        self.b_ub.append(rhs)
        return len(self.b_ub) - 1

    def row_eq(self, rhs: float) -> int:
        self.b_eq.append(rhs)
        return len(self.b_eq) - 1

    @staticmethod
    def matrix(triplets: list[tuple[int, int, float]], rows: int, cols: int) -> csr_array:
        r, c, v = zip(*triplets, strict=True) if triplets else ((), (), ())
        return csr_array((v, (r, c)), shape=(rows, cols))

    def solve(self, blind: bool = False) -> Fluid:
        """The plan of least bill, or with ``blind`` of least energy, earliest first;
        billed at the series either way."""
        if not self.cost:  # no job ran an epoch
            return Fluid(0.0, 0.0, {})
        cost = np.array(self.blind if blind else self.cost)
        # costs scaled to at most 1 and tight tolerances, as in bill_floor
        weight = float(np.max(np.abs(cost), initial=0.0)) or 1.0
        r = linprog(
            cost / weight,
            A_ub=self.matrix(self.ub, len(self.b_ub), len(cost)) if self.b_ub else None,
            b_ub=self.b_ub or None,
            A_eq=self.matrix(self.eq, len(self.b_eq), len(cost)),
            b_eq=self.b_eq,
            bounds=(0, None),
            method="highs",
            options={"dual_feasibility_tolerance": 1e-10, "primal_feasibility_tolerance": 1e-10},
        )
        if r.status == 2:
            raise NoFluidPlan("no fluid plan keeps those jobs on time on these GPUs")
        if r.status != 0:
            raise RuntimeError(f"fluid_plan: the LP ended: {r.message}")
        paid = np.asarray(self.cost) * r.x
        by_job = pd.Series(paid).groupby(np.asarray(self.job)).sum()
        jobs = {str(j): float(v) for j, v in by_job.items()}
        return Fluid(float(paid.sum()), float(np.dot(self.kwh, r.x)), jobs)


def fluid_plan(
    inst: Instance,
    epochs: Mapping[str, float],
    late: Collection[str] = (),
    *,
    blind: bool = False,
    scale: float = 1.0,
    late_hours: float = LATE_HOURS,
) -> Fluid:
    """The fluid plan of the module's LP for the run whose jobs ran ``epochs`` (by job
    id; a job absent or at 0 ran none): the least bill (or, ``blind``, the least energy,
    earliest) with each job not in ``late`` done by its due date and the GPUs of each
    type times ``scale`` (``math.inf``: not shared out). :class:`NoFluidPlan` where no
    such plan exists (a job not in ``late`` that cannot finish in time). The windows and
    the work take the evaluator's tolerances (a start ``TIME_TOL`` before the release,
    an end as much after the due date, a stop ``STOP_TOL`` short of the epochs), so that
    every plan it accepts is a solution."""
    return fluid_lp(inst, epochs, late, scale=scale, late_hours=late_hours).solve(blind)


def fluid_lp(
    inst: Instance,
    epochs: Mapping[str, float],
    late: Collection[str] = (),
    *,
    scale: float = 1.0,
    late_hours: float = LATE_HOURS,
) -> _Columns:
    """:func:`fluid_plan`'s LP, built once to be solved for the floor and its twin."""
    if not late_hours > 0:
        raise ValueError(f"late_hours must be positive, not {late_hours!r}")
    lp = _Columns()
    jobs = [j for j in inst.jobs if epochs.get(j.id, 0.0) > 0]
    if not jobs:
        return lp
    tariff = bill_tariff(inst)
    start = min(j.release for j in jobs) - TIME_TOL
    end = max(j.due for j in jobs) + TIME_TOL + late_hours
    windows = (t for j in jobs for t in (j.release - TIME_TOL, j.due + TIME_TOL))
    edges, hours, per_hour = bill_cells(tariff, start, end, windows)
    gpus: dict[str, float] = {}
    for node in inst.nodes:
        gpus[node.gpu_type] = gpus.get(node.gpu_type, 0.0) + node.num_gpus * scale
    held: dict[tuple[str, int], int] = {}  # (type, cell) -> its row of GPUs
    for job in jobs:
        work = lp.row_eq(max(0.0, float(epochs[job.id]) - STOP_TOL))
        configs = inst.allowed_configs(job)
        kw = [inst.power_w(c) / 1000.0 for c in configs]
        tau = [job.epoch_times[c] for c in configs]
        a, b = job.release - TIME_TOL, job.due + TIME_TOL
        cells = np.nonzero((edges[:-1] >= a) & (edges[1:] <= b) & (hours > 0))[0]
        for k in cells:
            once = lp.row_ub(float(hours[k]))  # one configuration at a time
            later = 1.0 + LATER * (edges[k] - start)
            for c, cfg in enumerate(configs):
                col = lp.column(job.id, per_hour[k] * kw[c], kw[c] * later, kw[c])
                lp.ub.append((once, col, 1.0))
                lp.eq.append((work, col, 1.0 / tau[c]))
                if math.isfinite(scale):
                    key = (cfg.gpu_type, int(k))
                    if key not in held:
                        held[key] = lp.row_ub(gpus[cfg.gpu_type] * float(hours[k]))
                    lp.ub.append((held[key], col, inst.busy_share(cfg)))
        if job.id in late:
            after = (edges[:-1] >= b) & (hours > 0)
            cheapest = float(per_hour[after].min())
            later = 1.0 + LATER * (end - start)
            for c in range(len(configs)):  # epochs run late, on no GPU of the cluster
                late_cost = cheapest * kw[c] * tau[c]
                col = lp.column(job.id, late_cost, kw[c] * tau[c] * later, kw[c] * tau[c])
                lp.eq.append((work, col, 1.0))
    return lp


POLICIES = ("sts", "sts-price-blind")


def family_runs(runs: pd.DataFrame, family: str) -> pd.DataFrame:
    """The finished runs of STS and price-blind STS among a store's ``runs`` whose
    scenario's name starts with ``family``."""
    return runs[
        (runs["status"] == "ok")
        & runs["policy"].isin(POLICIES)
        & runs["scenario"].str.startswith(family)
    ]


def store_table(
    path: str, campaign: str, scales: list[float], family: str = "contended", work: str = "run"
) -> pd.DataFrame:
    """Per run of ``family`` in ``path``'s ``campaign``: STS's and price-blind STS's
    bills, and the fluid floor and its blind twin at each scale, price-blind STS's
    missed jobs in ``late``. With ``work = "max"`` every job runs its maximum epochs
    instead (the work a plan must make room for before it knows the stops; no floor
    under the run's bill then), jobs that cannot finish those alone by their due date
    in ``late`` too, and a scale where no fluid plan keeps the others on time is NaN.
    The floor is under price-blind STS's bill and every plan that keeps its on-time jobs
    on time; STS's bill is beside it, under it only where STS keeps those too."""
    from experiments.store import Store

    rows = []
    with Store(path, readonly=True) as store:
        runs = family_runs(store.runs(campaign), family)
        for (scenario, seed), part in runs.groupby(["scenario", "seed"], sort=False):
            by = part.set_index("policy")
            if len(by) < len(POLICIES):
                continue
            key = str(by.loc["sts-price-blind", "key"])
            inst, _ = store.plan_of(campaign, key)
            jobs = store.jobs(campaign, key)
            column = "epochs_run" if work == "run" else "max_epochs"
            epochs = dict(zip(jobs["job"], jobs[column].astype(float), strict=True))
            late = set(jobs["job"][jobs["missed"].astype(bool)])
            if work != "run":
                late |= {
                    j for j, e in epochs.items() if bill_floor(inst, inst.job(j), e) == math.inf
                }
            # the horizon covers price-blind STS's run, so that its plan is a solution
            last_due = max(inst.job(j).due for j, e in epochs.items() if e > 0)
            after = float(jobs["completion_h"].max()) - last_due
            hours = max(LATE_HOURS, after + 1.0)
            bills = by["energy_cost"] + by["carbon_cost"]
            row = {
                "scenario": scenario,
                "seed": seed,
                "price-blind STS": bills["sts-price-blind"],
                "STS": bills["sts"],
            }
            for s in scales:
                lp = fluid_lp(inst, epochs, late, scale=s, late_hours=hours)
                try:
                    floor, twin = lp.solve().bill, lp.solve(blind=True).bill
                except NoFluidPlan:
                    if work == "run":  # the run's own plan is a fluid plan: not reached
                        raise
                    floor = twin = math.nan
                row[f"floor x{s:g}"], row[f"blind x{s:g}"] = floor, twin
            rows.append(row)
    if not rows:
        raise SystemExit(
            f"{path}: no {family} run of {campaign!r} where STS and price-blind STS both ran"
        )
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("store", help="a prices campaign's store")
    ap.add_argument("--campaign", default="prices")
    ap.add_argument("--family", default="contended", help="the scenarios whose name starts so")
    ap.add_argument("--scales", type=float, nargs="+", default=[1.0, 2.0, math.inf])
    ap.add_argument("--work", choices=("run", "max"), default="run")
    args = ap.parse_args()
    df = store_table(args.store, args.campaign, args.scales, args.family, args.work)
    df = df.dropna()  # only runs with a fluid plan at every scale, so that sums compare
    bill_cols = [c for c in df.columns if c not in ("scenario", "seed")]
    print(markdown(["scenario", "seed", *bill_cols], df.to_numpy().tolist()))
    total = df[bill_cols].sum()
    pb = total["price-blind STS"]
    rows = [[c, total[c], 1 - total[c] / pb] for c in bill_cols]
    print()
    print(markdown(["summed over the runs", "bill", "cut against price-blind STS"], rows))
    for s in args.scales:
        aware, twin = total[f"floor x{s:g}"], total[f"blind x{s:g}"]
        print(f"x{s:g}: the floor against its price-blind twin: a cut of {1 - aware / twin:.1%}")


if __name__ == "__main__":
    main()
