"""The relaunch overhead in the MILP: its variables, its two constraint families
(``relaunch_begin``, ``relaunch_overhead``) and its objective term (docs/model.md, E1;
docs/milp.md states the formulation and why it is exact). A MIP start's values of these
variables are set by :mod:`milp.plan_io`.

For a job with overhead ``δ`` (``r = δ / Δ`` slots), a slot in which it takes a
placement it did not hold in the slot before (a first start, a resume, another
configuration, another node or shared GPU) *relaunches* it. The ``i``-th slot after a
relaunch loses the fraction ``λ_i = min(1, max(0, r - i))`` of its time while the job
still runs; a later relaunch starts over. Only jobs with ``δ > 0`` get these variables,
so a model without overhead is the model it was.

- ``begin_place[j,k,n,t]``, ``begin_share[j,n,u,t]`` in [0, 1]: the placement is new in
  slot ``t``; with place/share binary they are exactly ``max(0, x_t - x_{t-1})``;
- ``relaunched[j,t]`` in [0, 1]: some placement is new (exactly their maximum);
- ``lost[j,t]`` in [0, 1]: the fraction of slot ``t`` spent in overhead, the
  ``λ_i`` of the latest relaunch while the job runs. ``λ_i < 1`` only for the last
  index, so the maximum of the ``λ_i`` of the relaunches within reach equals their sum
  capped at 1: the bounds below pin it;
- ``overhead_cost[j,t] >= 0``: its energy cost, ``lost`` times a slot at the running
  configuration's power times ``P(N > w)`` at the relaunch; the progress ``w`` does not
  move during the overhead, so ``P(N > w)`` is read from the ``done`` flags of the slot
  before.

Cuts that the integer solutions satisfy but the LP relaxation did not see (without
them the root bound ignored the overhead almost entirely, docs/milp.md):

- ``ever[j,t]`` in [0, 1], fixed to 1 in the job's last slot, and ``first_run[j,k,t]``
  in [0, 1]: the job has run by slot ``t``, and its first start falls in slot ``t`` on
  configuration ``k`` (``ever`` grows only by ``first_run``, ``first_run <= run``).
  Every plan starts each job once with ``P(N > 0) = 1``, so ``overhead_cost >= λ_0 ·
  Σ_k b_k first_run``: the LP must pay a first start at some power;
- ``relaunched <= Σ_k run`` and ``lost >= λ_0 · relaunched`` (a relaunch in slot ``t``
  loses ``λ_0`` of that very slot);
- per configuration, a new placement of ``k`` or ``run[k,t] - run[k,t-1]`` is a
  relaunch on ``k``, charged ``b_k λ_0 q_b`` with ``q_b`` the survival of the block in
  progress: ``start_block[j,k,t,b]`` in [0, 1] splits the relaunch by that block,
  ``Σ_b start_block >= new``, ``start_block[b] <= in_progress[b]`` (1 exactly for the
  block in progress at the start of slot ``t``, read from ``done`` of slot ``t - 1``),
  and ``overhead_cost >= Σ_k Σ_b b_k λ_0 q_b start_block``. This is the convex hull of
  the product of a relaunch with the one-hot block in progress; the McCormick row it
  replaced, ``b_k λ_0 (new + S - 1)``, charged nothing for a fractional relaunch below
  ``1 - S`` (docs/milp.md). Summing over configurations is valid: a job runs one per
  slot.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import pyomo.environ as pyo

from milp.constraints import _add
from milp.data import JobData, MilpData


def lost_fractions(jd: JobData) -> tuple[float, ...]:
    """``λ_i``: the share of the ``i``-th slot after a relaunch lost to overhead."""
    return tuple(min(1.0, jd.relaunch - i) for i in range(jd.relaunch_slots))


def relaunch_jobs(d: MilpData) -> list[str]:
    return [j for j, jd in d.jobs.items() if jd.relaunch > 0]


# calls of a family's progress between two calls of the build's ``step``
CALLS_PER_STEP = 100


class _Progress:
    """Calls ``step(stage)`` the first time each job comes up in a family of rows, and
    every :data:`CALLS_PER_STEP` calls, so that a time limit can stop the build inside
    these two large families (see :func:`milp.solve`)."""

    def __init__(self, step: Callable[[str], None] | None, family: str, jobs: int) -> None:
        self.step, self.family, self.jobs = step, family, jobs
        self.seen: set[str] = set()
        self.calls = 0

    def __call__(self, j: str) -> None:
        if self.step is None:
            return
        self.calls += 1
        if j not in self.seen or self.calls % CALLS_PER_STEP == 0:
            # within a job too: one job's rows of `medium` on 570 slots took 10 s
            self.seen.add(j)
            self.step(f"{self.family} (job {len(self.seen)} of {self.jobs})")


Rows = list[tuple[Any, Any]]
# per (job, configuration, slot): the begin variables that relaunch it on that
# configuration (a shared tenancy names no configuration: it counts where the job has
# exactly one shared configuration of the node's GPU type)
ConfigBegins = dict[tuple[str, int, int], list[Any]]


def add_relaunch(
    m: pyo.ConcreteModel, d: MilpData, step: Callable[[str], None] | None = None
) -> None:
    """The variables and constraints above, for the jobs that pay an overhead, in two
    families: ``relaunch_begin`` (what is new in a slot) and ``relaunch_overhead`` (the
    time and energy it costs). ``step(stage)`` is called before each job's rows of each
    family, so that a time limit can stop the build inside them (see
    :func:`milp.solve`)."""
    jobs = set(relaunch_jobs(d))
    if not jobs:
        return
    slots = [(j, t) for j in sorted(jobs) for t in d.slot_range(j)]
    _overhead_variables(m, d, jobs, slots)
    rows, begins, config_begins = _begin_rows(m, d, _Progress(step, "relaunch_begin", len(jobs)))
    rows += _relaunched_rows(m, d, slots, begins, _Progress(step, "relaunched", len(jobs)))
    _add(m, "relaunch_begin", rows, step)
    progress = _Progress(step, "relaunch_overhead", len(jobs))
    rows = []
    for j, t in slots:
        progress(j)
        rows += _overhead_slot_rows(m, d.jobs[j], j, t, config_begins)
    _add(m, "relaunch_overhead", rows, step)


def _overhead_variables(
    m: pyo.ConcreteModel, d: MilpData, jobs: set[str], slots: list[tuple[str, int]]
) -> None:
    """The index sets and variables of the module's docstring, for ``jobs`` only."""
    place = [i for i in m.place_index if i[0] in jobs]
    share = [i for i in m.share_index if i[0] in jobs]
    m.begin_place_index = pyo.Set(initialize=place, dimen=4, ordered=True)
    m.begin_share_index = pyo.Set(initialize=share, dimen=4, ordered=True)
    m.relaunch_index = pyo.Set(initialize=slots, dimen=2, ordered=True)
    m.begin_place = pyo.Var(m.begin_place_index, bounds=(0, 1))
    m.begin_share = pyo.Var(m.begin_share_index, bounds=(0, 1))
    m.relaunched = pyo.Var(m.relaunch_index, bounds=(0, 1))
    m.lost = pyo.Var(m.relaunch_index, bounds=(0, 1))
    m.overhead_cost = pyo.Var(m.relaunch_index, domain=pyo.NonNegativeReals)
    m.ever = pyo.Var(m.relaunch_index, bounds=(0, 1))
    m.first_run = pyo.Var([i for i in m.run_index if i[0] in jobs], bounds=(0, 1))
    m.start_block = pyo.Var(
        [(j, k, t, b) for j, k, t in m.run_index if j in jobs for b in d.jobs[j].blocks],
        bounds=(0, 1),
    )


def _begin_rows(
    m: pyo.ConcreteModel, d: MilpData, progress: _Progress
) -> tuple[Rows, dict[tuple[str, int], list[Any]], ConfigBegins]:
    """``begin_place`` and ``begin_share`` are exactly ``max(0, x_t - x_{t-1})`` of their
    placement ``x``; also returns the begin variables per (job, slot) and per (job,
    configuration, slot)."""

    def shared_config(j: str, node_id: str) -> list[int]:
        gpu = d.instance.node(node_id).gpu_type
        ks = [k for k, c in enumerate(d.jobs[j].configs) if c.shared and c.gpu_type == gpu]
        return ks if len(ks) == 1 else []

    rows: Rows = []
    begins: dict[tuple[str, int], list[Any]] = defaultdict(list)
    config_begins: ConfigBegins = defaultdict(list)
    for name, var, x in (("p", m.begin_place, m.place), ("s", m.begin_share, m.share)):
        progress.seen.clear()  # each job is announced once per kind of placement
        for idx in var:
            j, t = idx[0], idx[-1]
            progress(j)
            before = (*idx[:-1], t - 1)
            prev = x[before] if before in x.index_set() else 0
            rows += [
                ((name, *idx, "new"), var[idx] >= x[idx] - prev),
                ((name, *idx, "on"), var[idx] <= x[idx]),
            ]
            if not isinstance(prev, int):
                rows.append(((name, *idx, "was"), var[idx] <= 1 - prev))
            begins[j, t].append(var[idx])
            for k in [idx[1]] if name == "p" else shared_config(j, idx[1]):
                config_begins[j, k, t].append(var[idx])
    return rows, begins, config_begins


def _relaunched_rows(
    m: pyo.ConcreteModel,
    d: MilpData,
    slots: list[tuple[str, int]],
    begins: dict[tuple[str, int], list[Any]],
    progress: _Progress,
) -> Rows:
    """``relaunched`` is the maximum of the slot's begin variables; with the first-start
    cuts of each (job, slot)."""
    rows: Rows = []
    for j, t in slots:
        progress(j)
        jd = d.jobs[j]
        for n, b in enumerate(begins.get((j, t), ())):
            rows.append(((j, t, "any", n), m.relaunched[j, t] >= b))
        rows.append(((j, t, "only"), m.relaunched[j, t] <= sum(begins.get((j, t), ()))))
        rows += _first_start_rows(m, jd, j, t)
    return rows


def _overhead_slot_rows(
    m: pyo.ConcreteModel, jd: JobData, j: str, t: int, config_begins: ConfigBegins
) -> Rows:
    """The ``relaunch_overhead`` rows of job ``j`` in slot ``t``, in the model's order:
    the lost fraction (and the first start's energy), the work left beside it, the
    start charge split by block, the energy of the relaunches within reach."""
    lam = lost_fractions(jd)
    running = sum(m.run[j, k, t] for k in range(len(jd.configs)))
    within = [(i, m.relaunched[j, t - i]) for i in range(len(lam)) if t - i >= jd.first_slot]
    news = {k: _new_placements(m, jd, j, t, k, config_begins) for k in range(len(jd.configs))}
    return [
        *_lost_rows(m, jd, j, t, within, running),
        *_work_rows(m, jd, j, t, running, news),
        *_start_block_rows(m, jd, j, t, news),
        *_energy_rows(m, jd, j, t, within),
    ]


def _new_placements(
    m: pyo.ConcreteModel, jd: JobData, j: str, t: int, k: int, config_begins: ConfigBegins
) -> list[Any]:
    """What relaunches the job on configuration ``k`` in slot ``t``: its new placements,
    and ``run[k,t] - run[k,t-1]``."""
    news = list(config_begins.get((j, k, t), ()))
    if t > jd.first_slot:
        news.append(m.run[j, k, t] - m.run[j, k, t - 1])
    return news


def _lost_rows(
    m: pyo.ConcreteModel, jd: JobData, j: str, t: int, within: list[tuple[int, Any]], running: Any
) -> Rows:
    """``lost`` is the ``λ_i`` of the latest relaunch within reach while the job runs;
    the first start pays its overhead at some power (a cut)."""
    lam = lost_fractions(jd)
    rows: Rows = [
        ((j, t, "at_least", i), m.lost[j, t] >= lam[i] * (r + running - 1)) for i, r in within
    ]
    rows.append(((j, t, "running"), m.lost[j, t] <= running))
    rows.append(((j, t, "now"), m.lost[j, t] >= lam[0] * m.relaunched[j, t]))
    first = sum(jd.power_cost(k, t) * m.first_run[j, k, t] for k in range(len(jd.configs)))
    rows.append(((j, t, "first_energy"), m.overhead_cost[j, t] >= lam[0] * first))
    rows.append(((j, t, "relaunched"), m.lost[j, t] <= sum(lam[i] * r for i, r in within)))
    return rows


def _work_rows(
    m: pyo.ConcreteModel,
    jd: JobData,
    j: str,
    t: int,
    running: Any,
    news: dict[int, list[Any]],
) -> Rows:
    """The work of the slot fits in the time the overhead leaves, per configuration,
    summed over them, and on a configuration just relaunched."""
    rows: Rows = []
    works = {}
    for k in range(len(jd.configs)):
        work = sum(m.work[j, b, k, t] for b in jd.blocks if (j, b, k, t) in m.work_index)
        if not isinstance(work, int):
            works[k] = work
            rows.append(((j, t, "work", k), work <= jd.speed[k] * (1 - m.lost[j, t])))
    if works:
        # the slot's time is shared by the configurations that run in it, less the
        # overhead; summed over configurations this binds where run is fractional
        used = sum(w / jd.speed[k] for k, w in works.items())
        rows.append(((j, t, "work_all"), used <= running - m.lost[j, t]))
    lam0 = lost_fractions(jd)[0]
    for k, work in works.items():
        for n, new in enumerate(news[k]):
            rows.append(
                ((j, t, "work_k", k, n), work <= jd.speed[k] * (m.run[j, k, t] - lam0 * new))
            )
    return rows


def _start_block_rows(
    m: pyo.ConcreteModel, jd: JobData, j: str, t: int, news: dict[int, list[Any]]
) -> Rows:
    """A relaunch on ``k`` is split by the block in progress (``start_block``) and
    charged ``b_k λ_0 q_b`` (the convex hull of the module's docstring)."""
    rows: Rows = []
    charges = []
    for k in range(len(jd.configs)):
        split = [m.start_block[j, k, t, b] for b in jd.blocks]
        for n, new in enumerate(news[k]):
            rows.append(((j, t, "start_k", k, n), sum(split) >= new))
        charges += [start_charge(jd, k, b, t) * split[b] for b in jd.blocks]
    for b in jd.blocks:
        pending = in_progress(m, jd, j, t, b)
        rows += [
            ((j, t, "start_block", k, b), m.start_block[j, k, t, b] <= pending)
            for k in range(len(jd.configs))
        ]
    rows.append(((j, t, "energy_start"), m.overhead_cost[j, t] >= sum(charges)))
    return rows


def _energy_rows(
    m: pyo.ConcreteModel, jd: JobData, j: str, t: int, within: list[tuple[int, Any]]
) -> Rows:
    """``overhead_cost`` is at least ``λ_i`` of a slot at the running configuration's
    power times ``P(N > w)``, for each relaunch within reach."""
    lam = lost_fractions(jd)
    survival = survival_before(m, jd, j, t)
    rows: Rows = []
    for k in range(len(jd.configs)):
        for i, r in within:
            charge = jd.power_cost(k, t) * lam[i]
            rows.append(
                (
                    (j, t, "energy", k, i),
                    m.overhead_cost[j, t] >= charge * (r + m.run[j, k, t] + survival - 2),
                )
            )
    return rows


def _first_start_rows(m: pyo.ConcreteModel, jd: JobData, j: str, t: int) -> list[tuple[Any, Any]]:
    """A relaunch only while running, and ``ever`` and ``first_run`` of job ``j`` in slot
    ``t`` (see the module's cuts)."""
    ks = range(len(jd.configs))
    running = sum(m.run[j, k, t] for k in ks)
    firsts = sum(m.first_run[j, k, t] for k in ks)
    before = m.ever[j, t - 1] if t > jd.first_slot else 0
    rows = [
        ((j, t, "on_run"), m.relaunched[j, t] <= running),
        ((j, t, "ever"), m.ever[j, t] == before + firsts),
        ((j, t, "ever_run"), m.ever[j, t] >= running),
        ((j, t, "first_relaunch"), m.relaunched[j, t] >= firsts),
        *(((j, t, "first_k", k), m.first_run[j, k, t] <= m.run[j, k, t]) for k in ks),
    ]
    if t == jd.last_slot and math.fsum(jd.lengths) > 0:
        m.ever[j, t].fix(1)  # a job with epochs to run starts within the horizon
    return rows


def start_charge(jd: JobData, k: int, b: int, t: int) -> float:
    """The expected energy cost of the overhead a relaunch on ``k`` in slot ``t`` loses
    in that slot while block ``b`` is in progress: ``b_k λ_0 q_b`` at its price."""
    return jd.power_cost(k, t) * lost_fractions(jd)[0] * jd.survival[b]


def in_progress(m: pyo.ConcreteModel, jd: JobData, j: str, t: int, b: int) -> Any:
    """1 if block ``b`` is the job's block in progress at the start of slot ``t``:
    blocks before it complete by the end of slot ``t - 1``, ``b`` not."""
    if t <= jd.first_slot:
        return 1 if b == 0 else 0
    before = m.done[j, b - 1, t - 1] if b > 0 else 1
    return before - m.done[j, b, t - 1]


def survival_before(m: pyo.ConcreteModel, jd: JobData, j: str, t: int) -> Any:
    """``P(N > w)`` for the progress ``w`` at the start of slot ``t``: ``q_b`` of the
    first block not complete by the end of slot ``t - 1`` (0 once all are)."""
    if t <= jd.first_slot:
        return 1.0
    q = (*jd.survival, 0.0)
    return q[0] - sum((q[b] - q[b + 1]) * m.done[j, b, t - 1] for b in jd.blocks)


def overhead_cost(m: pyo.ConcreteModel) -> Any:
    """The overhead's expected energy cost (0 in a model without overhead)."""
    if not hasattr(m, "overhead_cost"):
        return 0
    return sum(m.overhead_cost[i] for i in m.overhead_cost)
