"""Plans from the root's support: the compact MILP over only what the master's columns use.

The integer master can only pick whole columns, one per job, and on a contended
instance the columns the root generated rarely fit together: each was priced against
fractions of the others. The master LP's columns hold more than their combinations,
though: which configurations, nodes and slots each job may usefully run. So the
compact time-indexed MILP (:mod:`milp.model`) is solved over that support alone: each
job keeps only the configurations its columns (or the incumbent's) run, between the
first slot any of them runs and the last, and its ``run``, ``place`` and ``share``
variables outside the (configuration, slot), (configuration, node, slot) and (node,
slot) arcs those columns use are fixed at 0. A plan may then splice one column's
start with another's end, or move a job to a node another column used in that slot:
plans the integer master cannot build. It is a restriction of the compact model, so
every plan it finds is feasible for the whole model and is checked and costed by the
evaluator like any other; the incumbent's arcs are in the support, so the incumbent
is its MIP start. (In the literature this is a restricted master heuristic at the
level of the compact formulation's arcs rather than its columns; cf. Joncour,
Michel, Sadykov, Sverdlov and Vanderbeck, "Column generation based primal
heuristics", ENDM 2010.)

Shared labels are not restricted: a node's shared GPUs are interchangeable, so a
tenant may take any label of a node where the support shares in that slot.

The whole support can be too much for the time there is: on the overloaded 20-job
real-data instance of ``scale_gaps`` (the root's LP over 5,700 columns, 183 of them
positive) HiGHS found nothing below the incumbent's 33.49 in 300 s over the
columns above 0.05 and found 21.45 only after 589 s over all of them, while the 21
columns above 0.2 gave 26.46 within 300 s. So :func:`improve_by_support` widens it in
steps: the columns above each of ``LEVELS`` in turn, each step's plan the next one's
MIP start (and its columns part of the next support), the time shared out evenly
among the steps left.
"""

from __future__ import annotations

import math
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pyomo.environ as pyo

from instances import Plan
from milp.data import MilpData, check_size
from milp.decomposition.columns import Column, columns_of_plan
from milp.decomposition.plans import assemble
from milp.decomposition.search import Incumbent
from milp.decomposition.space import Space
from milp.highs import compile_model, load_values, run_highs, start_vector
from milp.model import model_of_data
from milp.plan_io import solution_plan, start_values
from milp.requirements import ModelTooLarge


class _OutOfTime(Exception):
    """The time ran out while the model was being built."""


class NotBuilt(Exception):
    """:func:`support_plan`'s model was not built and compiled by its ``built_by``
    time: the models of larger supports would not be either."""


class Support:
    """The arcs a set of columns runs through, per job id: (configuration, slot),
    (configuration, node, slot) for exclusive and multi-node choices, (node, slot) for
    shared ones; configurations by their index in the job's allowed ones."""

    def __init__(self, space: Space, columns: Sequence[Column]) -> None:
        self.run: dict[str, set[tuple[int, int]]] = defaultdict(set)
        self.place: dict[str, set[tuple[int, str, int]]] = defaultdict(set)
        self.share: dict[str, set[tuple[str, int]]] = defaultdict(set)
        for col in columns:
            js = space.jobs[col.job]
            for t, c in col.slots():
                choice = js.choices[c]
                self.run[js.id].add((choice.k, t))
                if choice.label >= 0:
                    self.share[js.id].add((choice.nodes[0], t))
                else:
                    self.place[js.id].update((choice.k, n, t) for n in choice.nodes)

    def configs(self, job: str) -> list[int]:
        """The configurations the job runs somewhere in the support, in order."""
        return sorted({k for k, _ in self.run[job]})


def narrowed(d: MilpData, support: Support) -> tuple[MilpData, dict[str, dict[int, int]]]:
    """``d`` with each job's configurations and slots cut to the support, and per job
    the new index of each configuration kept. The nodes keep the whole model's number of
    shared labels (a job's shared configuration may be cut, the labels it could use
    stay)."""
    jobs = {}
    index: dict[str, dict[int, int]] = {}
    for j, jd in d.jobs.items():
        ks = support.configs(j)
        if not ks:
            raise ValueError(f"job {j!r} runs nowhere in the support")
        index[j] = {k: i for i, k in enumerate(ks)}
        slots = [t for _, t in support.run[j]]

        def pick(values: tuple[float, ...], ks: list[int] = ks) -> tuple[float, ...]:
            return tuple(values[k] for k in ks) if values else values

        jobs[j] = replace(
            jd,
            configs=tuple(jd.configs[k] for k in ks),
            speed=pick(jd.speed),
            cost=pick(jd.cost),
            slot_power_cost=pick(jd.slot_power_cost),
            energy=pick(jd.energy),
            slot_kwh=pick(jd.slot_kwh),
            first_slot=min(slots),
            last_slot=max(slots),
        )
    out = replace(d, jobs=jobs)
    out.__dict__["shared_labels"] = d.shared_labels  # a cached property, set as computed
    return out, index


def _fix_outside(m: pyo.ConcreteModel, support: Support, index: dict[str, dict[int, int]]) -> None:
    """Fix at 0 every ``run``, ``place`` and ``share`` variable off the support."""
    back = {j: {i: k for k, i in ks.items()} for j, ks in index.items()}
    for j, k, t in m.run_index:
        if (back[j][k], t) not in support.run[j]:
            m.run[j, k, t].fix(0)
    for j, k, n, t in m.place_index:
        if (back[j][k], n, t) not in support.place[j]:
            m.place[j, k, n, t].fix(0)
    for j, n, u, t in m.share_index:
        if (n, t) not in support.share[j]:  # any label of the node: they are alike
            m.share[j, n, u, t].fix(0)


def support_plan(
    space: Space,
    columns: Sequence[Column],
    start: Plan,
    deadline: float,
    *,
    threads: int | None = 1,
    built_by: float | None = None,
) -> Plan | None:
    """The best plan HiGHS finds by ``deadline`` (a ``time.perf_counter()`` value) over
    the support of ``columns``, which must include the columns of ``start`` (a plan of
    ``space``'s instance, the MIP start): ``start`` itself where it finds none better;
    ``None`` if the time ran out before HiGHS could run, or the model would be too large
    to build. Raises :class:`NotBuilt` where ``built_by`` (earlier than ``deadline``)
    passed before the model was built and compiled."""
    support = Support(space, columns)
    d, index = narrowed(space.d, support)
    try:
        check_size(d)
    except ModelTooLarge:
        return None

    def step(_: str) -> None:
        now = time.perf_counter()
        if now > deadline:
            raise _OutOfTime
        if built_by is not None and now > built_by:
            raise NotBuilt

    try:
        m = model_of_data(d, step)
        _fix_outside(m, support, index)
        start_values(m, d, start)
        step("compiling")
        mats = compile_model(m)
        step("solving")
    except _OutOfTime:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        answer = run_highs(
            mats,
            start=start_vector(mats),
            time_limit=deadline - time.perf_counter(),
            mip_gap=1e-6,
            threads=threads,
            log_file=Path(tmp) / "highs.log",
            stream=False,
        )
    if answer.values is None:
        return None
    load_values(mats, answer.values)
    return solution_plan(m, d)


# the LP values above which a column joins the support, step by step (see the module)
LEVELS = (0.5, 0.2, 0.05)


def improve_by_support(
    space: Space,
    weighted: Sequence[tuple[Column, float]],
    incumbent: Incumbent,
    deadline: float,
    build: float | None = None,
) -> Incumbent:
    """The incumbent (one column per job), or the cheapest plan :func:`support_plan`
    finds over the columns of ``weighted`` (column, LP value) above each of ``LEVELS``
    in turn, as columns, until ``deadline``: the incumbent's columns are always in the
    support, and each step's plan is the next one's start. A step whose model is not
    built and compiled within ``build`` seconds ends the search (the next steps' models
    are larger)."""
    assert incumbent.columns is not None
    best, plan = incumbent, assemble(space, incumbent.columns)
    for i, level in enumerate(LEVELS):
        now = time.perf_counter()
        if now >= deadline:
            break
        until = now + (deadline - now) / (len(LEVELS) - i)
        assert best.columns is not None
        chosen = [c for c, x in weighted if x > level]
        built_by = None if build is None else now + build
        try:
            got = support_plan(space, chosen + best.columns, plan, until, built_by=built_by)
        except NotBuilt:
            break
        if got is None:
            continue
        columns = columns_of_plan(space, got)
        cost = math.fsum(c.cost for c in columns)
        if cost < best.cost * (1 - 1e-9):
            best, plan = Incumbent(columns, cost), got
    return best
