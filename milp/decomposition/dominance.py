"""Labels of the pricing program and the dominance among them
(:mod:`milp.decomposition.pricing` states the rules and why they lose nothing)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from milp.decomposition.stack import Stack


@dataclass
class Labels:
    """Labels at the start of a slot: each one's job (in the stack), progress, cost,
    state and position, and how it came there: ``parent``, its index among the labels
    of the slot before, and ``via``, the global choice it took (-1: idle)."""

    job: np.ndarray
    w: np.ndarray
    cost: np.ndarray
    state: np.ndarray
    pos: np.ndarray
    parent: np.ndarray
    via: np.ndarray

    def take(self, keep: np.ndarray) -> Labels:
        return Labels(*(a[keep] for a in self._parts()))

    def _parts(self) -> tuple[np.ndarray, ...]:
        return (self.job, self.w, self.cost, self.state, self.pos, self.parent, self.via)

    @staticmethod
    def join(a: Labels, b: Labels) -> Labels:
        pairs = zip(a._parts(), b._parts(), strict=True)
        return Labels(*(np.concatenate([x, y]) for x, y in pairs))


def pareto(group: np.ndarray, w: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """Within each group, the labels no other label of the group dominates (at least the
    progress at most the cost; of equal labels, the first)."""
    n = len(w)
    if n == 0:
        return np.zeros(0, dtype=bool)
    order = np.argsort(cost, kind="stable")
    order = by_job(group, order[np.argsort(-w[order], kind="stable")])
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


def dominated(labels: Labels, group: np.ndarray, stack: Stack, i: int) -> np.ndarray:
    """The labels (at the start of window slot ``i`` of their jobs) another label of
    their job dominates:

    - in the same state and position, at least its progress at most its cost;
    - an idle label, by any label at least as far at no more cost (from any state the
      relaunch the idle label must make is open, and continuing instead costs no more
      in that slot: the epochs it adds cost at most the overhead energy it saves);
    - with an overhead of at most a slot, any label, by one ahead by what one relaunch
      can lose (``delta / slot`` of a slot at top speed) and cheaper by what it can
      cost (``delta / slot`` of a slot's energy at the dearest power, in slot ``i``):
      relaunching onto the other's state in slot ``i``, it is no worse after that slot,
      and then in the same state.

    With prices that change by the slot each rule still holds, because a kWh's price
    is never negative (the series refuse negative values) and every comparison is made
    within one slot: the same continuation runs the same slots at the same prices, so
    later epochs (of no higher survival) cost no more; the epochs continuing adds and
    the overhead energy it saves are paid in the same slot, at its price; and the
    relaunch the margin pays for is made in slot ``i``, so the dearest power at slot
    ``i``'s price bounds it (:meth:`Stack.dearest_slot`).
    """
    out = ~pareto(group, labels.w, labels.cost)
    has = stack.delta[labels.job] > 0
    if not has.any():
        return out
    idle = labels.state < 0
    zero = np.zeros(len(idle))
    out |= idle & has & beaten(labels, ~idle & has, zero, zero)
    one = has & (stack.positions[labels.job] == 1)
    if one.any():
        share = stack.delta[labels.job] / stack.slot
        lead = share * stack.top[labels.job]
        dearer = share * stack.dearest_slot(i, labels.job)
        out |= one & beaten(labels, one, lead, dearer)
    return out


def beaten(labels: Labels, by: np.ndarray, lead: np.ndarray, dearer: np.ndarray) -> np.ndarray:
    """Whether some label of ``by`` of the same job has at least ``lead`` more progress
    and costs at least ``dearer`` less (ties count; a label never beats itself unless
    both margins are 0, which callers avoid by ``by``)."""
    n = len(labels.w)
    if not by.any():
        return np.zeros(n, dtype=bool)
    b = np.flatnonzero(by)
    # the labels of ``by`` and the queries (at their progress plus ``lead``) by job,
    # then furthest first, a query after the labels as far (they come first, and the
    # sorts are stable): those before a query in its job are the labels ahead of it
    job = np.concatenate([labels.job[b], labels.job])
    order = by_job(job, np.argsort(-np.concatenate([labels.w[b], labels.w + lead]), kind="stable"))
    sj = job[order]
    gid = np.zeros(len(order))
    np.cumsum(sj[1:] != sj[:-1], out=gid[1:])
    # shifted down by job, so that a running minimum carried from an earlier job is
    # above every cost once shifted back
    spread = 2.0 * (float(labels.cost.max()) - float(labels.cost.min())) + 1.0
    v = np.concatenate([labels.cost[b], np.full(n, np.inf)])[order] - gid * spread
    best = np.minimum.accumulate(v) + gid * spread
    at = np.empty(len(order), dtype=np.int64)
    at[order] = np.arange(len(order))
    return best[at[len(b) :]] <= labels.cost - dearer


def by_job(group: np.ndarray, order: np.ndarray) -> np.ndarray:
    """``order`` sorted again, stably, by ``group`` (the order within a group kept).
    Groups that fit in 16 bits are sorted as such: a stable sort of 16-bit integers is
    a radix sort, several times faster than sorting a compound key."""
    g = group[order]
    if len(g) and g.min() >= -(2**15) and g.max() < 2**15:
        g = g.astype(np.int16)
    return order[np.argsort(g, kind="stable")]
