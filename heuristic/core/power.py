"""What a policy may know of the nodes' power states where empty nodes are powered off
(docs/model.md, 'Nodes powered off when empty'): which nodes are booting, and for how
long yet, and which are off. The engine tells it at every decision
(:class:`heuristic.core.policy.SchedulerState`); a policy that wants placements to
prefer nodes already on sets it on its occupancy (:class:`Occupancy.power`), and the
best-fit search then breaks its ties by it. Absent (every node always on, or a policy
blind to it), no placement changes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

ON, BOOTING, OFF = 0, 1, 2


@dataclass(frozen=True)
class PowerStates:
    """The nodes not on now: ``booting`` (node -> hours until its boot ends; work placed
    there starts then) and ``off`` (work placed there waits a whole boot). Every other
    node is on: work placed there starts at once and keeps it on."""

    booting: Mapping[str, float] = field(default_factory=dict)
    off: frozenset[str] = frozenset()

    def rank(self, node: str) -> tuple[int, float]:
        """Smaller is readier: on, then booting (the sooner up first), then off."""
        if node in self.off:
            return (OFF, 0.0)
        wait = self.booting.get(node)
        return (ON, 0.0) if wait is None else (BOOTING, wait)

    def on(self, node: str) -> bool:
        return node not in self.off and node not in self.booting
