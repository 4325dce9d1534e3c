"""Synergy (Mohan et al., OSDI 2022): CPU cores and host memory by each job's measured
sensitivity, not in proportion to its GPUs (docs/synergy.md; E3 in docs/model.md).

Every ``round_hours`` (Synergy's 300 s leases) the base policy orders the present jobs
(FIFO by arrival, or LAS by attained GPU-hours) and takes them while the cluster's GPUs
cover their requested counts (a job that does not fit lets later ones in); the GPU
count is the user's and never changes. Between rounds nothing moves. The selected jobs
then get CPU cores and DRAM by one of four allocations:

- ``proportional``: each job the node's GPU-proportional share, the fastest of its
  levels within ``floor(cores·g/G)`` cores and ``DRAM·g/G`` GB (Synergy's ``+fair``);
- ``greedy``: each job its best-case demand (its fastest level, the fewest cores and
  then the least DRAM among equals); a job whose demand fits no node waits, even with
  GPUs free (the fragmentation TUNE exists for);
- ``tune`` (Synergy's practical algorithm): the best-case demand; else, if that is
  above the proportional share, the proportional share; else, on the node with enough
  free GPUs and the fewest of them, peers above their proportional share are reverted
  to it (the most cores per GPU first, then the most DRAM per GPU) until the job fits
  at its share. At the proportional shares every node's jobs fit, so no job ever runs
  below its proportional throughput;
- ``opt``: Synergy's LP1, on HiGHS (``highspy``, silent): one level per job,
  maximising the total throughput normalised to the proportional share, within the
  free cores and DRAM of the whole cluster, no job below its share. Its levels are then
  placed as TUNE places demands (the authors' LP2 packing and rounding are replaced by
  TUNE's fallback, which keeps every job at or above its share).

Where we differ from the authors' code (``msr-fiddle/synergy``, ``resources/cluster.py``,
``schedulers/*_synergy_new.py``), and why:

- a job keeps its allocation from round to round where it is still valid, and a job
  below its best case is raised on its own GPUs only after the new jobs are placed and
  only if the time it saves, over its expected remaining epochs, beats its relaunch
  overhead: gpusched charges a relaunch (E1), Synergy's simulator does not, and a
  per-round reshuffle would pay it every 300 s;
- placement is the consolidated one (a node with the fewest free GPUs that holds the
  whole job), not ``SYNERGY_RANDOM``; a job is never split over servers (the Philly
  counts are at most one server's GPUs). Synergy re-places every job each lease and
  splits a job over servers at no cost, so no job of its round waits for where the free
  GPUs are; with ``repack`` (default) a job of the round whose GPU count is free in the
  cluster but on no one node gets a node by moving running jobs, the fewest relaunch
  GPU-hours first (:func:`~heuristic.seeds.synergy_place.repack`), and backfill jobs
  may revert peers as TUNE does;
- the proportional share is the job's node's own shape, not the cluster's average
  server, and levels are read as configurations with their own epoch times (exact, no
  two-level speed, no float lookups of grid points);
- no starvation override (a job waiting over 1,000 h): no run here lasts that long.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from heuristic.core.choice import first_placement, requested_configs
from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.options import CheckedOptions, positive_hours, require
from heuristic.core.policy import Decision, JobStatus, SchedulerState
from heuristic.seeds.synergy_levels import best_case, lp1_levels, proportional_config
from heuristic.seeds.synergy_place import (
    Round,
    on_node,
    put,
    repack,
    revert_peers,
    scattered,
)
from instances import Config, Instance

ROUND_HOURS = 300.0 / 3600.0  # Synergy's lease
AllocationMode = Literal["tune", "greedy", "proportional", "opt"]
Order = Literal["fifo", "las"]
ALLOCATIONS: tuple[str, ...] = typing.get_args(AllocationMode)
ORDERS: tuple[str, ...] = typing.get_args(Order)


@dataclass(frozen=True)
class SynergyOptions(CheckedOptions):
    """``allocation``: how CPU and memory are shared out (``tune``, Synergy's own;
    ``greedy``, ``proportional``, ``opt``); ``order``: which jobs a round serves first
    (arrival, or least attained service); ``round_hours``: the lease."""

    allocation: AllocationMode = "tune"
    order: Order = "fifo"
    round_hours: float = ROUND_HOURS
    repack: bool = True

    def ranges(self) -> None:
        require(
            self.allocation in ALLOCATIONS,
            "allocation",
            self.allocation,
            f"must be one of {ALLOCATIONS}",
        )
        require(self.order in ORDERS, "order", self.order, f"must be one of {ORDERS}")
        positive_hours("round_hours", self.round_hours)


class SynergyPolicy:
    name = "synergy"

    Options = SynergyOptions

    def __init__(self, options: SynergyOptions | None = None, *, seed: int = 0) -> None:
        self.options = o = options if options is not None else SynergyOptions()
        self.seed = seed
        self.allocation = o.allocation
        self.order = o.order
        self.round_hours = o.round_hours
        self.repack = o.repack
        self._instance: Instance | None = None
        self._next_round = -math.inf
        self._last_time = 0.0
        self._attained: dict[str, float] = {}  # GPU-hours run, for LAS

    def begin(self, instance: Instance) -> None:
        """A new run forgets the last one's rounds and attained service."""
        self._instance = None  # the next decision starts afresh

    def decide(self, state: SchedulerState) -> Decision:
        inst, now = state.instance, state.time
        # a new run (another instance, or the same one from an earlier time) forgets
        # the last: reused, the policy planned its first round from the last run's clock
        if self._instance is not inst or now < self._last_time:
            self._instance, self._next_round, self._attained = inst, -math.inf, {}
            self._last_time = now
        for s in state.jobs:
            if s.allocation is not None:
                gpus = len(s.allocation.gpus)
                self._attained[s.job.id] = self._attained.get(s.job.id, 0.0) + gpus * (
                    now - self._last_time
                )
        self._last_time = now
        if now < self._next_round - 1e-9:
            return Decision({}, wake_at=self._next_round)
        # rounds on a fixed grid: a round falls at every multiple of round_hours
        self._next_round = (math.floor(now / self.round_hours + 1e-9) + 1) * self.round_hours
        assign = self._round(inst, state.occupancy, list(state.jobs))
        return Decision(assign, wake_at=self._next_round if state.jobs else None)

    # -- one round ----------------------------------------------------------------------
    def _ordered(self, jobs: list[JobStatus]) -> list[JobStatus]:
        if self.order == "las":
            return sorted(
                jobs,
                key=lambda s: (self._attained.get(s.job.id, 0.0), s.job.release, s.job.id),
            )
        return sorted(jobs, key=lambda s: (s.job.release, s.job.id))

    def select(self, inst: Instance, jobs: list[JobStatus]) -> list[JobStatus]:
        """The jobs this round runs: in the base policy's order, while the cluster's
        GPUs cover their requested counts."""
        left = dict(inst.gpus_by_type)
        out = []
        for s in self._ordered(jobs):
            demand = best_case(inst, s.job)
            if demand is None or demand.gpus > left[demand.gpu_type]:
                continue
            left[demand.gpu_type] -= demand.gpus
            out.append(s)
        return out

    def _round(
        self, inst: Instance, occ: Occupancy, jobs: list[JobStatus]
    ) -> dict[str, Allocation | None]:
        running = {s.job.id: s.allocation for s in jobs}
        for s in jobs:
            if s.allocation is not None:
                occ.release(s.job.id)
        plain = [s for s in jobs if best_case(inst, s.job) is None]
        chosen = self.select(inst, jobs)
        picked = {s.job.id for s in chosen} | {s.job.id for s in plain}
        # the others, in order, backfill what the chosen leave (fragmentation can leave
        # GPUs that no chosen job can use): work-conserving
        rest = [s for s in self._ordered(jobs) if s.job.id not in picked]
        r = Round(inst, occ, {})
        targets = self._targets(inst, occ, chosen)
        for group, selected in ((chosen, True), (rest, False)):
            for s in self._keep(r, group, targets):
                target = targets.get(s.job.id) if selected else best_case(inst, s.job)
                r = self._start(r, s, target, selected=selected, running=running)
        for s in plain:
            _place_plain(r, s)
        if self.allocation in ("tune", "opt"):
            for s in chosen:
                self._raise(r, s, targets.get(s.job.id))
        return {
            s.job.id: r.placed.get(s.job.id) for s in jobs if r.placed.get(s.job.id) != s.allocation
        }

    def _keep(
        self, r: Round, group: list[JobStatus], targets: Mapping[str, Config]
    ) -> list[JobStatus]:
        """Place the group's jobs whose current allocation is still valid (no relaunch);
        return the others, in order."""
        new: list[JobStatus] = []
        for s in group:
            current = s.allocation
            if (
                current is not None
                and self._keeps(r.inst, s, current, targets)
                and r.occ.why_not(s.job, current) is None
            ):
                put(r, s.job, current)
            else:
                new.append(s)
        return new

    def _start(
        self,
        r: Round,
        s: JobStatus,
        target: Config | None,
        *,
        selected: bool,
        running: Mapping[str, Allocation | None],
    ) -> Round:
        """Place a job by the allocation rule; with ``repack``, a job of the round's
        selection that waits only because its GPUs are scattered over nodes gets them by
        moving running jobs (:func:`~heuristic.seeds.synergy_place.repack`). Returns the
        round, repacked or not."""
        alloc = self._place(r, s, target, revert=selected or self.repack)
        if alloc is not None:
            put(r, s.job, alloc)
            return r
        if selected and self.repack and scattered(r, s.job):
            moved = repack(r, s.job, running, lambda t: self._place(t, s, target, revert=True))
            if moved is not None:
                return moved
        return r

    def _keeps(
        self, inst: Instance, s: JobStatus, current: Allocation, targets: Mapping[str, Config]
    ) -> bool:
        """Whether the job's current allocation is one this allocation rule would give."""
        if not current.config.one_node:
            return False
        if self.allocation == "greedy":
            return current.config == best_case(inst, s.job)
        node = inst.node(current.gpus[0][0])
        prop = proportional_config(inst, s.job, node)
        if self.allocation == "proportional":
            return current.config == prop
        if self.allocation == "opt":
            return current.config == targets.get(s.job.id)
        # tune: any level at or above its share (raised later if worth it)
        return prop is not None and inst.epoch_time(s.job, current.config) <= inst.epoch_time(
            s.job, prop
        )

    def _targets(
        self, inst: Instance, occ: Occupancy, chosen: list[JobStatus]
    ) -> dict[str, Config]:
        """Each selected job's level to ask for: OPT's LP1 choice, else the best case
        (greedy, tune) or nothing (proportional, which asks per node)."""
        if self.allocation == "opt":
            return lp1_levels(inst, [s.job for s in chosen], occ, self._currents(chosen))
        if self.allocation == "proportional":
            return {}
        out = {}
        for s in chosen:
            demand = best_case(inst, s.job)
            if demand is not None:
                out[s.job.id] = demand
        return out

    @staticmethod
    def _currents(chosen: list[JobStatus]) -> dict[str, Config]:
        return {s.job.id: s.allocation.config for s in chosen if s.allocation is not None}

    def _place(
        self, r: Round, s: JobStatus, target: Config | None, *, revert: bool = True
    ) -> Allocation | None:
        """The job's allocation by the rule (reverting peers in ``r`` where TUNE does),
        not yet placed; ``None`` if it fits nowhere now."""
        job = s.job
        if self.allocation == "proportional":
            return on_node(r, job, lambda n: proportional_config(r.inst, job, n))
        if target is None:
            return None
        alloc = on_node(r, job, lambda n: target, target)
        if alloc is not None or self.allocation == "greedy":
            return alloc
        # (b) the proportional share, (c) reverting peers above theirs to make room
        alloc = on_node(r, job, lambda n: proportional_config(r.inst, job, n))
        if alloc is None and revert:
            alloc = revert_peers(r, job)
        return alloc

    def _raise(self, r: Round, s: JobStatus, target: Config | None) -> None:
        """A placed job below its target is raised on its own GPUs if its node has the
        cores and DRAM now and the time saved beats the relaunch."""
        alloc = r.placed.get(s.job.id)
        if alloc is None or target is None or alloc.config == target:
            return
        inst = r.inst
        now_tau, new_tau = inst.epoch_time(s.job, alloc.config), inst.epoch_time(s.job, target)
        remaining = s.job.distribution.conditional(s.progress).mean()
        if remaining * (now_tau - new_tau) <= inst.relaunch(s.job) + 1e-12:
            return
        r.occ.release(s.job.id)
        raised = Allocation(target, alloc.gpus)
        if r.occ.why_not(s.job, raised) is None:
            r.occ.place(s.job, raised)
            r.placed[s.job.id] = raised
        else:
            r.occ.place(s.job, alloc)


def _place_plain(r: Round, s: JobStatus) -> None:
    """A job with no one-node level of its requested size (only shared slots, or whole
    nodes): Synergy has no rule for it, so it runs as ``static`` runs it, last."""
    if s.allocation is not None and r.occ.why_not(s.job, s.allocation) is None:
        put(r, s.job, s.allocation)
        return
    put(r, s.job, first_placement(r.occ, s.job, requested_configs(r.inst, s.job)))
