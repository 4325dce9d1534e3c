"""The event engine's node power states when empty nodes are powered off (docs/model.md,
'Nodes powered off when empty'): when work placed on a node may start, and the ledger
of the spells each node spent off and of its boots, which the evaluator's reading of the
realised plan must reproduce (a test).

A node is on while jobs hold it, and for ``d`` hours after the last one left (from its
completion, not its slot's end: the evaluator's busy set ends there); then it is off.
Work placed on an off node starts ``b`` hours later, rounded up to the slot grid, the
node booting for the ``b`` hours before (the engine knows at placement when the work
starts, so the boot is timed to end then); work placed on a node that is booting starts
when the boot ends. Every empty node of the placement whose empty spell up to the start
is longer than ``d + b`` boots (with a slot grid, a node still on when work spanning
nodes is placed may be so, the start delayed by another node's boot). A boot whose jobs
all leave before it ends is cancelled and not charged: the node stays off, as the
evaluator, which sees no work there, says.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from heuristic.core.power import PowerStates
from instances.power import PowerOff
from validation.timeline import TIME_TOL, slot_ceil


@dataclass
class NodeState:
    """One node: the jobs holding it, when it last went empty (0: nodes start on), the
    end of its boot under way, and its off spells ``[from, to)`` so far."""

    holders: set[str] = field(default_factory=set)
    empty_since: float = 0.0
    busy_end: float = 0.0  # the latest end of work on it (holders leave in any order)
    boot_end: float | None = None
    off: list[tuple[float, float]] = field(default_factory=list)


@dataclass(frozen=True)
class PowerLedger:
    """What a run's nodes did: each node's off spells (the last may run to ``inf``) and
    the times at which boots ended (the node's work started)."""

    off: dict[str, tuple[tuple[float, float], ...]]
    boots: dict[str, tuple[float, ...]]

    def powered_hours(self, node: str, horizon: float) -> float:
        """Hours the node was powered in ``[0, horizon)`` (``horizon``: the last
        completion, after which nothing is charged)."""
        off = sum(max(0.0, min(z, horizon) - max(a, 0.0)) for a, z in self.off[node])
        return horizon - off


class NodePower:
    """The engine's node power states under ``option``; slot-aligned starts when
    ``slot`` is given."""

    def __init__(self, option: PowerOff, nodes: list[str], slot: float | None) -> None:
        self.option = option
        self.slot = slot
        self.nodes = {n: NodeState() for n in nodes}

    def _is_off(self, state: NodeState, t: float) -> bool:
        return not state.holders and t > state.empty_since + self.option.after_h + TIME_TOL

    def _booting(self, state: NodeState, t: float) -> bool:
        """A boot is under way: it ends later than ``t``."""
        return state.boot_end is not None and state.boot_end > t + TIME_TOL

    def states(self, t: float) -> PowerStates:
        """What a policy deciding at ``t`` is told: the nodes booting (hours until up)
        and those off."""
        booting = {}
        off = []
        for n, state in self.nodes.items():
            if self._booting(state, t):
                assert state.boot_end is not None
                booting[n] = state.boot_end - t
            elif self._is_off(state, t):
                off.append(n)
        return PowerStates(booting, frozenset(off))

    def place(self, job: str, nodes: tuple[str, ...], t: float) -> float:
        """``job`` takes GPUs of ``nodes`` at ``t``; returns when its work starts: now if
        every node is on, when a boot under way ends, or a boot's time later."""
        start = t
        for n in nodes:
            state = self.nodes[n]
            if self._booting(state, t):
                assert state.boot_end is not None
                start = max(start, state.boot_end)
            elif self._is_off(state, t):
                start = max(start, slot_ceil(t + self.option.boot_h, self.slot))
        for n in nodes:
            state = self.nodes[n]
            # an empty node boots if its spell empty, up to the start, is longer than
            # d + b: an off one, and an on one whose start the slot grid put later
            spell = start - state.empty_since
            if (
                not state.holders
                and not self._booting(state, t)
                and spell > self.option.gap + TIME_TOL
            ):
                # off since d after it went empty, booting for the b hours before start
                state.off.append(
                    (state.empty_since + self.option.after_h, start - self.option.boot_h)
                )
                state.boot_end = start
            state.holders.add(job)
        return start

    def leave(self, job: str, nodes: tuple[str, ...], busy_until: float | None) -> None:
        """``job`` leaves ``nodes``, its work on them having ended at
        ``busy_until`` (its completion, or the time it left; ``None``: it left before its work
        started, waiting for a boot, and kept no node busy)."""
        for n in nodes:
            state = self.nodes[n]
            state.holders.discard(job)
            if busy_until is not None:
                state.busy_end = max(state.busy_end, busy_until)
            if state.holders:
                continue
            if state.boot_end is not None and state.busy_end < state.boot_end - TIME_TOL:
                # no work ran since the boot began: it was for nothing, cancelled, and the
                # node is still off (the evaluator sees no work there)
                state.off.pop()
                state.boot_end = None
            state.empty_since = state.busy_end

    def ledger(self) -> PowerLedger:
        """The off spells and boots of the run so far (a node empty now is off from
        ``d`` after it went empty, for ever)."""
        off = {}
        for n, state in self.nodes.items():
            spells = list(state.off)
            if not state.holders:
                spells.append((state.empty_since + self.option.after_h, float("inf")))
            off[n] = tuple(spells)
        boots = {n: tuple(z + self.option.boot_h for _, z in s.off) for n, s in self.nodes.items()}
        return PowerLedger(off, boots)
