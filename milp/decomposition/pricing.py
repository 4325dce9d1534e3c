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
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from milp.decomposition.completion import Steps
from milp.decomposition.slots import SlotModel


@dataclass
class Priced:
    """A job's pricing: ``value``, the least cost found (never above the ``upper`` it was
    given), ``schedules`` cheaper than ``upper`` as (start slot, choices), best first,
    ``labels``, how many partial schedules it kept in all, and whether it went through
    every slot (``complete``; an exact pricing that stopped at its label budget proves
    nothing)."""

    value: float
    schedules: list[tuple[int, tuple[int, ...]]] = field(default_factory=list)
    labels: int = 0
    complete: bool = True


@dataclass
class _Labels:
    """Labels at the start of a slot, and how each came there: ``parent``, its index
    among the labels of the slot before, and ``via``, the choice it took (-1: idle)."""

    w: np.ndarray
    cost: np.ndarray
    state: np.ndarray
    pos: np.ndarray
    parent: np.ndarray
    via: np.ndarray

    def take(self, keep: np.ndarray) -> _Labels:
        return _Labels(
            self.w[keep],
            self.cost[keep],
            self.state[keep],
            self.pos[keep],
            self.parent[keep],
            self.via[keep],
        )

    @staticmethod
    def join(a: _Labels, b: _Labels) -> _Labels:
        c = np.concatenate
        return _Labels(
            c([a.w, b.w]),
            c([a.cost, b.cost]),
            c([a.state, b.state]),
            c([a.pos, b.pos]),
            c([a.parent, b.parent]),
            c([a.via, b.via]),
        )


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
) -> Priced:
    """The job's cheapest schedules at ``price`` (choices x window slots) below
    ``upper`` (the value of a schedule already known, or ``inf``), with ``bound`` its
    completion bound. Exact unless ``beam``, and unless it keeps more than ``budget``
    labels in all (it then stops, with what it found). ``must_run`` (per window slot):
    slots the schedule must run in (a branching decision; a forbidden choice is an
    infinite price)."""
    reps = representatives(m, price)
    width = m.last - m.first + 1
    if must_run is None:
        must_run = np.zeros(width, dtype=bool)
    run_by = int(np.flatnonzero(must_run).max()) if must_run.any() else -1
    one = np.ones(1, dtype=np.int64)
    labels = _Labels(np.zeros(1), np.zeros(1), -one, 0 * one, -one, -one)
    history = [labels]
    best: list[tuple[float, int, int, int]] = []  # (value, slot index, parent, choice)
    total = 1
    for i in range(width):
        kids, lost = _children(m, labels, reps)
        w1, step, done = m.step(m.first + i, kids.w, kids.via, lost)
        kids.cost = kids.cost + step + price[kids.via, i]
        kids.w = w1
        if i >= run_by:  # completing earlier would skip a slot it must run in
            upper = _record(best, kids, done, upper, i, keep)
        if i + 1 == width:
            break
        nxt = kids.take(~done) if must_run[i] else _Labels.join(kids.take(~done), _idle(labels))
        score = nxt.cost + steps.remaining(m, bound[i + 1], m.first + i + 1, nxt.w)
        alive = score < upper
        labels = _prune(nxt.take(alive), score[alive], m, beam)
        total += len(labels.w)
        history.append(labels)
        if budget is not None and total > budget:
            return Priced(upper, [_path(history, m, b) for b in best], total, complete=False)
    return Priced(upper, [_path(history, m, b) for b in best], total)


def _children(m: SlotModel, labels: _Labels, reps: np.ndarray) -> tuple[_Labels, np.ndarray]:
    """The running children of ``labels`` (continuing, then relaunching from the front)
    with the overhead hours each loses in the slot; ``via`` is the choice run."""
    idx = np.arange(len(labels.w))
    front = idx[_pareto(np.zeros(len(idx), np.int64), labels.w, labels.cost)]
    f = np.repeat(front, len(reps))
    c = np.tile(reps, len(front))
    if m.delta > 0:  # with overhead, continuing differs from relaunching on the same choice
        f, c = f[c != labels.state[f]], c[c != labels.state[f]]
        cont = idx[labels.state >= 0]
    else:
        cont = idx[:0]
    left = np.maximum(0.0, m.delta - labels.pos[cont] * m.slot)
    parent = np.concatenate([cont, f])
    via = np.concatenate([labels.state[cont], c])
    pos = np.concatenate([np.minimum(labels.pos[cont] + 1, m.positions), np.ones(len(f), np.int64)])
    lost = np.concatenate([np.minimum(left, m.slot), np.full(len(f), min(m.delta, m.slot))])
    state = via if m.delta > 0 else -np.ones(len(via), np.int64)
    kids = _Labels(labels.w[parent], labels.cost[parent], state, pos, parent, via)
    return kids, lost


def _idle(labels: _Labels) -> _Labels:
    """Each label idle for the slot."""
    n = len(labels.w)
    none = -np.ones(n, dtype=np.int64)
    return _Labels(labels.w, labels.cost, none, np.zeros(n, np.int64), np.arange(n), none)


def _record(
    best: list[tuple[float, int, int, int]],
    kids: _Labels,
    done: np.ndarray,
    upper: float,
    i: int,
    keep: int,
) -> float:
    """Keep the ``keep`` cheapest schedules completing in slot ``i`` or before; the new
    ``upper`` (the best value known)."""
    hit = np.flatnonzero(done & (kids.cost < upper))
    for j in hit[np.argsort(kids.cost[hit], kind="stable")][:keep]:
        best.append((float(kids.cost[j]), i, int(kids.parent[j]), int(kids.via[j])))
    best.sort()
    del best[keep:]
    return min(upper, best[0][0]) if best else upper


def _pareto(group: np.ndarray, w: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """Within each group, the labels no other label of the group dominates (at least the
    progress at most the cost; of equal labels, the first)."""
    n = len(w)
    if n == 0:
        return np.zeros(0, dtype=bool)
    order = np.lexsort((cost, -w, group))
    sorted_group = group[order]
    gid = np.zeros(n)
    np.cumsum(sorted_group[1:] != sorted_group[:-1], out=gid[1:])
    # costs shifted down by group, so that a running minimum never crosses groups
    spread = 2.0 * (float(cost.max()) - float(cost.min())) + 1.0
    v = cost[order] - gid * spread
    before = np.empty(n)
    before[0] = np.inf
    np.minimum.accumulate(v[:-1], out=before[1:])
    keep = np.zeros(n, dtype=bool)
    keep[order] = v < before
    return keep


def _prune(labels: _Labels, score: np.ndarray, m: SlotModel, beam: int | None) -> _Labels:
    """Dominance (see :func:`_dominated`), then at most ``beam`` labels per state and
    position, lowest ``score`` first."""
    group = (labels.state + 1) * (m.positions + 1) + labels.pos if m.delta > 0 else 0 * labels.pos
    keep = ~_dominated(labels, group, m)
    labels, score, group = labels.take(keep), score[keep], group[keep]
    if beam is not None and len(group):
        order = np.lexsort((score, group))
        g = group[order]
        starts = np.concatenate([[0], np.flatnonzero(g[1:] != g[:-1]) + 1])
        rank = np.arange(len(g)) - np.repeat(starts, np.diff(np.append(starts, len(g))))
        labels = labels.take(np.sort(order[rank < beam]))
    return labels


def _dominated(labels: _Labels, group: np.ndarray, m: SlotModel) -> np.ndarray:
    """The labels another label dominates:

    - in the same state and position, at least its progress at most its cost;
    - an idle label, by any label at least as far at no more cost (from any state the
      relaunch the idle label must make is open, and continuing instead costs no more
      in that slot: the epochs it adds cost at most the overhead energy it saves);
    - with an overhead of at most a slot, any label, by one ahead by what one relaunch
      can lose (``delta / slot`` of a slot at top speed) and cheaper by what it can
      cost (``delta / slot`` of a slot's energy at the dearest power): relaunching onto
      the other's state, it is no worse after that slot, and then in the same state.
    """
    out = ~_pareto(group, labels.w, labels.cost)
    if m.delta <= 0:
        return out
    idle = labels.state < 0
    out |= idle & _beaten(labels.w, labels.cost, ~idle, 0.0, 0.0)
    if m.positions == 1:
        share = m.delta / m.slot
        lead, dearer = share * float(m.speed.max()), share * float(m.opower.max())
        out |= _beaten(labels.w, labels.cost, np.ones(len(idle), bool), lead, dearer)
    return out


def _beaten(
    w: np.ndarray, cost: np.ndarray, by: np.ndarray, lead: float, dearer: float
) -> np.ndarray:
    """Whether some label of ``by`` has at least ``lead`` more progress and costs at
    least ``dearer`` less (ties count; a label never beats itself unless both margins
    are 0, which callers avoid by ``by``)."""
    if not by.any():
        return np.zeros(len(w), dtype=bool)
    order = np.argsort(-w[by], kind="stable")
    ws, cheapest = w[by][order], np.minimum.accumulate(cost[by][order])
    # how many labels of ``by`` are at least ``lead`` ahead of each label
    ahead = np.searchsorted(-ws, -(w + lead), side="right")
    best = np.where(ahead > 0, cheapest[np.maximum(ahead - 1, 0)], np.inf)
    return best <= cost - dearer


def _path(
    history: list[_Labels], m: SlotModel, best: tuple[float, int, int, int]
) -> tuple[int, tuple[int, ...]]:
    """The schedule ending in ``best``: its first running slot and its choices."""
    _, i, parent, choice = best
    choices = [choice]
    for back in range(i, 0, -1):
        lab = history[back]
        choices.append(int(lab.via[parent]))
        parent = int(lab.parent[parent])
    choices.reverse()
    lead = next(n for n, c in enumerate(choices) if c >= 0)
    return m.first + lead, tuple(choices[lead:])
