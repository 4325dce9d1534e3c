"""Pricing: a job's cheapest schedule at given prices, by a label-setting dynamic program
over the slots of its window.

A label is a partial schedule at the start of a slot: its exact progress ``w``, its cost
so far (energy, overhead, tardiness of the stops it reached, prices of what it held),
its *state* (the choice it ran in the slot before, or idle) and its position in that run
(how much relaunch overhead it still carries). From each label a slot may be idle,
continue its state's choice (carrying the overhead left), or relaunch on any other
choice (paying the overhead anew). Progress is exact, so every schedule the program
finds costs what the evaluator says (:func:`milp.decomposition.columns.schedule_cost`).

Three rules keep it small, none of them losing the optimum:

- *dominance*: of two labels in the same state and position, one with at least the
  progress and at most the cost is never worse later (the same continuation does the
  same slots on later epochs, of no higher survival, completes no later and holds no
  more), so the other is dropped. Without overhead the state does not matter and all
  labels of a slot are compared;
- *relaunch from the front*: a relaunch onto a choice costs the same from every state
  and preserves dominance, so only labels on the Pareto front of all states relaunch;
- *bounding*: a label whose cost plus the completion bound
  (:mod:`milp.decomposition.completion`) reaches the best schedule known is dropped.

Two choices of one configuration priced alike in every slot of the window are
interchangeable (switching between them is a relaunch, which continuing would beat: the
epochs continuing adds cost at most the overhead energy it saves), so only the first of
each such group is priced. With ``beam`` set, only that many labels per state and
position survive, best bound first: the heuristic pricer.

Under prices of a kWh by the slot every rule holds as stated: dominance compares
labels at the start of one slot, whose continuations pay the same slots' prices
(:func:`milp.decomposition.dominance.dominated` says why each margin still bounds);
a relaunch in a slot costs the same from every state, at that slot's price; choices of
one configuration pay the same energy price in each slot, so alike choices stay alike;
the completion bound counts the slots left at their floor
(:mod:`milp.decomposition.completion`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from milp.decomposition.columns import TOL_STOP
from milp.decomposition.completion import Steps
from milp.decomposition.dominance import Labels, dominated, pareto
from milp.decomposition.slots import SlotModel
from milp.decomposition.stack import Bounds, Stack


@dataclass
class Priced:
    """A job's pricing: ``value``, the least cost found (never above the ``upper`` it was
    given), ``schedules`` cheaper than ``upper`` as (start slot, choices), best first,
    ``labels``, how many partial schedules it kept in all, and whether it went through
    every slot (``complete``). An exact pricing (no beam) that stopped at its label budget or at
    the deadline still bounds the optimum from below by ``lower``: the least of
    ``value`` and of its open labels' cost plus completion bound (every schedule passes
    through an open label, or was left for one at no more cost, or for reaching a
    bound above ``value``); ``-inf`` where nothing is known (a pricing never begun)."""

    value: float
    schedules: list[tuple[int, tuple[int, ...]]] = field(default_factory=list)
    labels: int = 0
    complete: bool = True
    arcs: np.ndarray | None = None
    lower: float = -np.inf


@dataclass(frozen=True)
class Job:
    """One job to price: its slot arithmetic, completion tables, ``price`` (choices x
    window slots), completion bound ``bound``, the value of a schedule already known
    (``upper``, or ``inf``), the window slots it must run in (``must_run``) and the
    weight on its survival past each window slot's end (``charge``, or ``None``:
    :attr:`milp.decomposition.space.Space.charge`)."""

    m: SlotModel
    steps: Steps
    price: np.ndarray
    bound: np.ndarray
    upper: float
    must_run: np.ndarray | None = None
    charge: np.ndarray | None = None


def representatives(m: SlotModel, price: np.ndarray) -> np.ndarray:
    """The first choice of each group of one configuration priced alike in every slot."""
    seen: dict[tuple[int, bytes], int] = {}
    for c in range(price.shape[0]):
        seen.setdefault((int(m.k[c]), price[c].tobytes()), c)
    return np.array(sorted(seen.values()), dtype=np.int64)


def price_job(
    m: SlotModel,
    steps: Steps,
    price: np.ndarray,
    bound: np.ndarray,
    upper: float,
    *,
    beam: int | None = None,
    keep: int = 3,
    budget: int | None = None,
    must_run: np.ndarray | None = None,
    charge: np.ndarray | None = None,
) -> Priced:
    """One job's cheapest schedules at ``price`` below ``upper``: :func:`price_jobs` of
    that job alone."""
    job = Job(m, steps, price, bound, upper, must_run, charge)
    return price_jobs([job], beam=beam, keep=keep, budget=budget)[0]


class _Run:
    """What a pricing of several jobs keeps beside its labels: per job its best
    schedules and ``upper``, the labels it kept, whether it is still priced, and its
    prices, representatives and must-run slots laid out for the stack."""

    def __init__(self, stack: Stack, jobs: Sequence[Job], keep: int) -> None:
        n = len(jobs)
        self.keep = keep
        self.upper = np.array([p.upper for p in jobs], dtype=float)
        self.best: list[list[tuple[float, int, int, int]]] = [[] for _ in range(n)]
        self.total = np.ones(n, dtype=np.int64)
        self.active = np.ones(n, dtype=bool)
        self.complete = np.ones(n, dtype=bool)
        sizes = np.array([p.price.size for p in jobs])
        poff = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        self.flat = np.concatenate([p.price.ravel() for p in jobs])
        self.arcs = np.full(len(self.flat), np.inf)
        local = np.arange(len(stack.job_of)) - stack.coff[stack.job_of]
        self.base = poff[stack.job_of] + local * stack.width[stack.job_of]
        reps = [representatives(p.m, p.price) + stack.coff[j] for j, p in enumerate(jobs)]
        self.reps = np.concatenate(reps)
        self.reps_count = np.array([len(r) for r in reps], dtype=np.int64)
        self.reps_start = np.concatenate([[0], np.cumsum(self.reps_count)[:-1]]).astype(np.int64)
        self.must = np.zeros((n, int(stack.width.max())), dtype=bool)
        for j, p in enumerate(jobs):
            if p.must_run is not None:
                self.must[j, : len(p.must_run)] = p.must_run
        last_must = self.must.shape[1] - 1 - np.argmax(self.must[:, ::-1], axis=1)
        self.run_by = np.where(self.must.any(axis=1), last_must, -1)
        # per job stopped early, the least cost plus completion bound of its open labels
        self.frontier = np.full(n, np.inf)
        self.charge: np.ndarray | None = None
        if any(p.charge is not None for p in jobs):
            self.charge = np.zeros((n, int(stack.width.max())))
            for j, p in enumerate(jobs):
                if p.charge is not None:
                    self.charge[j, : len(p.charge)] = p.charge
        self.stack = stack

    def survival(self, i: int, job: np.ndarray, w: np.ndarray) -> np.ndarray | float:
        """Each label's charge for window slot ``i`` at the progress ``w`` it ends the
        slot with: the weight times ``P(N > w)``, a stop a tolerance short counted
        passed (as :func:`milp.decomposition.columns.survival`). A charge later in the
        slots only falls as the progress grows, so the dominance rules still hold; the
        completion bound counts the charges to come at their least
        (:meth:`milp.decomposition.stack.Bounds.remaining`)."""
        if self.charge is None:
            return 0.0
        return self.charge[job, i] * self.stack.beyond(job, w + TOL_STOP)

    def record(self, kids: Labels, done: np.ndarray, i: int) -> None:
        """Keep each job's ``keep`` cheapest schedules completing in slot ``i`` or before
        (not before its last must-run slot), lowering its ``upper``."""
        hit = np.flatnonzero(
            done & (kids.cost < self.upper[kids.job]) & (i >= self.run_by[kids.job])
        )
        if len(hit) == 0:
            return
        hit = hit[np.lexsort((kids.cost[hit], kids.job[hit]))]
        for j in np.unique(kids.job[hit]):
            mine = hit[kids.job[hit] == j][: self.keep]
            best = self.best[j]
            best += [(float(kids.cost[x]), i, int(kids.parent[x]), int(kids.via[x])) for x in mine]
            best.sort()
            del best[self.keep :]
            self.upper[j] = min(self.upper[j], best[0][0])

    def through(self, kids: Labels, done: np.ndarray, bounds: Bounds, i: int) -> None:
        """Lower each (choice, slot ``i``) arc's bound to the least cost plus completion
        bound of the children through it (0 to go once complete)."""
        go = np.where(done, 0.0, bounds.remaining(i + 1, kids.job, kids.w, kids.state < 0))
        np.minimum.at(self.arcs, self.base[kids.via] + i, kids.cost + go)

    def priced(
        self, history: list[tuple[np.ndarray, np.ndarray]], stack: Stack, j: int, arcs: bool
    ) -> Priced:
        """Job ``j``'s outcome (with its arcs' bounds, choices x window slots)."""
        paths = [_path(history, stack, j, b) for b in self.best[j]]
        value = float(self.upper[j])
        lower = value if self.complete[j] else min(value, float(self.frontier[j]))
        out = Priced(value, paths, int(self.total[j]), bool(self.complete[j]), lower=lower)
        if arcs:
            lo = self.base[stack.coff[j]]
            size = stack.models[j].speed.size * int(stack.width[j])
            out.arcs = self.arcs[lo : lo + size].reshape(-1, int(stack.width[j]))
        return out

    def stop(self, jobs: np.ndarray, labels: Labels, bounds: Bounds, i: int) -> None:
        """These jobs are priced no further from the start of window slot ``i``, where
        ``labels`` are open: what they found stands, and their open labels' least cost
        plus completion bound (with what they found) bounds their optimum from below."""
        jobs = jobs[self.active[jobs]]
        mine = np.isin(labels.job, jobs)
        if mine.any():
            rest = bounds.remaining(i, labels.job[mine], labels.w[mine], labels.state[mine] < 0)
            np.minimum.at(self.frontier, labels.job[mine], labels.cost[mine] + rest)
        self.active[jobs] = False
        self.complete[jobs] = False


def price_jobs(
    jobs: Sequence[Job],
    *,
    beam: int | None = None,
    keep: int = 3,
    budget: int | None = None,
    deadline: float | None = None,
    arcs: bool = False,
    stack: Stack | None = None,
) -> list[Priced]:
    """Each job's cheapest schedules at its prices below its ``upper``, every job a slot
    at a time together (see the module's docstring). Exact unless ``beam``; a job that
    keeps more than ``budget`` labels in all stops there, as every job still priced at
    ``deadline`` (``time.perf_counter()``) does, with what it found. With ``arcs``,
    no schedules: ``upper`` stays the threshold, and each job's ``arcs`` bound what a
    schedule through each (choice, slot) costs (:mod:`milp.decomposition.fixing`).
    ``stack``: the jobs' stack if made already (it depends on their models only)."""
    if not jobs:
        return []
    stack = stack if stack is not None else Stack.of([p.m for p in jobs])
    charges = [p.charge for p in jobs]
    bounds = Bounds.of(stack, [p.steps for p in jobs], [p.bound for p in jobs], charges)
    run = _Run(stack, jobs, keep)
    n = len(jobs)
    none = -np.ones(n, dtype=np.int64)
    labels = Labels(np.arange(n), np.zeros(n), np.zeros(n), none, 0 * none, none, none)
    history = [(labels.parent, labels.via)]
    for i in range(int(stack.width.max())):
        kids, lost = _children(stack, run, labels)
        w1, step, done = stack.step(i, kids.job, kids.w, kids.via, lost)
        kids.cost = (
            kids.cost + step + run.flat[run.base[kids.via] + i] + run.survival(i, kids.job, w1)
        )
        kids.w = w1
        if arcs:
            run.through(kids, done, bounds, i)
        else:
            run.record(kids, done, i)
        labels = _next(stack, run, bounds, labels, kids, done, i, beam)
        if budget is not None and (run.active & (run.total > budget)).any():
            run.stop(np.flatnonzero(run.total > budget), labels, bounds, i + 1)
            labels = labels.take(run.active[labels.job])
        history.append((labels.parent, labels.via))
        if len(labels.w) == 0:
            break
        if deadline is not None and time.perf_counter() > deadline:
            run.stop(np.unique(labels.job), labels, bounds, i + 1)
            break
    return [run.priced(history, stack, j, arcs) for j in range(n)]


def _next(
    stack: Stack,
    run: _Run,
    bounds: Bounds,
    labels: Labels,
    kids: Labels,
    done: np.ndarray,
    i: int,
    beam: int | None,
) -> Labels:
    """The labels at the start of slot ``i + 1``: the running children that did not
    complete and the labels idle in slot ``i`` (where the job may idle), in the jobs'
    windows, below their ``upper`` by the completion bound, pruned; counted."""
    going = i + 1 < stack.width
    idle = _idle(labels)
    idle = idle.take(going[idle.job] & ~run.must[idle.job, i])
    idle.cost = idle.cost + run.survival(i, idle.job, idle.w)
    nxt = Labels.join(kids.take(~done & going[kids.job]), idle)
    score = nxt.cost + bounds.remaining(i + 1, nxt.job, nxt.w, nxt.state < 0)
    alive = (score < run.upper[nxt.job]) & run.active[nxt.job]
    out = _prune(nxt.take(alive), score[alive], stack, beam, i + 1)
    run.total += np.bincount(out.job, minlength=len(run.total))
    return out


def _children(stack: Stack, run: _Run, labels: Labels) -> tuple[Labels, np.ndarray]:
    """The running children of ``labels`` (continuing, then relaunching from each job's
    front onto its representatives) with the overhead hours each loses in the slot;
    ``via`` is the global choice run. A job without overhead has no states (-1), so
    nothing continues there and every front label relaunches onto every choice."""
    idx = np.arange(len(labels.w))
    front = idx[pareto(labels.job, labels.w, labels.cost)]
    counts = run.reps_count[labels.job[front]]
    f = np.repeat(front, counts)
    within = np.arange(len(f)) - np.repeat(np.cumsum(counts) - counts, counts)
    c = run.reps[run.reps_start[labels.job[f]] + within]
    # with overhead, continuing differs from relaunching on the same choice
    f, c = f[c != labels.state[f]], c[c != labels.state[f]]
    cont = idx[labels.state >= 0]
    jc, jf = labels.job[cont], labels.job[f]
    left = np.maximum(0.0, stack.delta[jc] - labels.pos[cont] * stack.slot)
    parent = np.concatenate([cont, f])
    via = np.concatenate([labels.state[cont], c])
    pos = np.concatenate(
        [np.minimum(labels.pos[cont] + 1, stack.positions[jc]), np.ones(len(f), np.int64)]
    )
    lost = np.concatenate([np.minimum(left, stack.slot), np.minimum(stack.delta[jf], stack.slot)])
    job = labels.job[parent]
    state = np.where(stack.delta[job] > 0, via, -1)
    kids = Labels(job, labels.w[parent], labels.cost[parent], state, pos, parent, via)
    return kids, lost


def _idle(labels: Labels) -> Labels:
    """Each label idle for the slot."""
    n = len(labels.w)
    none = -np.ones(n, dtype=np.int64)
    return Labels(labels.job, labels.w, labels.cost, none, 0 * none, np.arange(n), none)


def _prune(labels: Labels, score: np.ndarray, stack: Stack, beam: int | None, i: int) -> Labels:
    """Dominance among the labels at the start of window slot ``i`` (see
    :func:`milp.decomposition.dominance.dominated`), then at most ``beam`` labels per
    job, state and position, lowest ``score`` first."""
    pmax = int(stack.positions.max())
    has = stack.delta[labels.job] > 0
    # a running label of a job with overhead: its state and position; else its job
    group = np.where(has & (labels.state >= 0), labels.state * (pmax + 1) + labels.pos, -1)
    group = np.where(group >= 0, group, -(labels.job + 1))
    keep = ~dominated(labels, group, stack, i)
    labels, score, group = labels.take(keep), score[keep], group[keep]
    if beam is not None and len(group):
        order = np.lexsort((score, group))
        g = group[order]
        starts = np.concatenate([[0], np.flatnonzero(g[1:] != g[:-1]) + 1])
        rank = np.arange(len(g)) - np.repeat(starts, np.diff(np.append(starts, len(g))))
        labels = labels.take(np.sort(order[rank < beam]))
    return labels


def _path(
    history: list[tuple[np.ndarray, np.ndarray]],
    stack: Stack,
    j: int,
    best: tuple[float, int, int, int],
) -> tuple[int, tuple[int, ...]]:
    """Job ``j``'s schedule ending in ``best``: its first running slot and its choices
    (local to the job)."""
    _, i, parent, choice = best
    choices = [choice]
    for back in range(i, 0, -1):
        parents, vias = history[back]
        choices.append(int(vias[parent]))
        parent = int(parents[parent])
    off = int(stack.coff[j])
    local = [c - off if c >= 0 else -1 for c in reversed(choices)]
    lead = next(n for n, c in enumerate(local) if c >= 0)
    return stack.models[j].first + lead, tuple(local[lead:])
