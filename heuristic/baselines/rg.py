"""RG: randomised greedy with many seeded starts (Filippini et al., IEEE TSC 2022).

Kept from the published method: at each rescheduling point, many randomised greedy
constructions; jobs taken by pressure (least slack first) with random perturbation of
the order; for each job a configuration drawn at random with a bias towards the cheapest
in the worst case; the best construction kept by its worst-case deterministic cost
(energy of all remaining epochs + tardiness, :mod:`heuristic.baselines.candidate`).

Adapted: running jobs keep their allocation (no preemption or migration), as in the
other fixed-configuration baselines, so RG differs from EDF only in how it chooses for
waiting jobs; nodes are chosen best-fit rather than by the paper's node-cost rule (our
nodes of one type cost the same per GPU). Same seed, same decisions: each decision
point draws from a generator seeded by (seed, decision index).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from heuristic.baselines.candidate import Candidate, Decoded, Search
from heuristic.core.options import CheckedOptions, require
from heuristic.core.policy import Decision, SchedulerState
from heuristic.core.urgency import slack
from instances import Config, Instance

MAX_STARTS = 10_000  # randomised constructions per decision point (30 by default)


@dataclass(frozen=True)
class RgOptions(CheckedOptions):
    """``starts``: randomised constructions per decision point; ``swap``: probability of
    swapping two neighbours in the pressure order; ``bias``: probability of passing over
    a configuration to the next cheapest."""

    starts: int = 30
    swap: float = 0.3
    bias: float = 0.4

    def ranges(self) -> None:
        # each start is a construction per decision point: 1e9 never finished
        require(
            1 <= self.starts <= MAX_STARTS, "starts", self.starts, f"must be 1 to {MAX_STARTS:,}"
        )
        for name in ("swap", "bias"):
            value = getattr(self, name)
            require(0 <= value <= 1, name, value, "must be a probability in [0, 1]")


class RgPolicy:
    name = "rg"
    Options: type[RgOptions] = RgOptions

    def __init__(self, options: RgOptions | None = None, *, seed: int = 0) -> None:
        self.options = options if options is not None else self.Options()
        self.seed = seed
        o = self.options
        self.starts, self.swap, self.bias = o.starts, o.swap, o.bias
        self._calls = 0

    def begin(self, instance: Instance) -> None:
        """A new run draws its starts afresh: the same streams as a new policy's."""
        self._calls = 0

    def rng(self) -> np.random.Generator:
        self._calls += 1
        return np.random.default_rng((self.seed, self._calls))

    def pressure_order(self, search: Search) -> list[str]:
        st = search.state
        return sorted(
            search.waiting,
            key=lambda j: (slack(st.instance, search.waiting[j], st.time), j),
        )

    def construct(self, search: Search, rng: np.random.Generator) -> Candidate:
        order = self.pressure_order(search)
        for i in range(len(order) - 1):
            if rng.random() < self.swap:
                order[i], order[i + 1] = order[i + 1], order[i]
        pref: dict[str, Config] = {}
        for j in order:
            ranked = search.ranked[j]
            k = 0
            while k + 1 < len(ranked) and rng.random() < self.bias:
                k += 1
            pref[j] = ranked[k]
        return search.candidate(order, pref)

    def greedy(self, search: Search) -> Candidate:
        """The deterministic start: pressure order, cheapest configurations."""
        order = self.pressure_order(search)
        return search.candidate(order, {j: search.ranked[j][0] for j in order})

    def solutions(self, search: Search) -> list[Decoded]:
        """The deterministic greedy and the randomised starts, best (lowest cost) first."""
        rng = self.rng()
        cands = [self.greedy(search)] + [self.construct(search, rng) for _ in range(self.starts)]
        decoded = {c: search.decode(c) for c in cands}
        return sorted(decoded.values(), key=lambda d: (d.cost, d.candidate.order))

    def decide(self, state: SchedulerState) -> Decision:
        search = Search(state)
        if not search.waiting:
            return Decision()
        best = self.improve(search, self.solutions(search))
        return Decision(dict(best.assign))

    def improve(self, search: Search, ranked: list[Decoded]) -> Decoded:
        """RG keeps its best start; PR overrides this with relinking and local search."""
        return ranked[0]
