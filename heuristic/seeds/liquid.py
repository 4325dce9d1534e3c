"""`liquid`: Liquid (Gu et al., IEEE TPDS 2022) as a gpusched policy, and the
topology-blind first fit it was measured against.

At each decision, waiting jobs are taken first come, first served; one that cannot be
placed now lets later ones try (work-conserving). A placed job keeps its GPUs to the
end: Liquid does not preempt or migrate.

- **Size.** Liquid runs a job on its estimated requirement, not on what its user asked:
  the knee of its speed-up curve, the fewest GPUs whose epoch time is within
  ``tolerance`` (10 %) of the fastest. The light default estimator is that oracle knee
  computed from the job's epoch times each perturbed by log-normal noise
  (``noise``, seeded per job). ``estimate="forest"`` is the paper's random forest
  trained on past runs (:mod:`heuristic.seeds.liquid_estimate`, scikit-learn; registered as
  ``liquid-forest``); a job it has no features for gets the oracle estimate.
  ``estimate="request"`` trusts the user's request.
- **Placement.** Immediate mode is best fit: the placement of least score on the
  paper's score, found exactly (:mod:`heuristic.seeds.liquid_place`); a burst (jobs
  released at this instant, more than three containers) is placed by the group GA
  (:mod:`heuristic.seeds.liquid_ga`).
  The configuration is the narrowest one whose span holds the chosen nodes.
- **Sharing.** When the cluster's load (GPUs held and asked for by waiting jobs, over
  all GPUs) is at least ``share_ratio``, a one-GPU job runs in a shared slot, joining a
  shared GPU whose tenants' predicted utilisations and its own sum to less than 1.3.
  A job whose shared speed is ``ρ`` of its own is predicted to use ``1 / (2ρ)`` of the
  GPU (so that a pair with ρ = 1/2, which gains nothing, fills it). Our default is the
  authors' code's, 1.5: off (the load never reaches it); their README's example, 0.75,
  is an option, measured in docs/liquid.md (it lengthens JCT on Liquid's setting).

Pre-scheduling (overlapping a launch with another job's checkpoint save) is not
modelled: the model has no save phase (docs/liquid.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from heuristic.core.choice import first_placement, requested_configs
from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.options import CheckedOptions, require
from heuristic.core.policy import Decision, JobStatus, SchedulerState
from heuristic.seeds.liquid_estimate import KneeForest, default_forest, knee_gpus
from heuristic.seeds.liquid_ga import GroupGA, Task
from heuristic.seeds.liquid_place import (
    LAMBDA,
    Sizes,
    allocation_on,
    best_fit_nodes,
    by_span,
    first_fit_nodes,
    sized_configs,
)
from instances import Config, Instance, Job

SHARE_MAX_UTILISATION = 1.3  # the authors' ShareMaxUtilization
BATCH_MIN_CONTAINERS = 4  # the GA runs for bursts of more than three tasks


@dataclass(frozen=True)
class LiquidOptions(CheckedOptions):
    """``estimate``: how a job's GPU count is chosen (``oracle``: the knee of its true
    speed-up with noise; ``request``: its requested size; ``forest``: the random forest
    trained on the default history); ``placement``: ``best-fit`` (Liquid's) or
    ``first-fit``; ``batch``: place a burst of arrivals by the GA; ``share_ratio``:
    the load from which a one-GPU job joins a shared slot (``inf``: never share);
    ``tolerance`` and ``noise``: the knee's and the estimate's; ``lam``: the fitness
    weight of network cost; ``max_generations``: the GA's."""

    estimate: Literal["oracle", "request", "forest"] = "oracle"
    placement: Literal["best-fit", "first-fit"] = "best-fit"
    batch: bool = True
    share_ratio: float = 1.5
    tolerance: float = 0.1
    noise: float = 0.1
    lam: float = LAMBDA
    max_generations: int = 100

    def ranges(self) -> None:
        require(self.share_ratio >= 0, "share_ratio", self.share_ratio, "must be at least 0")
        for name in ("tolerance", "noise", "lam"):
            v = getattr(self, name)
            require(math.isfinite(v) and v >= 0, name, v, "must be a finite number, at least 0")
        # a log-normal sigma: 3 already scales a time by e^9 at three sigmas; beyond,
        # the estimate's exp() overflows to an infinite time
        require(self.noise <= 3, "noise", self.noise, "must be at most 3 (a log-normal sigma)")
        gens = self.max_generations
        require(gens >= 1, "max_generations", gens, "must be at least 1")


class LiquidPolicy:
    """Liquid; ``forest`` (not an option: a trained model) replaces the default forest
    where ``estimate = "forest"``."""

    name = "liquid"
    Options = LiquidOptions

    def __init__(
        self,
        options: LiquidOptions | None = None,
        *,
        seed: int = 0,
        forest: KneeForest | None = None,
    ) -> None:
        self.options = o = options if options is not None else LiquidOptions()
        self.seed, self.estimate, self.placement, self.batch = (
            seed,
            o.estimate,
            o.placement,
            o.batch,
        )
        self.share_ratio, self.tolerance, self.noise, self.lam = (
            o.share_ratio,
            o.tolerance,
            o.noise,
            o.lam,
        )
        self.max_generations = o.max_generations
        if o.estimate == "forest" and forest is None:
            forest = default_forest(o.tolerance, o.noise, seed)
        self.forest = forest
        self.unfeatured = 0  # jobs the forest had no features for (oracle estimate)
        self._size: dict[str, int] = {}
        self._bursts = 0
        self.ga_log: list[tuple[float, float]] = []  # (GA best, best-fit) per burst

    def begin(self, instance: Instance) -> None:
        """A new run forgets the last one's sizes (per job id: another instance may
        give an id other configurations), bursts and logs."""
        self._size.clear()
        self._bursts = 0
        self.unfeatured = 0
        self.ga_log.clear()

    # -- sizes ------------------------------------------------------------------------------
    def size(self, instance: Instance, job: Job) -> int:
        """The GPUs the job gets: its estimate (or request), as one of its sizes; 1 for
        a job with shared slots only."""
        if job.id not in self._size:
            sizes = sorted({c.gpus for c in instance.allowed_configs(job) if not c.shared})
            if not sizes:
                want = 1
            elif self.estimate == "request":
                want = requested_configs(instance, job)[0].gpus
            else:
                guess = None if self.forest is None else self.forest.predict(job)
                if guess is None:
                    self.unfeatured += self.forest is not None
                    guess = knee_gpus(instance, job, self.tolerance, self.noise, self.seed)
                want = guess
            self._size[job.id] = max((g for g in sizes if g <= want), default=min(sizes or [1]))
        return self._size[job.id]

    # -- decisions ----------------------------------------------------------------------------
    def decide(self, state: SchedulerState) -> Decision:
        inst, occ = state.instance, state.occupancy
        waiting = sorted(
            (s for s in state.jobs if s.allocation is None),
            key=lambda s: (s.job.release, s.job.id),
        )
        assign: dict[str, Allocation | None] = {}
        if not waiting:
            return Decision(assign)
        total = sum(n.num_gpus for n in inst.nodes)
        held = total - sum(len(f) for f in occ.free.values())
        load = (held + sum(self.size(inst, s.job) for s in waiting)) / total
        burst = [s for s in waiting if s.job.release == state.time]
        older = [s for s in waiting if s.job.release != state.time]
        for s in older:
            self._immediate(inst, occ, s, load, assign)
        ga = self.batch and inst.network is not None and self.placement == "best-fit"
        if ga and sum(self.size(inst, s.job) for s in burst) >= BATCH_MIN_CONTAINERS:
            self._burst(inst, occ, burst, load, assign)
        else:
            for s in burst:
                self._immediate(inst, occ, s, load, assign)
        return Decision(assign)

    def _immediate(
        self,
        inst: Instance,
        occ: Occupancy,
        s: JobStatus,
        load: float,
        assign: dict[str, Allocation | None],
    ) -> None:
        alloc = self._shared(inst, occ, s.job, load) or self._place(inst, occ, s.job)
        if alloc is not None:
            occ.place(s.job, alloc)
            assign[s.job.id] = alloc

    def _place(self, inst: Instance, occ: Occupancy, job: Job) -> Allocation | None:
        g = self.size(inst, job)
        configs = sized_configs(inst, job, g)
        if not configs:  # only shared slots or whole nodes: run as `static` runs it
            return first_placement(occ, job, requested_configs(inst, job))
        if inst.network is None:  # no topology: every placement is the default best fit
            return first_placement(occ, job, configs)
        for gpu_type in dict.fromkeys(c.gpu_type for c in configs):
            mine = [c for c in configs if c.gpu_type == gpu_type]
            alloc = self._on_type(occ, job, gpu_type, g, mine)
            if alloc is not None:
                return alloc
        return None

    def _on_type(
        self, occ: Occupancy, job: Job, gpu_type: str, g: int, configs: list[Config]
    ) -> Allocation | None:
        """Where the rule puts ``g`` GPUs of the type. A choice whose links lack room is
        not the end: first fit starts again one node further on (it knows no links, so
        it tries blindly), best fit takes the consolidated placement of its narrowest
        configuration that fits. Where no blind try works, first fit takes that too: a
        job that fits the empty cluster is always placed there (the engine relies on
        it)."""
        narrowest = by_span(configs)
        if self.placement == "first-fit":
            for start in range(len(occ.instance.nodes_by_type.get(gpu_type, ()))):
                nodes = first_fit_nodes(occ, gpu_type, g, start)
                if nodes is None:
                    break
                alloc = allocation_on(occ, job, nodes, configs)
                if alloc is not None:
                    return alloc
            return first_placement(occ, job, narrowest)
        assert occ.instance.network is not None
        nodes = best_fit_nodes(occ, Sizes.of(occ.instance.network), gpu_type, g, self.lam)
        alloc = None if nodes is None else allocation_on(occ, job, nodes, configs)
        if alloc is None and nodes is not None:
            alloc = first_placement(occ, job, narrowest)
        return alloc

    def _burst(
        self,
        inst: Instance,
        occ: Occupancy,
        burst: list[JobStatus],
        load: float,
        assign: dict[str, Allocation | None],
    ) -> None:
        assert inst.network is not None
        tasks: list[Task] = []
        for s in burst:
            shared = self._shared(inst, occ, s.job, load)
            if shared is not None:
                occ.place(s.job, shared)
                assign[s.job.id] = shared
                continue
            g = self.size(inst, s.job)
            configs = sized_configs(inst, s.job, g)
            if not configs:
                self._immediate(inst, occ, s, load, assign)
                continue
            gpu_type = configs[0].gpu_type  # the GA places on one type: the job's first
            mine = tuple(c for c in configs if c.gpu_type == gpu_type)
            tasks.append(Task(s.job, g, gpu_type, mine))
        sizes = Sizes.of(inst.network)
        # the GA places the jobs best fit can place now, better; the others wait (it
        # would otherwise place them by spreading everyone wide, to dodge the penalty)
        first = GroupGA(occ, sizes, tasks, np.random.default_rng(0), lam=self.lam)
        fits = first.placements(first.best_fit())[1]
        tasks = [t for t, a in zip(tasks, fits, strict=True) if a is not None]
        if not tasks:
            return
        rng = np.random.default_rng([self.seed, self._bursts])
        self._bursts += 1
        ga = GroupGA(occ, sizes, tasks, rng, lam=self.lam, max_generations=self.max_generations)
        genome, best, start = ga.run()
        self.ga_log.append((best, start))
        _, allocs = ga.placements(genome)
        for t, alloc in zip(tasks, allocs, strict=True):
            if alloc is None:  # the GA left it out: it may still fit on its own
                alloc = self._place(inst, occ, t.job)
            if alloc is not None and occ.why_not(t.job, alloc) is None:
                occ.place(t.job, alloc)
                assign[t.job.id] = alloc

    def _shared(self, inst: Instance, occ: Occupancy, job: Job, load: float) -> Allocation | None:
        """A shared slot for a one-GPU job while the load gate is open, or ``None``."""
        if load < self.share_ratio or self.size(inst, job) != 1:
            return None
        shared = [c for c in inst.allowed_configs(job) if c.shared]
        if not shared:
            return None
        cfg = shared[0]
        mine = _utilisation(inst, job, cfg)
        for ref, tenants in sorted(occ.shared.items()):
            if inst.node(ref[0]).gpu_type != cfg.gpu_type:
                continue
            util = sum(_utilisation(inst, inst.job(j), occ.owner[j].config) for j in tenants)
            alloc = Allocation(cfg, (ref,))
            if util + mine < SHARE_MAX_UTILISATION and occ.why_not(job, alloc) is None:
                return alloc
        # none to join: open a free GPU as a shared one, best fit (fullest node first)
        nodes = [n for n in inst.nodes_by_type.get(cfg.gpu_type, ()) if occ.free[n.id]]
        for n in sorted(nodes, key=lambda n: len(occ.free[n.id])):
            alloc = Allocation(cfg, ((n.id, min(occ.free[n.id])),))
            if occ.why_not(job, alloc) is None:
                return alloc
        return None


def _utilisation(inst: Instance, job: Job, shared: Config) -> float:
    """Predicted GPU utilisation of a shared tenant: ``1 / (2ρ)``, ρ its shared speed
    over its speed alone on one GPU of the type."""
    alone = inst.config_of_shape(job, shared.gpu_type, 1)
    if alone is None:
        return 1.0
    rho = inst.epoch_time(job, alone) / inst.epoch_time(job, shared)
    return 1.0 / (2.0 * rho)
