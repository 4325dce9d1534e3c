"""STS and the power of an idle cluster (heuristic/sts/tail.py; docs/model.md, 'STS and
idle power'): the hours the last job alone keeps the cluster powered, priced as the
evaluator charges them, and STS hurrying that job where they cost more than the speed."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

from heuristic.core.occupancy import Occupancy
from heuristic.core.policy import JobStatus, SchedulerState
from heuristic.core.registry import make_policy
from heuristic.sts.policy import StsPolicy
from heuristic.sts.profile import Option, Profile, Step, exact_profile
from heuristic.sts.tail import (
    Arrivals,
    all_done,
    alone_cost,
    arrival_rate,
    flat_bill,
    profile_blocks,
    rate_falls,
    running_cost,
    tail_cost,
)
from instances import (
    Config,
    EpochDistribution,
    GpuType,
    Instance,
    Job,
    Node,
    Plan,
    Segment,
)
from instances.generators.power import lay_idle
from instances.generators.registry import GENERATORS
from instances.power import PowerOff
from tests.heuristic.sts.test_profile import option_sets
from tests.strategies import distributions
from validation.evaluate import evaluate
from validation.simulator import rollout, simulate

blocks_st = st.lists(
    st.tuples(st.floats(0.0, 20.0), st.floats(0.05, 1.0)), min_size=1, max_size=3
).map(lambda bs: [(t, w / sum(x for _, x in bs)) for t, w in sorted(bs, key=lambda b: b[0])])


@settings(max_examples=60)
@given(blocks_st, st.lists(blocks_st, max_size=3), st.floats(0.0, 5.0), st.sampled_from([0.0, 0.3]))
def test_alone_cost_is_the_expected_hours_alone(mine, others, now, rate):
    """By enumeration of every combination of the jobs' completions: the hours the job
    runs after ``now`` and after every other job, each discounted by ``e^{-rate (t-now)}``."""

    def hours(start: float, end: float) -> float:
        if rate == 0:
            return end - start
        return (math.exp(-rate * (start - now)) - math.exp(-rate * (end - now))) / rate

    mine, others, want = _hours_alone(mine, others, now, hours)
    got = alone_cost(mine, all_done(others, now), 1.0, flat_bill(1.0), Arrivals(rate))
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


def _hours_alone(mine, others, now, hours):
    """The blocks from ``now``, and by enumeration of every combination of the jobs'
    completions, the expected ``hours(start, end)`` the first job runs alone."""
    mine = [(now + t, p) for t, p in mine]
    others = [[(now + t, p) for t, p in bs] for bs in others]
    want = 0.0
    for combo in itertools.product(mine, *others):
        end = combo[0][0]
        start = max([now, *(t for t, _ in combo[1:])])
        if end > start:
            want += math.prod(q for _, q in combo) * hours(start, end)
    return mine, others, want


sojourns_st = st.tuples(
    st.lists(st.floats(0.0, 8.0), min_size=1, max_size=4),  # completed
    st.lists(st.floats(0.0, 8.0), max_size=3),  # still running (censored)
)


@settings(max_examples=60)
@given(blocks_st, st.lists(blocks_st, max_size=3), st.floats(0.0, 5.0), sojourns_st)
def test_alone_cost_counts_the_hours_no_new_job_is_present(mine, others, now, sojourns):
    """By enumeration of the completions, each hour alone discounted by the chance that
    none of the jobs arriving from ``now`` (0.7 an hour) is present then, ``e^{-0.7 L}``,
    ``L(x) = ∫_0^x S`` of the sojourns' Kaplan-Meier survival, integrated on a fine grid."""
    done, running = sojourns
    arrivals = Arrivals.seen(0.7, done, running)
    sf = scipy.stats.ecdf(scipy.stats.CensoredData(uncensored=done, right=running)).sf
    grid = np.linspace(0.0, 25.0, 250_001)
    exposure = integrate.cumulative_trapezoid(sf.evaluate(grid), grid, initial=0.0)
    # ∫_0^x e^{-0.7 L} on the grid; an hour alone from a to b is its difference
    kept = integrate.cumulative_trapezoid(np.exp(-0.7 * exposure), grid, initial=0.0)

    def hours(start: float, end: float) -> float:
        return float(np.diff(np.interp([start - now, end - now], grid, kept))[0])

    mine, others, want = _hours_alone(mine, others, now, hours)
    got = alone_cost(mine, all_done(others, now), 1.0, flat_bill(1.0), arrivals)
    assert got == pytest.approx(want, rel=1e-4, abs=1e-6)


def test_the_discount_is_the_chance_that_no_arrival_is_present():
    """Simulated: jobs arrive at 0.8 an hour from now, each staying 0.5, 2 or 6 hours
    (with chances 0.5, 0.3, 0.2); the share of runs with none present after ``x`` hours
    is ``e^{-0.8 L(x)}``, not the chance that none has arrived, ``e^{-0.8 x}``."""
    stays, chances = np.array([0.5, 2.0, 6.0]), np.array([0.5, 0.3, 0.2])
    # a sample whose survival is exactly the law's: 5 of 10 complete at 0.5, 3 at 2, 2 at 6
    arrivals = Arrivals.seen(0.8, [0.5] * 5 + [2.0] * 3 + [6.0] * 2, [])
    rng = np.random.default_rng(7)
    runs = 20_000
    for x in (1.0, 3.0, 8.0):
        count = rng.poisson(0.8 * x, runs)
        none = 0
        for n in count:
            starts = rng.uniform(0.0, x, n)
            none += bool(np.all(starts + rng.choice(stays, n, p=chances) <= x))
        want = math.exp(-float(arrivals.exponent(np.array([x]))[0]))
        assert abs(none / runs - want) < 4 * math.sqrt(want * (1 - want) / runs)
        assert want > math.exp(-0.8 * x) + 0.01  # the sojourns end: more chance than none arrived


def test_the_sojourns_are_kaplan_meier_s():
    """Completed at 1 and 2, one still running after 3 hours: S is 2/3 from 1, 1/3 from
    2 on (the running one does not end it), so ``L(4) = 1 + 2/3 + 2/3``."""
    arrivals = Arrivals.seen(1.5, [1.0, 2.0], [3.0])
    got = arrivals.exponent(np.array([0.5, 1.5, 4.0]))
    assert got == pytest.approx(1.5 * np.array([0.5, 1.0 + 1 / 3, 1.0 + 2 / 3 + 2 / 3]))
    assert Arrivals.seen(1.5, [], [3.0]) == Arrivals(1.5)  # none completed: forever


@pytest.mark.parametrize("mode", ["rollout", "sampled"])
def test_sts_sees_the_sojourns_of_the_jobs_that_completed(mode):
    # the bundled day's jobs on 2 nodes, idle power on: arrivals spread over hours,
    # gaps in which the cluster empties, and the stops sampled or all run
    inst = lay_idle(
        GENERATORS["realdata"].instance({"nodes": 2, "jobs": 12, "slot": 0.25}, 0), "low"
    )
    policy = StsPolicy()
    run = simulate(inst, policy, mode=mode, seed=3)
    truth = sorted(run.completions[j.id] - j.release for j in inst.jobs)
    done, lasted = policy.sojourns
    assert done and lasted  # completions seen, and some while the cluster emptied
    left = list(truth)
    for d in done:  # each completion seen is a job's own sojourn, to the clock
        k = min(range(len(left)), key=lambda i: abs(left[i] - d))
        assert left.pop(k) == pytest.approx(d, abs=1e-9)
    for least in lasted:  # a completion unseen: lasted at least that long, not much less
        k = min(range(len(left)), key=lambda i: (left[i] < least - 1e-9, left[i] - least))
        assert left.pop(k) - least + 1e-9 >= 0.0
    assert len(left) >= 1  # the last to complete is never seen


@settings(max_examples=60)
@given(st.lists(blocks_st, max_size=4), st.floats(0.0, 5.0), st.sampled_from([0.0, 0.3, math.inf]))
def test_running_cost_is_the_expected_hours_until_the_last_completion(jobs, now, rate):
    """By enumeration of every combination of the jobs' completions: the hours from
    ``now`` to the last of them, each discounted by ``e^{-rate (t-now)}`` (nothing where
    a job arrives at once); at a price of 2 a kWh and 3 kW."""
    jobs = [[(now + t, p) for t, p in bs] for bs in jobs]
    want = 0.0
    for combo in itertools.product(*jobs):
        p = math.prod(q for _, q in combo)
        hours = max((t for t, _ in combo), default=now) - now
        if rate == math.inf or hours <= 0:
            continue
        want += p * (hours if rate == 0 else -math.expm1(-rate * hours) / rate)
    got = running_cost(jobs, now, 3.0, flat_bill(2.0), Arrivals(rate))
    assert got == pytest.approx(6.0 * want, rel=1e-9, abs=1e-12)


@settings(max_examples=30)
@given(option_sets(), distributions(), st.floats(1.0, 1.5), st.floats(0.0, 3.0))
def test_a_lone_profile_costs_what_the_evaluator_charges(opts, dist, factor, release):
    """A job alone, from its release: its energy less its GPUs' idle power, plus the
    cluster's own power until it completes, is the evaluator's bill less the powered
    hours before the release (no tardiness: the budget holds the slowest run)."""
    budget = factor * max(o.time for o in opts) * dist.max_epochs
    price = 0.2
    epoch_times = {o.config: o.time for o in opts}
    gpu = GpuType("v100", 16.0, 300.0, idle_w=45.0)
    inst_opts = [Option(c, t, price * c.power_w(gpu, 2) * t / 1000) for c, t in epoch_times.items()]
    job = Job("j", release, release + budget, dist, epoch_times, 4.0, weight=7.0)
    node = Node("n", "v100", 8, base_w=400.0)
    inst = Instance((gpu,), (node,), (job,), energy_price=price)
    p = exact_profile(inst_opts, dist, budget, omega=7.0)
    t, segs = release, []
    for s in p.steps:
        dur = s.epochs * epoch_times[s.config]
        gpus = tuple(("n", g) for g in range(1 if s.config.shared else s.config.gpus))
        segs.append(Segment(t, t + dur, "j", s.config, gpus))
        t += dur
    ev = evaluate(inst, Plan(tuple(segs)))
    done = all_done([], release)
    mine = tail_cost(inst, job, p, dist, release, done, flat_bill(price))
    before = inst.powered_kw * price * release
    assert mine == pytest.approx(ev.total_cost - before, rel=1e-9, abs=1e-12)
    blocks = profile_blocks(inst, job, p, dist, release)
    assert blocks[-1][0] == pytest.approx(release + p.worst_time, rel=1e-12)


def test_arrival_rate_counts_the_window():
    assert arrival_rate([], 5.0) == 0.0
    assert arrival_rate([0.0, 0.0], 1.9, window=2.0) == math.inf  # too soon to tell
    assert rate_falls([0.0, 0.0], 1.9, window=2.0) == 2.0
    assert arrival_rate([0.0, 0.5, 3.0], 3.5, window=2.0) == 0.5  # only 3.0 within 2 h
    assert rate_falls([0.0, 0.5, 3.0], 3.5, window=2.0) == 5.0
    assert arrival_rate([0.0, 0.5], 3.5, window=2.0) == 0.0


V1, V8 = Config("v100", 1), Config("v100", 8)
TIMES = {V1: 1.0, Config("v100", 2): 0.52, Config("v100", 4): 0.28, V8: 0.16}


def _long_and_short(idle: bool) -> Instance:
    """One 8-V100 node; a job of 2 epochs due at 3 h and one of 200 epochs due at 400 h,
    both released at 0. With idle power (45 W a GPU, 400 W base) the cluster draws 0.76
    kW of its own: an hour of the long job alone on one GPU costs more in the cluster's
    power (0.76 kWh) than its own energy (0.255 kWh net of its GPU's idle power)."""
    gpu = GpuType("v100", 32.0, 300.0, idle_w=45.0 if idle else 0.0)
    node = Node("n", "v100", 8, base_w=400.0 if idle else 0.0)
    short = Job("short", 0.0, 3.0, EpochDistribution.deterministic(2.0), TIMES, 8.0)
    long = Job("long", 0.0, 400.0, EpochDistribution.deterministic(200.0), TIMES, 8.0)
    return Instance((gpu,), (node,), (short, long), energy_price=0.2)


def _last_end(plan: Plan, job: str) -> float:
    return max(s.end for s in plan.segments if s.job == job)


def test_sts_hurries_the_job_left_alone():
    """Verified by hand: blind to idle power, STS runs the long job on one GPU to its due
    date (200 h, the cluster powered throughout). Pricing the hours it runs alone, it
    waits while jobs may still arrive (two released at 0: 2 an hour) and takes all 8
    GPUs at 2 h, when the short job has completed and no job was released within the
    last 2 h, completing at 2 + 198 x 0.16 = 33.68 h. Bills (kWh x 0.2): blind, 60 + 0.6
    for the jobs, 200 h x 0.76 kW powered, less 9.09 of the GPUs' idle power the jobs
    replace: 40.70; hurrying, 0.6 + 0.6 + 76.03, 33.68 h x 0.76 kW, less 11.58: 18.25."""
    inst = _long_and_short(idle=True)
    on = rollout(inst, make_policy("sts"))
    off = rollout(inst, make_policy("sts", idle_tail=False))
    assert _last_end(off, "long") == pytest.approx(200.0)
    long = [(s.start, s.end, s.config) for s in on.segments if s.job == "long"]
    assert long == [(0.0, 2.0, V1), (2.0, pytest.approx(2.0 + 198 * 0.16), V8)]
    cost_on, cost_off = evaluate(inst, on).total_cost, evaluate(inst, off).total_cost
    assert cost_off == pytest.approx(0.2 * (60.6 + 200 * 0.76 - 0.045 * 202), rel=1e-9)
    powered = _last_end(on, "long")
    busy = 0.6 + 0.6 + 2.4 * (powered - 2.0)
    idle = 0.045 * (2 + 2 + 8 * (powered - 2.0))
    assert cost_on == pytest.approx(0.2 * (busy + powered * 0.76 - idle), rel=1e-9)
    # and as sts-full and online, which decide the same way
    full = rollout(inst, make_policy("sts-full"))
    assert _last_end(full, "long") == pytest.approx(_last_end(on, "long"))


@pytest.mark.parametrize("policy", ["sts", "sts-full"])
def test_without_idle_power_or_with_nodes_powered_off_nothing_changes(policy):
    """The rule prices the hours an always-on cluster idles: without idle power, or with
    empty nodes powered off, STS's plan is the same with it or without."""
    bare = _long_and_short(idle=False)
    assert rollout(bare, make_policy(policy)) == rollout(bare, make_policy(policy, idle_tail=False))
    off = replace(_long_and_short(idle=True), power_off=PowerOff(0.5, 0.1, 0.2))
    assert rollout(off, make_policy(policy)) == rollout(off, make_policy(policy, idle_tail=False))


def test_a_job_arriving_soon_keeps_the_long_job_slow():
    """Jobs released every half hour keep the arrival rate high: the long job stays on
    one GPU while they keep coming (each short job outlives the gap to the next), and
    takes all 8 once they have completed. Were no job expected (a rate of 0), it would
    take 2 GPUs from the start, hours it would not run alone."""
    base = _long_and_short(idle=True)
    shorts = tuple(
        Job(f"s{k}", 0.5 * k, 0.5 * k + 3.0, EpochDistribution.deterministic(2.0), TIMES, 8.0)
        for k in range(1, 9)
    )
    inst = replace(base, jobs=(*base.jobs, *shorts))
    plan = rollout(inst, make_policy("sts"))
    long = [s for s in plan.segments if s.job == "long"]
    assert all(s.config == V1 for s in long if s.start < 4.0)
    assert long[-1].config == V8


def test_with_other_jobs_the_difference_is_the_evaluators():
    """Two jobs held fixed beside job j on one always-on node: changing j's plan changes
    the evaluator's total by what ``tail_cost`` says (energy less idle credit, and the
    cluster's power while j alone runs, ``P(H > t) = (1 − G_j) + S_j G_j``)."""
    v2, v4 = Config("v100", 2), Config("v100", 4)
    times = {V1: 1.0, v2: 0.55, v4: 0.3}
    gpu = GpuType("v100", 32.0, 300.0, idle_w=45.0)
    dist = EpochDistribution((3.0, 6.0, 10.0), (0.3, 0.3, 0.4))
    jobs = (
        Job("j", 0.0, 500.0, dist, times, 8.0),
        Job("a", 0.0, 500.0, EpochDistribution((2.0, 5.0), (0.5, 0.5)), times, 8.0),
        Job("b", 0.0, 500.0, EpochDistribution((3.0, 8.0), (0.6, 0.4)), times, 8.0),
    )
    inst = Instance((gpu,), (Node("n", "v100", 8, base_w=400.0),), jobs, energy_price=0.2)
    fixed = (Segment(0.0, 5.0, "a", V1, (("n", 4),)), Segment(0.0, 8.0, "b", V1, (("n", 5),)))
    others = [[(2.0, 0.5), (5.0, 0.5)], [(3.0, 0.6), (8.0, 0.4)]]
    done = all_done(others, 0.0)

    def costs(steps):
        segs, t, energy = [], 0.0, 0.0
        for cfg, w0, w1 in steps:
            d = (w1 - w0) * times[cfg]
            segs.append(Segment(t, t + d, "j", cfg, tuple(("n", g) for g in range(cfg.gpus))))
            energy += 0.2 * inst.power_w(cfg) / 1000 * times[cfg] * (dist.phi(w1) - dist.phi(w0))
            t += d
        profile = Profile(tuple(Step(c, a, b) for c, a, b in steps), t, energy, 0.0, 500.0)
        ev = evaluate(inst, Plan((*fixed, *segs)))
        return ev.total_cost, tail_cost(inst, jobs[0], profile, dist, 0.0, done, flat_bill(0.2))

    slow, fast = costs([(V1, 0.0, 4.0), (v4, 4.0, 10.0)]), costs([(v2, 0.0, 10.0)])
    assert fast[0] - slow[0] == pytest.approx(fast[1] - slow[1], rel=1e-9, abs=1e-12)
    assert fast[0] != pytest.approx(slow[0])  # the plans do differ


def test_the_jobs_gone_at_one_event_are_counted_in_release_order():
    """Six jobs complete at one event: their sojourns are kept in release order (they
    were in a set's order, which the process's hash seed sets, and only the last
    SOJOURNS are kept, so which stayed depended on the process)."""
    inst = lay_idle(
        GENERATORS["realdata"].instance({"nodes": 2, "jobs": 12, "slot": 0.25}, 0), "low"
    )
    jobs = sorted(inst.jobs, key=lambda j: (j.release, j.id))[:7]
    now = max(j.release for j in jobs) + 1.0

    def state(time: float, present) -> SchedulerState:
        statuses = tuple(JobStatus(j, 0.0, None) for j in present)
        return SchedulerState(time, inst, statuses, Occupancy(inst))

    policy = StsPolicy()
    assert policy.observe(state(now, reversed(jobs)))
    assert policy.observe(state(now + 1.0, jobs[3:4]))
    gone = [j for j in jobs if j is not jobs[3]]
    assert policy.sojourns[0] == [now + 1.0 - j.release for j in gone]
