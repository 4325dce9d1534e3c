"""PR: path relinking between elite randomised-greedy solutions, then a local search
(Filippini et al., IEEE TSC 2022).

Kept from the published method: the elite set is the best distinct RG solutions of the
decision point; for each ordered pair (initiating, guiding) the path moves the
initiating solution towards the guiding one, one job's configuration (then the order)
at a time, always taking the best move by worst-case deterministic cost; the best
solution seen on any path goes through a first-improvement local search over single-job
configuration changes and swaps of neighbours in the order.

Adapted: moves act on the candidate (order + preferred configurations) and are decoded
by the same best-fit rule as RG; running jobs keep their allocations (see
:mod:`heuristic.baselines.rg`). Paths and the local search are bounded (``max_moves``) so that one
decision stays cheap on a busy cluster.
"""

from __future__ import annotations

from dataclasses import dataclass

from heuristic.baselines.candidate import Candidate, Decoded, Search
from heuristic.baselines.rg import RgOptions, RgPolicy
from heuristic.core.options import require


@dataclass(frozen=True)
class PrOptions(RgOptions):
    """RG's options, plus ``elite``: the best distinct RG solutions relinked, and
    ``max_moves``: decodes allowed per path and per local search."""

    elite: int = 4
    max_moves: int = 200

    def ranges(self) -> None:
        super().ranges()
        require(self.elite >= 1, "elite", self.elite, "must be at least 1")
        require(self.max_moves >= 1, "max_moves", self.max_moves, "must be at least 1")


class PrPolicy(RgPolicy):
    name = "pr"
    Options = PrOptions
    options: PrOptions

    def __init__(self, options: PrOptions | None = None, *, seed: int = 0) -> None:
        super().__init__(options, seed=seed)
        self.elite = self.options.elite
        self.max_moves = self.options.max_moves

    def improve(self, search: Search, ranked: list[Decoded]) -> Decoded:
        elite = ranked[: self.elite]
        best = elite[0]
        for a in elite:
            for b in elite:
                if a is not b:
                    best = min(best, self.relink(search, a, b), key=lambda d: d.cost)
        return self.local_search(search, best)

    def relink(self, search: Search, start: Decoded, guide: Decoded) -> Decoded:
        """Walk from ``start`` to ``guide``; the best solution met on the way."""
        cur = start.candidate
        target = guide.candidate.preferred()
        best = start
        budget = self.max_moves
        while budget > 0:
            pref = cur.preferred()
            moves = [
                search.candidate(list(cur.order), {**pref, j: c})
                for j, c in target.items()
                if pref[j] != c
            ]
            if cur.order != guide.candidate.order:
                moves.append(Candidate(guide.candidate.order, cur.choice))
            if not moves:
                break
            budget -= len(moves)
            step = min((search.decode(m) for m in moves), key=lambda d: (d.cost, d.candidate.order))
            cur = step.candidate
            if step.cost < best.cost - 1e-12:
                best = step
        return best

    def local_search(self, search: Search, sol: Decoded) -> Decoded:
        """First improvement over one job's configuration, or two neighbours swapped."""
        budget = self.max_moves
        improved = True
        while improved and budget > 0:
            improved = False
            for move in self.neighbours(search, sol.candidate):
                budget -= 1
                d = search.decode(move)
                if d.cost < sol.cost - 1e-12:
                    sol, improved = d, True
                    break
                if budget <= 0:
                    break
        return sol

    @staticmethod
    def neighbours(search: Search, cand: Candidate) -> list[Candidate]:
        pref = cand.preferred()
        out = [
            search.candidate(list(cand.order), {**pref, j: c})
            for j in cand.order
            for c in search.ranked[j]
            if c != pref[j]
        ]
        order = list(cand.order)
        for i in range(len(order) - 1):
            swapped = [*order[:i], order[i + 1], order[i], *order[i + 2 :]]
            out.append(Candidate(tuple(swapped), cand.choice))
        return out
