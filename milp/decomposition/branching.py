"""Branching that keeps pricing a per-job dynamic program.

A decision fixes how much a job uses a set of its choices in one slot: ``use(j, S, t)
= sum over j's columns running a choice of S in slot t`` is 0 or 1. At 0, the choices
of ``S`` cost an infinite price in slot ``t``; at 1, every other choice does, and the
job must run in slot ``t`` (no idle slot there, no completion before it). Both are
rules on single slots of one job's schedule, so the pricing stays the label-setting
program of :mod:`milp.decomposition.pricing`.

Sets are taken coarse first: all choices of one configuration, then of one
configuration on one node (or node set), then one choice (a shared label). If every
such use is 0 or 1 for every job and slot, all the columns a job uses run the same
choice in every slot, so they are one schedule per job.

The shared labels' ``y`` may still be fractional then, and the schedules not fit with
whole GPUs in shared mode. A label decision fixes ``y[n,u,t]``: at 1 in the master
(the Lagrangian counts it there), or at 0, where no job may be a tenant of that label
in that slot (an infinite price on those choices, again a rule on one slot).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from milp.decomposition.columns import Column
from milp.decomposition.slots import SlotModel
from milp.decomposition.space import Choice, Space

FRACTIONAL = 1e-6  # a use further than this from 0 and 1 is fractional


@dataclass(frozen=True)
class Decision:
    """Job ``job`` uses the choices ``choices`` in slot ``slot``: ``on`` (1) or not (0)."""

    job: int
    slot: int
    choices: frozenset[int]
    on: bool

    def allows(self, col: Column, space: Space) -> bool:
        """Whether a column meets the decision (columns of other jobs always do)."""
        if col.job != self.job:
            return True
        i = self.slot - col.start
        uses = 0 <= i < len(col.choices) and col.choices[i] in self.choices
        return uses == self.on


@dataclass(frozen=True)
class LabelDecision:
    """Shared label ``label`` (index in ``Space.labels``) is in shared mode in slot
    ``slot`` (``on``: ``y = 1``) or hosts no tenant there (``y = 0``)."""

    label: int
    slot: int
    on: bool

    def allows(self, col: Column, space: Space) -> bool:
        if self.on:
            return True
        return not any(c in _tenancies(space, col.job, self.label) for c in col.at(self.slot))


def _tenancies(space: Space, job: int, label: int) -> set[int]:
    """The job's choices that are tenancies of ``label``."""
    node, u, *_ = space.labels[label]
    js = space.jobs[job]
    return {c for c, ch in enumerate(js.choices) if ch.label == u and ch.nodes[0] == node}


Rule = Decision | LabelDecision


def restrict(
    space: Space, m: SlotModel, job: int, price: np.ndarray, decisions: tuple[Rule, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """The job's prices (choices x window slots) with the decisions' forbidden choices
    at infinity, and the window slots it must run in."""
    must = np.zeros(price.shape[1], dtype=bool)
    if not decisions:
        return price, must
    price = price.copy()
    for d in decisions:
        i = d.slot - m.first
        if not 0 <= i < price.shape[1]:
            continue  # a slot outside the window: no schedule runs there anyway
        if isinstance(d, LabelDecision):
            if not d.on:
                price[sorted(_tenancies(space, job, d.label)), i] = np.inf
            continue
        if d.job != job:
            continue
        chosen = np.zeros(price.shape[0], dtype=bool)
        chosen[list(d.choices)] = True
        price[chosen != d.on, i] = np.inf
        must[i] |= d.on
    return price, must


def impossible(m: SlotModel, job: int, decisions: tuple[Rule, ...]) -> bool:
    """Whether a decision makes the job run outside its window (no schedule can)."""
    return any(
        isinstance(d, Decision) and d.job == job and d.on and not m.first <= d.slot <= m.last
        for d in decisions
    )


def choose(space: Space, columns: list[Column], x: np.ndarray) -> Decision | None:
    """The decision to branch on at a master solution (columns and their values): the
    use furthest from 0 and 1 among configurations, else among placements, else among
    choices; earliest slot first on ties. ``None``: every use is 0 or 1."""
    for level in (_by_config, _by_place, _by_choice):
        use: dict[tuple[int, int, tuple], float] = {}
        for col, v in zip(columns, x, strict=True):
            if v <= FRACTIONAL:
                continue
            js = space.jobs[col.job]
            for t, c in col.slots():
                key = level(js.choices[c], c)
                use[col.job, t, key] = use.get((col.job, t, key), 0.0) + v
        best = None
        for (j, t, key), v in use.items():
            if FRACTIONAL < v < 1 - FRACTIONAL:
                rank = (abs(v - 0.5), t, j)
                if best is None or rank < best[0]:
                    best = (rank, j, t, key)
        if best is not None:
            _, j, t, key = best
            js = space.jobs[j]
            members = {c for c, ch in enumerate(js.choices) if level(ch, c) == key}
            return Decision(j, t, frozenset(members), True)
    return None


def choose_label(
    y: dict[tuple[int, int], float], space: Space, crowded: set[tuple[str, int]]
) -> LabelDecision | None:
    """A label decision where the schedules are settled but whole GPUs in shared mode do
    not fit on a node: the fractional ``y`` of a crowded (node, slot) furthest from 0
    and 1, earliest slot first (``None``: there is none)."""
    best = None
    for (label, t), v in y.items():
        if (space.labels[label][0], t) in crowded and FRACTIONAL < v < 1 - FRACTIONAL:
            rank = (abs(v - 0.5), t, label)
            if best is None or rank < best[0]:
                best = (rank, label, t)
    return None if best is None else LabelDecision(best[1], best[2], True)


def _by_config(ch: Choice, c: int) -> tuple:
    return (ch.k,)


def _by_place(ch: Choice, c: int) -> tuple:
    return (ch.k, ch.nodes)


def _by_choice(ch: Choice, c: int) -> tuple:
    return (c,)
