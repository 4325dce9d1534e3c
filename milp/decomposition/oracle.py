"""The pricing oracle of the column generation: for every job at given prices, a lower
bound on its priced optimum (the completion bound at its first slot, or where an exact
pricing stopped at its label budget, the bound of its open labels), and its cheapest
schedules by the heuristic (beam) or exact label-setting program, as columns."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from milp.decomposition.branching import Decision, impossible, restrict
from milp.decomposition.columns import Column, make_column
from milp.decomposition.completion import Steps, alone_bound, completion_bound, grid_steps
from milp.decomposition.pricing import Job, Priced, price_jobs
from milp.decomposition.slots import SlotModel
from milp.decomposition.space import Space
from milp.decomposition.spread import SPREAD_WORK, fan_out
from milp.decomposition.stack import Stack


@dataclass(frozen=True)
class Round:
    """One pricing of every job: ``lower`` bounds each job's priced optimum from below,
    ``value`` from above, and exactly where ``exact``; ``columns`` are the schedules
    found cheaper than the job's best known column; ``labels`` counts the partial
    schedules kept."""

    lower: np.ndarray
    value: np.ndarray
    exact: np.ndarray
    columns: list[Column]
    labels: int

    @property
    def proved(self) -> np.ndarray:
        """Per job, the best lower bound on its priced optimum this round gives."""
        return np.where(self.exact, self.value, self.lower)


# the finest grid of a job's bound alone (:meth:`Oracle._alone`), and the work (grid
# points x configurations x window slots) above which those bounds are spread over processes
ALONE_GRID = 1 << 17
ALONE_SPREAD = 50_000_000


class Oracle:
    """Per job its slot arithmetic and price-free completion tables, made once."""

    def __init__(self, space: Space, grid: int, workers: int = 1) -> None:
        """``grid``: at most this many progress steps in each job's completion bound;
        ``workers``: processes a large round is spread over (:mod:`.spread`)."""
        self.space = space
        self.workers = workers
        self.models = [SlotModel.of(js, space.d.slot, space.d.tardiness) for js in space.jobs]
        self.steps = [Steps.of(m, grid) for m in self.models]
        self.stacks = [Stack.of([m]) for m in self.models]  # each job alone, made once
        # each job alone: prices only add to it
        least = np.array([space.d.job_bound(js.id) for js in space.jobs])
        self.own = np.maximum(least, self._alone(workers))
        # per job, its (choice, window slot) arcs removed by reduced-cost fixing
        self.fixed = [
            np.zeros((len(js.choices), m.last - m.first + 1), bool)
            for js, m in zip(space.jobs, self.models, strict=True)
        ]

    def _alone(self, workers: int) -> np.ndarray:
        """Per job, its completion bound alone at no prices on a grid of a quarter of its
        slowest slot's progress (up to ``ALONE_GRID`` steps), where the pricing's grid is
        coarser (else ``-inf``: the pricing's own completion bound gives it). A coarse
        grid runs a step ahead of the true progress in every slot, so over a long
        window a slow configuration counts as fast as the grid: on the contended
        200-job window job 37 (34 epochs over 2,158 slots) is bounded by 20.67 on 2,048
        steps and by 22.72 on its 93,954, where its best schedule costs 22.86. Made once
        (price-free), spread over ``workers``."""
        fine = [grid_steps(m, ALONE_GRID) for m in self.models]
        todo = [j for j, g in enumerate(fine) if g > self.steps[j].grid]
        out = np.full(len(self.models), -np.inf)

        def part(group: list[int]) -> list[float]:
            # each job's fine tables made where it is bounded, one job's at a time
            # (about 100 MB at 2^17 steps)
            models = [self.models[todo[i]] for i in group]
            return [alone_bound(m, Steps.of(m, ALONE_GRID)) for m in models]

        weights = [fine[j] * self.steps[j].configs.size * self.steps[j].floor.size for j in todo]
        got = fan_out(
            part, weights, workers if sum(weights) >= ALONE_SPREAD else 1, one_by_one=True
        )
        out[todo] = got if got is not None else part(list(range(len(todo))))
        return out

    def allows(self, col: Column) -> bool:
        """Whether the column runs through no arc removed by reduced-cost fixing (one
        that does is in no plan cheaper than the incumbent)."""
        fixed = self.fixed[col.job]
        if not fixed.any():
            return True
        first = self.models[col.job].first
        return not any(fixed[c, t - first] for t, c in col.slots())

    def prices(self, j: int, lam: np.ndarray) -> np.ndarray:
        """What each choice holds, priced in each slot of the job's window; an arc
        removed by reduced-cost fixing (:mod:`milp.decomposition.fixing`) at infinity."""
        m = self.models[j]
        price = np.asarray(self.space.jobs[j].usage @ lam[:, m.first : m.last + 1])
        fixed = self.fixed[j]
        return np.where(fixed, np.inf, price) if fixed.any() else price

    def price(
        self,
        lam: np.ndarray,
        upper: np.ndarray,
        *,
        beam: int | None,
        keep: int,
        budget: int | None = None,
        deadline: float | None = None,
        decisions: tuple[Decision, ...] = (),
    ) -> Round:
        """Price every job at ``lam`` (resources x slots); ``upper``: each job's best known
        column at these prices (its pricing looks only below it). ``beam=None``: exact,
        within ``budget`` labels per job. ``decisions``: the branching decisions the
        schedules must meet (:mod:`milp.decomposition.branching`)."""
        n = len(self.models)

        def part(group: list[int]) -> list[_Got]:
            return self._price_part(group, lam, upper, beam, keep, budget, deadline, decisions)

        weights = [f.size for f in self.fixed]
        workers = self.workers if sum(weights) >= SPREAD_WORK else 1
        got = fan_out(part, weights, workers, one_by_one=beam is None)
        if got is None:
            got = part(list(range(n)))
        lower = np.array([g.lower for g in got], dtype=float)
        value = np.array([g.value for g in got], dtype=float)
        exact = np.array([g.exact for g in got], dtype=bool)
        columns = [c for g in got for c in g.columns]
        return Round(lower, value, exact, columns, sum(g.labels for g in got))

    def _price_part(
        self,
        group: list[int],
        lam: np.ndarray,
        upper: np.ndarray,
        beam: int | None,
        keep: int,
        budget: int | None,
        deadline: float | None,
        decisions: tuple[Decision, ...],
    ) -> list[_Got]:
        """:meth:`price` for the jobs of ``group`` (in its order): each job's completion
        bound first, then the jobs it leaves open priced together (heuristic) or one at
        a time (exact)."""
        out: dict[int, _Got] = {}
        todo: list[int] = []
        jobs: list[Job] = []
        for j in group:
            m, steps = self.models[j], self.steps[j]
            if np.isfinite(upper[j]) and upper[j] <= self.own[j] + 1e-12 * max(1.0, upper[j]):
                out[j] = _Got(upper[j], upper[j], True)  # its best column costs its own bound
                continue
            if impossible(m, j, decisions):
                out[j] = _Got(np.inf, np.inf, True)  # no schedule meets the decisions
                continue
            price, must = restrict(m, j, self.prices(j, lam), decisions)
            bound = completion_bound(m, steps, price)
            alone = steps.remaining(m, bound[1, 0], m.first, np.zeros(1))[0]  # not started: idle
            lower = min(max(alone, self.own[j]), upper[j])
            if np.isfinite(upper[j]) and lower >= upper[j] - 1e-12 * max(1.0, abs(upper[j])):
                out[j] = _Got(lower, upper[j], True)  # its best known column is its optimum
                continue
            out[j] = _Got(lower, upper[j], False)
            todo.append(j)
            jobs.append(
                Job(m, steps, price, bound, float(upper[j]), must, self.space.window_charge(j))
            )
        if deadline is not None and time.perf_counter() > deadline:
            todo, jobs = [], []  # out of time: the jobs left prove nothing this round
        got = _price(jobs, [self.stacks[j] for j in todo], beam, keep, budget, deadline)
        for j, one in zip(todo, got, strict=True):
            # an exact pricing stopped early still bounds by its frontier
            lower = max(out[j].lower, one.lower) if beam is None else out[j].lower
            columns = [make_column(self.space, j, s, ch) for s, ch in one.schedules]
            out[j] = _Got(lower, one.value, beam is None and one.complete, columns, one.labels)
        return [out[j] for j in group]


@dataclass(frozen=True)
class _Got:
    """One job's share of a :class:`Round`."""

    lower: float
    value: float
    exact: bool
    columns: list[Column] = field(default_factory=list)
    labels: int = 0


def _price(
    jobs: list[Job],
    stacks: list[Stack],
    beam: int | None,
    keep: int,
    budget: int | None,
    deadline: float | None,
) -> list[Priced]:
    """The heuristic pricer steps every job together (a few labels a job per slot: one
    pass of numpy for all of them beats one per job, 1.5-1.9x on the real-data
    instances); the exact one a job at a time (thousands of labels a slot: sorting
    them all together costs more than it saves, about 1.25x)."""
    if beam is not None:
        return price_jobs(jobs, beam=beam, keep=keep, budget=budget, deadline=deadline)
    out = []
    for job, stack in zip(jobs, stacks, strict=True):
        if deadline is not None and time.perf_counter() > deadline:
            out.append(Priced(job.upper, complete=False))  # out of time: proves nothing
        else:
            out += price_jobs([job], keep=keep, budget=budget, deadline=deadline, stack=stack)
    return out
