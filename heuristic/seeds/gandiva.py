"""``gandiva``: Gandiva (Xiao et al., OSDI 2018) on gpusched's model.

Gandiva runs each job on the GPUs its user asked for and reacts to over-subscription with
cheap mechanisms instead of queueing (docs/gandiva.md says what is kept and adapted):

- **Node allocation by affinity** (the paper's Algorithm 1). A node's affinity is the
  GPU count of the jobs it hosts (0 while empty). A job of ``g`` GPUs goes to the least
  loaded node of affinity ``g`` with ``g`` free GPUs; else to an empty node; else to any
  node with ``g`` free GPUs (best fit); else it is over-subscribed onto the least loaded
  node of affinity ``g``; else it waits. Keeping one size per node limits fragmentation.
- **Time-slicing.** An over-subscribed job joins a group of jobs of its size that take
  turns on one set of GPUs, round robin, every ``quantum`` hours (60 s by default).
  Turning is a suspend and a resume on the same GPUs: it pays the instance's suspend
  overhead (``suspend_hours``; the relaunch overhead where there is none). A resume
  longer than half a quantum lengthens the turn (:meth:`GandivaPolicy.turn`).
- **Packing.** Rather than time-slice two one-GPU jobs, Gandiva runs them together on one
  GPU when their normalised throughputs add up to more than 1 (each packed throughput
  over its throughput alone). The pair's measured ratios come from Gavel's co-location
  table where both jobs are Gavel types, else from each job's own sharing factor. A pack
  is formed only where it beats time-slicing, and never otherwise; packing is the
  model's shared configuration (docs/model.md), so the simulated speed is the job's own
  factor (pair-dependent speeds are extension E5).
- **Migration.** Time-sliced jobs move to GPUs that free up; and a job of several GPUs
  that finds no node with room, while its GPU type has room in total, first moves the
  one-node jobs of the node closest to fitting it onto other nodes (defragmentation).
- **Grow-shrink.** While no job waits and nothing is time-sliced, a running job grows to
  a larger configuration on its node's idle GPUs when the time it saves (expected
  remaining epochs) exceeds its relaunch overhead; grown jobs shrink back to their
  requested size as soon as a job waits.

Every move (a pack, a migration, a grow or a shrink) is a new placement and pays the
job's relaunch overhead, as the engine charges it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.options import CheckedOptions, positive_hours
from heuristic.core.policy import Decision, JobStatus, SchedulerState
from heuristic.seeds.gandiva_moves import Now, grow_idle, own_configs, shrink, unpack_lone
from instances import Config, GpuRef, Instance, Job, Node
from instances.generators.realdata import gavel_pair_ratios

QUANTUM_HOURS = 1.0 / 60.0  # Gandiva's time slice: 60 s


@dataclass
class _Group:
    """Jobs taking turns on one allocation; ``jobs[0]`` holds it now."""

    alloc: Allocation
    jobs: list[str] = field(default_factory=list)


def pair_ratios(inst: Instance, a: Job, b: Job, gpu_type: str) -> tuple[float, float] | None:
    """Each job's throughput packed with the other on one ``gpu_type`` GPU over its
    throughput alone: Gavel's measured pair where both are Gavel types, else each job's
    own sharing factor. ``None`` where either has no shared configuration there."""
    pairs = []
    for j in (a, b):
        shared = inst.config_of_shape(j, gpu_type, shared=True)
        alone = inst.config_of_shape(j, gpu_type)
        if shared is None or alone is None:
            return None
        pairs.append((alone, shared))
    if a.job_type and b.job_type:
        measured = gavel_pair_ratios().get((a.job_type, b.job_type, gpu_type))
        if measured is not None:
            return measured
    (alone_a, shared_a), (alone_b, shared_b) = pairs
    return (
        inst.epoch_time(a, alone_a) / inst.epoch_time(a, shared_a),
        inst.epoch_time(b, alone_b) / inst.epoch_time(b, shared_b),
    )


@dataclass(frozen=True)
class GandivaOptions(CheckedOptions):
    """``quantum_hours``: the time slice; ``packing``, ``grow``, ``migrate``: Gandiva's
    mechanisms, each of which can be switched off."""

    quantum_hours: float = QUANTUM_HOURS
    packing: bool = True
    grow: bool = True
    migrate: bool = True

    def ranges(self) -> None:
        positive_hours("quantum_hours", self.quantum_hours)


class GandivaPolicy:
    name = "gandiva"

    Options = GandivaOptions

    def __init__(self, options: GandivaOptions | None = None, *, seed: int = 0) -> None:
        self.options = o = options if options is not None else GandivaOptions()
        self.seed = seed  # deterministic; kept for the common factory signature
        self.quantum = o.quantum_hours
        self.packing, self.grow, self.migrate = o.packing, o.grow, o.migrate
        self._instance: Instance | None = None
        self._affinity: dict[str, int] = {}
        self._groups: list[_Group] = []
        self._packs: dict[GpuRef, tuple[str, str]] = {}
        self._grown: dict[str, int] = {}  # job -> its requested GPU count
        self._handed: dict[str, float] = {}  # a holder -> its progress when its turn began
        self._next_turn = math.inf

    # -- bookkeeping ----------------------------------------------------------------------
    def begin(self, instance: Instance) -> None:
        """A new run forgets the last one's groups, packs and turns."""
        self._reset(instance)

    def _reset(self, inst: Instance) -> None:
        self._instance = inst
        self._affinity.clear()
        self._groups.clear()
        self._packs.clear()
        self._grown.clear()
        self._handed.clear()
        self._next_turn = math.inf

    @property
    def packs(self) -> Mapping[GpuRef, tuple[str, str]]:
        """The packed pairs now, by GPU (for tests and reports)."""
        return dict(self._packs)

    def _in_group(self, job_id: str) -> bool:
        return any(job_id in g.jobs for g in self._groups)

    def _forget(self, present: Mapping[str, JobStatus], occ: Occupancy) -> None:
        """Drop finished jobs from groups, packs and grown jobs; an empty node loses
        its affinity."""
        for g in self._groups:
            g.jobs = [j for j in g.jobs if j in present]
        self._groups = [g for g in self._groups if g.jobs]
        self._packs = {r: p for r, p in self._packs.items() if p[0] in present or p[1] in present}
        self._grown = {j: n for j, n in self._grown.items() if j in present}
        for node in occ.instance.nodes:
            if len(occ.free[node.id]) == node.num_gpus and not self._hosts_group(node.id):
                self._affinity.pop(node.id, None)

    def _hosts_group(self, node_id: str) -> bool:
        return any(g.alloc.gpus[0][0] == node_id for g in self._groups)

    # -- decisions ------------------------------------------------------------------------
    def decide(self, state: SchedulerState) -> Decision:
        inst, now, occ = state.instance, state.time, state.occupancy
        if self._instance is not inst:
            self._reset(inst)
        present = {s.job.id: s for s in state.jobs}
        self._forget(present, occ)
        assign: dict[str, Allocation | None] = {}
        d = Now(inst, occ, present, assign)
        unpack_lone(d, self._packs)
        waiting = [s for s in state.jobs if s.allocation is None and not self._in_group(s.job.id)]
        if waiting:
            shrink(d, self._grown)
        self._turn(now, d)
        if self.migrate:
            self._move_sliced_to_free(d)
        for s in waiting:
            self._admit(d, s)
        if self.grow and not waiting and not any(len(g.jobs) > 1 for g in self._groups):
            grow_idle(d, self._packs, self._grown)
        self._groups = [g for g in self._groups if len(g.jobs) > 1]  # a lone holder just runs
        sliced = bool(self._groups)
        if sliced and not math.isfinite(self._next_turn):
            self._next_turn = now + self.quantum
        if not sliced:
            self._next_turn = math.inf
        wake = self._next_turn if math.isfinite(self._next_turn) else None
        return Decision(assign, wake_at=wake)

    def _turn(self, now: float, d: Now) -> None:
        """Each group's holder runs; at the end of a quantum the next one takes over."""
        occ, present, assign = d.occ, d.present, d.assign
        rotate = now >= self._next_turn - 1e-9
        resumes = [0.0]
        for g in self._groups:
            # a holder that has not run an epoch's fraction since its turn began (its node
            # still booting) keeps the GPU: swapped, each new holder waited out a boot
            # longer than the quantum and no job ever ran (a fuzz of valid instances)
            first = present[g.jobs[0]]
            idle = first.progress <= self._handed.get(first.job.id, -math.inf)
            if rotate and len(g.jobs) > 1 and not idle:
                head = g.jobs.pop(0)
                g.jobs.append(head)
                if present[head].allocation is not None:
                    occ.release(head)
                    assign[head] = None  # suspended: its state waits in host memory
                resumes.append(d.inst.resume(g.jobs[0]))
                self._handed[g.jobs[0]] = present[g.jobs[0]].progress
            holder = present[g.jobs[0]]
            if holder.allocation != g.alloc and occ.why_not(holder.job, g.alloc) is None:
                occ.place(holder.job, g.alloc)
                assign[holder.job.id] = g.alloc
        if rotate:
            self._next_turn = now + self.turn(max(resumes))

    def turn(self, resume: float) -> float:
        """Hours a turn lasts when its new holders take ``resume`` hours to resume: the
        quantum, or the resume plus half a quantum where that is longer. Gandiva's 60 s
        quantum assumes a resume of about a second; a resume as long as the quantum
        would fill every turn, and no job in the group would ever progress."""
        return max(self.quantum, resume + self.quantum / 2)

    # -- placing a job --------------------------------------------------------------------
    def _admit(
        self,
        d: Now,
        s: JobStatus,
    ) -> None:
        """Algorithm 1 for a waiting job; then packing, defragmentation, time-slicing."""
        inst, occ, present, assign = d.inst, d.occ, d.present, d.assign
        cfgs = own_configs(inst, s.job)
        alloc = self._free_placement(inst, occ, s.job, cfgs)
        if alloc is None and self.migrate:
            alloc = self._defragment(d, s.job, cfgs)
        if alloc is not None:
            self._take(occ, s.job, alloc)
            assign[s.job.id] = alloc
            return
        if self.packing and self._pack(d, s, cfgs):
            return
        self._slice(s.job, cfgs, present)

    def _free_placement(
        self, inst: Instance, occ: Occupancy, job: Job, cfgs: list[Config]
    ) -> Allocation | None:
        """Where the job runs on free GPUs: a node of its affinity (least loaded), an
        empty node, any node (best fit); a multi-node configuration takes whole nodes."""
        single = [c for c in cfgs if c.one_node]
        for step in ("affinity", "empty", "any"):
            best: tuple[tuple[float, int], Node, Config] | None = None
            for cfg in single:
                for k, node in enumerate(inst.nodes_by_type.get(cfg.gpu_type, ())):
                    free = len(occ.free[node.id])
                    if free < cfg.gpus or not occ.host_fits(node.id, cfg):
                        continue  # (free GPUs are not enough where the cores are held)
                    aff = self._affinity.get(node.id, 0)
                    if step == "affinity" and aff != cfg.gpus:
                        continue
                    if step == "empty" and aff != 0:
                        continue
                    # least loaded among same-affinity nodes; best fit otherwise
                    key = (-free / node.num_gpus if step == "affinity" else free, k)
                    if best is None or key < best[0]:
                        best = (key, node, cfg)
            if best is not None:
                _, node, cfg = best
                gpus = sorted(occ.free[node.id])[: cfg.gpus]
                return Allocation(cfg, tuple((node.id, g) for g in gpus))
        # whole nodes, spread GPUs (E4), or a shared slot, for a job with only those
        for cfg in cfgs:
            if not cfg.one_node and (alloc := occ.find(job, cfg)) is not None:
                return alloc
        return None

    def _take(self, occ: Occupancy, job: Job, alloc: Allocation) -> None:
        occ.place(job, alloc)
        for node_id in dict.fromkeys(n for n, _ in alloc.gpus):
            if self._affinity.get(node_id, 0) == 0:
                self._affinity[node_id] = alloc.config.gpus

    def _pack(
        self,
        d: Now,
        s: JobStatus,
        cfgs: list[Config],
    ) -> bool:
        """Pack a one-GPU job with a running one-GPU job where their normalised
        throughputs add up to more than 1 (more than time-slicing gives), the best pair
        first; both then run on that GPU's shared slots."""
        inst, occ, present, assign = d.inst, d.occ, d.present, d.assign
        if not any(c.gpus == 1 for c in cfgs):
            return False
        best: tuple[float, str, GpuRef, str] | None = None
        for job_id, alloc in occ.owner.items():
            other = present.get(job_id)
            cfg = alloc.config
            if (
                other is None
                or cfg.shared
                or cfg.gpus != 1
                or self._in_group(job_id)
                or job_id in self._grown
                or inst.max_share < 2
                or other.job.memory_gb + s.job.memory_gb > inst.gpu(cfg.gpu_type).memory_gb
            ):
                continue
            ratios = pair_ratios(inst, s.job, other.job, cfg.gpu_type)
            if ratios is None or sum(ratios) <= 1.0:
                continue  # slower than taking turns: never packed
            key = (-sum(ratios), job_id, alloc.gpus[0], cfg.gpu_type)
            if best is None or key < best:
                best = key
        if best is None:
            return False
        _, job_id, ref, gpu_type = best
        pair: dict[str, Allocation] = {}
        trial = occ.copy()
        trial.release(job_id)
        for j in (present[job_id].job, s.job):
            shared = inst.config_of_shape(j, gpu_type, shared=True)
            assert shared is not None  # pair_ratios found one
            pair[j.id] = Allocation(shared, (ref,))
            if trial.why_not(j, pair[j.id]) is not None:
                return False  # the pair's cores or DRAM do not fit its node
            trial.place(j, pair[j.id])
        occ.release(job_id)
        for j in (present[job_id].job, s.job):
            occ.place(j, pair[j.id])
            assign[j.id] = pair[j.id]
        self._packs[ref] = (job_id, s.job.id)
        return True

    def _slice(self, job: Job, cfgs: list[Config], present: Mapping[str, JobStatus]) -> None:
        """Over-subscribe onto the least loaded GPUs of the job's size: the smallest of
        the groups on a configuration of its size and of the running jobs of that size
        not yet in one (each a group of one; the paper's least loaded node of affinity
        ``g``); ties go to a group already formed, then to the order jobs are present.
        With neither, the job waits in the queue. (Until 2026-12-07 a job joined the one
        group of its size while any existed, so that every over-subscribed job of a size
        took turns on one set of GPUs beside running jobs alone on theirs.)"""
        groups = [g for g in self._groups if g.alloc.config in cfgs]
        for job_id, status in present.items():
            alloc = status.allocation
            if (
                alloc is not None
                and alloc.config in cfgs
                and job_id not in self._grown
                and not self._in_group(job_id)
            ):
                groups.append(_Group(alloc, [job_id]))
        if not groups:
            return
        chosen = min(groups, key=lambda g: len(g.jobs))  # the first of the least loaded
        if not any(chosen is g for g in self._groups):
            self._groups.append(chosen)
        chosen.jobs.append(job.id)  # it waits for its turn

    def _defragment(
        self,
        d: Now,
        job: Job,
        cfgs: list[Config],
    ) -> Allocation | None:
        """Free a node for a job of several GPUs by moving the one-node jobs of the node
        closest to fitting it onto other nodes of its type, if they all fit there."""
        inst, occ, present, assign = d.inst, d.occ, d.present, d.assign
        for cfg in (c for c in cfgs if c.one_node and c.gpus > 1):
            nodes = [n for n in inst.nodes_by_type.get(cfg.gpu_type, ()) if n.num_gpus >= cfg.gpus]
            total = sum(len(occ.free[n.id]) for n in inst.nodes_by_type.get(cfg.gpu_type, ()))
            if total < cfg.gpus:
                continue
            for node in sorted(nodes, key=lambda n: (-len(occ.free[n.id]), n.id)):
                movers = [j for j, a in occ.owner.items() if any(r[0] == node.id for r in a.gpus)]
                if any(not self._movable(occ, present, j) for j in movers):
                    continue
                trial = occ.copy()
                moves: dict[str, Allocation] = {}
                for j in movers:
                    trial.release(j)
                if not trial.host_fits(node.id, cfg):
                    continue  # the node emptied still lacks its cores or DRAM
                keep_out = Allocation(cfg, tuple((node.id, g) for g in range(cfg.gpus)))
                trial.place(job, keep_out)  # hold the node while the others move
                for j in movers:
                    a = trial.find(present[j].job, occ.owner[j].config)
                    if a is None:
                        break
                    trial.place(present[j].job, a)
                    moves[j] = a
                if len(moves) != len(movers):
                    continue
                for j in moves:
                    occ.release(j)
                for j, a in moves.items():
                    self._take(occ, present[j].job, a)
                    assign[j] = a
                gpus = sorted(occ.free[node.id])[: cfg.gpus]
                return Allocation(cfg, tuple((node.id, g) for g in gpus))
        return None

    def _movable(self, occ: Occupancy, present: Mapping[str, JobStatus], job_id: str) -> bool:
        alloc = occ.owner[job_id]
        return job_id in present and alloc.config.one_node and not self._in_group(job_id)

    # -- migration, packs, grow-shrink ------------------------------------------------------
    def _move_sliced_to_free(
        self,
        d: Now,
    ) -> None:
        """A job waiting for its turn moves to GPUs that are free."""
        inst, occ, present, assign = d.inst, d.occ, d.present, d.assign
        for g in self._groups:
            for job_id in list(g.jobs[1:]):
                job = present[job_id].job
                cfgs = own_configs(inst, job)
                alloc = self._free_placement(inst, occ, job, cfgs)
                if alloc is None:
                    continue  # a later member may run on other types or sizes
                g.jobs.remove(job_id)
                self._take(occ, job, alloc)
                assign[job_id] = alloc
        self._groups = [g for g in self._groups if g.jobs]
