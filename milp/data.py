"""The index sets of the time-indexed MILP (docs/milp.md), computed once from an
instance and a horizon, with no Pyomo in them so that the warm start and the plan
extraction read the same sets as the model. Only what can happen gets an index: a job's
allowed configurations (those some node can host), the nodes that can host each, slots
from the job's release slot on, and, for block ``b``, only slots in which it can
progress or finish at the job's top speed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from instances import Config, Instance, Job, Node, TardinessMode, fits_node
from milp.alone import least_alone, least_use
from milp.requirements import (
    MilpError,
    ModelTooLarge,
    require_billable,
    require_cost,
    require_no_distributed,
    require_no_suspend,
    require_one_shared_shape,
    require_slot,
    require_slots,
)

EPS = 1e-9
# a model of this many variables takes about 12 GB to build (the 60-job model of
# benchmarks/milp_time_limit has 680,000 and takes 1.7 GB): more would not fit a 24 GiB
# machine beside the solver's own copy
MAX_MODEL_VARIABLES = 5_000_000


@dataclass(frozen=True)
class JobData:
    job: Job
    configs: tuple[Config, ...]  # allowed configurations, index k
    first_slot: int  # first slot starting at or after the release
    speed: tuple[float, ...]  # epochs per slot, per configuration
    cost: tuple[float, ...]  # pi * e_c, energy cost per epoch, per configuration
    lengths: tuple[float, ...]  # epochs of each block
    survival: tuple[float, ...]  # q_b
    stop_probability: tuple[float, ...]  # P(N = e_b)
    omega: float
    last_slot: int  # the last slot in which the job may run (see ``milp_data``'s cutoff)
    # relaunch overhead (docs/model.md, E1) in slots (0: none), and the energy cost of a
    # whole slot at each configuration's power (what a slot of overhead costs)
    relaunch: float = 0.0
    slot_power_cost: tuple[float, ...] = ()
    # prices by the slot (docs/model.md, 'Energy prices and carbon over time'): kWh per
    # epoch and per slot of each configuration, the price of a kWh (carbon in) per slot;
    # None: every slot at the instance's energy price (the costs above are the model's)
    energy: tuple[float, ...] = ()
    slot_kwh: tuple[float, ...] = ()
    slot_price: tuple[float, ...] | None = None

    @property
    def relaunch_slots(self) -> int:
        """The slots a relaunch's overhead reaches into (the last perhaps in part)."""
        return math.ceil(self.relaunch - 1e-12)

    def epoch_cost(self, k: int, t: int) -> float:
        """The cost of one epoch on configuration ``k`` in slot ``t``."""
        return self.cost[k] if self.slot_price is None else self.energy[k] * self.slot_price[t]

    def power_cost(self, k: int, t: int) -> float:
        """The cost of slot ``t`` at configuration ``k``'s power (a slot of overhead)."""
        if self.slot_price is None:
            return self.slot_power_cost[k]
        return self.slot_kwh[k] * self.slot_price[t]

    @cached_property
    def cheapest_price(self) -> float:
        """The least price of a kWh in any slot (1 where the costs are the model's)."""
        return 1.0 if self.slot_price is None else min(self.slot_price)

    @property
    def blocks(self) -> range:
        return range(len(self.lengths))

    @property
    def last(self) -> int:
        return len(self.lengths) - 1

    @cached_property
    def top_speed(self) -> float:
        return max(self.speed)

    def cumulative(self, b: int) -> float:
        """Epochs done when block ``b`` is complete."""
        return math.fsum(self.lengths[: b + 1])

    def earliest_finish_slot(self, b: int) -> int:
        """First slot at whose end block ``b`` can be complete (the first start's
        overhead, if any, comes first)."""
        need = self.cumulative(b) / self.top_speed + self.relaunch
        return self.first_slot + max(0, math.ceil(need - EPS) - 1)

    def least_energy(self) -> float:
        """A lower bound on the job's expected energy cost: every block's epochs, each
        run with its survival probability, at the cheapest cost per epoch; and the
        overhead of its first start at the cheapest power (every plan starts it once)."""
        if self.slot_price is None:
            cheapest, power = min(self.cost), min(self.slot_power_cost, default=0.0)
        else:  # at the cheapest slot's price: no slot is cheaper
            cheapest = min(self.energy) * self.cheapest_price
            power = min(self.slot_kwh) * self.cheapest_price
        overhead = self.relaunch * power if self.relaunch > 0 else 0.0
        return least_use(self.survival, self.lengths, cheapest, overhead)

    def earliest_work_slot(self, b: int) -> int:
        """First slot in which block ``b`` can progress."""
        before = self.cumulative(b - 1) if b > 0 else 0.0
        return self.first_slot + max(0, math.floor(before / self.top_speed + self.relaunch + EPS))


@dataclass(frozen=True)
class Outside:
    """What jobs outside the model hold, per (node id, slot): ``gpus``, the GPU indices
    the model's plans must leave alone, except that its shared jobs may join the shared
    GPUs of ``tenants`` (GPU index -> those tenants and their memory in GB; such a GPU
    is also in ``gpus``) while memory and ``K_max`` allow; ``host``, the CPU cores and
    DRAM (GB) they hold there (E3). The neighbourhood search (:mod:`milp.improve`)
    fixes the other jobs' plans this way."""

    gpus: Mapping[tuple[str, int], frozenset[int]] = field(default_factory=dict)
    tenants: Mapping[tuple[str, int], Mapping[int, tuple[int, float]]] = field(default_factory=dict)
    host: Mapping[tuple[str, int], tuple[int, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class MilpData:
    instance: Instance
    slots: int  # T
    slot: float  # Delta, hours
    jobs: dict[str, JobData] = field(repr=False)
    tardiness: TardinessMode = "worst_case"
    # what jobs outside the model hold (a large-neighbourhood search fixes the other
    # jobs' plans this way); nothing by default
    outside: Outside = field(default_factory=Outside, repr=False)

    def free_gpus(self, node_id: str, t: int) -> int:
        """GPUs of the node the model may use in slot ``t``."""
        return self.instance.node(node_id).num_gpus - len(self.outside.gpus.get((node_id, t), ()))

    def late_blocks(self, job_id: str) -> tuple[int, ...]:
        """Blocks whose completion time is charged: the last (worst case), or every block
        the job may stop at (expected)."""
        jd = self.jobs[job_id]
        if self.tardiness == "worst_case":
            return (jd.last,)
        return tuple(b for b in jd.blocks if jd.stop_probability[b] > 0)

    def energy_floor(self) -> float:
        """Each job's least expected energy: every epoch, with its survival probability,
        at the job's cheapest cost per epoch."""
        return _energy_floor(self.jobs)

    def late_weight(self, job_id: str, b: int) -> float:
        """The weight of block ``b``'s lateness in the job's tardiness cost (times
        ``omega``): 1 for the last block in worst-case mode, ``P(N = e_b)`` in expected
        mode."""
        if self.tardiness == "worst_case":
            return 1.0
        return self.jobs[job_id].stop_probability[b]

    def least_tardiness(self, job_id: str) -> float:
        """The job's tardiness cost were it alone, at top speed from its first slot: no
        plan finishes any of its charged blocks earlier."""
        jd = self.jobs[job_id]
        cost = 0.0
        for b in self.late_blocks(job_id):
            late = (jd.earliest_finish_slot(b) + 1) * self.slot - jd.job.due
            cost += self.late_weight(job_id, b) * jd.omega * max(0.0, late)
        return cost

    def job_bound(self, job_id: str) -> float:
        """The job's own capacity-relaxation bound (no plan costs it less, whatever the
        other jobs do): the larger of its least energy plus its least tardiness, each
        at its own configuration and on the slot grid, and its least cost alone, the
        two together in continuous time (:func:`milp.alone.least_alone`). On `medium`
        the sum of the bounds went from 115.3 to 123.4 with the second (2026-12-06)."""
        jd = self.jobs[job_id]
        split = jd.least_energy() + self.least_tardiness(job_id)
        alone = least_alone(self.instance, jd.job, self.tardiness, least_price(self.instance))
        return split if alone is None else max(split, alone)

    def separable_bound(self) -> float:
        """A lower bound on every plan's cost, valid before any solve: the capacity
        relaxation, each job at its own bound (:meth:`job_bound`)."""
        return math.fsum(self.job_bound(j) for j in self.jobs)

    @property
    def horizon(self) -> float:
        return self.slots * self.slot

    def slot_range(self, job_id: str) -> range:
        """The slots in which the job may run: from its release to its last slot."""
        jd = self.jobs[job_id]
        return range(jd.first_slot, jd.last_slot + 1)

    def hosts(self, cfg: Config) -> tuple[Node, ...]:
        """Nodes that can host ``cfg`` (each of the nodes of a multi-node configuration)."""
        return tuple(
            n for n in self.instance.nodes_by_type.get(cfg.gpu_type, ()) if fits_node(cfg, n)
        )

    def free_host(self, node_id: str, t: int) -> tuple[int | None, float | None]:
        """CPU cores and DRAM of the node the model may use in slot ``t`` (``None``
        where the node states none: unlimited)."""
        node = self.instance.node(node_id)
        cpus, dram = self.outside.host.get((node_id, t), (0, 0.0))
        return (
            None if node.cpu_cores is None else node.cpu_cores - cpus,
            None if node.dram_gb is None else node.dram_gb - dram,
        )

    @cached_property
    def shared_labels(self) -> dict[str, int]:
        """Per node, how many of its GPUs may be in shared mode at once: no more than the
        GPUs, nor than the jobs that can share a GPU of its type."""
        inst = self.instance
        out = {}
        for n in inst.nodes:
            sharers = sum(
                1
                for d in self.jobs.values()
                for c in d.configs
                if c.shared and c.gpu_type == n.gpu_type
            )
            out[n.id] = min(n.num_gpus, sharers)
        return out

    @cached_property
    def outside_gpus(self) -> dict[str, tuple[int, ...]]:
        """Per node, the GPUs that hold tenants from outside the model in some slot. The
        model's jobs may join them as shared labels ``U_n + i`` (``i`` the GPU's position
        here), in the slots where those tenants are."""
        out: dict[str, set[int]] = {}
        for (n, _), gpus in self.outside.tenants.items():
            out.setdefault(n, set()).update(gpus)
        return {n: tuple(sorted(g)) for n, g in out.items()}

    def labels(self, node_id: str, t: int) -> range | list[int]:
        """Shared labels of the node in slot ``t``: the model's own, then the GPUs whose
        outside tenants are there in that slot."""
        own = self.shared_labels[node_id]
        here = self.outside.tenants.get((node_id, t))
        if not here:
            return range(own)
        return [*range(own), *(self.outside_label_of(node_id, g) for g in sorted(here))]

    def outside_label_of(self, node_id: str, gpu: int) -> int:
        """The shared label of a GPU with outside tenants: after the model's own labels."""
        return self.shared_labels[node_id] + self.outside_gpus[node_id].index(gpu)

    def outside_label(self, node_id: str, u: int, t: int) -> tuple[int, int, float] | None:
        """For a label of outside tenants: its GPU, their number and memory in slot ``t``
        (``None`` for the model's own labels)."""
        own = self.shared_labels[node_id]
        if u < own:
            return None
        g = self.outside_gpus[node_id][u - own]
        count, memory = self.outside.tenants[node_id, t][g]
        return g, count, memory


def milp_data(
    instance: Instance,
    slots: int,
    tardiness: TardinessMode | None = None,
    cutoff: float | None = None,
    *,
    check_size: bool = True,
    outside: Outside | None = None,
    idle_bound: bool = False,
) -> MilpData:
    """Index sets for ``instance`` over ``slots`` slots; raises :class:`MilpError` if the
    MILP cannot model the instance (:mod:`milp.requirements`), if a job cannot finish
    within the horizon even alone on its fastest configuration, or (with
    ``check_size``, for a model about to be built) if the MILP would not fit in memory.

    ``cutoff``, the cost of a known plan (the warm start), bounds every job's lateness in
    any plan at least as good: ``omega * P(N = E) * late <= cutoff - (every job's least
    energy)``, so a job gets no slots after the one that would make it later than that.
    The optimum is never cut off (its cost is at most the cutoff).

    ``outside``: what jobs outside the model hold (:class:`Outside`)."""
    slot = require_slot(instance)
    if require_slots(slots) is None:  # 10.5 or "10" refused by it; None: no horizon
        raise MilpError("slots = None: must be a whole number of slots, at least 1")
    require_cost("cutoff", cutoff)
    # idle power only where the caller bounds it from below (milp.idle, or by nothing
    # as the Lagrangian bound does) over a whole instance
    require_billable(instance, slots, slot, idle_bound and outside is None)
    require_no_suspend(instance)
    require_one_shared_shape(instance)
    require_no_distributed(instance)
    mode = instance.tardiness_mode(tardiness)
    prices = slot_prices(instance, slots, slot)
    jobs = {}
    for job in instance.jobs:
        jobs[job.id] = _job_data(instance, job, slots, slot, prices)
    if cutoff is not None:
        jobs = _cut_windows(instance, jobs, slots, slot, cutoff, mode)
    if check_size:
        _check_size(instance, jobs, slots, slot)
    return MilpData(instance, slots, slot, jobs, mode, outside or Outside())


def one_price(instance: Instance) -> bool:
    """Whether every hour pays the instance's ``energy_price``: no price series that
    changes, no priced carbon."""
    carbon = instance.carbon
    priced_carbon = carbon is not None and carbon.price > 0
    return instance.price_series.constant == instance.energy_price and not priced_carbon


def slot_prices(instance: Instance, slots: int, slot: float) -> tuple[float, ...] | None:
    """The price of a kWh in each slot, its carbon's price included; ``None`` where every
    slot pays the instance's ``energy_price`` (the model as without a series). The
    series are constant within each slot (:func:`require_billable`)."""
    if one_price(instance):
        return None
    out = np.asarray(instance.price_series.slot_means(slot, slots))
    carbon = instance.carbon
    if carbon is not None and carbon.price > 0:
        out = out + carbon.price_per_gram * np.asarray(carbon.intensity.slot_means(slot, slots))
    return tuple(float(x) for x in out)


def _job_data(
    instance: Instance,
    job: Job,
    slots: int,
    slot: float,
    prices: tuple[float, ...] | None = None,
) -> JobData:
    """The job's index data over ``slots`` slots of ``slot`` hours; :class:`MilpError`
    if it cannot finish within them even alone on its fastest configuration."""
    configs = instance.allowed_configs(job)
    dist = job.distribution
    probs = dict(zip(dist.stops, dist.probabilities, strict=True))
    data = JobData(
        job=job,
        configs=configs,
        first_slot=math.ceil(job.release / slot - EPS),
        speed=tuple(slot / instance.epoch_time(job, c) for c in configs),
        cost=tuple(instance.epoch_cost(job, c) for c in configs),
        lengths=dist.block_lengths,
        survival=dist.block_survival,
        stop_probability=tuple(probs.get(e, 0.0) for e in dist.stops),
        omega=instance.tardiness_weight(job.id),
        last_slot=slots - 1,
        relaunch=instance.relaunch(job) / slot,
        slot_power_cost=tuple(
            instance.energy_price * instance.power_w(c) * slot / 1000.0 for c in configs
        ),
        energy=tuple(instance.epoch_energy(job, c) for c in configs),
        slot_kwh=tuple(instance.power_w(c) * slot / 1000.0 for c in configs),
        slot_price=prices,
    )
    done = data.earliest_finish_slot(data.last)
    if done >= slots:
        fastest = min(configs, key=lambda c: instance.epoch_time(job, c))
        need = done - data.first_slot + 1
        raise MilpError(
            f"job {job.id!r} cannot finish within the horizon of {slots} slots "
            f"({slots * slot:g} h): released at {job.release:g} h it starts in slot "
            f"{data.first_slot} and needs at least {need} slots of {slot:g} h for its "
            f"{job.max_epochs:g} epochs even on its fastest configuration "
            f"{fastest.label}; give a longer horizon"
        )
    return data


def _energy_floor(jobs: dict[str, JobData]) -> float:
    return math.fsum(jd.least_energy() for jd in jobs.values())


def check_size(d: MilpData, limit: int | None = None, what: str = "the MILP") -> None:
    """Raise :class:`ModelTooLarge` if the model of ``d`` would not fit in memory (see
    :func:`milp_data`'s ``check_size``): for index sets made without the check.
    Branch-and-price, whose space of schedules grows as the model does, passes its
    own ``limit``."""
    _check_size(d.instance, d.jobs, d.slots, d.slot, limit, what)


def model_variables(d: MilpData) -> int:
    """The estimated variables of ``d``'s model (:func:`_check_size`'s estimate)."""
    return _variables(d.instance, d.jobs, d.slots)


def _variables(instance: Instance, jobs: dict[str, JobData], slots: int) -> int:
    gpus = instance.gpus_by_type
    nodes = {t: len(ns) for t, ns in instance.nodes_by_type.items()}
    size = 0
    sharers: dict[str, int] = {}
    for jd in jobs.values():
        window = jd.last_slot - jd.first_slot + 1
        # its progress per slot, each block's done per slot and lateness
        size += window * (1 + len(jd.lengths)) + len(jd.lengths)
        per_slot = 0  # per slot of its window, over its configurations
        for c in jd.configs:
            places = gpus[c.gpu_type] if c.shared else nodes[c.gpu_type]
            per_slot += 1 + places + len(jd.lengths)
            if c.shared:
                sharers[c.gpu_type] = sharers.get(c.gpu_type, 0) + 1
        size += window * per_slot
        if jd.relaunch > 0:
            # the relaunch family (milp/overhead.py): per slot whether it relaunches, is
            # lost, ever ran, and its overhead's cost; per configuration and slot a begin
            # per placement, a first run and a block's start per block, as many as the
            # run, placement and work variables above
            size += window * (4 + per_slot)
        if instance.node_power:
            # idle power (milp/idle.py): the chain of its stops per slot; where empty
            # nodes power off (milp/power_off.py), at most a share and its stops per node
            # it may run on and slot
            size += window * len(jd.lengths)
            if instance.power_off is not None:
                types = {c.gpu_type for c in jd.configs}
                size += window * sum(nodes[t] for t in types) * (1 + len(jd.lengths))
    if instance.node_power:
        # the cluster powered and its idle cost per slot; where nodes power off, per node
        # and slot whether it is on, starts busy, is occupied and boots
        size += slots * (2 + (4 * len(instance.nodes) if instance.power_off is not None else 0))
    # a node's GPUs in shared mode (``shared_gpu``) in every slot of the horizon, whatever
    # the jobs' windows: over 800,000 slots they were 3.2 million of a model estimated at
    # 1,460 (a hostile-input review, 2026-12-07)
    labels = sum(min(n.num_gpus, sharers.get(n.gpu_type, 0)) for n in instance.nodes)
    return size + labels * slots


def _check_size(
    instance: Instance,
    jobs: dict[str, JobData],
    slots: int,
    slot: float,
    limit: int | None = None,
    what: str = "the MILP",
) -> None:
    """Refuse a model too large to build in memory, before building it. The estimate
    counts, per job, configuration and slot, the ``run`` binary, its placements (a node
    of the type, or a shared GPU label) and a ``work`` variable per block; per job and
    slot its progress and each block's completion, and each block's lateness; per node
    and slot the GPUs that may be in shared mode; where a job pays a relaunch overhead,
    the relaunch family's (milp/overhead.py); where idle power is charged, its own
    (milp/idle.py, milp/power_off.py). An estimate, not a proved bound: on the MILP suite
    and the bundled instances, with and without idle power and nodes powered off, it
    is 1.00-1.12 times the variables built (a test)."""
    size = _variables(instance, jobs, slots)
    limit = MAX_MODEL_VARIABLES if limit is None else limit  # read now: tests lower it
    if size > limit:
        raise ModelTooLarge(
            f"{what} would have up to {size:,} variables over {slots:,} slots of {slot:g} h "
            f"(limit {limit:,}): the exact MILP is for small instances; use a "
            "heuristic policy, fewer jobs or stopping points, or a longer slot"
        )
    # the relaunch rows (milp/overhead.py) tie each slot to every slot a relaunch's
    # overhead spans, per configuration (a lower estimate of their nonzeros, each row
    # holding a few): with 1,000 h of overhead on 0.25-h slots two jobs' rows held over
    # 80 million, built for minutes before the solver's clock started (found by a
    # probe, 2026-12-05)
    terms = 0
    for jd in jobs.values():
        window = jd.last_slot - jd.first_slot + 1
        terms += window * min(window, jd.relaunch_slots) * len(jd.configs)
    if terms > limit:
        longest = max(jobs.values(), key=lambda jd: jd.relaunch)
        raise ModelTooLarge(
            f"{what} would hold at least {terms:,} relaunch terms (limit {limit:,}): "
            f"a relaunch overhead of {longest.relaunch * slot:g} h spans "
            f"{longest.relaunch_slots:,} slots of {slot:g} h; use a longer slot or a "
            "heuristic policy"
        )


def improving_end(
    instance: Instance, cutoff: float, mode: TardinessMode
) -> tuple[float, str | None]:
    """The latest time any job of a plan costing at most ``cutoff`` can end (its due date
    plus the lateness the cutoff allows it, as in :func:`_cut_windows`, with every
    job's least energy and first launch at the least price anywhere in the series), or
    the latest due date where that is later; and the first job whose lateness nothing
    bounds (no tardiness weight, or one so small that the bound overflows), or
    ``None``. A plan can gain by being late (a job that waits out a price spike, or runs
    slowly on fewer GPUs where its weight is below the energy saved): a horizon that
    ends at the last due date cuts such plans off, and the MILP's optimum over it is
    not the instance's."""
    least = least_price(instance)
    energy = {}
    for job in instance.jobs:
        energy[job.id] = least * least_kwh(instance, job)
    rooms = _rooms(instance, mode, cutoff, energy)
    end = max(job.due for job in instance.jobs)
    for job in instance.jobs:
        room = rooms[job.id]
        dist = job.distribution
        full = dict(zip(dist.stops, dist.probabilities, strict=True)).get(dist.stops[-1], 0.0)
        late = _allowed_lateness(room, instance.tardiness_weight(job.id), full, mode)
        if not math.isfinite(late):
            return end, job.id
        end = max(end, job.due + late)
    return end, None


def least_kwh(instance: Instance, job: Job) -> float:
    """The job's least expected kWh in any plan (:func:`milp.alone.least_use` at its
    leanest configuration, its first start at the least power)."""
    configs = instance.allowed_configs(job)
    dist = job.distribution
    return least_use(
        dist.block_survival,
        dist.block_lengths,
        min(instance.epoch_energy(job, c) for c in configs),
        instance.relaunch(job) * min(instance.power_w(c) for c in configs) / 1000.0,
    )


def least_price(instance: Instance) -> float:
    """The least price of a kWh anywhere in the bill: the series' least, and carbon at
    its least intensity where carbon is priced."""
    least = float(instance.price_series.values_array.min())
    carbon = instance.carbon
    if carbon is not None and carbon.price > 0:
        least += carbon.price_per_gram * float(carbon.intensity.values_array.min())
    return least


def _rooms(
    instance: Instance, mode: TardinessMode, cutoff: float, energy: Mapping[str, float]
) -> dict[str, float]:
    """Per job, what a plan at most ``cutoff`` leaves for its tardiness: the cutoff less
    its own least ``energy`` and every other job's least cost alone, energy and
    tardiness together (:func:`milp.alone.least_alone`, never below that job's least
    energy; each job's cost is at least both). Shared by the horizon's reach
    (:func:`improving_end`) and the cutoff's windows (:func:`_cut_windows`). A job that
    cannot be on time at its cheapest leaves the others less room: on a two-job toy,
    the reach from least energies alone was 308 slots, 134 with this, and the optimum
    ends within 5."""
    price = least_price(instance)
    surplus = {}
    for job in instance.jobs:
        if job.id in energy:
            alone = least_alone(instance, job, mode, price)
            surplus[job.id] = 0.0 if alone is None else max(0.0, alone - energy[job.id])
    floor = math.fsum(energy.values()) + math.fsum(surplus.values())
    return {j: _room(cutoff, floor - surplus[j]) for j in energy}


def _room(cutoff: float, floor: float) -> float:
    """What a plan at most ``cutoff`` has left for tardiness above the energy ``floor``;
    a little more, so that rounding never cuts the cutoff plan itself off."""
    return max(cutoff - floor, 0.0) + 1e-9 * max(1.0, abs(cutoff))


def _allowed_lateness(room: float, omega: float, full: float, mode: TardinessMode) -> float:
    """How late a job's full run may end within ``room``: its weight is ``omega`` in
    the worst case, ``omega * P(N = E)`` (``full``) in expectation. Infinite where no
    weight bounds it, or one so small that the quotient overflows (a weight of 5e-324:
    found by a probe, 2026-12-05)."""
    weight = omega * (1.0 if mode == "worst_case" else full)
    return room / weight if weight > 0 else math.inf


def _cut_windows(
    instance: Instance,
    jobs: dict[str, JobData],
    slots: int,
    slot: float,
    cutoff: float,
    mode: TardinessMode,
) -> dict[str, JobData]:
    """Each job's last slot under a cost cutoff (see :func:`milp_data`)."""
    rooms = _rooms(instance, mode, cutoff, {j: jd.least_energy() for j, jd in jobs.items()})
    out = {}
    for j, jd in jobs.items():
        room = rooms[j]
        last = slots - 1
        # completing at the end of slot s is late by slot * (s + 1) - due; where the
        # cutoff allows any lateness, nothing is cut
        late = _allowed_lateness(room, jd.omega, jd.stop_probability[jd.last], mode)
        if late < slots * slot:
            last = math.floor((jd.job.due + late) / slot - 1 + EPS)
        last = min(slots - 1, max(last, jd.earliest_finish_slot(jd.last)))
        out[j] = replace(jd, last_slot=last)
    return out
