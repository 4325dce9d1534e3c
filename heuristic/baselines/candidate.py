"""A candidate decision of the search baselines (RG, PR) and its worst-case cost.

A candidate is an order of the waiting jobs and, for each, a preferred configuration.
:func:`decode` turns it into placements deterministically: jobs in order, each on its
preferred configuration best-fit, else on the cheapest (worst case) configuration that
still fits, else it waits. Running jobs keep their allocations.

The cost is the search's own criterion, the worst-case deterministic cost of Filippini
et al.: energy of all remaining epochs plus tardiness if each placed job runs to its
maximum on the chosen configuration; a waiting job is charged as if it started, on its
cheapest configuration, when the first GPUs free up (the earliest end of the running and
placed jobs' worst-case epochs; their relaunch overheads are left out, as a review of
2026-12-07 noted: kept, RG's and PR's figures were made with it). It is not a reported
figure: reports come from validation.evaluate.
"""

from __future__ import annotations

from dataclasses import dataclass

from heuristic.core.choice import first_placement, ranked_configs, worst_case_cost
from heuristic.core.occupancy import Allocation
from heuristic.core.policy import JobStatus, SchedulerState
from instances import Config


@dataclass(frozen=True)
class Candidate:
    order: tuple[str, ...]  # waiting job ids, in placement order
    choice: tuple[tuple[str, Config], ...]  # (job id, preferred config), sorted by job id

    def preferred(self) -> dict[str, Config]:
        return dict(self.choice)


@dataclass(frozen=True)
class Decoded:
    candidate: Candidate
    assign: dict[str, Allocation]  # placed waiting jobs
    cost: float


class Search:
    """Decoding and costing at one decision point (caches the ranked configurations)."""

    def __init__(self, state: SchedulerState) -> None:
        self.state = state
        inst, now = state.instance, state.time
        self.waiting: dict[str, JobStatus] = {
            s.job.id: s for s in state.jobs if s.allocation is None
        }
        self.ranked: dict[str, list[Config]] = {
            j: ranked_configs(inst, s.job, s.remaining, now) for j, s in self.waiting.items()
        }
        # worst-case end of each running job: when its GPUs free up at the latest
        self.running_ends = [
            now + s.remaining * inst.epoch_time(s.job, s.allocation.config)
            for s in state.jobs
            if s.allocation is not None
        ]
        self._memo: dict[Candidate, Decoded] = {}

    def job_cost(self, job_id: str, cfg: Config, start: float) -> float:
        s = self.waiting[job_id]
        return worst_case_cost(self.state.instance, s.job, cfg, s.remaining, start)

    def decode(self, cand: Candidate) -> Decoded:
        hit = self._memo.get(cand)
        if hit is not None:
            return hit
        inst, now = self.state.instance, self.state.time
        occ = self.state.occupancy.copy()
        pref = cand.preferred()
        assign: dict[str, Allocation] = {}
        cost = 0.0
        ends = list(self.running_ends)
        for job_id in cand.order:
            job = self.waiting[job_id].job
            alloc = first_placement(occ, job, [pref[job_id], *self.ranked[job_id]])
            if alloc is None:
                continue
            occ.place(job, alloc)
            assign[job_id] = alloc
            cost += self.job_cost(job_id, alloc.config, now)
            tau = inst.epoch_time(job, alloc.config)
            ends.append(now + self.waiting[job_id].remaining * tau)
        free_at = min(ends, default=now)
        for job_id in cand.order:
            if job_id not in assign:
                cost += min(self.job_cost(job_id, c, free_at) for c in self.ranked[job_id])
        out = Decoded(cand, assign, cost)
        self._memo[cand] = out
        return out

    def candidate(self, order: list[str], pref: dict[str, Config]) -> Candidate:
        return Candidate(tuple(order), tuple(sorted(pref.items())))
