"""STS deciding when under a changing price (heuristic/sts/timing.py; docs/model.md, 'STS
deciding when')."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristic.core.policy import JobStatus
from heuristic.core.registry import make_policy
from heuristic.sts.cells import place_runs
from heuristic.sts.hulls import HullTable, JobProfiles
from heuristic.sts.incremental import IncrementalStsPolicy
from heuristic.sts.ledger import Ledger
from heuristic.sts.policy import StsPolicy
from heuristic.sts.profile import Profile, Step
from heuristic.sts.tariff import Grid, Tariff
from heuristic.sts.timing import TimingRule, run_windows, timing
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from instances.bundled import bundled
from instances.energy import Carbon, Series
from instances.generators import SyntheticSpec, synthetic
from instances.generators.prices import lay_prices
from tests.strategies import priced_instances
from validation.evaluate import evaluate
from validation.simulator import rollout, simulate

ONE, FOUR = Config("v100", 1), Config("v100", 4)
# the timing options off (on by default since 2026-11-30)
OFF = {"fine_shares": False, "margin_recovers": False}


def _segments(plan):
    return [(s.job, s.start, s.end, s.config, s.gpus) for s in plan.segments]


def _cases() -> list[Instance]:
    return [bundled("small"), synthetic(SyntheticSpec(nodes=4, jobs=12, slot=0.25), seed=3)]


@pytest.mark.parametrize("inst", _cases(), ids=lambda i: i.name)
def test_a_flat_bill_gives_the_price_blind_decisions(inst):
    """A flat series, and a flat carbon intensity priced per tonne, leave the bill the
    same every hour: STS makes the very plan it makes without them."""
    plain = _segments(rollout(inst, make_policy("sts")))
    flat = inst.replace(
        prices=Series.regular(1.0, [inst.energy_price] * 24),
        carbon=Carbon(Series.flat(300.0, upper=1e5), 100.0),
    )
    assert Tariff.of(flat) is None
    assert _segments(rollout(flat, make_policy("sts"))) == plain


@pytest.mark.parametrize("inst", _cases(), ids=lambda i: i.name)
def test_price_blind_sts_decides_as_without_a_series(inst):
    """``sts-price-blind`` (timing off) sees no series: its plan under the real series
    is STS's plan without one; STS with timing makes another, billed lower."""
    priced = lay_prices(inst, "au-nsw-2023:840")
    plain = _segments(rollout(inst, make_policy("sts")))
    blind = rollout(priced, make_policy("sts-price-blind"))
    assert _segments(blind) == plain
    timed = rollout(priced, make_policy("sts"))
    assert _segments(timed) != plain
    assert evaluate(priced, timed).energy_cost < evaluate(priced, blind).energy_cost


def _brute(a, w, resume, running, tail=None, extra=0.0, idled=False):
    n, cells = len(a), len(w)
    best = math.inf
    for chosen in itertools.combinations(range(cells), n):
        cost = 0.0 if tail is None else tail[chosen[-1]]
        for j, k in enumerate(chosen):
            cost += a[j] * w[k]
            after_idle = k > 0 and (j == 0 or chosen[j - 1] != k - 1)
            if j == 0 and k == 0:
                after_idle = idled
            if after_idle and (j > 0 or running):
                cost += resume[j] * w[k] + extra
        best = min(best, cost)
    return best


@settings(max_examples=200)
@given(
    st.integers(1, 5),
    st.integers(0, 3),
    st.sampled_from(["new", "running", "idled"]),
    st.lists(st.floats(0.0, 5.0), min_size=16, max_size=16),
)
def test_place_runs_is_the_enumeration_of_every_choice_of_cells(n, extra, state, values):
    """Exact for a job that starts (its launch is in ``a``), one that runs on into cell
    0, and one that ran but is idle before cell 0 (it resumes wherever it runs first)."""
    running, idled = state != "new", state == "idled"
    a = np.array(values[:n])
    w = np.array(values[5 : 5 + n + extra])
    resume = np.array(values[11 : 11 + n]) * 0.3
    cost, found = place_runs(a, w, resume, running, idled=idled)
    cells = found.tolist()
    want = _brute(a, w, resume, running, idled=idled)
    assert cost == pytest.approx(want, rel=1e-9, abs=1e-12)
    assert len(cells) == n and cells == sorted(set(cells))
    assert _billed(cells, a, w, resume, running, idled) == pytest.approx(cost, rel=1e-9, abs=1e-12)


def _billed(cells, a, w, resume, running, idled, tail=None, extra=0.0):
    """What the cells chosen cost, portion by portion."""
    out = 0.0 if tail is None else tail[cells[-1]]
    for j, k in enumerate(cells):
        out += a[j] * w[k]
        first = j == 0 and running and (k > 0 or idled)
        if first or (j > 0 and cells[j - 1] != k - 1):
            out += resume[j] * w[k] + extra
    return out


def _merged_one_by_one(spans):
    out = []
    for s, e in spans:
        if out and s <= out[-1][1] + 1e-9:
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return tuple(out)


@settings(max_examples=200)
@given(
    st.lists(st.integers(0, 40), min_size=1, max_size=12, unique=True),
    st.floats(0.25, 1.0),
    st.sampled_from([0.0, 0.5, 1.0]),
)
def test_run_windows_join_back_to_back_portions(cells, hours, done):
    """The windows of the cells chosen, built by numpy, are the spans joined one by one
    as before (the same floats): portions of a whole cell back to back join, a short
    last portion ends its window, a gap starts a new one."""
    cells = sorted(cells)
    starts = done + np.array(cells, dtype=float)
    lengths = np.full(len(cells), 1.0)
    lengths[-1] = hours
    spans = [(0.0, done)] if done > 0 else []
    spans += [(float(s), float(s) + float(h)) for s, h in zip(starts, lengths, strict=True)]
    assert run_windows(starts, lengths, done) == _merged_one_by_one(spans)


@settings(max_examples=150)
@given(
    st.integers(1, 4),
    st.integers(0, 4),
    st.booleans(),
    st.lists(st.floats(0.0, 5.0), min_size=16, max_size=16),
    st.floats(0.0, 3.0),
    st.floats(0.0, 2.0),
    st.booleans(),
)
def test_place_runs_with_a_tardy_tail_is_the_enumeration(
    n, more, running, values, due, extra, idled
):
    """The last portion's cell pays ``tail`` (its tardiness where the run ends after a
    due date) and each resume ``extra`` (its relaunch hours' tardiness): the search is
    still exact, and the cost returned includes both."""
    a = np.array(values[:n])
    w = np.array(values[5 : 5 + n + more])
    resume = np.array(values[11 : 11 + n]) * 0.3
    tail = 2.0 * np.maximum(np.arange(len(w)) + 1.0 - due, 0.0)
    cost, found = place_runs(a, w, resume, running, tail, extra, idled)
    want = _brute(a, w, resume, running, tail, extra, running and idled)
    assert cost == pytest.approx(want, rel=1e-9, abs=1e-12)
    assert len(found) == n
    # the cells returned cost what the search says
    billed = _billed(found.tolist(), a, w, resume, running, running and idled, tail, extra)
    assert billed == pytest.approx(cost, rel=1e-9, abs=1e-12)
    without, _ = place_runs(a, w, resume, running)
    assert without <= cost + 1e-12


def test_a_running_job_that_idles_a_short_first_cell_pays_its_relaunch():
    """A job runs now at 1 kW for an hour more; the first cell is half an hour at 1.0
    per kWh, the next ones 0.9. Idling the half hour and running the next cell whole
    costs 0.9 plus the relaunch's 0.2 hours at 1 kW and 0.9 (1.08): dearer than running
    on (0.5 + 0.45). The search used to charge no relaunch there and chose to pause."""
    rows = np.array([[0.0, 1.0, 1.0]])
    grid = Grid(np.array([0.0, 0.5, 1.5, 2.5]), np.array([1.0, 0.9, 0.9]))
    cost, windows = timing(rows, grid, 0.2, running=True)
    assert (cost, windows) == (pytest.approx(0.95), ((0.0, 1.0),))
    # a job that does not run now pays no relaunch to start in the cheap cell
    cost, windows = timing(rows, grid, 0.2, running=False)
    assert (cost, windows) == (pytest.approx(0.9), ((0.5, 1.5),))


def test_place_runs_refuses_more_portions_than_cells():
    cost, cells = place_runs(np.ones(3), np.ones(2), np.zeros(3), False)
    assert (cost, cells.tolist()) == (math.inf, [])


def _alone(dist: EpochDistribution, due: float) -> Instance:
    """One job on one 4-GPU V100 node, billed 1.0 per kWh in hours 0-5 of every 12 and
    0.1 in hours 6-11."""
    job = Job("j", 0.0, due, dist, {ONE: 1.0, FOUR: 0.4}, 4.0)
    prices = Series.regular(1.0, [1.0] * 6 + [0.1] * 6)
    return Instance(
        (GpuType("v100", 16.0, 300.0),),
        (Node("n", "v100", 4),),
        (job,),
        energy_price=0.55,
        prices=prices,
    )


def test_sts_alone_waits_for_the_cheap_hours_and_pays_what_it_planned():
    """Six epochs on one V100 (six hours) with a due date in 18 h: the dear hours 0-5
    are left idle and the job runs in 6-11, which its profile prices exactly."""
    inst = _alone(EpochDistribution((2.0, 6.0), (0.5, 0.5)), 18.0)
    plan = simulate(inst, make_policy("sts")).plan
    assert all(s.start >= 6.0 - 1e-9 and s.end <= 12.0 + 1e-9 for s in plan.segments)
    ev = evaluate(inst, plan)
    # 0.3 kW, at 0.1: two epochs surely, four with probability 0.5
    assert ev.energy_cost == pytest.approx(0.1 * 0.3 * (2 + 0.5 * 4))
    blind = evaluate(inst, simulate(inst, make_policy("sts-price-blind")).plan)
    assert blind.energy_cost == pytest.approx(1.0 * 0.3 * (2 + 0.5 * 4))
    assert ev.missed == 0


def test_sts_speeds_up_to_fit_the_cheap_hours():
    """Ten epochs (ten hours on one V100) due in 12 h: run back to back they meet six
    dear hours; four V100s run them in four cheap hours, dearer per epoch (0.48 kWh
    against 0.3) but at a tenth of the price."""
    inst = _alone(EpochDistribution.deterministic(10.0), 12.0)
    plan = simulate(inst, make_policy("sts")).plan
    ev = evaluate(inst, plan)
    blind = evaluate(inst, simulate(inst, make_policy("sts-price-blind")).plan)
    assert ev.missed == 0 and blind.missed == 0
    assert ev.energy_cost < 0.5 * blind.energy_cost
    assert any(s.config == FOUR for s in plan.segments)


def _one_job(job: Job, prices: list[float], energy_price: float = 0.55) -> Instance:
    """``job`` alone on one 4-GPU V100 node (300 W a GPU), billed by hourly ``prices``."""
    return Instance(
        (GpuType("v100", 16.0, 300.0),),
        (Node("n", "v100", 4),),
        (job,),
        energy_price=energy_price,
        prices=Series.regular(1.0, prices),
    )


def _late_by_a_hair(weight: float) -> Job:
    """Six epochs, an hour each on one V100 and 0.4 h on four, due at 6.09 h after a
    0.1-h launch: on one V100 the run ends 0.01 h late."""
    return Job(
        "j",
        0.0,
        6.09,
        EpochDistribution.deterministic(6.0),
        {ONE: 1.0, FOUR: 0.4},
        4.0,
        weight=weight,
        relaunch_hours=0.1,
    )


def test_a_profile_late_by_a_hair_still_times_a_faster_one():
    """Six epochs on one V100 (six hours after a 6-minute launch) due in 6.09 h: 36 s of
    tardiness (0.04 at 4.0 an hour) costs less than a switch to four V100s on time (a
    relaunch and dearer epochs), so the price-blind profile is late and price-blind
    STS misses the due date. Under a series whose hours after the first are cheap,
    four V100s in the cheap hours cost less than the slow run's bill and tardiness and
    are on time: STS times that profile and meets the due date (before 2026-12-05 a
    late price-blind profile ran now, untimed: the thesis family's one missed due
    date, docs/prices.md)."""
    inst = _one_job(_late_by_a_hair(4.0), [1.0] + [0.1] * 11)
    blind = evaluate(inst, simulate(inst, make_policy("sts-price-blind")).plan)
    assert blind.missed == 1 and blind.tardiness_cost == pytest.approx(0.04)
    plan = simulate(inst, make_policy("sts")).plan
    ev = evaluate(inst, plan)
    assert ev.missed == 0
    assert all(s.start >= 1.0 - 1e-9 for s in plan.segments)  # the dear hour left idle
    assert ev.total_cost < blind.total_cost


def _spike(
    weight: float,
    prices: tuple[float, ...] = (100.0, 100.0),
    due: float = 2.0,
    release: float = 0.0,
    epochs: float = 3.0,
    times: dict[Config, float] | None = None,
    **changes: object,
) -> Instance:
    """Three epochs (three hours on one V100, 1.2 h on four; or ``epochs`` at
    ``times``) due at hour 2, in the two hours of a price spike (100 per kWh, then
    0.5)."""
    job = Job(
        "j",
        release,
        due,
        EpochDistribution.deterministic(epochs),
        {ONE: 1.0, FOUR: 0.4} if times is None else times,
        4.0,
        weight=weight,
    )
    return Instance(
        (GpuType("v100", 16.0, 300.0),),
        (Node("n", "v100", 4),),
        (job,),
        energy_price=0.55,
        prices=Series.regular(1.0, list(prices) + [0.5] * 22),
        **changes,
    )


def _first_profile(inst: Instance, earlier: float = 0.0) -> Profile:
    """The profile STS's table gives the job at its release first (``earlier``: the
    hours before its due date a caller asks it to end by)."""
    job = inst.jobs[0]
    status = JobStatus(job, 0.0, None)
    types = tuple(g.name for g in inst.gpu_types)
    table = HullTable(inst, rule=make_policy("sts").options.timing_rule)
    profiles = JobProfiles(inst, status, job.release, types, table, earlier=earlier)
    return next(iter(profiles.in_order())).profile


def test_sts_is_late_where_a_price_spike_costs_more_than_the_tardiness():
    """On time, the job runs at least 1.2 h in the spike (1.2 kW: 144); waiting for hour
    2 makes it late but costs under 6 (four V100s from hour 2: 0.72 of energy and 4.8 of
    tardiness at 4.0 an hour). STS waits and pays what it planned; with
    ``late_for_price`` off it runs in the spike, on time (the probe of 2026-12-05 found
    111,000 against the MILP's 0.24 on such a case)."""
    inst = _spike(4.0)
    plan = simulate(inst, make_policy("sts")).plan
    ev = evaluate(inst, plan)
    assert all(s.start >= 2.0 - 1e-9 for s in plan.segments)
    assert ev.missed == 1 and ev.total_cost < 6.0
    on_time = evaluate(inst, simulate(inst, make_policy("sts", late_for_price=False)).plan)
    assert on_time.missed == 0 and on_time.total_cost > 100.0
    # a weight above what the spike costs an hour: on time again
    heavy = _spike(1e4)
    assert evaluate(heavy, simulate(heavy, make_policy("sts")).plan).missed == 0


def test_a_late_run_may_take_a_faster_profile_that_fills_whole_slots():
    """Hourly slots, spike hours 0-3 (7.0 per kWh), due at 4.02. Three epochs on four
    V100s take 0.9 h: from hour 4 they end in slot 5 (3.92 of tardiness at 4.0 an
    hour, 0.54 of energy). The fastest profile of the budgets STS tried took 1.005 h,
    ending in slot 6 (late by 1.98 h), so STS ran on time in the spike (6.3); the
    late search now also tries the profiles that fill whole cells."""
    inst = _spike(4.0, (7.0,) * 4, due=4.02, slot=1.0, times={ONE: 1.0, FOUR: 0.3})
    ev = evaluate(inst, simulate(inst, make_policy("sts")).plan)
    assert ev.total_cost == pytest.approx(0.54 + 4.0 * 0.98)
    on_time = evaluate(inst, simulate(inst, make_policy("sts", late_for_price=False)).plan)
    assert on_time.total_cost == pytest.approx(6.3)


def test_a_late_run_may_take_a_slower_profile():
    """Due at 2 in a two-hour spike, then 10 per kWh, a weight of 0.5 an hour: once the
    job is late, three hours on one V100 (9.0 of energy, 1.5 of tardiness) cost less
    than 1.2 h on four (14.4 and 1.0, slotted to two hours), which the profiles of
    STS's budgets ran (15.4); the late search now tries slower ones too."""
    inst = _spike(0.5, (1000.0,) * 2 + (10.0,) * 300, due=2.0, slot=1.0)
    plan = simulate(inst, make_policy("sts")).plan
    assert evaluate(inst, plan).total_cost == pytest.approx(10.5)
    assert {s.config for s in plan.segments} == {ONE}


def test_a_late_run_may_take_a_slower_chain_with_a_relaunch_overhead():
    """Ten epochs due at 2 in a three-hour spike, then 5 per kWh for ever, a weight of
    0.3 an hour and a relaunch of 0.75 h: the cheapest late run is one V100 from hour 3
    (19.65). With a relaunch overhead the profile for a budget is the cheapest chain,
    which can run short of one budget while a slower chain wins at a longer one: the
    search stopped at the first profile a cell short of its budget and ran four V100s
    (30.225, a review of 2026-12-06)."""
    job = Job(
        "j", 0.0, 2.0, EpochDistribution.deterministic(10.0), {ONE: 1.0, FOUR: 0.4}, 4.0, weight=0.3
    )
    inst = Instance(
        (GpuType("v100", 16.0, 300.0),),
        (Node("n", "v100", 4),),
        (job,),
        energy_price=0.55,
        prices=Series.regular(1.0, [100.0] * 3 + [5.0] * 60, after="hold"),
        relaunch_hours=0.75,
    )
    plan = simulate(inst, make_policy("sts")).plan
    assert evaluate(inst, plan).total_cost == pytest.approx(19.65)
    assert {s.config for s in plan.segments} == {ONE}


def test_the_late_search_prices_the_plan_it_returns():
    """The profile a late search returns bills its windows and its tardiness as the
    evaluator does."""
    inst = _spike(4.0)
    table = HullTable(inst)
    status = JobStatus(inst.jobs[0], 0.0, None)
    found = next(iter(JobProfiles(inst, status, 0.0, ("v100",), table).in_order())).profile
    assert found.runs and found.runs[0][0] >= 2.0 - 1e-9
    assert found.tardiness_cost == pytest.approx(4.0 * (found.runs[-1][1] - 2.0))
    ev = evaluate(inst, simulate(inst, make_policy("sts")).plan)
    assert found.objective == pytest.approx(ev.total_cost, rel=1e-9)


@pytest.mark.parametrize(
    ("changes", "spike", "release"),
    [
        ({}, (100.0, 100.0), 0.0),
        ({"slot": 1.0}, (100.0, 100.0), 0.0),  # the end counted at its slot's end
        ({"relaunch_hours": 0.25}, (0.5, 100.0, 0.5), 0.5),  # a resume's hours
        ({"relaunch_hours": 0.25}, (100.0, 100.0, 0.5, 100.0), 0.0),  # a pause when late
    ],
    ids=["plain", "slot", "resume", "late-pause"],
)
def test_a_late_run_is_priced_as_the_evaluator_prices_it(changes, spike, release):
    """The late search's tardiness is the evaluator's: the end at its slot's end, from
    the due date itself, each resume's relaunch hours added to the end (the review of
    2026-12-05 found 5.52 planned against 8.72 billed with hourly slots)."""
    inst = _spike(4.0, spike, **changes, release=release)
    found = _first_profile(inst)
    ev = evaluate(inst, simulate(inst, make_policy("sts", backfill=False)).plan)
    assert found.tardiness_cost > 0 and found.runs
    assert found.tardiness_cost == pytest.approx(ev.tardiness_cost, rel=1e-9)
    if "slot" not in changes:  # (slotted steps round their energy: as on time)
        assert found.objective == pytest.approx(ev.total_cost, rel=1e-9)


@pytest.mark.parametrize(
    ("name", "options"),
    [("sts", {}), ("sts-full", {}), ("sts", {"lookahead": False})],
    ids=["sts", "sts-full", "no-ledger"],
)
def test_a_job_late_by_its_plan_is_not_backfilled_into_the_spike(name, options):
    """Due at hour 1 inside a two-hour spike: STS plans to wait for hour 2 (9.52). The
    backfill of late waiting jobs put it back on the free GPUs in the spike (38.37
    under `sts`, 144.8 under `sts-full`, a review of 2026-12-05)."""
    inst = _spike(4.0, due=1.0)
    ev = evaluate(inst, simulate(inst, make_policy(name, **options)).plan)
    assert ev.total_cost == pytest.approx(9.52)


def test_a_late_run_keeps_the_earlier_end_a_caller_asked_for():
    """Spike hours 0-4, due at 10, a caller asking the job to finish by hour 5 (the
    profile's budget): the late search ran it in hours 5-8, on time for the due date
    but not for the end asked for (a review of 2026-12-05); the hours from where the
    on-time search's cells end (4.5) to the due date are now refused to it."""
    found = _first_profile(_spike(4.0, (100.0,) * 5, due=10.0), earlier=5.0)
    end = found.runs[-1][1] if found.runs else found.worst_time
    assert end <= 4.5 + 1e-9 or end > 10.0


@pytest.mark.parametrize("earlier", [0.0, 5.0])
def test_a_late_run_never_ends_in_the_hours_the_on_time_search_keeps_free(earlier):
    """A spike in hour 0 opens the late search; dear hours to hour 9, cheap after, due
    at 10. The on-time search's cells end a margin before its budget (hour 9), or
    before a finish a caller asks for (hour 5 here): the late search may be late
    (ending at 11, 4.024) but never ends in the hours between (the review of
    2026-12-05: it ended at the due date, 10; asked to finish by 5, it ran 5-8)."""
    prices = (100.0,) + (3.0,) * 8 + (0.01,) * 15  # (then 0.5, past any hour read)
    inst = _spike(4.0, prices, due=10.0, epochs=4.0, times={FOUR: 0.5})
    found = _first_profile(inst, earlier=earlier)
    end = found.runs[-1][1] if found.runs else found.worst_time
    free_from = 0.9 * (10.0 - earlier)
    assert end <= free_from + 1e-9 or end > 10.0
    if earlier == 0.0:
        assert end == pytest.approx(11.0) and found.objective == pytest.approx(4.024)


def test_a_job_without_a_tardiness_weight_is_not_timed_late():
    """With no weight nothing bounds a late wait: the timing keeps such a job within its
    due date, as before the late search (it waited 2,000 h on a falling series)."""
    inst = _spike(0.0, (100.0, 100.0, 1.0, 1.0, 1.0, 1.0), due=6.0)  # cheaper after
    plan = simulate(inst, make_policy("sts")).plan
    assert evaluate(inst, plan).missed == 0


def test_the_type_bounds_cover_a_late_run():
    """A fast 2-kW type's bound is read at the spike's price, the slow type's first
    solved: with a late run possible the bounds read the hours it may reach, so the
    fast type's late run (36.6) is found first, not the slow one's (60.45)."""
    slow, fast = Config("slow", 1), Config("fast", 1)
    job = Job(
        "j",
        0.0,
        3.0,
        EpochDistribution.deterministic(3.0),
        {slow: 1.0, fast: 0.2},
        4.0,
        weight=10.0,
    )
    inst = Instance(
        (GpuType("slow", 80.0, 300.0), GpuType("fast", 80.0, 2000.0)),
        (Node("n1", "slow", 1), Node("n2", "fast", 1)),
        (job,),
        energy_price=0.55,
        prices=Series.regular(1.0, [100.0] * 6 + [0.5] * 20),
    )
    found = _first_profile(inst)
    assert found.steps[0].config == fast
    assert found.objective == pytest.approx(36.6)


def test_the_grid_and_the_windows_of_a_profile():
    """From 2.5 h, cells end at 3, 4, ...; a 1.5-hour run that fits the cheap hours
    6-7.5 waits 3.5 h; the ledger books it there, not from now."""
    inst = _alone(EpochDistribution.deterministic(1.5), 18.0)
    tariff = Tariff.of(inst)
    assert tariff is not None and tariff.cell == 1.0
    grid = Grid.of(tariff, 2.5, 9.5)
    assert grid.edges.tolist() == [0.0, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5]
    rows = np.array([[0.0, 1.5, 0.3]])
    cost, windows = timing(rows, grid, 0.0, False)
    assert windows == ((3.5, 5.0),)
    assert cost == pytest.approx(0.1 * 0.3 * 1.5)
    job = inst.jobs[0]
    profile = Profile((Step(ONE, 0.0, 1.5),), 1.5, cost, 0.0, 9.5, windows)
    ledger = Ledger(inst, 2.5, 12.0, 0.25)
    ledger.book(job, profile, job.distribution)
    booked = np.flatnonzero(ledger.load["v100"] > 0)
    assert booked.min() == 14 and booked.max() == 19  # bins of 3.5 h to 5 h from now


@settings(max_examples=25, deadline=None)
@given(priced_instances(max_jobs=4, relaunch=True))
def test_timed_sts_plans_are_feasible_and_priced(inst):
    """Under any series (with relaunch overheads), STS's plans pass the checker and the
    evaluator prices them; a job waits only while it can still meet its due date."""
    res = simulate(inst, make_policy("sts"))
    ev = evaluate(inst, res.plan)
    assert math.isfinite(ev.total_cost)


@pytest.mark.parametrize("make", [StsPolicy, IncrementalStsPolicy], ids=["full", "incremental"])
def test_a_second_run_by_the_same_policy_forgets_the_first(make):
    """STS remembers a run (the hours each job has run, under a series; pulled jobs;
    kept spans): the same policy object run again on the same instance starts afresh,
    as a new object would."""
    inst = lay_prices(_cases()[1], "au-nsw-2023:840")
    fresh = simulate(inst, make(), mode="sampled", seed=3).plan
    policy = make()
    simulate(inst, policy, mode="sampled", seed=1)
    assert simulate(inst, policy, mode="sampled", seed=3).plan == fresh


class _Forgetful(dict):
    """A memo that keeps nothing."""

    def __setitem__(self, key, value):
        pass


def test_the_kept_grids_loads_and_step_change_no_decision(monkeypatch):
    """STS under a series keeps each grid, each profile's expected power and the
    series' step (for speed, benchmarks/sts_speed.py --priced): a run that keeps
    nothing makes the very same plan, and a kept grid is the grid built afresh."""
    inst = lay_prices(_cases()[1], "au-nsw-2023:840")
    kept = simulate(inst, make_policy("sts"), mode="sampled", seed=3).plan
    tariff = Tariff.of(inst)
    assert tariff is not None
    grid, fresh = tariff.grid(2.5, 9.5), Grid.of(tariff, 2.5, 9.5)
    assert tariff.grid(2.5, 9.5) is grid
    assert grid.edges.tolist() == fresh.edges.tolist()
    assert grid.price.tolist() == fresh.price.tolist()
    assert inst.price_series.step == 1.0 and inst.price_series.step == 1.0  # kept
    uneven = Series((0.0, 1.0, 3.0), (1.0, 2.0))
    assert uneven.step is None and uneven.step is None  # a kept None is not recomputed

    import heuristic.sts.hulls as hulls

    made = hulls.HullTable.__init__

    def forgetful(self, *args, **kwargs):
        made(self, *args, **kwargs)
        self.loads = _Forgetful()
        if self.tariff is not None:
            object.__setattr__(self.tariff, "grids", _Forgetful())

    monkeypatch.setattr(hulls.HullTable, "__init__", forgetful)
    assert simulate(inst, make_policy("sts"), mode="sampled", seed=3).plan == kept


def test_the_timing_options_change_nothing_without_a_series():
    """``fine_shares`` and ``margin_recovers`` only change how profiles are timed: with
    no series STS makes the very plan it makes without them."""
    inst = _cases()[1]
    plain = _segments(rollout(inst, make_policy("sts", **OFF)))
    options = {"fine_shares": True, "margin_recovers": True}
    assert _segments(rollout(inst, make_policy("sts", **options))) == plain


def test_a_margin_that_recovers_only_widens_the_cells_a_profile_may_use():
    """With ``margin_recovers`` the margin kept before the budget is a tenth of the time
    left less what the last step gains relaunched on the fastest configuration: never
    more than the plain margin, so each job's cheapest profile at its release costs no
    more, less for some, and still runs within the job's budget."""
    inst = lay_prices(synthetic(SyntheticSpec(nodes=4, jobs=12), seed=3), "au-nsw-2023:840")
    types = tuple(g.name for g in inst.gpu_types)
    plain = HullTable(inst)
    recovers = HullTable(inst, rule=TimingRule(recover=True))
    cheaper = 0
    for job in inst.jobs:
        status = JobStatus(job, 0.0, None)
        a = next(iter(JobProfiles(inst, status, job.release, types, plain).in_order()))
        b = next(iter(JobProfiles(inst, status, job.release, types, recovers).in_order()))
        assert b.profile.objective <= a.profile.objective * (1 + 1e-12)
        cheaper += b.profile.objective < a.profile.objective * (1 - 1e-9)
        if b.profile.runs:
            assert b.profile.runs[-1][1] <= job.due - job.release + 1e-9
    assert cheaper > 0


def test_a_recovering_margin_catches_up_only_on_a_configuration_with_room():
    """The hours a slipped job can catch up are counted on the fastest configuration
    with room beside the profiles booked wherever it would catch up: its last epochs
    relaunched there, ending at the budget, and the margin before the budget at
    least. Where another job's profile holds the fastest one then (the one large node,
    say), the next one counts, and where none fits, nothing is recovered."""
    from heuristic.sts.timing import _catch_up

    eight, two = Config("v100", 8), Config("v100", 2)
    quick = ((0.1, eight), (0.3, FOUR), (0.5, two), (1.0, ONE))

    def room_without(*taken: Config, after: float = 0.0):
        def room(cfg: Config, edges: np.ndarray) -> np.ndarray:
            # a configuration taken from ``after`` on fits in no interval reaching past it
            return np.array([cfg not in taken or b <= after for b in edges[1:]])

        return room

    def hours(room, epochs=1.0, resume=0.0):
        return _catch_up(quick, room, 10.0, 1.0, epochs, resume)

    assert hours(None) == 0.1
    assert hours(room_without()) == 0.1
    assert hours(room_without(eight)) == 0.3
    assert hours(room_without(eight, FOUR)) == 0.5
    assert hours(room_without(*[c for _, c in quick])) == math.inf
    # taken only from the budget on, the fastest is free to catch up on; from midway, not
    assert hours(room_without(eight, after=10.0)) == 0.1
    assert hours(room_without(eight, after=9.5)) == 0.3

    def taken_before(cfg: Config, until: float):
        def room(c: Config, edges: np.ndarray) -> np.ndarray:
            # ``cfg`` is booked from now until ``until``, free after
            return np.array([c != cfg or a >= until for a in edges[:-1]])

        return room

    # eight GPUs booked until 8.5 h: free through the margin (9-10 h), but 20 epochs
    # there with a relaunch of 0.1 h run 2.1 h, from 7.9 h, and do not fit (four GPUs,
    # not booked, do); 2 epochs run within the margin, and fit
    assert hours(taken_before(eight, 8.5), epochs=20.0, resume=0.1) == 0.3
    assert hours(taken_before(eight, 8.5), epochs=2.0, resume=0.1) == 0.1


def test_the_timing_options_are_set_aside_after_a_decision_where_capacity_bound():
    """``fine_shares`` and ``margin_recovers`` time the profiles of a decision made
    after one where capacity did not bind; after one where it did (a job left waiting,
    rescued, backfilled or pulled), STS decides as without them."""
    from heuristic.core.occupancy import Occupancy
    from heuristic.core.policy import SchedulerState
    from heuristic.sts.options import StsOptions

    inst = lay_prices(synthetic(SyntheticSpec(nodes=4, jobs=12), seed=3), "au-nsw-2023:840")
    options = StsOptions(fine_shares=True, margin_recovers=True)
    for now in (0.0, 2.0, 4.3):
        jobs = tuple(JobStatus(j, 0.0, None) for j in inst.jobs if j.release <= now)
        for contended in (False, True):
            decided = []
            for policy in (StsPolicy(options), StsPolicy(StsOptions(**OFF))):
                # a first decision starts the run; the second is made after it
                policy.decide(SchedulerState(now, inst, jobs, Occupancy(inst)))
                policy.contended = contended
                decided.append(policy.decide(SchedulerState(now, inst, jobs, Occupancy(inst))))
            assert (decided[0] == decided[1]) is contended, (now, contended)
    # a new run (an earlier time) does not inherit the last run's flag, in either form
    from heuristic.sts.incremental import IncrementalOptions

    first = tuple(JobStatus(j, 0.0, None) for j in inst.jobs if j.release <= 0.0)
    for make, plain in (
        (StsPolicy, StsOptions(**OFF)),
        (IncrementalStsPolicy, IncrementalOptions(**OFF)),
    ):
        on = dataclasses.replace(plain, fine_shares=True, margin_recovers=True)
        fresh = make(on)
        fresh.decide(SchedulerState(4.3, inst, jobs, Occupancy(inst)))
        fresh.contended = True
        a = fresh.decide(SchedulerState(0.0, inst, first, Occupancy(inst)))
        assert a == make(on).decide(SchedulerState(0.0, inst, first, Occupancy(inst)))
        assert a != make(plain).decide(SchedulerState(0.0, inst, first, Occupancy(inst)))


def _windows(inst: Instance) -> dict[str, float]:
    """Each job's window over its fastest worst-case run (its relaunch, then every epoch
    on its fastest configuration)."""
    out = {}
    for j in inst.jobs:
        fastest = min(inst.epoch_time(j, c) for c in inst.allowed_configs(j))
        out[j.id] = (j.due - j.release) / (inst.relaunch(j) + j.max_epochs * fastest)
    return out


def test_the_timing_options_time_only_jobs_with_loose_windows():
    """With ``loose_window`` the timing options apply to a job whose window holds at
    least that many of its fastest worst-case runs; a tighter job is timed by the plain
    rule. Where every job is tighter, STS with the options makes the very plan it makes
    without them; with ``loose_window = 0`` (every job) it does not."""
    from heuristic.sts.timing import PLAIN

    spec = SyntheticSpec(nodes=4, jobs=12, relaunch="measured")
    inst = lay_prices(synthetic(spec, seed=3), "au-nsw-2023:840")
    windows = _windows(inst)
    middle = float(np.median(list(windows.values())))
    rule = TimingRule(recover=True, loose=middle)
    table = HullTable(inst, rule=rule)
    for j in inst.jobs:
        assert table.rule_for(j) == (rule if windows[j.id] >= middle else PLAIN), j.id
    assert {table.rule_for(j) for j in inst.jobs} == {rule, PLAIN}
    on = {"fine_shares": True, "margin_recovers": True}
    plain = _segments(rollout(inst, make_policy("sts", **OFF)))
    tight = max(windows.values()) * 1.01
    assert _segments(rollout(inst, make_policy("sts", **on, loose_window=tight))) == plain
    assert _segments(rollout(inst, make_policy("sts", **on, loose_window=0.0))) != plain


@pytest.mark.parametrize("value", [-1.0, math.inf, math.nan])
def test_a_loose_window_must_be_a_finite_number_at_least_0(value):
    from heuristic.core.options import OptionError
    from heuristic.sts.options import StsOptions

    with pytest.raises(OptionError, match="loose_window"):
        StsOptions(loose_window=value)


def test_a_relaunch_longer_than_a_cell_does_not_pause_the_run_for_ever():
    """A 1.2-h relaunch, cheap hours one at a time between dear ones, a weight of 0.1 an
    hour: the search, which leaves a resume's hours out of the run, paused the job
    across each dear hour and resumed it in the next cheap one, where its relaunch ate
    the whole hour; no epoch ever ran (the simulator stopped after 100,000 events, a
    review of 2026-12-06). A resume that lasts a cell or more is no longer planned."""
    one, shared = Config("v100", 1), Config("v100", 1, shared=True)
    dist = EpochDistribution((1.0, 2.0), (0.45, 0.55))
    job = Job(
        "j1",
        1.0,
        3.0,
        dist,
        {one: 1.0, shared: 1.5},
        4.0,
        weight=0.05,
        priority=2.0,
        relaunch_hours=1.2,
    )
    inst = Instance(
        (GpuType("v100", 16.0, 300.0),),
        (Node("n", "v100", 4),),
        (job,),
        energy_price=0.3,
        tardiness="expected",
        slot=1.0,
        prices=Series.regular(1.0, [3.0, 3.0, 30.0, 0.3, 30.0, 0.3]),
    )
    plan = simulate(inst, make_policy("sts")).plan
    assert plan.makespan < 24.0
    assert evaluate(inst, plan).total_cost > 0


@settings(max_examples=100)
@given(
    st.integers(1, 4),
    st.integers(0, 3),
    st.sampled_from(["new", "running"]),
    st.lists(st.floats(0.0, 5.0), min_size=16, max_size=16),
)
def test_place_runs_that_may_not_resume_is_the_enumeration(n, more, state, values):
    """With ``stay`` the portions run back to back: from the cheapest first cell for a
    job that starts, from cell 0 for a running one."""
    a = np.array(values[:n])
    w = np.array(values[5 : 5 + n + more])
    resume = np.array(values[11 : 11 + n]) * 0.3
    running = state == "running"
    cost, found = place_runs(a, w, resume, running, stay=True)
    firsts = [0] if running else range(len(w) - n + 1)
    want = min(sum(a[j] * w[k + j] for j in range(n)) for k in firsts)
    assert cost == pytest.approx(want, rel=1e-9, abs=1e-12)
    cells = found.tolist()
    assert cells == list(range(cells[0], cells[0] + n)) and (not running or cells[0] == 0)


class _Timings(dict):
    """A memo of timed profiles (``HullTable.timed``), told apart from the table's
    other memos."""


def test_a_kept_timing_is_the_timing_made_afresh(monkeypatch):
    """A timed profile is kept by everything its timing reads, the ledger by the digest
    of what its room answers for the types timed (for speed under a series: the
    rollout's copies weigh the same jobs at the same event): at every timing taken from
    the memo, one made afresh there is the same profile to the last digit (so the run
    makes the plan it makes with nothing kept). An overloaded instance with relaunch
    overheads, where the copies' jobs part in progress, configuration and bookings:
    leaving the progress, the budget, the configuration, the ledger or the catch-up's
    types out of the key fails here (checked by mutation)."""
    import heuristic.sts.hulls as hulls

    spec = SyntheticSpec(nodes=3, jobs=20, slot=0.25, load=1.5, relaunch="measured")
    inst = lay_prices(synthetic(spec, seed=2), "au-nsw-2023:840")
    made, kept = hulls.HullTable.__init__, hulls.kept
    taken, differ = [0], []

    def with_timings(self, *args, **kwargs):
        made(self, *args, **kwargs)
        self.timed = _Timings()

    def checking(memo, key, make, limit):
        found = memo.get(key)
        if found is not None and isinstance(memo, _Timings):
            taken[0] += 1
            if make() != found:
                differ.append(key)
        return kept(memo, key, make, limit)

    monkeypatch.setattr(hulls.HullTable, "__init__", with_timings)
    monkeypatch.setattr(hulls, "kept", checking)
    simulate(inst, make_policy("sts"), mode="sampled", seed=3)
    assert taken[0] > 1000
    assert differ == []


def test_a_ledgers_digest_reads_the_types_asked_for_only():
    """:meth:`Ledger.state`: equal for ledgers booked alike on the types asked for,
    whatever is booked on others; different where a booking on them differs."""
    inst = bundled("small")
    types = sorted(inst.gpus_by_type)
    a, b = (Ledger(inst, 0.0, 10.0, 0.25) for _ in range(2))
    assert a.state(types) == b.state(types)
    job = inst.jobs[0]
    dist = job.distribution
    one, other = types[0], types[1]
    cfg = next(c for c in inst.allowed_configs(job) if c.gpu_type == other)
    b.book(job, Profile((Step(cfg, 0.0, 2.0),), 1.0, 0.0, 0.0, 10.0), dist)
    assert a.state([one]) == b.state([one])
    assert a.state([other]) != b.state([other])
    assert a.state(types) != b.state(types)
    assert Ledger(inst, 1.0, 10.0, 0.25).state([one]) != a.state([one])  # another time


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, 0.25, 13.6, 840.0, 2950.7]), st.floats(0.0, 900.0)),
        min_size=1,
        max_size=12,
    ),
    st.sampled_from([None, 0.25]),
)
def test_a_grid_cut_from_a_longer_one_is_the_grid_made_afresh(asks, slot):
    """The tariff keeps the longest grid built from each time and cuts the shorter ones
    from it (for speed under a series): each is :meth:`Grid.of`'s, to the last digit,
    whatever the order of the horizons asked for (growing, shrinking, past the
    horizon), with and without carbon and a slot."""
    inst = synthetic(SyntheticSpec(nodes=2, jobs=2, slot=slot), seed=0)
    tariff = Tariff.of(lay_prices(inst, "au-nsw-2023:840", carbon_price=100.0))
    assert tariff is not None
    for now, hours in asks:
        got, fresh = tariff.grid(now, hours), Grid.of(tariff, now, hours)
        assert got.edges.tolist() == fresh.edges.tolist()
        assert got.price.tolist() == fresh.price.tolist()
