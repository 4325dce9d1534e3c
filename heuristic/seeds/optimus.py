"""``optimus``: Optimus (Peng et al., EuroSys 2018) on gpusched's model, GPU-only workers.

Optimus fits a speed model per job, estimates each job's remaining work, and gives GPUs
greedily to the job whose completion time drops most per extra GPU, re-allocating every
scheduling interval (docs/optimus.md says what is kept and what is adapted):

- **Speed model.** Workers are GPUs and there is no parameter server (modern
  all-reduce re-implementations do the same; the model has no CPU resources): on a GPU
  type an epoch on ``g`` GPUs takes ``tau(g) = theta0/g + theta1 + theta2 (g-1)/g^2``
  (computation split over the workers, a per-step overhead, ring all-reduce traffic),
  ``theta >= 0`` fitted by non-negative least squares (scipy's ``nnls``), as the paper
  fits its ``f(p, w)``. Samples: a pre-run of the job's two smallest configurations of
  each type (a few steps, so measured with a relative error of ``prerun_noise``, seeded),
  then the exact epoch time of every configuration the job has run. ``oracle_speed``
  reads the true table instead, to separate allocation quality from learning.
- **Remaining work.** Optimus fits a loss curve to predict when a job converges; here
  the job's early-stopping distribution, conditional on its progress, gives the expected
  remaining epochs: the honest analogue of that estimate.
- **Allocation** (the paper's greedy): every job first gets its smallest configuration
  (in arrival order, while GPUs last), on the type it runs on, or if it waits the type
  with the highest predicted speed and a GPU left; then, repeatedly, the job whose
  predicted completion time ``Q tau(g)`` drops most per extra GPU moves to that larger
  configuration. The gain is taken over every larger listed configuration, not only the
  next (Gavel's measured ladders are not monotone), and a step that no longer fits is
  replaced by the job's best step that does, rather than ending the loop.
- **Placement.** A configuration spans as few nodes as it can (one, or the whole nodes
  of a multi-node configuration), best fit; a job whose allocation is unchanged keeps its
  GPUs. Where fragmentation leaves no room, the job tries its smaller configurations.
- **Cadence.** A full re-allocation every ``interval`` hours; between rounds, arrivals and
  departures only place waiting jobs on free GPUs. A job moved to another configuration
  pays its relaunch overhead, as Optimus' checkpoint-and-restart did; the allocation,
  like the paper's, does not weigh it.
"""

from __future__ import annotations

import heapq
import math
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy.optimize import nnls

from heuristic.core.choice import first_placement
from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.options import CheckedOptions, positive_hours, require
from heuristic.core.policy import Decision, JobStatus, SchedulerState
from instances import Config, Instance, Job
from instances.distribution import reaches
from instances.sums import dot

DEFAULT_INTERVAL = 1.0 / 3.0  # hours; DL2's Optimus re-allocates every 20 minutes
PRERUN_SIZES = 2  # the pre-run tries each type's two smallest configurations


def speed_features(gpus: float) -> np.ndarray:
    """The row of the speed model's design matrix for ``gpus`` workers."""
    return np.array([1.0 / gpus, 1.0, (gpus - 1.0) / gpus**2])


def fit_speed(samples: Mapping[int, float]) -> np.ndarray:
    """``theta >= 0`` of ``tau(g)`` by NNLS from ``{gpus: epoch hours}``."""
    sizes = sorted(samples)
    a = np.array([speed_features(g) for g in sizes])
    b = np.array([samples[g] for g in sizes])
    theta, _ = nnls(a, b)
    return np.asarray(theta, dtype=float)


def predicted_epoch_hours(theta: np.ndarray, gpus: float) -> float:
    return dot(speed_features(gpus), theta)  # not ``@``: BLAS's sum depends on the CPU


@dataclass
class _Ladder:
    """A job's exclusive configurations on one GPU type, fewest GPUs first, with their
    predicted epoch hours."""

    configs: list[Config]
    hours: list[float]


@dataclass(frozen=True)
class OptimusOptions(CheckedOptions):
    """``interval_hours``: hours between full re-allocations; ``oracle_speed``: the true
    speeds instead of the fitted model; ``prerun_noise``: the pre-run's relative error."""

    interval_hours: float = DEFAULT_INTERVAL
    oracle_speed: bool = False
    prerun_noise: float = 0.05

    def ranges(self) -> None:
        positive_hours("interval_hours", self.interval_hours)
        noise = self.prerun_noise
        require(0 <= noise < 1, "prerun_noise", noise, "must be in [0, 1)")


class OptimusPolicy:
    name = "optimus"

    Options = OptimusOptions

    def __init__(self, options: OptimusOptions | None = None, *, seed: int = 0) -> None:
        self.options = o = options if options is not None else OptimusOptions()
        self.seed = seed
        self.interval = o.interval_hours
        self.oracle_speed = o.oracle_speed
        self.prerun_noise = o.prerun_noise
        self._next_round = -math.inf
        self._instance: Instance | None = None
        self._clock = -math.inf  # the time of the last decision
        # per job and GPU type: samples {gpus: epoch hours}, and the fit they give
        self._samples: dict[tuple[str, str], dict[int, float]] = {}
        self._fits: dict[tuple[str, str], np.ndarray] = {}

    # -- the speed model ----------------------------------------------------------------
    def begin(self, instance: Instance) -> None:
        """A new run forgets the last one's rounds and fitted speeds."""
        self._reset(instance)

    def _reset(self, inst: Instance) -> None:
        self._instance = inst
        self._next_round = -math.inf
        self._samples.clear()
        self._fits.clear()

    def _prerun(self, inst: Instance, job: Job, gpu_type: str) -> dict[int, float]:
        """The pre-run's samples: the two smallest exclusive configurations of the type,
        each with a seeded relative error (the same for a given seed and job)."""
        key = f"{self.seed}:{job.id}:{gpu_type}".encode()
        rng = np.random.default_rng(zlib.crc32(key))
        out: dict[int, float] = {}
        for cfg in _exclusive(inst, job, gpu_type)[:PRERUN_SIZES]:
            noise = 1.0 + self.prerun_noise * float(rng.uniform(-1.0, 1.0))
            out[cfg.gpus] = inst.epoch_time(job, cfg) * noise
        return out

    def _observe(self, inst: Instance, status: JobStatus) -> None:
        """A running job's configuration is measured exactly (it has run on it)."""
        alloc = status.allocation
        if alloc is None or alloc.config.shared:
            return
        cfg = alloc.config
        samples = self._type_samples(inst, status.job, cfg.gpu_type)
        tau = inst.epoch_time(status.job, cfg)
        if samples.get(cfg.gpus) != tau:
            samples[cfg.gpus] = tau
            self._fits.pop((status.job.id, cfg.gpu_type), None)

    def _type_samples(self, inst: Instance, job: Job, gpu_type: str) -> dict[int, float]:
        key = (job.id, gpu_type)
        if key not in self._samples:
            self._samples[key] = self._prerun(inst, job, gpu_type)
        return self._samples[key]

    def ladder(self, inst: Instance, job: Job, gpu_type: str) -> _Ladder:
        """The job's exclusive configurations of the type with their predicted (or, with
        ``oracle_speed``, true) epoch hours."""
        configs = _exclusive(inst, job, gpu_type)
        if self.oracle_speed:
            return _Ladder(configs, [inst.epoch_time(job, c) for c in configs])
        key = (job.id, gpu_type)
        theta = self._fits.get(key)
        if theta is None:
            theta = fit_speed(self._type_samples(inst, job, gpu_type))
            self._fits[key] = theta
        hours = [max(predicted_epoch_hours(theta, c.gpus), 1e-12) for c in configs]
        return _Ladder(configs, hours)

    # -- decisions ------------------------------------------------------------------------
    def decide(self, state: SchedulerState) -> Decision:
        inst, now = state.instance, state.time
        # a new run (another instance, or the same one from an earlier time) forgets
        # the last: reused, the policy planned its first round from the last run's clock
        if self._instance is not inst or now < self._clock:
            self._reset(inst)
        self._clock = now
        jobs = [s for s in state.jobs if not reaches(s.progress, s.job.max_epochs)]
        for s in jobs:
            self._observe(inst, s)
        if now >= self._next_round - 1e-9:
            self._next_round = now + self.interval
            assign = self._round(inst, state.occupancy, jobs)
        else:
            waiting = [s for s in jobs if s.allocation is None]
            assign = self._admit(inst, state.occupancy, waiting)
        return Decision(assign, wake_at=self._next_round if state.jobs else None)

    def _admit(
        self, inst: Instance, occ: Occupancy, waiting: list[JobStatus]
    ) -> dict[str, Allocation | None]:
        """Between rounds: waiting jobs, in arrival order, on the free GPUs (the greedy
        over what is free; running jobs keep what they have)."""
        free = _free_by_type(occ)
        chosen = self._allocate(inst, waiting, free)
        return self._place(inst, occ, waiting, chosen)

    def _round(
        self, inst: Instance, occ: Occupancy, jobs: list[JobStatus]
    ) -> dict[str, Allocation | None]:
        """A scheduling round: every present job re-allocated over the whole cluster."""
        for s in jobs:
            if s.allocation is not None:
                occ.release(s.job.id)
        chosen = self._allocate(inst, jobs, dict(inst.gpus_by_type))
        return self._place(inst, occ, jobs, chosen)

    def _allocate(
        self, inst: Instance, jobs: list[JobStatus], capacity: dict[str, int]
    ) -> dict[str, Config]:
        """The greedy: each job its smallest configuration first, then the largest drop
        in predicted completion time per extra GPU, until no step fits or gains."""
        left = dict(capacity)
        state: dict[str, tuple[_Ladder, int, float]] = {}  # job -> (ladder, rung, work)
        order = sorted(jobs, key=lambda s: (s.job.release, s.job.id))
        for s in order:
            work = s.job.distribution.conditional(s.progress).mean()
            types = self._types(inst, s)
            options = [
                (lad.hours[0], t, lad)
                for t in types
                if (lad := self.ladder(inst, s.job, t)).configs
                and lad.configs[0].gpus <= left.get(t, 0)
            ]
            if not options:
                continue
            # the type it runs on (its only option then), or the fastest with room
            _, gpu_type, lad = min(options, key=lambda o: (o[0], o[1]))
            left[gpu_type] -= lad.configs[0].gpus
            state[s.job.id] = (lad, 0, work)
        heap: list[tuple[float, str, int]] = []
        for job_id, (lad, rung, work) in state.items():
            _push(heap, job_id, lad, rung, work, left[lad.configs[0].gpu_type])
        while heap:
            _, job_id, target = heapq.heappop(heap)
            lad, rung, work = state[job_id]
            gpu_type = lad.configs[0].gpu_type
            extra = lad.configs[target].gpus - lad.configs[rung].gpus
            if extra > left[gpu_type]:
                # that step no longer fits: the job's best step that does, if any
                _push(heap, job_id, lad, rung, work, left[gpu_type])
                continue
            left[gpu_type] -= extra
            state[job_id] = (lad, target, work)
            _push(heap, job_id, lad, target, work, left[gpu_type])
        return {job_id: lad.configs[rung] for job_id, (lad, rung, _) in state.items()}

    @staticmethod
    def _types(inst: Instance, s: JobStatus) -> list[str]:
        """A running job stays on its type (Optimus schedules one pool); a waiting job may
        take any type it has exclusive configurations on."""
        if s.allocation is not None and not s.allocation.config.shared:
            return [s.allocation.config.gpu_type]
        return sorted({c.gpu_type for c in inst.allowed_configs(s.job) if not c.shared})

    def _place(
        self,
        inst: Instance,
        occ: Occupancy,
        jobs: Iterable[JobStatus],
        chosen: Mapping[str, Config],
    ) -> dict[str, Allocation | None]:
        """Jobs whose allocation is unchanged keep their GPUs; the others are placed
        largest first, best fit, falling back to their smaller configurations."""
        assign: dict[str, Allocation | None] = {}
        moving: list[JobStatus] = []
        shared_only: list[JobStatus] = []
        for s in jobs:
            cfg = chosen.get(s.job.id)
            if cfg is None and not _exclusive_any(inst, s.job):
                shared_only.append(s)
                continue
            if cfg is None:
                if s.allocation is not None:
                    assign[s.job.id] = None  # paused: the round gave it nothing
                continue
            if not occ.keep(s.job, s.allocation, cfg):
                moving.append(s)
        moving.sort(key=lambda s: (-chosen[s.job.id].gpus, s.job.release, s.job.id))
        for s in moving:
            cfg = chosen[s.job.id]
            smaller = [c for c in _exclusive(inst, s.job, cfg.gpu_type) if c.gpus <= cfg.gpus]
            alloc = first_placement(occ, s.job, sorted(smaller, key=lambda c: -c.gpus))
            if alloc is not None:
                occ.place(s.job, alloc)
            if alloc != s.allocation:
                assign[s.job.id] = alloc
        for s in shared_only:
            # no worker of its own to give (only shared slots): it keeps its slot, or
            # takes the first that fits, after the others
            current = s.allocation
            if current is not None and occ.why_not(s.job, current) is None:
                occ.place(s.job, current)
                continue
            alloc = first_placement(occ, s.job, inst.allowed_configs(s.job))
            if alloc is not None:
                occ.place(s.job, alloc)
            if alloc != current:
                assign[s.job.id] = alloc
        return assign


def _push(
    heap: list[tuple[float, str, int]], job_id: str, lad: _Ladder, rung: int, work: float, left: int
) -> None:
    """The job's best step up from ``rung`` that fits in ``left`` GPUs, if it gains."""
    now_hours = work * lad.hours[rung]
    best: tuple[float, int] | None = None
    for k in range(rung + 1, len(lad.configs)):
        extra = lad.configs[k].gpus - lad.configs[rung].gpus
        if extra <= 0 or extra > left:
            continue
        gain = (now_hours - work * lad.hours[k]) / extra
        if gain > 1e-12 and (best is None or gain > best[0]):
            best = (gain, k)
    if best is not None:
        heapq.heappush(heap, (-best[0], job_id, best[1]))


def _exclusive(inst: Instance, job: Job, gpu_type: str) -> list[Config]:
    return sorted(
        (c for c in inst.allowed_configs(job) if c.gpu_type == gpu_type and not c.shared),
        key=lambda c: (c.gpus, c.nodes),
    )


def _exclusive_any(inst: Instance, job: Job) -> bool:
    return any(not c.shared for c in inst.allowed_configs(job))


def _free_by_type(occ: Occupancy) -> dict[str, int]:
    out: dict[str, int] = {}
    for node in occ.instance.nodes:
        out[node.gpu_type] = out.get(node.gpu_type, 0) + len(occ.free[node.id])
    return out
