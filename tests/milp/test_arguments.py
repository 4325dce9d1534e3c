"""Arguments no solve can use, refused by both exact solvers naming the argument: not a
TypeError or OverflowError from inside, not an OPTIMAL that means nothing, not hours of
building for a horizon no search reaches."""

from __future__ import annotations

import pytest

import milp
from instances.bundled import bundled
from milp import decomposition
from milp.requirements import MilpError, ModelTooLarge


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"time_limit": "10"}, "time_limit = '10': must be a positive number"),
        ({"time_limit": 10**400}, "time_limit = 1000"),
        ({"time_limit": True}, "time_limit = True"),
        ({"slots": "3"}, "slots = '3': must be a whole number of slots"),
        ({"slots": 2.5}, "slots = 2.5"),
        ({"slots": 0}, "slots = 0"),
        ({"slots": -3}, "slots = -3"),
    ],
)
@pytest.mark.parametrize("solver", ["milp", "decomposition"])
def test_a_bad_time_limit_or_horizon_is_refused_by_name(solver, kwargs, message):
    solve = milp.solve if solver == "milp" else decomposition.solve
    with pytest.raises(MilpError, match=message):
        solve(bundled("tiny"), **kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mip_gap": float("nan")}, "mip_gap = nan: must be a relative gap"),
        ({"mip_gap": -1}, "mip_gap = -1"),
        ({"mip_gap": "x"}, "mip_gap = 'x'"),
        ({"threads": 0}, "threads = 0: must be a whole number"),
        ({"threads": "2"}, "threads = '2'"),
    ],
)
def test_the_milps_own_settings_are_checked(kwargs, message):
    # each of these was accepted and reported OPTIMAL
    with pytest.raises(MilpError, match=message):
        milp.solve(bundled("tiny"), **kwargs)


def test_branch_and_price_refuses_a_horizon_it_would_spend_its_time_building():
    """10**7 slots took 11 s against a time limit of 5, and 1.4 GB, before a column."""
    with pytest.raises(ModelTooLarge, match="slots = 10,000,000: branch-and-price takes"):
        decomposition.solve(bundled("tiny"), slots=10**7, time_limit=5)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"states": 0}, "states = 0: must be a whole number, at least 2"),
        ({"states": 1.5}, "states = 1.5"),
        ({"iterations": -1}, "iterations = -1: must be a whole number, at least 1"),
        ({"time_limit": float("nan")}, "time_limit = nan: must be a positive number"),
        ({"time_limit": 0}, "time_limit = 0"),
        ({"upper": float("nan")}, "upper = nan: must be the cost of a plan"),
        ({"upper": -1.0}, "upper = -1.0"),
        ({"upper": "1"}, "upper = '1'"),
        ({"slots": 10.5}, "slots = 10.5: must be a whole number of slots"),
        ({"slots": "10"}, "slots = '10'"),
    ],
)
def test_the_lagrangian_bound_and_the_model_refuse_bad_arguments_by_name(kwargs, message):
    """``lagrangian_bound`` checked none of its arguments (a hunt of the library's
    arguments): states 0 was a ZeroDivisionError, a fractional horizon a numpy error,
    a NaN time limit ran without one and a NaN ``upper`` stopped after two rounds;
    ``build_model`` took 10.5 slots."""
    inst = bundled("tiny")
    args = {"slots": 8, "time_limit": 5.0, **kwargs}
    with pytest.raises(MilpError, match=message):
        milp.lagrangian_bound(inst, args.pop("slots"), **args)
    if "slots" in kwargs:
        with pytest.raises(MilpError, match=message):
            milp.build_model(inst, slots=kwargs["slots"])


def test_the_size_estimate_bounds_the_models_variables_on_a_long_horizon():
    """The estimate that refuses a model too large, and that stops a build the time left
    cannot hold, is of the order of the variables built: with the jobs' windows cut
    short by a warm start's cost, the GPUs that may be in shared mode in every slot of
    the horizon are most of them (a sub-MILP over 800,000 slots estimated at 1,460
    variables built 3.2 million, 9 s past a 5-s limit, before they were counted)."""
    from heuristic.core.registry import make_policy
    from milp.data import milp_data, model_variables
    from milp.model import model_of_data
    from tests.milp.test_milp import _tiny
    from validation.evaluate import evaluate
    from validation.simulator import rollout

    inst = _tiny(0, shared=True)
    slots = 400
    cost = evaluate(inst, rollout(inst, make_policy("fifo"))).total_cost
    d = milp_data(inst, slots, cutoff=cost)
    built = model_of_data(d).nvariables()
    labels = sum(d.shared_labels.values()) * slots
    assert labels > 0 and model_variables(d) >= built / 2
    assert model_variables(d) - labels < built / 2  # without them, not of the order


@pytest.mark.parametrize("bill", ["plain", "idle", "power-off"])
@pytest.mark.parametrize("shared", [False, True])
def test_the_size_estimate_counts_every_family_built(bill, shared):
    """The estimate counts the relaunch family and idle power's variables too: on the
    bundled `tiny` (measured relaunch overheads) and a shared variant, with and without
    idle power and nodes powered off, it is at least the variables built and at most an
    eighth more (before the relaunch family was counted, `tiny` estimated about half of
    what it built)."""
    from instances.bundled import bundled
    from instances.generators.power import lay_idle, lay_power_off
    from milp.data import milp_data, model_variables
    from milp.model import model_of_data
    from tests.milp.test_milp import _tiny

    inst = _tiny(0, shared=True) if shared else bundled("tiny")
    assert shared or any(inst.relaunch(j) > 0 for j in inst.jobs)
    if bill != "plain":
        inst = lay_idle(inst, "low")
    if bill == "power-off":
        inst = lay_power_off(inst, "0.5,0.1,0.05")
    d = milp_data(inst, 40, idle_bound=bill != "plain")
    built = model_of_data(d).nvariables()
    assert built <= model_variables(d) <= 1.125 * built
