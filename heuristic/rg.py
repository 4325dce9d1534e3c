"""RG: randomised greedy with many seeded starts (Filippini et al., IEEE TSC 2022).

Kept from the published method: at each rescheduling point, many randomised greedy
constructions; jobs taken by pressure (least slack first) with random perturbation of
the order; for each job a configuration drawn at random with a bias towards the cheapest
in the worst case; the best construction kept by its worst-case deterministic cost
(energy of all remaining epochs + tardiness, :mod:`heuristic.candidate`).

Adapted: running jobs keep their allocation (no preemption or migration), as in the
other fixed-configuration baselines, so RG differs from EDF only in how it chooses for
waiting jobs; nodes are chosen best-fit rather than by the paper's node-cost rule (our
nodes of one type cost the same per GPU). Same seed, same decisions: each decision
point draws from a generator seeded by (seed, decision index).
"""

from __future__ import annotations

import numpy as np

from heuristic.candidate import Candidate, Decoded, Search
from heuristic.policy import Decision, SchedulerState
from heuristic.sts import slack
from instances import Config


class RgPolicy:
    name = "rg"

    def __init__(self, seed: int = 0, *, starts: int = 30, swap: float = 0.3, bias: float = 0.4):
        self.seed = seed
        self.starts = starts  # randomised constructions per decision point
        self.swap = swap  # probability of swapping two neighbours in the pressure order
        self.bias = bias  # P(pass over a configuration to the next cheapest)
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
