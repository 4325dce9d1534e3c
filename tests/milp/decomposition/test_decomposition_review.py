"""Cases a mutation review of the exact pricing, its dominance, reduced-cost fixing and
branching (milp/decomposition/pricing.py, dominance.py, fixing.py, branching.py) found
the other tests leave free: a progress a rounding error short of a stop under a
survival charge; the slots a branching decision makes a job run in (completing in the
last of them); a schedule costing the upper given; a pricing stopped at its deadline;
labels at two positions of one relaunch; the beam's width; arcs' bounds and fixing's
margin (with a survival charge); the dominance rules across states (the whole margin,
an overhead longer than a slot, idle labels either side) and their sorting helpers;
a decision's restricted prices and the window's ends; orbits of one node's labels; the
fractional tolerance of branching; which columns a decision allows (the review of
2026-12-08: 69 mutants)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from instances.energy import Series
from milp.data import milp_data
from milp.decomposition.branching import Decision, choose, impossible, other_side, restrict
from milp.decomposition.colgen import CgOptions
from milp.decomposition.columns import Column, make_column, schedule_cost
from milp.decomposition.completion import Steps, completion_bound
from milp.decomposition.dominance import Labels, by_job, dominated, pareto
from milp.decomposition.fixing import fix_arcs, representative_of
from milp.decomposition.master import label_terms
from milp.decomposition.oracle import Oracle
from milp.decomposition.pricing import Job as PricingJob
from milp.decomposition.pricing import price_job, price_jobs
from milp.decomposition.slots import SlotModel
from milp.decomposition.space import Space, build_space
from milp.decomposition.stack import Stack
from tests.milp.decomposition.instances import two_nodes
from tests.milp.decomposition.test_pricing import _cheapest

SLOTS = 5


def _rounding_short() -> tuple[Space, np.ndarray]:
    """One job of three epochs (stops at 1, 2 and 3) on one GPU at a third of an epoch
    a slot or on two at 4/3: one slot on two, then two on one, leaves it at
    1.9999999999999998 epochs, a rounding error short of its second stop; prices that
    allow only that start (two GPUs, then one GPU twice, then two GPUs again), and a
    charge on its survival past every slot."""
    job = Job(
        "j0",
        0.0,
        5.0,
        EpochDistribution((1.0, 2.0, 3.0), (0.2, 0.5, 0.3)),
        {Config("v100", 1): 1.5, Config("v100", 2): 0.375},
        6.0,
    )
    inst = Instance(
        (GpuType("v100", 16.0, 300.0),), (Node("n", "v100", 2),), (job,), slot=0.5, name="short"
    )
    slots = 6
    space = build_space(milp_data(inst, slots, check_size=False))
    space = dataclasses.replace(space, charge=np.ones((1, slots)))
    m = SlotModel.of(space.jobs[0], space.d.slot, space.d.tardiness)
    price = np.zeros((len(space.jobs[0].choices), m.last - m.first + 1))
    fast = m.speed > 1.0
    price[np.ix_(~fast, [0, 3, 4, 5])] = np.inf
    price[np.ix_(fast, [1, 2])] = np.inf
    return space, price


def test_a_progress_a_rounding_error_short_of_a_stop_counts_the_stop_passed():
    """The survival charge counts a stop passed a tolerance short of it, as the columns
    and the evaluator do: charged at the exact ``P(N > w)`` the pricing valued the only
    schedule at 2.5065 against its column's 2.0185, above the job's optimum (a
    Lagrangian bound from it could pass the plan's cost)."""
    space, price = _rounding_short()
    m = SlotModel.of(space.jobs[0], space.d.slot, space.d.tardiness)
    steps = Steps.of(m, 64)
    bound = completion_bound(m, steps, price)
    truth = _cheapest(space, 0, price, space.charge[0])
    got = price_job(m, steps, price, bound, math.inf, charge=space.window_charge(0))
    assert got.schedules[0] == (0, (1, 0, 0, 1))
    assert got.value == pytest.approx(truth, rel=1e-9)


@pytest.mark.parametrize("delta", [0.0, 0.7])
def test_the_pricing_runs_the_job_in_the_slots_a_decision_makes_it_run(delta):
    """A branching decision that a job runs in a slot (``must_run``): no idle slot
    there and no completion before it, but completing in it is allowed; the exact
    pricing finds the cheapest such schedule, for every slot of the window alone and
    for the first and last together."""
    inst = two_nodes(1, delta=delta, shared=False, multi=False)
    space = build_space(milp_data(inst, SLOTS, check_size=False))
    for j, js in enumerate(space.jobs):
        m = SlotModel.of(js, space.d.slot, space.d.tardiness)
        steps = Steps.of(m, 64)
        width = m.last - m.first + 1
        price = np.zeros((len(js.choices), width))
        bound = completion_bound(m, steps, price)
        musts = [np.arange(width) == s for s in range(width)]
        musts.append(np.isin(np.arange(width), [0, width - 1]))
        for must in musts:
            truth = _cheapest(space, j, price, must=must)
            got = price_job(m, steps, price, bound, math.inf, must_run=must)
            if math.isinf(truth):
                assert not got.schedules
                continue
            assert got.value == pytest.approx(truth, rel=1e-9, abs=1e-12), must
            begin, choices = got.schedules[0]
            ran = np.zeros(width, dtype=bool)
            ran[begin - m.first + np.flatnonzero(np.array(choices) >= 0)] = True
            assert ran[must].all()


@pytest.mark.parametrize("delta", [0.0, 0.2])
def test_a_schedule_costing_the_upper_given_is_not_returned(delta):
    """``schedules`` are those cheaper than ``upper`` (the oracle's ``upper`` is a
    column it holds already): told the optimum's exact cost, the pricing returns none
    and that cost as its value."""
    inst = two_nodes(2, delta=delta)
    space = build_space(milp_data(inst, SLOTS, check_size=False))
    for js in space.jobs:
        m, steps, price, bound = _at_no_price(space, js)
        best = price_job(m, steps, price, bound, math.inf)
        assert best.schedules
        again = price_job(m, steps, price, bound, best.value)
        assert again.schedules == [] and again.value == best.value


def test_a_decision_restricts_its_own_slot_and_allows_its_window_to_the_last_slot():
    """``restrict``: at 1, the other choices at infinity in that slot only and the slot
    a must-run one; at 0, the set's choices there; other jobs' decisions change
    nothing. ``impossible``: a decision to run is one only outside the window, whose
    last slot counts in it."""
    inst = two_nodes(0, delta=0.2)
    space = build_space(milp_data(inst, SLOTS, check_size=False))
    js = space.jobs[0]
    m = SlotModel.of(js, space.d.slot, space.d.tardiness)
    width = m.last - m.first + 1
    price = np.arange(len(js.choices) * width, dtype=float).reshape(len(js.choices), width)
    pair = frozenset({0, 2})
    on = Decision(0, m.first + 1, pair, True)
    got, must = restrict(m, 0, price, (on,))
    expect = price.copy()
    expect[[c for c in range(len(js.choices)) if c not in pair], 1] = np.inf
    np.testing.assert_array_equal(got, expect)
    assert must.tolist() == [s == 1 for s in range(width)]
    off = Decision(0, m.last, pair, False)
    got, must = restrict(m, 0, price, (off, Decision(1, m.first, pair, True)))
    expect = price.copy()
    expect[[0, 2], width - 1] = np.inf
    np.testing.assert_array_equal(got, expect)
    assert not must.any()
    assert not impossible(m, 0, (Decision(0, m.last, pair, True),))
    assert not impossible(m, 0, (Decision(0, m.first, pair, True),))
    assert impossible(m, 0, (Decision(0, m.last + 1, pair, True),))
    assert not impossible(m, 0, (Decision(0, m.last + 1, pair, False),))


def test_groups_past_16_bits_are_sorted_by_their_value():
    """``by_job`` sorts 16-bit groups as such and wider ones as they are: a running
    label's group (its global choice times the positions, plus its position) passes
    32767 in a stack of a few thousand choices, and a group wrapped to 16 bits would
    fall among the idle labels' negative groups."""
    group = np.array([40_000, 40_000 - 2**16, 40_000, -1, 5])
    assert by_job(group, np.arange(5)).tolist() == [1, 3, 4, 0, 2]
    assert by_job(group[1:], np.array([3, 2, 1, 0])).tolist() == [0, 2, 3, 1]


@pytest.mark.parametrize("seed", [0, 1])
def test_a_pricing_stopped_at_its_deadline_bounds_as_one_stopped_by_its_budget(seed):
    """Past its deadline after its first slot, an exact pricing stops (unless done):
    its open labels' cost plus the completion bound from the next slot (the survival
    charge of the slot they ran already paid) bounds the job's optimum from below, the
    same bound as a pricing stopped by a budget of one label at that slot."""
    inst = two_nodes(seed, delta=0.2 * seed)
    space = build_space(milp_data(inst, SLOTS, check_size=False))
    rng = np.random.default_rng(seed)
    shape = (len(space.jobs), space.d.slots)
    space = dataclasses.replace(space, charge=rng.exponential(1.0, shape))
    for j, js in enumerate(space.jobs):
        m = SlotModel.of(js, space.d.slot, space.d.tardiness)
        steps = Steps.of(m, 64)
        price = np.zeros((len(js.choices), m.last - m.first + 1))
        charge = space.window_charge(j)
        job = PricingJob(m, steps, price, completion_bound(m, steps, price), math.inf, None, charge)
        (late,) = price_jobs([job], deadline=0.0)
        (short,) = price_jobs([job], budget=1)
        truth = _cheapest(space, j, price, space.charge[j])
        assert late.lower <= truth + 1e-9 <= late.value + 2e-9
        assert late.complete == short.complete
        assert late.lower == pytest.approx(short.lower, rel=1e-12)


def test_labels_at_two_positions_of_one_relaunch_are_not_compared():
    """An overhead of 0.7 h (a slot and 0.2 more): at the start of slot 3, the label
    that relaunched onto node a in slot 1 is through its overhead, the one that ran on
    b then relaunched onto a in slot 2 still has 0.2 h of it left, as far and cheaper
    by a price on a in slot 1. Only the first reaches the due date at the end of slot
    5 at the optimum: compared within the state alone (not by position), the second
    dropped it and the pricing said 0.174 for 0.168."""
    job = Job(
        "j0",
        0.0,
        3.0,
        EpochDistribution((3.0,), (1.0,)),
        {Config("v100", 1): 0.5},
        6.0,
        weight=10.0,
    )
    nodes = (Node("a", "v100", 1), Node("b", "v100", 1))
    gpus = (GpuType("v100", 16.0, 300.0),)
    inst = Instance(gpus, nodes, (job,), slot=0.5, relaunch_hours=0.7, name="positions")
    space = build_space(milp_data(inst, 8, check_size=False))
    js = space.jobs[0]
    m = SlotModel.of(js, space.d.slot, space.d.tardiness)
    assert m.positions == 2 and [ch.nodes for ch in js.choices] == [("a",), ("b",)]
    price = np.zeros((2, m.last - m.first + 1))
    price[0, 0] = price[1, 2:] = np.inf
    price[0, 1] = 1.2 * m.opower[0]  # a's 0.6 h of overhead energy
    steps = Steps.of(m, 64)
    got = price_job(m, steps, price, completion_bound(m, steps, price), math.inf)
    assert got.value == pytest.approx(_cheapest(space, 0, price), rel=1e-9)
    assert got.schedules[0] == (1, (0, 0, 0, 0, 0))


def test_a_beam_keeps_that_many_labels_a_slot_without_overhead():
    """Without overhead a job's labels have no state: the heuristic pricer with a beam
    of ``b`` keeps at most ``b`` labels a slot. Here the exact program keeps three in
    one slot and none in the others (the best schedule prunes them): the root's label
    and ``b`` more."""
    inst = two_nodes(3, delta=0.0)
    space = build_space(milp_data(inst, SLOTS, check_size=False))
    for js in space.jobs:
        m, steps, price, bound = _at_no_price(space, js)
        kept = [price_job(m, steps, price, bound, math.inf, beam=b).labels for b in (1, 2, 3)]
        assert kept == [2, 3, 4]
        assert price_job(m, steps, price, bound, math.inf).labels == 4


def _through(space: Space, j: int, price: np.ndarray) -> np.ndarray:
    """By enumeration, the cheapest schedule through each (choice, window slot) of the
    job (``inf`` where none runs)."""
    js = space.jobs[j]
    first, width = js.jd.first_slot, js.jd.last_slot - js.jd.first_slot + 1
    out = np.full((len(js.choices), width), np.inf)

    def extend(seq: tuple[int, ...]) -> None:
        if len(seq) == width:
            return
        for c in range(-1, len(js.choices)):
            longer = (*seq, c)
            if c >= 0:
                try:
                    cost = schedule_cost(js, space.d.slot, space.d.tardiness, first, longer)
                except ValueError:  # not complete yet
                    pass
                else:
                    held = sum(price[x, i] for i, x in enumerate(longer) if x >= 0)
                    for i, x in enumerate(longer):
                        if x >= 0:
                            out[x, i] = min(out[x, i], cost + held)
                    continue
            extend(longer)

    extend(())
    return out


@pytest.mark.parametrize("seed", [0, 2])
def test_an_arcs_bound_adds_the_completion_bound_to_the_cost_so_far(seed):
    """The pricing run for fixing bounds each (choice, slot) arc by the least cost plus
    completion bound of a label through it: never above the cheapest schedule through
    it (up to the threshold), and, with the completion bound counted, above the
    threshold for some arc of the window's first slot (whose slot alone costs far
    less): fixing can remove it."""
    inst = two_nodes(seed, delta=0.2, shared=False, multi=False)
    space = build_space(milp_data(inst, SLOTS, check_size=False))
    removable = 0
    for j, js in enumerate(space.jobs):
        m, steps, price, bound = _at_no_price(space, js)
        truth = _through(space, j, price)
        threshold = 1.05 * float(truth.min())
        (got,) = price_jobs([PricingJob(m, steps, price, bound, threshold)], arcs=True)
        assert got.arcs is not None
        arcs = got.arcs[representative_of(m, price)]
        assert (np.minimum(arcs, threshold) <= truth + 1e-9).all()
        removable += int((arcs[:, 0] >= threshold).sum())
    assert removable > 0


def test_the_pareto_front_keeps_the_first_of_equal_labels_and_compares_within_groups():
    """``pareto``: of two equal labels the first stays, a label as far and dearer
    goes, and labels of different groups never meet, even all at one cost."""
    group = np.array([0, 0, 0, 1, 1, 2])
    w = np.array([1.0, 1.0, 0.5, 0.2, 0.1, 0.0])
    cost = np.array([2.0, 2.0, 1.0, 2.0, 2.5, 2.0])
    assert pareto(group, w, cost).tolist() == [True, False, True, True, False, True]
    same = np.zeros(3)
    assert pareto(np.array([0, 1, 2]), np.array([1.0, 0.5, 0.0]), same).all()
    assert pareto(np.array([5, 5]), np.array([1.0, 1.0]), np.array([3.0, 3.0])).tolist() == [
        True,
        False,
    ]


def _two_states(delta: float, ahead: float, short: float) -> tuple[Stack, Labels]:
    """Job 0 of two_nodes(0) with an overhead of ``delta`` under a free first slot and
    dear slots after it, and two running labels of two configurations through their
    overhead: the second ahead of the first by ``ahead`` of what one relaunch can lose
    at top speed and cheaper by ``short`` of what it can cost at the dear price."""
    inst = two_nodes(0, delta=delta)
    first = milp_data(inst, 6, check_size=False).jobs["j0"].first_slot
    series = tuple(0.0 if t == first else 0.9 for t in range(8))
    inst = inst.replace(prices=Series.regular(0.5, series))
    space = build_space(milp_data(inst, 6, check_size=False))
    m = SlotModel.of(space.jobs[0], space.d.slot, space.d.tardiness)
    share = m.delta / m.slot
    lead = share * float(m.speed.max())
    dear = share * float(m.kwh.max()) * 0.9
    pos = np.full(2, m.positions, dtype=np.int64)
    labels = Labels(
        job=np.zeros(2, dtype=np.int64),
        w=np.array([0.5, 0.5 + ahead * lead]),
        cost=np.array([1.0, 1.0 - short * dear]),
        state=np.array([0, 2]),
        pos=pos,
        parent=-np.ones(2, dtype=np.int64),
        via=np.array([0, 2]),
    )
    return Stack.of([m]), labels


@pytest.mark.parametrize("ahead", [0.5, 0.99, 1.0])
def test_a_label_in_another_state_must_be_ahead_by_a_whole_relaunch(ahead):
    """Across states (overhead 0.1 h, a fifth of a slot), a label dominates only if it
    is ahead by all that a relaunch onto the other's state can lose (``delta / slot``
    of a slot at top speed), however much cheaper."""
    stack, labels = _two_states(0.1, ahead, 2.0)
    assert dominated(labels, labels.state, stack, 0).tolist() == [ahead >= 1.0, False]
    assert dominated(labels, labels.state, stack, 1).tolist() == [ahead >= 1.0, False]


def test_an_overhead_longer_than_a_slot_compares_no_labels_across_states():
    """With an overhead of 0.7 h the relaunch that the margin pays for runs on into the
    next, dear slot: no label in another state dominates, however far ahead and cheap
    (at the free slot's price the margin on cost would be nothing)."""
    stack, labels = _two_states(0.7, 2.0, 2.0)
    assert int(stack.positions[0]) == 2
    assert not dominated(labels, labels.state, stack, 0).any()
    assert not dominated(labels, labels.state, stack, 1).any()


def test_an_idle_label_goes_for_a_running_one_as_far_at_no_more_cost():
    """With overhead an idle label is dominated by a running label (any state) at
    least as far at no more cost, ties included; not by one behind it, nor by a dearer
    one. The labels are of job 0 of two_nodes(0), overhead 0.7 h (longer than a slot,
    so the margin rule across states is off)."""
    stack, _ = _two_states(0.7, 0.0, 0.0)
    none = -np.ones(4, dtype=np.int64)
    labels = Labels(
        job=np.zeros(4, dtype=np.int64),
        w=np.array([0.5, 0.5, 0.6, 0.6]),
        cost=np.array([1.0, 1.0, 1.0, 0.9]),
        state=np.array([-1, 0, -1, 2]),
        pos=np.array([0, 2, 0, 2]),
        parent=none,
        via=np.array([-1, 0, -1, 2]),
    )
    group = np.where(labels.state >= 0, labels.state, -1)
    assert dominated(labels, group, stack, 0).tolist() == [True, False, True, False]
    # behind (the first idle label) or dearer (the second): kept
    apart = dataclasses.replace(labels, w=np.array([0.5, 0.4, 0.6, 0.6]))
    apart.cost = np.array([1.0, 0.9, 1.2, 1.3])
    assert not dominated(apart, group, stack, 0).any()


def test_an_idle_label_ahead_by_a_relaunch_dominates_a_running_one():
    """Across states an idle label counts as a state of its own: ahead by what a
    relaunch can lose and cheaper by what it can cost, it dominates a running label
    (relaunching onto the other's state, it is no worse after the slot)."""
    stack, labels = _two_states(0.1, 1.0, 1.0)
    idle = dataclasses.replace(labels, state=np.array([0, -1]), pos=np.array([1, 0]))
    group = np.array([0, -1])
    assert dominated(idle, group, stack, 1).tolist() == [True, False]
    behind = dataclasses.replace(idle, w=np.array([0.5, 0.5]))
    assert not dominated(behind, group, stack, 1).any()


def test_a_decision_on_another_nodes_label_splits_no_orbit():
    """Orbits are of one node's shared labels: a decision holding label 0 of node b
    tells apart none of node a's labels (a label's number names a GPU of its node
    only), while one holding label 0 of node a does."""
    space = build_space(milp_data(two_nodes(0, shared=True), 6, check_size=False))

    def labels(j: int, node: str) -> dict[int, int]:
        js = space.jobs[j]
        return {
            ch.label: c for c, ch in enumerate(js.choices) if ch.label >= 0 and ch.nodes == (node,)
        }

    mine = labels(0, "a")
    assert len(mine) >= 2 and len(labels(1, "b")) >= 2
    on = Decision(0, 2, frozenset({mine[1]}), True)
    elsewhere = (Decision(1, 3, frozenset({labels(1, "b")[0]}), True),)
    assert other_side(space, on, elsewhere).choices == frozenset(mine.values())
    here = (Decision(1, 3, frozenset({labels(1, "a")[0]}), True),)
    assert other_side(space, on, here).choices == frozenset(mine.values()) - {mine[0]}


@pytest.mark.parametrize("charged", [False, True])
def test_fixing_removes_an_arc_a_hundred_thousandth_above_its_threshold(charged):
    """Fixing's margin is a rounding margin (1e-9 of the incumbent), no more: one job
    at no prices, its priced optimum proved and an incumbent that sets the job's
    threshold a hundred-thousandth below an arc's bound (least cost plus completion
    bound through it): the arc goes, and no arc of the optimum does; with a survival
    charge, counted in the bound as in the optimum."""
    inst = two_nodes(0, jobs=1, delta=0.2, shared=False, multi=False)
    space = build_space(milp_data(inst, SLOTS, check_size=False))
    if charged:
        space = dataclasses.replace(space, charge=np.linspace(0.2, 1.0, SLOTS)[None, :])
    oracle = Oracle(space, CgOptions().grid)
    lam = np.zeros((len(space.resources), SLOTS))
    m, steps = oracle.models[0], oracle.steps[0]
    price = oracle.prices(0, lam)
    bound = completion_bound(m, steps, price)
    best = price_job(m, steps, price, bound, math.inf, charge=space.window_charge(0))
    job = PricingJob(m, steps, price, bound, math.inf, None, space.window_charge(0))
    (got,) = price_jobs([job], arcs=True)
    assert got.arcs is not None
    arcs = got.arcs[representative_of(m, price)]
    target = float(arcs[arcs > best.value * 1.01].min())
    rest = label_terms(space, lam)
    upper = rest + target / (1 + 1e-5)
    assert fix_arcs(oracle, lam, np.array([best.value]), rest, upper, None) > 0
    assert oracle.fixed[0][arcs == target].all()
    begin, choices = best.schedules[0]
    for i, c in enumerate(choices):
        assert c < 0 or not oracle.fixed[0][c, begin - m.first + i]


def _first_column() -> tuple[Space, Column]:
    """The two-node instance's space (overheads of 0.2 h) and its first job's cheapest
    schedule at no price, as a column."""
    inst = two_nodes(0, delta=0.2)
    space = build_space(milp_data(inst, SLOTS, check_size=False))
    got = price_job(*_at_no_price(space, space.jobs[0]), math.inf)
    return space, make_column(space, 0, *got.schedules[0])


def _at_no_price(space: Space, js) -> tuple[SlotModel, Steps, np.ndarray, np.ndarray]:
    """The job's slot model, steps, a price of 0 everywhere and its completion bound."""
    m = SlotModel.of(js, space.d.slot, space.d.tardiness)
    steps = Steps.of(m, 64)
    price = np.zeros((len(js.choices), m.last - m.first + 1))
    return m, steps, price, completion_bound(m, steps, price)


@pytest.mark.parametrize("short", [5e-6, 5e-4])
def test_a_use_short_of_one_by_more_than_the_tolerance_is_branched_on(short):
    """``choose``: a job's column at ``1 - short`` (an artificial column holding the
    rest) is a fractional use of running in each of its slots, more than 1e-6 from 1:
    the search branches on it (the earliest slot) instead of taking the column as the
    job's schedule; at 1 - 1e-7 it is whole."""
    space, col = _first_column()
    js = space.jobs[0]
    decision = choose(space, [col], np.array([1.0 - short]))
    assert decision is not None and decision.job == 0 and decision.on
    assert decision.slot == col.start and len(decision.choices) == len(js.choices)
    assert choose(space, [col], np.array([1.0 - 1e-7])) is None


def test_a_decision_allows_the_columns_that_meet_it():
    """``Decision.allows``: a column running a choice of the set in the slot (its first
    slot included) meets a decision to run it and not one to leave it; a slot before
    its start or after its completion is one where it uses none; another job's columns
    meet every decision."""
    space, col = _first_column()
    js = space.jobs[0]
    first = frozenset({col.choices[0]})
    assert Decision(0, col.start, first, True).allows(col)
    assert not Decision(0, col.start, first, False).allows(col)
    others = frozenset(range(len(js.choices))) - first
    assert not Decision(0, col.start, others, True).allows(col)
    end = col.start + len(col.choices)
    for t in (col.start - 1, end):
        assert not Decision(0, t, first | others, True).allows(col)
        assert Decision(0, t, first | others, False).allows(col)
    assert Decision(1, col.start, first, False).allows(col)
