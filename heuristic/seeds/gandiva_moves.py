"""Gandiva's cheap moves outside its time-slicing (:mod:`heuristic.seeds.gandiva`):
unpacking a job whose partner left, shrinking grown jobs back to their requested size
when a job waits, and growing running jobs onto idle GPUs of their node; and the
decision state they share with the policy."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from heuristic.core.choice import requested_configs
from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.policy import JobStatus
from instances import Config, GpuRef, Instance, Job


@dataclass(frozen=True)
class Now:
    """What one decision works on: the instance, the scratch occupancy (kept in step
    with the decision), the present jobs and the changes made so far."""

    inst: Instance
    occ: Occupancy
    present: Mapping[str, JobStatus]
    assign: dict[str, Allocation | None]


def unpack_lone(d: Now, packs: dict[GpuRef, tuple[str, str]]) -> None:
    """A packed job whose partner has left runs alone on its GPU again (exclusive)
    when that saves more time than its relaunch costs."""
    inst, occ, present, assign = d.inst, d.occ, d.present, d.assign
    for ref, pair in list(packs.items()):
        left = [j for j in pair if j in present]
        if len(left) == 2:
            continue
        del packs[ref]
        if not left:
            continue
        s = present[left[0]]
        shared = s.allocation
        if shared is None or not shared.config.shared:
            continue
        cfg = shared.config
        alone = inst.config_of_shape(s.job, cfg.gpu_type)
        if alone is None or not saves(inst, s, cfg, alone):
            continue
        alloc = Allocation(alone, (ref,))
        if _moved(occ, s.job, shared, alloc):
            assign[s.job.id] = alloc


def shrink(d: Now, grown: dict[str, int]) -> None:
    """Grown jobs go back to their requested size, on the first of their GPUs."""
    occ, present, assign = d.occ, d.present, d.assign
    for job_id, gpus in list(grown.items()):
        s = present[job_id]
        alloc = assign.get(job_id, s.allocation)
        if alloc is None:
            continue
        cfg = d.inst.config_of_shape(s.job, alloc.config.gpu_type, gpus)
        assert cfg is not None  # the size it ran at before it grew
        small = Allocation(cfg, alloc.gpus[:gpus])
        occ.release(job_id)
        occ.place(s.job, small)
        assign[job_id] = small
        del grown[job_id]


def grow_idle(d: Now, packs: Mapping[GpuRef, tuple[str, str]], grown: dict[str, int]) -> None:
    """On an idle cluster, running one-node jobs take idle GPUs of their node: the
    largest configuration that fits and saves more time than its relaunch costs."""
    inst, occ, present, assign = d.inst, d.occ, d.present, d.assign
    for job_id, s in present.items():
        alloc = assign.get(job_id, s.allocation)
        if alloc is None or not alloc.config.one_node or any(job_id in p for p in packs.values()):
            continue
        node = alloc.gpus[0][0]
        room = len(occ.free[node])
        cfg = alloc.config
        bigger = [
            c
            for c in inst.allowed_configs(s.job)
            if c.gpu_type == cfg.gpu_type
            and c.one_node
            and cfg.gpus < c.gpus <= cfg.gpus + room
            and saves(inst, s, cfg, c)
        ]
        if not bigger:
            continue
        target = max(bigger, key=lambda c: (c.gpus, c.label))
        extra = sorted(occ.free[node])[: target.gpus - cfg.gpus]
        larger = Allocation(target, (*alloc.gpus, *((node, g) for g in extra)))
        if _moved(occ, s.job, alloc, larger):
            assign[job_id] = larger
            grown.setdefault(job_id, cfg.gpus)


def _moved(occ: Occupancy, job: Job, now: Allocation, new: Allocation) -> bool:
    """Moves ``job`` from ``now`` to ``new`` where the engine would place it there once
    ``now`` is given back; else leaves it as it is. (The unpack and the growth placed it
    anyway where its node lacked the cores or DRAM: a fuzz of valid instances.)"""
    occ.release(job.id)
    fits = occ.why_not(job, new) is None
    occ.place(job, new if fits else now)
    return fits


def own_configs(inst: Instance, job: Job) -> list[Config]:
    """The configurations of the job's requested size: exclusive ones, or its shared
    slots if it has nothing else."""
    cfgs = requested_configs(inst, job)
    return [c for c in cfgs if not c.shared] or cfgs


def saves(inst: Instance, s: JobStatus, now: Config, new: Config) -> bool:
    """Whether moving from ``now`` to ``new`` saves more time, over the job's expected
    remaining epochs, than the relaunch it costs."""
    remaining = s.job.distribution.conditional(s.progress).mean()
    saved = remaining * (inst.epoch_time(s.job, now) - inst.epoch_time(s.job, new))
    return saved > inst.relaunch(s.job) + 1e-12
