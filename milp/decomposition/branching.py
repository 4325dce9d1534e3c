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
choice in every slot, so they are one schedule per job; the master's link rows then
hold every used label's ``y`` at 1 (:mod:`milp.decomposition.space`), so the schedules
fit with whole GPUs in shared mode: the solution is a plan.

**Orbital branching on shared labels** (Ostrowski, Linderoth, Rossi and Smriglio,
Mathematical Programming 2011). A node's shared labels are alike: relabelling them
consistently over all slots maps every plan to a plan of the same cost (the master's
rows are the same for each label). Branching on one label of a job in one slot left
a child that moved the tenant to another label at the same bound, so hundreds of nodes
kept the root's bound. Instead the second child forbids the job in that slot every
label of the *orbit* of the chosen one: the labels of its node that no decision of the
node tells apart (each decision holds all of them or none). Valid: a plan of the node
that runs the job on some label of the orbit in that slot is, relabelled by a
permutation of the orbit (which maps the node's decisions onto themselves), a plan of
the first child of the same cost; every other plan is in the second. A plan cheaper
than the incumbent avoids the arcs reduced-cost fixing removed (:mod:`fixing`), and
so does its relabelled copy, which costs the same.
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

    def allows(self, col: Column) -> bool:
        """Whether a column meets the decision (columns of other jobs always do)."""
        if col.job != self.job:
            return True
        i = self.slot - col.start
        uses = 0 <= i < len(col.choices) and col.choices[i] in self.choices
        return uses == self.on


def restrict(
    m: SlotModel, job: int, price: np.ndarray, decisions: tuple[Decision, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """The job's prices (choices x window slots) with the decisions' forbidden choices
    at infinity, and the window slots it must run in."""
    must = np.zeros(price.shape[1], dtype=bool)
    mine = [d for d in decisions if d.job == job]
    if not mine:
        return price, must
    price = price.copy()
    for d in mine:
        i = d.slot - m.first
        if not 0 <= i < price.shape[1]:
            continue  # a slot outside the window: no schedule runs there anyway
        chosen = np.zeros(price.shape[0], dtype=bool)
        chosen[list(d.choices)] = True
        price[chosen != d.on, i] = np.inf
        must[i] |= d.on
    return price, must


def impossible(m: SlotModel, job: int, decisions: tuple[Decision, ...]) -> bool:
    """Whether a decision makes the job run outside its window (no schedule can)."""
    return any(d.job == job and d.on and not m.first <= d.slot <= m.last for d in decisions)


def choose(space: Space, columns: list[Column], x: np.ndarray) -> Decision | None:
    """The decision to branch on at a master solution (columns and their values): the
    fractional use of a job running at all in a slot, else of a configuration, else of
    a placement, furthest from 0 and 1 (earliest slot on ties), else of a choice,
    earliest slot first. Shared labels of one node are alike: among choices the search
    settles slot after slot, and the second child forbids the label's whole orbit
    (:func:`other_side`). ``None``: every use is 0 or 1."""
    for level in (_by_running, _by_config, _by_place, _by_choice):
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
                far = abs(v - 0.5)
                rank = (t, far, j) if level is _by_choice else (far, t, j)
                if best is None or rank < best[0]:
                    best = (rank, j, t, key)
        if best is not None:
            _, j, t, key = best
            js = space.jobs[j]
            members = {c for c, ch in enumerate(js.choices) if level(ch, c) == key}
            return Decision(j, t, frozenset(members), True)
    return None


def other_side(space: Space, decision: Decision, decisions: tuple[Decision, ...]) -> Decision:
    """The second child's decision beside ``decision`` (an ``on`` decision of the node
    whose ``decisions`` are given): off the same choices, or, for a single shared label,
    off every label of its orbit (see the module's docstring)."""
    js = space.jobs[decision.job]
    if len(decision.choices) != 1:
        return Decision(decision.job, decision.slot, decision.choices, False)
    (c,) = decision.choices
    ch = js.choices[c]
    if ch.label < 0:
        return Decision(decision.job, decision.slot, decision.choices, False)
    node = ch.nodes[0]
    marks = [_labels_of(space, d, node) for d in decisions]
    sign = tuple(ch.label in m for m in marks)
    orbit = {
        o
        for o, other in enumerate(js.choices)
        if other.k == ch.k
        and other.nodes == ch.nodes
        and other.label >= 0
        and tuple(other.label in m for m in marks) == sign
    }
    return Decision(decision.job, decision.slot, frozenset(orbit), False)


def _labels_of(space: Space, decision: Decision, node: str) -> frozenset[int]:
    """The shared labels of ``node`` among a decision's choices."""
    js = space.jobs[decision.job]
    return frozenset(
        js.choices[c].label
        for c in decision.choices
        if js.choices[c].label >= 0 and js.choices[c].nodes[0] == node
    )


def _by_running(ch: Choice, c: int) -> tuple:
    return ()


def _by_config(ch: Choice, c: int) -> tuple:
    return (ch.k,)


def _by_place(ch: Choice, c: int) -> tuple:
    return (ch.k, ch.nodes)


def _by_choice(ch: Choice, c: int) -> tuple:
    return (c,)
