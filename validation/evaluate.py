"""The one evaluator: the cost of a plan as docs/model.md ('Plans and their cost') defines it.

Every figure gpusched prints comes from here. Expected energy is exact through ``Phi``;
with prices or carbon that change with time, the bill is exact through the series'
integrals over the hours each block of epochs runs (``validation/billing.py``);
tardiness is ``worst_case`` (completion of all E epochs) or ``expected`` (over the
completion of each stopping block); with a slot length, completions count at the end of
their slot.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from instances import Instance, Plan, PlanError
from instances.distribution import reaches
from instances.fields import is_number
from instances.model import TardinessMode
from validation.billing import (
    Exposure,
    at_rate,
    exposure,
    idle_pieces,
    job_bill,
    kwh_of,
    last_completion,
    realised_exposure,
)
from validation.check import require_feasible
from validation.powered import Boots, boot_bill, node_pieces
from validation.timeline import TIME_TOL, Timeline, slot_ceil


@dataclass(frozen=True)
class JobCost:
    """Cost figures of one job under a plan. Money in the instance's currency."""

    job: str
    expected_energy_kwh: float
    worst_case_energy_kwh: float
    energy_cost: float  # expected: π · Σ e_c (Φ(w1) - Φ(w0))
    tardiness_cost: float  # in the instance's (or the requested) tardiness mode
    worst_case_tardiness_cost: float
    expected_tardiness_cost: float
    completion: float  # worst-case completion time (hours), slot-rounded when slotted
    due: float
    # relaunch overhead (E1): its expected energy (in ``expected_energy_kwh`` too) and
    # the segments that relaunch the job (the first start included)
    overhead_kwh: float = 0.0
    relaunches: int = 0
    # the carbon of its expected energy (kg CO2-eq) and its price; 0 without a series
    carbon_kg: float = 0.0
    carbon_cost: float = 0.0

    @property
    def total_cost(self) -> float:
        return self.energy_cost + self.carbon_cost + self.tardiness_cost

    @property
    def lateness(self) -> float:
        return max(0.0, self.completion - self.due)

    @property
    def missed(self) -> bool:
        return self.completion > self.due + TIME_TOL


@dataclass(frozen=True)
class IdleCost:
    """What the powered cluster draws beyond its jobs' configurations (docs/model.md,
    idle power): nodes' base power and idle GPUs', expected over the stops."""

    kwh: float = 0.0
    energy_cost: float = 0.0
    carbon_kg: float = 0.0
    carbon_cost: float = 0.0
    boots: float = 0.0  # expected node boots where empty nodes are powered off (in kwh)
    # whether the instance charges nodes' own power (idle, base or boots): only then do
    # summaries show boots, so that every other summary keeps its keys
    charged: bool = False

    def figures(self) -> dict[str, float]:
        """The summary's idle figures: its energy, and its boots where charged."""
        return {"idle_kwh": self.kwh, **({"boots": self.boots} if self.charged else {})}


@dataclass(frozen=True)
class Evaluation:
    """The cost of a whole plan: per job and in total (the cluster's idle power, where
    charged, in the totals and in ``idle``)."""

    instance: str
    tardiness_mode: TardinessMode
    jobs: tuple[JobCost, ...]
    idle: IdleCost = IdleCost()

    @property
    def energy_cost(self) -> float:
        return math.fsum(j.energy_cost for j in self.jobs) + self.idle.energy_cost

    @property
    def tardiness_cost(self) -> float:
        return math.fsum(j.tardiness_cost for j in self.jobs)

    @property
    def carbon_cost(self) -> float:
        return math.fsum(j.carbon_cost for j in self.jobs) + self.idle.carbon_cost

    @property
    def carbon_kg(self) -> float:
        """Expected kg of CO2-eq of the energy (0 where the instance has no carbon)."""
        return math.fsum(j.carbon_kg for j in self.jobs) + self.idle.carbon_kg

    @property
    def total_cost(self) -> float:
        return self.energy_cost + self.carbon_cost + self.tardiness_cost

    @property
    def expected_energy_kwh(self) -> float:
        return math.fsum(j.expected_energy_kwh for j in self.jobs) + self.idle.kwh

    @property
    def missed(self) -> int:
        return sum(j.missed for j in self.jobs)

    @property
    def overhead_kwh(self) -> float:
        """Expected energy spent in relaunch overhead (included in the energy)."""
        return math.fsum(j.overhead_kwh for j in self.jobs)

    @property
    def relaunches(self) -> int:
        """Segments that relaunch a job, first starts included."""
        return sum(j.relaunches for j in self.jobs)

    def by_job(self) -> pd.DataFrame:
        """One row per job, indexed by job id."""
        rows = [
            {
                "job": j.job,
                "energy_kwh": j.expected_energy_kwh,
                "worst_energy_kwh": j.worst_case_energy_kwh,
                "energy_cost": j.energy_cost,
                "carbon_cost": j.carbon_cost,
                "carbon_kg": j.carbon_kg,
                "tardiness_cost": j.tardiness_cost,
                "total_cost": j.total_cost,
                "completion_h": j.completion,
                "due_h": j.due,
                "late_h": j.lateness,
                "missed": j.missed,
            }
            for j in self.jobs
        ]
        return pd.DataFrame(rows).set_index("job")

    def summary(self) -> dict[str, float]:
        return {
            "energy_cost": self.energy_cost,
            "tardiness_cost": self.tardiness_cost,
            "total_cost": self.total_cost,
            "energy_kwh": self.expected_energy_kwh,
            "carbon_cost": self.carbon_cost,
            "carbon_kg": self.carbon_kg,
            **self.idle.figures(),
            "missed": float(self.missed),
        }


def job_cost(
    instance: Instance, plan: Plan, job_id: str, *, tardiness: TardinessMode | None = None
) -> JobCost:
    """Expected cost of one job under ``plan`` (its segments alone are read; the plan is
    not checked), as :func:`evaluate` counts it."""
    tl = Timeline.of(instance, job_id, plan.for_job(job_id))
    return _job_cost(instance, tl, instance.tardiness_mode(tardiness))


def timelines(instance: Instance, plan: Plan) -> dict[str, Timeline]:
    """Each job's timeline under ``plan``, by job id (what the evaluator reads)."""
    return {j.id: Timeline.of(instance, j.id, plan.for_job(j.id)) for j in instance.jobs}


def _job_cost(instance: Instance, tl: Timeline, mode: TardinessMode) -> JobCost:
    job_id = tl.job
    job = instance.job(job_id)
    dist = job.distribution
    exp_kwh = worst_kwh = overhead_kwh = 0.0
    for p in tl.pieces:
        e = instance.epoch_energy(job, p.segment.config)
        exp_kwh += e * (dist.phi(p.w1) - dist.phi(p.w0))
        worst_kwh += e * (p.w1 - p.w0)
        if p.lost > 0:
            # overhead after w0 epochs is paid only if the job is still running then
            kwh = instance.power_w(p.segment.config) * p.lost / 1000.0
            overhead_kwh += kwh * dist.beyond(p.w0)
            worst_kwh += kwh
    exp_kwh += overhead_kwh

    def drawn() -> list[tuple[float, Exposure]]:
        return [(instance.power_w(p.segment.config) / 1000.0, exposure(dist, p)) for p in tl.pieces]

    money, grams = job_bill(instance, exp_kwh, drawn)
    carbon_kg = grams / 1000.0
    omega = instance.tardiness_weight(job_id)
    slot = instance.slot
    completion = tl.completion(slot)
    worst_tard = at_rate(omega, max(0.0, completion - job.due))
    exp_tard = math.fsum(
        at_rate(pb * omega, max(0.0, slot_ceil(tl.time_at(eb), slot) - job.due))
        for eb, pb in zip(dist.stops, dist.probabilities, strict=True)
        if pb > 0
    )
    return JobCost(
        job=job_id,
        expected_energy_kwh=exp_kwh,
        worst_case_energy_kwh=worst_kwh,
        energy_cost=money,
        tardiness_cost=worst_tard if mode == "worst_case" else exp_tard,
        worst_case_tardiness_cost=worst_tard,
        expected_tardiness_cost=exp_tard,
        completion=completion,
        due=job.due,
        overhead_kwh=overhead_kwh,
        relaunches=sum(p.relaunch for p in tl.pieces),
        carbon_kg=carbon_kg,
        carbon_cost=0.0
        if instance.carbon is None
        else at_rate(instance.carbon.price, carbon_kg) / 1000.0,
    )


def evaluate(
    instance: Instance, plan: Plan, *, tardiness: TardinessMode | None = None, check: bool = True
) -> Evaluation:
    """Expected cost of ``plan``. Raises :class:`PlanError` listing every violation.

    ``tardiness`` overrides the instance's tardiness mode. ``check=False`` costs the plan
    as it stands (the caller vouches for it): a job it never completes is late for ever
    (an infinite tardiness where its weight is above 0) and keeps its nodes powered for
    ever where they draw power (an infinite bill where the price stays above 0; a rate
    of 0 charges nothing, never NaN).
    """
    if check:
        require_feasible(instance, plan)
    return evaluate_timelines(instance, plan, timelines(instance, plan), tardiness=tardiness)


def evaluate_timelines(
    instance: Instance,
    plan: Plan,
    lines: Mapping[str, Timeline],
    *,
    tardiness: TardinessMode | None = None,
) -> Evaluation:
    """:func:`evaluate`'s costs from each job's timeline made already (``lines``, as
    :func:`timelines` makes them; the plan is not checked): a caller that reads the
    timelines too makes each once."""
    mode = instance.tardiness_mode(tardiness)
    costs = tuple(_job_cost(instance, lines[j.id], mode) for j in instance.jobs)
    if not instance.node_power:
        return Evaluation(instance.name, mode, costs)
    return Evaluation(instance.name, mode, costs, _idle_cost(instance, plan, lines))


def _idle_cost(
    instance: Instance,
    plan: Plan,
    lines: Mapping[str, Timeline],
    epochs: Mapping[str, float] | None = None,
) -> IdleCost:
    """The cluster's own power (docs/model.md, idle power): every node powered from time
    0 to the last completion, or as the power-off option says, with its boots; expected
    over the stops, or realised when each job's stop is given (``epochs``). ``lines``:
    each job's timeline under ``plan``."""
    ends: list[list[tuple[float, float]]] = []
    busy: list[tuple[float, Exposure]] = []
    for job in instance.jobs:
        tl = lines[job.id]
        dist = job.distribution
        if epochs is None:
            ends.append(tl.ends(dist))
        else:
            ends.append([(tl.time_at(epochs[job.id]), 1.0)])
        for p in tl.pieces:
            cfg = p.segment.config
            kw = instance.gpu(cfg.gpu_type).idle_w * instance.busy_share(cfg) / 1000.0
            if kw > 0:
                hours = (
                    exposure(dist, p) if epochs is None else realised_exposure(p, epochs[job.id])
                )
                busy.append((kw, hours))
    if instance.power_off is None:
        pieces = idle_pieces(instance, last_completion(ends), busy)
        started: Boots = []
    else:
        nodes, started = node_pieces(instance, plan, ends)
        pieces = [*nodes, *((-k, hours) for k, hours in busy)]
    kwh = kwh_of(pieces)
    money, grams = job_bill(instance, kwh, lambda: pieces)
    if started:
        boot_kwh, boot_money, boot_grams = boot_bill(instance, started)
        kwh, money, grams = kwh + boot_kwh, money + boot_money, grams + boot_grams
    price = 0.0 if instance.carbon is None else instance.carbon.price
    boots = math.fsum(p for _, p in started)
    return IdleCost(kwh, money, grams / 1000.0, at_rate(price, grams) / 1e6, boots, charged=True)


@dataclass(frozen=True)
class ScenarioCost:
    """Realised costs of a plan when each job's stop is known (currency; carbon in kg)."""

    energy_cost: float
    carbon_cost: float
    tardiness_cost: float
    carbon_kg: float = 0.0

    @property
    def total_cost(self) -> float:
        return self.energy_cost + self.carbon_cost + self.tardiness_cost


def require_stops(ids: list[str], epochs: Mapping[str, float]) -> None:
    """A ``ValueError`` naming the jobs of ``ids`` that ``epochs`` gives no stop."""
    missing = [j for j in ids if j not in epochs]
    if missing:
        raise ValueError(f"epochs: no stop given for {len(missing)} job(s): {missing[:5]}")


def scenario_costs(
    instance: Instance,
    plan: Plan,
    epochs: Mapping[str, float],
    *,
    tardiness: TardinessMode | None = None,
) -> ScenarioCost:
    """Realised costs when each job stops at ``epochs[job]``.

    The plan is run up to each job's stop; ``worst_case`` tardiness still uses the
    completion of all E epochs (it is a property of the plan), ``expected`` tardiness the
    realised completion. Averaged over sampled scenarios it converges to
    :func:`evaluate` (the Monte Carlo check). The plan need only reach each job's stop
    (an online run's plan ends there); one that does not is a :class:`PlanError` naming
    the job (it cost an infinite tardiness), and a stop that is not a number of epochs
    in ``[0, E]`` a ``ValueError`` naming it (a NaN stop was billed as a whole run, a
    negative one as nothing run).
    """
    mode = instance.tardiness_mode(tardiness)
    require_stops([j.id for j in instance.jobs], epochs)
    energy = grams = tard = 0.0
    # without a series (or with a flat one) exactly the running sum the evaluator always
    # made, so that no figure moves in its last digit
    flat = instance.price_series.constant if instance.carbon is None else None
    lines: dict[str, Timeline] = {}
    for job in instance.jobs:
        n = epochs[job.id]
        if not (is_number(n) and 0 <= n <= job.max_epochs * (1 + 1e-12)):
            raise ValueError(
                f"epochs[{job.id!r}] = {n!r}: must be a number of epochs in [0, "
                f"{job.max_epochs:g}], the job's stop"
            )
        tl = lines[job.id] = Timeline.of(instance, job.id, plan.for_job(job.id))
        if not reaches(tl.progress, n):
            raise PlanError(
                f"job {job.id!r} reaches {tl.progress:g} of the {n:g} epochs it runs in this "
                "scenario: the plan does not run it to its stop"
            )
        if flat is not None:
            energy = _add_flat(instance, tl, n, flat, energy)
        else:
            money, g = _realised_bill(instance, tl, n)
            energy += money
            grams += g
        w = job.max_epochs if mode == "worst_case" else n
        late = slot_ceil(tl.time_at(w), instance.slot) - job.due
        tard += instance.tardiness_weight(job.id) * max(0.0, late)
    price = 0.0 if instance.carbon is None else instance.carbon.price
    cost = ScenarioCost(energy, price * grams / 1e6, tard, grams / 1000.0)
    if not instance.node_power:
        return cost
    idle = _idle_cost(instance, plan, lines, epochs)
    return ScenarioCost(
        cost.energy_cost + idle.energy_cost,
        cost.carbon_cost + idle.carbon_cost,
        tard,
        cost.carbon_kg + idle.carbon_kg,
    )


def _add_flat(instance: Instance, tl: Timeline, n: float, price: float, total: float) -> float:
    """``total`` plus the energy cost of a job's pieces run up to its stop ``n``, at
    one ``price`` per kWh."""
    job = instance.job(tl.job)
    for p in tl.pieces:
        done = max(0.0, min(p.w1, n) - p.w0)
        total += price * instance.epoch_energy(job, p.segment.config) * done
        if p.lost > 0 and not reaches(p.w0, n):  # still running when it relaunches
            total += price * instance.power_w(p.segment.config) * p.lost / 1000.0
    return total


def _realised_bill(instance: Instance, tl: Timeline, n: float) -> tuple[float, float]:
    """(energy cost, grams of CO2-eq) of a job's pieces run up to its stop ``n``."""
    pieces = [
        (instance.power_w(p.segment.config) / 1000.0, realised_exposure(p, n)) for p in tl.pieces
    ]
    kwh = math.fsum(kw * (b - a) for kw, hours in pieces for a, b, _ in hours)
    return job_bill(instance, kwh, lambda: pieces)


def evaluate_scenario(
    instance: Instance,
    plan: Plan,
    epochs: Mapping[str, float],
    *,
    tardiness: TardinessMode | None = None,
) -> tuple[float, float]:
    """Realised (energy cost, tardiness cost) when each job stops at ``epochs[job]``
    (:func:`scenario_costs`, which checks the stops); the energy cost includes the
    price of its carbon."""
    cost = scenario_costs(instance, plan, epochs, tardiness=tardiness)
    return cost.energy_cost + cost.carbon_cost, cost.tardiness_cost
