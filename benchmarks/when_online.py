"""What timing buys a plan that knows neither the arrivals nor the stops: the fluid plan
of :mod:`benchmarks.when_fluid` re-made online (docs/prices.md, 'What an online fluid
plan cuts').

:func:`benchmarks.when_fluid.fluid_plan` plans a whole run at once, knowing every
arrival and every job's epochs: a floor, loose for an online scheduler. Here the same
relaxation is re-planned as a scheduler must:

- at every event (a release, or a job reaching the epochs it ran in the run) the jobs
  present are planned from now in one LP, each its remaining *maximum* epochs (the
  stops unknown), its allowed configurations mixed within each cell where the bill of a
  kWh is constant, one configuration's worth of time per cell, the GPUs each type has
  as capacity (no packing, no relaunch overhead);
- a job may run past its due date: an hour of configuration ``c`` in a cell ending
  ``L`` hours after the due date costs ``ω_j · L / τ_c``, each late epoch charged as if
  it ended the job (the count errs high, so that the plan keeps due dates where it can);
- the plan runs until the next event (the cell's hours spread evenly over the cell);
  the epochs, energy and bill are counted as they run, and a job ends when it has run
  the epochs it ran in the run. Completion against the due date gives the tardiness.

With ``blind`` the LP values energy at the series' mean bill over its cells (and an
hour later at a hundred-thousandth more: it runs as early as it can), the plan of a
scheduler blind to the price, billed at the series. Neither a floor under any policy
nor a policy: what an online re-planner in the relaxation reaches, and what timing buys
it, on the same stops as the run.

``python -m benchmarks.when_online STORE...``: for every run of the contended family (or
``--family``) in ``prices`` stores where STS and price-blind STS both ran, their bills
beside the online fluid plan and its blind twin, per run and summed.

With ``--one-type`` each job is also held to the GPU type STS ran most of its GPU-hours
on, in both plans: what the online plan's cut owes to a job changing type, which STS's
profiles do not plan (docs/prices.md, 'Where STS and the online plan part').

Run: python -m benchmarks.when_online STORE [STORE...] [--campaign prices]
         [--family contended] [--one-type]
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import linprog
from scipy.sparse import csr_array

from benchmarks.common import markdown
from benchmarks.when import bill_cells, bill_tariff
from benchmarks.when_fluid import POLICIES, family_runs
from heuristic.sts.tariff import Tariff
from instances import Config, Instance, Job, Plan

# the blind plan's cost of an hour later, a share of its energy: ten times
# when_fluid's, so that an hour later on a job drawing a tenth of the largest job's
# power still costs more than the solver's tolerance
LATER = 1e-5
AHEAD = 48.0  # hours the plan runs past the last due date present (doubled if short)
MAX_AHEAD = 1e5  # past this, no horizon will do: the LP is infeasible for another reason
TOL = 1e-9


@dataclass(frozen=True)
class Online:
    """An online fluid run: its bill (energy and priced carbon), energy (kWh),
    tardiness, the jobs that missed their due dates, and how many LPs were solved."""

    bill: float
    kwh: float
    tardiness: float
    late: frozenset[str]
    solves: int

    @property
    def missed(self) -> int:
        return len(self.late)


@dataclass(frozen=True)
class JobConfigs:
    """A job's allowed configurations and what an hour of each does."""

    configs: tuple[Config, ...]
    kw: np.ndarray
    tau: np.ndarray  # hours an epoch
    share: np.ndarray  # GPUs held (a shared slot a fraction of one)

    @classmethod
    def of(cls, inst: Instance, job: Job, configs: tuple[Config, ...]) -> JobConfigs:
        return cls(
            configs,
            np.array([inst.power_w(c) / 1000.0 for c in configs]),
            np.array([job.epoch_times[c] for c in configs]),
            np.array([inst.busy_share(c) for c in configs]),
        )


def type_gpus(inst: Instance) -> dict[str, float]:
    """The GPUs of each type on the cluster (the LP's capacity)."""
    gpus: dict[str, float] = {}
    for node in inst.nodes:
        gpus[node.gpu_type] = gpus.get(node.gpu_type, 0.0) + node.num_gpus
    return gpus


def online_fluid(
    inst: Instance,
    epochs: Mapping[str, float],
    *,
    blind: bool = False,
    types: Mapping[str, str] | None = None,
) -> Online:
    """The online fluid run of the jobs that ran ``epochs`` (by job id; a job absent or
    at 0 ran none, and is not planned: its arrival is not an event either). ``types``:
    a job named there runs only on its allowed configurations of that GPU type (one type
    per job, as STS's profiles plan; the others mix types freely)."""
    tariff = bill_tariff(inst)
    gpus = type_gpus(inst)
    for job_id, ran in epochs.items():
        if not (math.isfinite(ran) and ran >= 0):
            raise ValueError(f"job {job_id!r} ran {ran!r} epochs: not a finite count")
    jobs = [j for j in inst.jobs if epochs.get(j.id, 0.0) > 0]
    for j in jobs:
        if epochs[j.id] > j.max_epochs + TOL:
            raise ValueError(f"job {j.id!r} ran {epochs[j.id]!r} epochs, above its maximum")
    info = {}
    for j in jobs:
        cfgs = inst.allowed_configs(j)
        if types is not None and j.id in types:
            cfgs = tuple(c for c in cfgs if c.gpu_type == types[j.id])
            if not cfgs:
                raise ValueError(
                    f"job {j.id!r} has no allowed configuration of type {types[j.id]!r}"
                )
        info[j.id] = JobConfigs.of(inst, j, cfgs)
    releases = sorted({j.release for j in jobs})
    done = {j.id: 0.0 for j in jobs}
    finish: dict[str, float] = {}
    now = releases[0] if releases else 0.0
    bill = kwh = 0.0
    solves = 0
    while len(finish) < len(jobs):
        present = [j.id for j in jobs if j.release <= now + TOL and j.id not in finish]
        later = [r for r in releases if r > now + TOL]
        if not present:
            now = later[0]
            continue
        rem = {i: inst.job(i).max_epochs - done[i] for i in present}
        edges, per_hour, rate, power = _plan(inst, tariff, now, rem, blind, gpus, info)
        solves += 1
        ends = {i: _end(edges, rate[i], epochs[i] - done[i], now) for i in present}
        until = min([*ends.values(), later[0] if later else math.inf])
        ran = np.maximum(0.0, np.minimum(edges[1:], until) - np.maximum(edges[:-1], now))
        for i in present:
            done[i] += float(np.dot(rate[i], ran))
            kwh += float(np.dot(power[i], ran))
            bill += float(np.dot(power[i] * per_hour, ran))
            if ends[i] <= until + TOL:
                finish[i], done[i] = ends[i], epochs[i]
        now = until
    late = {i: t - inst.job(i).due for i, t in finish.items()}
    tardiness = sum(inst.tardiness_weight(i) * max(0.0, x) for i, x in late.items())
    missed = frozenset(i for i, x in late.items() if x > 1e-6)
    return Online(bill, kwh, tardiness, missed, solves)


def _end(edges: np.ndarray, rate: np.ndarray, need: float, now: float) -> float:
    """When a job running ``rate`` epochs an hour in each cell has run ``need`` more."""
    if need <= TOL:
        return now
    cum = np.concatenate(([0.0], np.cumsum(rate * np.diff(edges))))
    k = int(np.searchsorted(cum, need - 1e-7 * max(1.0, need)))
    if k >= len(cum):  # the LP's tolerance short of the plan's end: it ends there
        return float(edges[-1])
    if k == 0:
        return now
    return float(min(edges[k], edges[k - 1] + (need - cum[k - 1]) / rate[k - 1]))


def _plan(
    inst: Instance,
    tariff: Tariff,
    now: float,
    rem: Mapping[str, float],
    blind: bool,
    gpus: Mapping[str, float],
    info: Mapping[str, JobConfigs],
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The LP from ``now`` for the jobs in ``rem`` (their remaining epochs): the cells'
    edges and bill per kWh, and each job's epochs and kW an hour in each cell."""
    dues = [inst.job(i).due for i in rem]
    ahead = AHEAD
    while True:
        end = max(max(dues), now) + ahead
        edges, hours, per_hour = bill_cells(tariff, now, end, [d for d in dues if d > now])
        found = solve_cells(inst, now, rem, blind, gpus, info, edges, hours, per_hour)
        if found is not None:
            width = np.where(hours > 0, hours, 1.0)
            rate = {i: x @ (1.0 / info[i].tau) / width for i, x in found.items()}
            power = {i: x @ info[i].kw / width for i, x in found.items()}
            return edges, per_hour, rate, power
        if ahead > MAX_AHEAD:
            raise RuntimeError(f"online_fluid: no plan of the jobs present at {now!r} h")
        ahead *= 2  # the remaining work does not fit by then: look further


def solve_cells(
    inst: Instance,
    now: float,
    rem: Mapping[str, float],
    blind: bool,
    gpus: Mapping[str, float],
    info: Mapping[str, JobConfigs],
    edges: np.ndarray,
    hours: np.ndarray,
    per_hour: np.ndarray,
    weight: Mapping[str, float] | None = None,
) -> dict[str, np.ndarray] | None:
    """The LP on the cells between ``edges`` for the jobs in ``rem`` (their remaining
    epochs): each job's hours on each of its configurations in each cell (a cells x
    configurations array), or ``None`` where the remaining work does not fit by the last
    edge. ``weight``: a job's energy counted at this share (the expected share of its
    remaining epochs that runs; absent: 1)."""
    cells = np.nonzero(hours > 1e-12)[0]
    flat = float(np.dot(per_hour, hours) / hours.sum())
    cost, cols = [], []
    ub_r, ub_c, ub_v, b_ub = [], [], [], []
    eq_r, eq_c, eq_v, b_eq = [], [], [], []
    held: dict[tuple[str, int], int] = {}  # (type, cell): its row of GPUs
    n = 0
    scale = 0.0  # the largest energy cost of a column
    for i, r in rem.items():
        job, j = inst.job(i), info[i]
        k = np.repeat(cells, len(j.configs))
        c = np.tile(np.arange(len(j.configs)), len(cells))
        late = np.maximum(0.0, edges[k + 1] - job.due)
        tard = inst.tardiness_weight(i) * late / j.tau[c]
        rho = 1.0 if weight is None else weight[i]
        if blind:
            energy = rho * j.kw[c] * flat * (1.0 + LATER * (edges[k] - now))
        else:
            energy = rho * per_hour[k] * j.kw[c]
        scale = max(scale, float(energy.max(initial=0.0)))
        cost.append(energy + tard)
        idx = n + np.arange(len(k))
        n += len(k)
        cols.append((i, k, c))
        eq_r.append(np.full(len(k), len(b_eq)))
        eq_c.append(idx)
        eq_v.append(1.0 / j.tau[c])
        b_eq.append(r)
        # one configuration at a time in each cell
        ub_r.append(len(b_ub) + np.repeat(np.arange(len(cells)), len(j.configs)))
        ub_c.append(idx)
        ub_v.append(np.ones(len(k)))
        b_ub.extend(hours[cells].tolist())
        # the GPUs of each type in each cell
        rows = np.empty(len(k), dtype=int)
        for m, (kk, cc) in enumerate(zip(k.tolist(), c.tolist(), strict=True)):
            key = (j.configs[cc].gpu_type, kk)
            if key not in held:
                held[key] = len(b_ub)
                b_ub.append(gpus[key[0]] * float(hours[kk]))
            rows[m] = held[key]
        ub_r.append(rows)
        ub_c.append(idx)
        ub_v.append(j.share[c])
    obj = np.concatenate(cost)
    a_ub = csr_array(
        (np.concatenate(ub_v), (np.concatenate(ub_r), np.concatenate(ub_c))), shape=(len(b_ub), n)
    )
    a_eq = csr_array(
        (np.concatenate(eq_v), (np.concatenate(eq_r), np.concatenate(eq_c))), shape=(len(b_eq), n)
    )
    # costs in units of the largest energy cost, not of the largest cost: a late cell's
    # tardiness may be 1e4 times an hour's energy, and in its units the blind plan's
    # cost of an hour later falls below the solver's tolerance (the plan then runs
    # at any hour of its window, not as early as it can)
    res = linprog(
        obj / (scale or 1.0),
        A_ub=a_ub,
        b_ub=b_ub,
        A_eq=a_eq,
        b_eq=b_eq,
        bounds=(0, None),
        method="highs",
    )
    if res.status == 2:
        return None
    if res.status != 0:
        raise RuntimeError(f"online_fluid: the LP ended: {res.message}")
    out = {}
    start = 0
    for i, k, c in cols:
        x = np.zeros((len(hours), len(info[i].configs)))
        np.add.at(x, (k, c), res.x[start : start + len(k)])
        start += len(k)
        out[i] = x
    return out


def main_types(plan: Plan) -> dict[str, str]:
    """Each job's GPU type of the most GPU-hours in ``plan`` (a shared slot a GPU's
    hours; ties to the type whose name sorts first)."""
    hours: dict[str, dict[str, float]] = {}
    for seg in plan.segments:
        by = hours.setdefault(seg.job, {})
        t = seg.config.gpu_type
        by[t] = by.get(t, 0.0) + seg.duration * len(seg.gpus)
    return {j: min(by, key=lambda t: (-by[t], t)) for j, by in hours.items()}


def store_table(
    paths: Sequence[str], campaign: str, family: str = "contended", one_type: bool = False
) -> pd.DataFrame:
    """Per run of ``family`` in the ``campaign`` of the stores at ``paths`` where STS
    and price-blind STS both ran (each policy's run from the last store that holds it,
    so that a policy re-run alone into another store can be set beside the other's):
    their bills and missed due dates, and the online fluid plan's and its blind twin's,
    on the run's stops. With ``one_type``, also both plans with each job held to the
    GPU type STS ran most of its GPU-hours on (:func:`main_types`)."""
    from experiments.store import Store

    found: dict[tuple[str, int], dict[str, tuple[str, pd.Series]]] = {}
    for path in paths:
        with Store(path, readonly=True) as store:
            runs = family_runs(store.runs(campaign), family)
        for _, run in runs.iterrows():
            found.setdefault((run["scenario"], int(run["seed"])), {})[run["policy"]] = (path, run)
    rows = []
    for (scenario, seed), by in found.items():
        if len(by) < len(POLICIES):
            continue
        (path, blind), (_, sts) = by["sts-price-blind"], by["sts"]
        if blind["instance_id"] != sts["instance_id"]:
            raise SystemExit(f"{scenario}, seed {seed}: the two policies ran other instances")
        with Store(path, readonly=True) as store:
            inst, _ = store.plan_of(campaign, str(blind["key"]))
            jobs = store.jobs(campaign, str(blind["key"]))
        epochs = dict(zip(jobs["job"], jobs["epochs_run"].astype(float), strict=True))
        aware, twin = online_fluid(inst, epochs), online_fluid(inst, epochs, blind=True)
        extra: dict[str, float] = {}
        if one_type:
            with Store(by["sts"][0], readonly=True) as store:
                _, plan = store.plan_of(campaign, str(sts["key"]))
            types = main_types(plan)
            held = online_fluid(inst, epochs, types=types)
            held_twin = online_fluid(inst, epochs, blind=True, types=types)
            extra = {"online, one type": held.bill, "online blind, one type": held_twin.bill}
        rows.append(
            {
                "scenario": scenario,
                "seed": seed,
                "price-blind STS": blind["energy_cost"] + blind["carbon_cost"],
                "STS": sts["energy_cost"] + sts["carbon_cost"],
                "online": aware.bill,
                "online blind": twin.bill,
                "missed, price-blind": int(blind["missed"]),
                "missed, STS": int(sts["missed"]),
                "missed, online": aware.missed,
                "missed, online blind": twin.missed,
                **extra,
            }
        )
    if not rows:
        raise SystemExit(
            f"{', '.join(paths)}: no {family} run of {campaign!r} where STS and price-blind "
            "STS both ran"
        )
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("stores", nargs="+", help="a prices campaign's stores")
    ap.add_argument("--campaign", default="prices")
    ap.add_argument("--family", default="contended", help="the scenarios whose name starts so")
    ap.add_argument(
        "--one-type",
        action="store_true",
        help="also each job held to the GPU type STS ran most of its GPU-hours on",
    )
    args = ap.parse_args()
    df = store_table(args.stores, args.campaign, args.family, args.one_type)
    print(markdown(list(df.columns), df.to_numpy().tolist()))
    total = df.drop(columns=["scenario", "seed"]).sum()
    print()
    print(
        markdown(
            ["summed over the runs", "STS", "price-blind STS", "online", "online blind"],
            [
                [
                    "bill",
                    total["STS"],
                    total["price-blind STS"],
                    total["online"],
                    total["online blind"],
                ],
                [
                    "missed",
                    total["missed, STS"],
                    total["missed, price-blind"],
                    total["missed, online"],
                    total["missed, online blind"],
                ],
            ],
        )
    )
    sts = 1 - total["STS"] / total["price-blind STS"]
    online = 1 - total["online"] / total["online blind"]
    print(f"STS against price-blind STS: a cut of {sts:.1%}")
    print(f"the online fluid plan against its blind twin: a cut of {online:.1%}")
    if args.one_type:
        held = 1 - total["online, one type"] / total["online blind, one type"]
        print(f"the same, each job held to one GPU type: a cut of {held:.1%}")


if __name__ == "__main__":
    main()
