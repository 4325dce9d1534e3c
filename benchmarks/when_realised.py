"""The online fluid plan realised on whole GPUs: how much of its cut by timing survives
packing, relaunches and whole epochs (docs/prices.md, 'The online plan on whole GPUs').

:func:`benchmarks.when_online.online_fluid` re-plans the fluid relaxation at every
event and runs it as a fluid: configurations mixed within a cell, no node packed, no
relaunch paid. :class:`RealisedPlan` is the same LP made a policy of the event engine,
billed by the one evaluator:

- at every decision (an arrival, a job's end, or the end of the last plan's first
  cells) the jobs present are planned from now in the LP of
  :func:`benchmarks.when_online.solve_cells`, each for its remaining *maximum* epochs,
  its energy counted at the expected share of them that runs (as ``lp`` counts it);
  the cells are those where the bill is constant over the next :data:`FINE` hours,
  then blocks of :data:`COARSE` hours at their mean bill (a smaller LP; the far cells
  are re-planned before they come);
- the first cells (at least :data:`SPAN` hours) are realised: a waiting job starts if
  the LP runs it for at least ``start`` of them (of the first cell alone, or of the
  hours it needs to finish on the LP's configuration, if fewer); a running job stays
  on at ``keep`` (stopping and starting again pays a relaunch). The jobs that run are
  placed earliest due date first, each on the configuration the LP gives most hours
  now, as ``lp`` realises its shares (:func:`heuristic.baselines.lp.realise_shares`:
  best fit, a running job's GPUs kept where it stays). The LP sees no overhead: where
  it runs a job's remaining work on one configuration too slow for the due date once
  the start's overhead is paid, the cheapest fast enough is preferred;
- the next decision comes at the end of the first cells.

Of two cells at the same bill the LP may take either (the online plan's rule).

With ``blind`` the LP values energy at the series' mean bill (and an hour later at a
hundred-thousandth more), as the online plan's blind twin does. Neither a bound nor a
tuned policy: what the online plan's joint allocation of the hours buys once it runs on the
cluster STS runs on.

``python -m benchmarks.when_realised``: every run of the ``prices`` campaign's
contended family (or ``--family``), the realised plan and its blind twin, per run and
summed, with the cut.

Run: python -m benchmarks.when_realised [--campaign prices] [--family contended]
         [--seeds 3] [--workers 2]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import time as clock
from dataclasses import dataclass

import numpy as np
import pandas as pd

from benchmarks.common import markdown
from benchmarks.when import bill_cells, bill_tariff
from benchmarks.when_online import AHEAD, MAX_AHEAD, JobConfigs, solve_cells, type_gpus
from heuristic.baselines.lp import SHARE_TOL, Chosen, realise_shares
from heuristic.core.policy import Decision, JobStatus, SchedulerState
from instances import Config, Instance
from instances.distribution import reaches

FINE = 48.0  # hours planned on the series' own cells
COARSE = 6.0  # hours a block of the plan beyond them
SPAN = 0.25  # the least hours of the first cells realised at a decision


@dataclass(frozen=True)
class Realised:
    """One run: bill (energy and priced carbon), total cost, missed due dates,
    relaunches, LPs solved and the seconds they took, from the evaluator's figures."""

    bill: float
    total: float
    missed: int
    kwh: float
    relaunches: int
    solves: int
    lp_seconds: float


class RealisedPlan:
    """The online fluid plan as a policy (the module's docstring says how)."""

    name = "online-plan"

    def __init__(self, *, blind: bool = False, start: float = 0.5, keep: float = 0.25) -> None:
        if not (0 < keep <= start <= 1):
            raise ValueError(f"need 0 < keep <= start <= 1, got keep={keep!r}, start={start!r}")
        self.blind, self.start, self.keep = blind, start, keep
        self.solves = 0
        self.lp_seconds = 0.0

    def decide(self, state: SchedulerState) -> Decision:
        inst, now = state.instance, state.time
        jobs = [s for s in state.jobs if not reaches(s.progress, s.job.max_epochs)]
        if not jobs:
            return Decision({})
        t0 = clock.perf_counter()
        hours, plan = self._plan(inst, now, jobs)
        self.solves += 1
        self.lp_seconds += clock.perf_counter() - t0
        first = 1 + int(np.searchsorted(np.cumsum(hours), SPAN - 1e-12))
        first = min(first, len(hours))
        span = float(hours[:first].sum())
        share = {s.job.id: plan[s.job.id][:first].sum(axis=0) for s in jobs}
        run = {s.job.id: self._runs(inst, s, plan[s.job.id], hours, first) for s in jobs}
        chosen: dict[str, Chosen] = {}
        for s in jobs:
            if run[s.job.id] >= (self.keep if s.allocation is not None else self.start):
                cfgs = inst.allowed_configs(s.job)
                # the LP runs the job's remaining work on one configuration
                one = int((plan[s.job.id].sum(axis=0) > SHARE_TOL).sum()) == 1
                need, shares = _with_overhead(inst, s, now, cfgs, share[s.job.id], one)
                chosen[s.job.id] = (need, cfgs, shares)
        order = sorted(jobs, key=lambda s: (s.job.due, s.job.id))
        return Decision(realise_shares(state, jobs, order, chosen), wake_at=now + span)

    @staticmethod
    def _runs(inst: Instance, s: JobStatus, x: np.ndarray, hours: np.ndarray, first: int) -> float:
        """The share of the first cells the LP runs the job: of the first cell alone,
        or of the first cells (or the hours it needs to finish on the configuration the
        LP gives most hours there, if fewer), whichever is more."""
        now_hours = x[:first].sum(axis=0)
        top = inst.allowed_configs(s.job)[int(np.argmax(now_hours))]
        finish = s.remaining * inst.epoch_time(s.job, top)
        alone = float(x[0].sum()) / max(float(hours[0]), 1e-12)
        over = float(now_hours.sum()) / max(min(float(hours[:first].sum()), finish), 1e-12)
        return max(alone, over)

    def _plan(
        self, inst: Instance, now: float, jobs: list[JobStatus]
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The hours of the LP's cells from ``now`` and each job's hours on each configuration in
        each (looking further ahead where the work does not fit)."""
        info = {s.job.id: JobConfigs.of(inst, s.job, inst.allowed_configs(s.job)) for s in jobs}
        rem = {s.job.id: s.remaining for s in jobs}
        weight = {}
        for s in jobs:
            dist = s.job.distribution
            weight[s.job.id] = (dist.phi(s.job.max_epochs) - dist.phi(s.progress)) / s.remaining
        dues = [s.job.due for s in jobs]
        gpus = type_gpus(inst)
        ahead = AHEAD
        while ahead <= MAX_AHEAD:
            edges, hours, per_hour = _cells(inst, now, max(max(dues), now) + ahead, dues)
            found = solve_cells(
                inst, now, rem, self.blind, gpus, info, edges, hours, per_hour, weight
            )
            if found is not None:
                return hours, found
            ahead *= 2
        raise RuntimeError(f"online-plan: no plan of the jobs present at {now!r} h")


def _with_overhead(
    inst: Instance,
    s: JobStatus,
    now: float,
    cfgs: tuple[Config, ...],
    share: np.ndarray,
    one: bool,
) -> tuple[float, np.ndarray]:
    """The epochs an hour the job needs to meet its due date once its start's overhead
    is paid (the relaunch for a waiting job, what is left of it for a running one), and
    the LP's shares. Where the LP runs all the job's remaining work on one
    configuration (``one``) and that one is not fast enough for it, the cheapest that
    is is added: the LP sees no overhead, and a job of minutes on the configuration it
    chose can miss its due date by the overhead alone. A job the LP speeds up later
    keeps the LP's shares (its later cells are faster)."""
    overhead = s.overhead_left if s.allocation is not None else inst.relaunch(s.job)
    tau = np.array([inst.epoch_time(s.job, c) for c in cfgs])
    need = s.remaining / max(s.job.due - now - overhead, s.remaining * float(tau.min()))
    fast = 1.0 / tau >= need * (1 - 1e-9)
    if not one or (fast & (share > SHARE_TOL)).any() or not fast.any():
        return need, share
    cost = np.array([inst.epoch_cost(s.job, c) for c in cfgs])
    shares = share.copy()
    shares[int(np.argmin(np.where(fast, cost, np.inf)))] = 1.0
    return need, shares


def _cells(
    inst: Instance, now: float, end: float, dues: list[float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The series' own cells (cut at the due dates) for :data:`FINE` hours, then blocks
    of :data:`COARSE` hours: edges, hours and bill per kW-hour."""
    tariff = bill_tariff(inst)
    cut = min(now + FINE, end)
    edges, _, _ = bill_cells(tariff, now, cut, [d for d in dues if now < d < cut])
    if end > cut:
        edges = np.concatenate((edges, np.arange(cut + COARSE, end, COARSE), [end]))
        edges = np.unique(edges)
    hours = np.diff(edges)
    per_hour = np.where(hours > 0, tariff.cost(edges) / np.where(hours > 0, hours, 1.0), 0.0)
    return edges, hours, per_hour


def realised_run(inst: Instance, seed: int, *, blind: bool = False) -> Realised:
    """The realised plan (or its blind twin) online on ``inst`` with the stops of
    ``seed``, billed by the evaluator."""
    from validation.evaluate import evaluate
    from validation.scenario import scenario_instance
    from validation.simulator import simulate

    policy = RealisedPlan(blind=blind)
    result = simulate(inst, policy, mode="sampled", seed=seed)
    ev = evaluate(scenario_instance(inst, result.epochs), result.plan)
    return Realised(
        ev.energy_cost + ev.carbon_cost,
        ev.total_cost,
        ev.missed,
        ev.expected_energy_kwh,
        ev.relaunches,
        policy.solves,
        policy.lp_seconds,
    )


def _one(job: tuple[str, str, int, bool]) -> dict[str, object]:
    """One run of the table (in a worker process)."""
    from experiments.campaign import load_campaign

    campaign, label, seed, blind = job
    scenario = next(s for s in load_campaign(campaign).scenarios if s.label == label)
    r = realised_run(scenario.instance(seed), seed, blind=blind)
    return {"scenario": label, "seed": seed, "blind": blind, **r.__dict__}


def table(campaign: str, family: str, seeds: int, workers: int) -> pd.DataFrame:
    """Every run of ``family`` in ``campaign`` (a bundled name or a file), realised
    and blind."""
    from experiments.campaign import load_campaign

    labels = [s.label for s in load_campaign(campaign).scenarios if s.label.startswith(family)]
    if not labels:
        raise SystemExit(f"{campaign}: no scenario named {family}...")
    jobs = [(campaign, lab, s, b) for lab in labels for s in range(seeds) for b in (False, True)]
    with cf.ProcessPoolExecutor(max_workers=workers) as ex:
        rows = list(ex.map(_one, jobs))
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--campaign", default="prices", help="a bundled campaign or a file")
    ap.add_argument("--family", default="contended", help="the scenarios whose name starts so")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    if args.seeds < 1 or args.workers < 1:
        raise SystemExit("--seeds and --workers must be at least 1")
    df = table(args.campaign, args.family, args.seeds, args.workers)
    aware, blind = df[~df["blind"]], df[df["blind"]]
    per_run = aware.merge(blind, on=["scenario", "seed"], suffixes=("", ", blind"))
    cols = ["scenario", "seed", "bill", "bill, blind", "missed", "missed, blind"]
    print(markdown(cols, per_run[cols].to_numpy().tolist()))
    figures = ["bill", "total", "missed", "kwh", "relaunches", "lp_seconds"]
    sums = [float(aware[f].sum()) for f in figures], [float(blind[f].sum()) for f in figures]
    print()
    print(markdown(["", *figures], [["online plan", *sums[0]], ["its blind twin", *sums[1]]]))
    cut = 1.0 - sums[0][0] / sums[1][0]
    print(f"the realised online plan against its blind twin: a cut of {cut:.1%}")


if __name__ == "__main__":
    main()
