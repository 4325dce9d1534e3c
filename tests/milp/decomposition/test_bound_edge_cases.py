"""The decomposition's bounds against enumeration and brute force where the other
tests do not look: a job kept out of the cheapest slot of a price series by its
capacity prices, and a job whose top speed ends it exactly at a slot's end."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from instances import Config, EpochDistribution, GpuType, Instance, Job, Node
from instances.energy import Series
from instances.generators.power import lay_power_off
from milp.data import milp_data
from milp.decomposition import CgOptions, solve
from milp.decomposition.colgen import generate
from milp.decomposition.columns import columns_of_plan
from milp.decomposition.completion import Steps, completion_bound
from milp.decomposition.fixing import fix_arcs
from milp.decomposition.master import Master, label_terms
from milp.decomposition.oracle import Oracle
from milp.decomposition.pricing import price_job
from milp.decomposition.slots import SlotModel
from milp.decomposition.space import build_space
from tests.milp.brute_force import brute_force
from tests.milp.decomposition.instances import two_nodes
from tests.milp.decomposition.test_pricing import SLOTS, _cheapest
from tests.milp.test_bound_edge_cases import _one_gpu_sharing, _one_job
from tests.milp.test_milp import _tiny
from validation.evaluate import evaluate

PRICES = (0.05, 0.6, 0.5, 0.7, 0.4, 0.8, 0.3, 0.9)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("delta", [0.0, 0.2])
def test_the_completion_bound_idles_through_the_cheapest_slot_at_the_floors_rise(seed, delta):
    """Capacity prices on every slot cheaper than all the slots after it push the jobs
    out of those slots: idling through one pays the floor's rise on the epochs left
    once, and the bound at the first slot stays below the cheapest schedule."""
    inst = two_nodes(seed, shared=False, multi=False, delta=delta)
    inst = inst.replace(prices=Series.regular(0.5, PRICES))
    space = build_space(milp_data(inst, SLOTS, check_size=False))
    prices = np.array(PRICES[:SLOTS])
    dear = np.array([prices[t] < prices[t + 1 :].min(initial=np.inf) for t in range(SLOTS)])
    lam = np.where(dear[None, :], 5.0, 0.0) * np.ones((len(space.resources), 1))
    for j, js in enumerate(space.jobs):
        m = SlotModel.of(js, space.d.slot, space.d.tardiness)
        steps = Steps.of(m, 64)
        price = np.asarray(js.usage @ lam[:, m.first : m.last + 1])
        bound = completion_bound(m, steps, price)
        truth = _cheapest(space, j, price)
        assert math.isfinite(truth)
        start = float(steps.remaining(m, bound[1, 0], m.first, np.zeros(1))[0])
        assert start <= truth + 1e-9
        exact = price_job(m, steps, price, bound, math.inf)
        assert exact.value == pytest.approx(truth, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("due", [0.5, 0.6])
def test_a_job_done_exactly_at_a_slots_end_is_bounded_on_time(due):
    """Two epochs of 0.25 h fill the first slot of 0.5 h exactly (the instance of the
    capacity relaxation's and the Lagrangian's case)."""
    inst = _one_job(due, 0.25, 0.0, two_gpus=False)
    best, _ = brute_force(inst, 4)
    res = solve(inst, slots=4, time_limit=30)
    assert res.root_bound <= best + 1e-9 * max(1.0, best)
    assert res.bound <= best + 1e-9 * max(1.0, best)


def _even_speed(epochs: int, due: float) -> Instance:
    """One job of ``epochs`` epochs of 0.25 h on one GPU (two an epoch per slot of
    0.5 h, exactly) and of 0.4 h on two: its stops fall on slots' ends at top speed."""
    stops = tuple(float(e) for e in range(1, epochs + 1))
    job = Job(
        "j0",
        0.0,
        due,
        EpochDistribution(stops, tuple(1.0 / epochs for _ in stops)),
        {Config("v100", 1): 0.25, Config("v100", 2): 0.4},
        6.0,
        weight=10.0,
    )
    return Instance(
        (GpuType("v100", 16.0, 300.0),), (Node("n", "v100", 2),), (job,), slot=0.5, name="even"
    )


@pytest.mark.parametrize(("epochs", "due"), [(2, 0.5), (4, 1.0), (4, 0.75), (3, 1.0)])
@pytest.mark.parametrize("charged", [False, True])
def test_the_pricing_bounds_hold_where_stops_fall_on_slots_ends(epochs, due, charged):
    """At top speed the job reaches its stops exactly at slots' ends: the completion
    bound (first slot, and every label's in the pricing) counts them reached there, so
    the start bound stays below the cheapest schedule and the pricing, told that
    cheapest cost, still finds it (with a survival charge per slot as well)."""
    inst = _even_speed(epochs, due)
    space = build_space(milp_data(inst, SLOTS, check_size=False))
    if charged:
        charge = np.linspace(0.5, 2.0, SLOTS)[None, :] * np.ones((len(space.jobs), 1))
        space = replace(space, charge=charge)
    for j, js in enumerate(space.jobs):
        m = SlotModel.of(js, space.d.slot, space.d.tardiness)
        steps = Steps.of(m, 64)
        price = np.zeros((len(js.choices), m.last - m.first + 1))
        bound = completion_bound(m, steps, price)
        row = None if space.charge is None else space.charge[j]
        truth = _cheapest(space, j, price, row)
        start = float(steps.remaining(m, bound[1, 0], m.first, np.zeros(1))[0])
        assert start <= truth + 1e-9
        more = {"charge": space.window_charge(j)}
        tight = price_job(m, steps, price, bound, truth * (1 + 1e-9) + 1e-12, **more)
        assert tight.schedules and tight.value == pytest.approx(truth, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("above", [1e-6, 1e-4, 5e-4])
def test_a_job_known_just_above_its_own_bound_is_still_priced(above):
    """A job alone, on time at its least energy, costs exactly its own bound at no
    prices; told of a column a hair dearer, the oracle must not take that column for
    the job's optimum (its bound would then exceed the optimum)."""
    inst = _even_speed(2, 5.0)
    space = build_space(milp_data(inst, SLOTS, check_size=False))
    oracle = Oracle(space, CgOptions().grid)
    lam = np.zeros((len(space.resources), SLOTS))
    for j in range(len(space.jobs)):
        m = oracle.models[j]
        truth = _cheapest(space, j, np.zeros((len(space.jobs[j].choices), m.last - m.first + 1)))
        assert oracle.own[j] <= truth + 1e-12
        upper = np.full(len(space.jobs), np.inf)
        upper[j] = truth * (1 + above)
        for beam in (None, 4):
            got = oracle.price(lam, upper, beam=beam, keep=1)
            assert got.proved[j] <= truth * (1 + 1e-12) + 1e-12


@pytest.mark.parametrize("seed", range(3))
def test_the_lagrangian_bound_holds_at_any_prices(seed):
    """Weak duality at arbitrary prices (not only those a master gives): every job
    priced exactly plus the shared labels' best ``y`` less the priced capacities is
    at most the optimum, here two jobs that must share one GPU."""
    inst = _one_gpu_sharing(seed)
    best, _ = brute_force(inst, 8)
    space = build_space(milp_data(inst, 8, check_size=False))
    oracle = Oracle(space, CgOptions().grid)
    rng = np.random.default_rng(seed)
    tenants = np.zeros((len(space.resources), 8))  # a small price on the tenants alone
    for lab in space.labels:
        tenants[lab.tenants] = 0.01
    draws = [
        rng.exponential(2.0, tenants.shape) * (rng.random(tenants.shape) < 0.7) for _ in range(5)
    ]
    for lam in [tenants, *draws]:
        got = oracle.price(lam, np.full(len(space.jobs), np.inf), beam=None, keep=1)
        assert got.exact.all()
        value = float(np.sum(got.proved)) + label_terms(space, lam)
        assert value <= best + 1e-9 * max(1.0, best)


@pytest.mark.parametrize(
    ("seed", "shared", "delta", "mode"),
    [(0, True, 0.0, "worst_case"), (1, True, 0.2, "expected"), (2, False, 0.7, "worst_case")],
)
@pytest.mark.parametrize("budget", [1, 8, 64])
def test_fixing_with_a_label_budget_keeps_every_arc_of_the_optimum(
    seed, shared, delta, mode, budget
):
    """A job whose fixing program runs out of labels proves nothing about its arcs
    (those after where it stopped were never bounded): it must fix none."""
    inst = _tiny(seed, shared=shared, tardiness=mode).replace(relaunch_hours=delta)
    best, plan = brute_force(inst, 8)
    space = build_space(milp_data(inst, 8, check_size=False))
    master = Master(space, big=10.0 * max(1.0, best))
    oracle = Oracle(space, CgOptions().grid)
    generate(master, oracle, CgOptions(), -math.inf, None)
    _, lam, _ = master.solve()
    got = oracle.price(lam, np.full(len(space.jobs), np.inf), beam=None, keep=3)
    fix_arcs(oracle, lam, got.proved, label_terms(space, lam), best, budget)
    for col in columns_of_plan(space, plan):
        first = space.jobs[col.job].jd.first_slot
        for t, c in col.slots():
            assert not oracle.fixed[col.job][c, t - first], (col.job, t, c)


def _two_bases() -> Instance:
    """Two one-GPU v100 nodes powered off when empty, of base power 50 W and 1 kW; one
    job of two epochs, in no hurry."""
    job = Job(
        "j0", 0.0, 5.0, EpochDistribution((1.0, 2.0), (0.5, 0.5)), {Config("v100", 1): 0.5}, 6.0
    )
    inst = Instance(
        (GpuType("v100", 16.0, 300.0),),
        (Node("cheap", "v100", 1, base_w=50.0), Node("dear", "v100", 1, base_w=1000.0)),
        (job,),
        slot=0.5,
        name="two-bases",
    )
    return lay_power_off(inst, "0.25,0.1,0.05")


def test_powered_off_nodes_share_out_the_least_base_power_of_their_type():
    """The job can run on the node of 50 W: a bound that charged every busy GPU the
    dearest node's base power would exceed that plan's cost."""
    inst = _two_bases()
    res = solve(inst, slots=6, time_limit=30)
    assert res.plan is not None
    cost = evaluate(inst, res.plan).total_cost
    assert res.root_bound <= cost + 1e-9 * max(1.0, cost)
    assert res.bound <= cost + 1e-9 * max(1.0, cost)


@pytest.mark.parametrize(("seed", "mode"), [(2, "expected"), (3, "worst_case")])
def test_a_narrow_heuristic_pricer_proves_nothing_by_its_value(seed, mode):
    """With one label per state the heuristic pricer misses schedules (a relaunch of
    0.7 h makes the choices interact): what it finds bounds a job from above only, and
    its rounds' bounds still come from the completion bound. The root stays below the
    brute-force optimum."""
    inst = _tiny(seed, shared=seed % 2 == 0, tardiness=mode).replace(relaunch_hours=0.7)
    best, _ = brute_force(inst, 8)
    res = solve(inst, slots=8, time_limit=20, options=CgOptions(beam=1, keep=1))
    assert res.root_bound <= best + 1e-9 * max(1.0, best)
