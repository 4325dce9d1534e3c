"""Hypothesis strategies: valid instances and feasible plans."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from heuristic.core.occupancy import Occupancy
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node, Plan, Segment
from instances.energy import Carbon, Series
from instances.limits import MIN_PRICE
from validation.timeline import continues, start_overhead

GPU_NAMES = ("k80", "p100", "v100")


@st.composite
def distributions(draw: st.DrawFn, max_epochs: int | None = None) -> EpochDistribution:
    E = max_epochs or draw(st.integers(1, 30))
    inner = draw(st.lists(st.integers(1, max(1, E - 1)), max_size=4, unique=True)) if E > 1 else []
    stops = [*sorted(set(inner) - {E}), E]
    weights = draw(st.lists(st.floats(0.0, 1.0), min_size=len(stops), max_size=len(stops)))
    weights[-1] = max(weights[-1], 0.05)
    total = sum(weights)
    probs = [w / total for w in weights]
    probs[-1] = 1.0 - sum(probs[:-1])
    return EpochDistribution(tuple(float(s) for s in stops), tuple(probs))


@st.composite
def instances(
    draw: st.DrawFn,
    max_jobs: int = 5,
    slot: bool | None = None,
    sharing: bool = True,
    relaunch: bool = False,
) -> Instance:
    """A valid instance; with ``relaunch``, an overhead for the instance (0 included) and
    for some jobs their own."""
    names = draw(st.lists(st.sampled_from(GPU_NAMES), min_size=1, max_size=3, unique=True))
    types = [
        GpuType(n, float(draw(st.sampled_from([12, 16, 32]))), float(draw(st.integers(100, 400))))
        for n in names
    ]
    nodes = [
        Node(f"n{i}", draw(st.sampled_from(names)), draw(st.sampled_from([1, 2, 4])))
        for i in range(draw(st.integers(1, 4)))
    ]
    sizes = {n: sorted({x.num_gpus for x in nodes if x.gpu_type == n}) for n in names}
    jobs = []
    for j in range(draw(st.integers(1, max_jobs))):
        dist = draw(distributions())
        memory = float(draw(st.sampled_from([2, 4, 8, 20])))
        times: dict[Config, float] = {}
        for t in names:
            if not sizes[t]:
                continue
            tau1 = draw(st.floats(0.05, 1.0))
            for g in (1, 2, 4):
                if g <= sizes[t][-1] and draw(st.booleans()):
                    times[Config(t, g)] = tau1 / g ** draw(st.floats(0.5, 1.0))
            two_nodes = [x for x in nodes if x.gpu_type == t and x.num_gpus >= 2]
            if len(two_nodes) >= 2 and draw(st.booleans()):
                times[Config(t, 4, nodes=2)] = tau1 / 3.0
            gpu = next(x for x in types if x.name == t)
            if sharing and memory <= gpu.memory_gb and draw(st.booleans()):
                times[Config(t, 1, shared=True)] = tau1 / draw(st.floats(0.4, 1.0))
        if not times:  # make sure the job fits somewhere
            t = next(n for n in names if sizes[n])
            times[Config(t, 1)] = draw(st.floats(0.05, 1.0))
        release = draw(st.floats(0.0, 5.0))
        due = release + draw(st.floats(0.2, 30.0))
        weight = draw(st.one_of(st.none(), st.floats(0.0, 5.0)))
        own = draw(st.one_of(st.none(), st.sampled_from([0.0, 0.1, 0.6]))) if relaunch else None
        jobs.append(
            Job(f"j{j}", release, due, dist, times, memory, weight=weight, relaunch_hours=own)
        )
    use_slot = draw(st.booleans()) if slot is None else slot
    default = draw(st.sampled_from([0.0, 0.05, 0.3, 0.8])) if relaunch else 0.0
    # a suspend overhead (a resume on the same GPUs) is at most every job's relaunch one
    least = min(default if j.relaunch_hours is None else j.relaunch_hours for j in jobs)
    suspend = draw(st.sampled_from([None, 0.0, 0.5 * least])) if relaunch else None
    return Instance(
        tuple(types),
        tuple(nodes),
        tuple(jobs),
        energy_price=draw(st.floats(0.05, 0.5)),
        tardiness=draw(st.sampled_from(["worst_case", "expected"])),
        slot=draw(st.sampled_from([0.25, 0.5])) if use_slot else None,
        max_share=draw(st.integers(1, 3)),
        relaunch_hours=default,
        suspend_hours=suspend,
    )


@st.composite
def serial_plans(draw: st.DrawFn, instance: Instance) -> Plan:
    """A feasible plan that runs the jobs one after another, each in random pieces on
    random allowed configurations (so plans with configuration changes are covered).
    Where jobs pay a relaunch overhead, a piece that relaunches is longer by it, and
    pieces may be separated by pauses (each resume a relaunch, or a cheaper resume where
    it is on the same GPUs and the instance has a suspend overhead)."""
    slot = instance.slot
    t = 0.0
    segs: list[Segment] = []
    pauses = instance.has_relaunch
    for job in instance.jobs:
        t = max(t, job.release)
        if slot is not None:
            t = -(-t // slot) * slot
        left = job.max_epochs
        pieces = draw(st.integers(1, 3))
        previous: Segment | None = None
        for k in range(pieces):
            if pauses and k > 0 and draw(st.booleans()):
                t += slot if slot is not None else draw(st.floats(0.01, 1.0))
            cfg = draw(st.sampled_from(instance.allowed_configs(job)))
            tau = instance.epoch_time(job, cfg)
            last = k == pieces - 1
            epochs = left if last else left * draw(st.floats(0.1, 0.9))
            alloc = Occupancy(instance).find(job, cfg)
            assert alloc is not None
            lost = 0.0
            here = Segment(t, t, job.id, cfg, alloc.gpus)
            if not continues(previous, here):
                lost = start_overhead(instance, previous, here)
            dur = epochs * tau + lost
            if slot is not None:
                dur = max(slot, -(-dur // slot) * slot)
            previous = Segment(t, t + dur, job.id, cfg, alloc.gpus)
            segs.append(previous)
            t += dur
            left -= min(left, (dur - lost) / tau)
            if left <= 1e-9 * job.max_epochs:
                break
    return Plan(tuple(segs))


@st.composite
def series(draw: st.DrawFn, upper: float = 1.0, least: float = 0.0) -> Series:
    """A piecewise-constant series: a regular grid or uneven breakpoints, repeated or
    held past its end, values from 0 (a free hour) to ``upper``, none positive below
    ``least`` (a price's least positive value)."""
    n = draw(st.integers(1, 8))
    values = draw(st.lists(st.floats(0.0, upper), min_size=n, max_size=n))
    values = [v if v >= least else 0.0 for v in values]
    after = draw(st.sampled_from(["repeat", "hold"]))
    if draw(st.booleans()):
        step = draw(st.sampled_from([0.25, 0.5, 1.0, 3.0]))
        return Series.regular(step, values, after, upper=upper)
    widths = draw(st.lists(st.floats(0.01, 4.0), min_size=n, max_size=n))
    times = [0.0]
    for w in widths:
        times.append(times[-1] + w)
    return Series(tuple(times), values, after, upper=upper)


@st.composite
def priced_instances(
    draw: st.DrawFn, max_jobs: int = 4, relaunch: bool = False, idle: bool = False
) -> Instance:
    """A valid instance with a price series and, or not, a carbon series with a price;
    with ``idle``, GPUs that draw power when idle and nodes a base power."""
    inst = draw(instances(max_jobs=max_jobs, relaunch=relaunch))
    if idle:
        types = tuple(
            replace(g, idle_w=g.power_w * draw(st.sampled_from([0.0, 0.1, 0.3])))
            for g in inst.gpu_types
        )
        nodes = tuple(
            replace(n, base_w=draw(st.sampled_from([0.0, 80.0, 400.0]))) for n in inst.nodes
        )
        inst = inst.replace(gpu_types=types, nodes=nodes)
    carbon = None
    if draw(st.booleans()):
        intensity = draw(series(upper=800.0))
        carbon = Carbon(intensity, draw(st.sampled_from([0.0, 50.0, 400.0])))
    return inst.replace(prices=draw(series(upper=0.6, least=MIN_PRICE)), carbon=carbon)
