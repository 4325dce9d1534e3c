"""The validation layer's entry points called with the wrong things: each is refused
naming the argument, or reported as a violation, never met by an AttributeError deep
inside (found by a probe of the Python API, 2026-12-04)."""

import math

import pytest

from heuristic import make_policy
from instances import Config, Plan, PlanError, Segment
from validation import check_plan, evaluate, replay, rollout, run_online, scenario_costs, simulate

V1 = Config("v100", 1)


def kinds(inst, plan):
    return [v.kind for v in check_plan(inst, plan)]


def test_gpus_that_are_not_pairs_are_violations(base):
    for gpus in (("n1", 0), (["n1", 0],), ((0, "n1"),)):
        plan = Plan((Segment(0.0, 2.0, "a", V1, gpus),))
        found = check_plan(base, plan)
        assert "bad-gpus" in [v.kind for v in found]
        assert any("is not a pair (node id, GPU index)" in v.detail for v in found)


def test_times_that_are_not_finite_or_empty_are_named_as_such(base):
    gpus = (("n1", 0),)
    nan = check_plan(base, Plan((Segment(math.nan, 4.0, "a", V1, gpus),)))
    assert nan[0].kind == "bad-time" and "needs a finite start and end" in nan[0].detail
    # a NaN start read "ends at 4 before it starts"
    assert not any("before it starts" in v.detail for v in nan)
    back = check_plan(base, Plan((Segment(-math.inf, 4.0, "a", V1, gpus),)))
    assert back[0].kind == "bad-time"
    empty = check_plan(base, Plan((Segment(2.0, 2.0, "a", V1, gpus),)))
    assert empty[0].kind == "empty-segment" and "no length" in empty[0].detail
    reverse = check_plan(base, Plan((Segment(3.0, 2.0, "a", V1, gpus),)))
    assert "ends at 2, before it starts" in reverse[0].detail


@pytest.mark.parametrize("t", [2e14, -2e14, math.inf, 10**400])
def test_times_past_a_plan_files_bound_are_violations(base, t):
    """A plan built in code took times far past the 1e9 h a plan file may hold: under a
    price series the bill drifted by 0.3% at 2e14 h, 1e16 h was called incomplete and
    10**400 an OverflowError (a hunt of the library's arguments)."""
    found = check_plan(base, Plan((Segment(0.0, t, "a", V1, (("n1", 0),)),)))
    assert found[0].kind == "bad-time" and "within 1e+09 h" in found[0].detail
    with pytest.raises(PlanError, match="bad-time"):
        evaluate(base, Plan((Segment(0.0, t, "a", V1, (("n1", 0),)),)))


def test_check_plan_wants_a_plan_and_an_instance(base):
    with pytest.raises(PlanError, match="plan = None: must be a Plan"):
        check_plan(base, None)  # type: ignore[arg-type]
    with pytest.raises(PlanError, match="instance = 'base': must be an Instance"):
        check_plan("base", Plan())  # type: ignore[arg-type]


def test_the_engine_names_a_policy_given_by_name_and_bad_limits(base):
    with pytest.raises(TypeError, match=r"policy = 'fifo': must be a Policy \(make_policy"):
        simulate(base, "fifo")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="policy = None: must be a Policy"):
        rollout(base, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"instance = .*must be an Instance"):
        simulate(None, make_policy("fifo"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_events = 'x': must be a whole number"):
        simulate(base, make_policy("fifo"), max_events="x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seed = 'x': must be a whole number"):
        simulate(base, make_policy("fifo"), seed="x")  # type: ignore[arg-type]  # rollout too
    with pytest.raises(TypeError, match=r"options = .*must map option names"):
        run_online(base, "fifo", options=[("reserve", 1.0)])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"policy = .*a registered policy's name"):
        run_online(base, make_policy("fifo"))  # type: ignore[arg-type]


def test_scenario_costs_names_the_jobs_without_a_stop(base):
    plan = rollout(base, make_policy("fifo"))
    with pytest.raises(ValueError, match=r"epochs: no stop given for 1 job\(s\): \['b'\]"):
        scenario_costs(base, plan, {"a": 10.0})


def test_replay_refuses_an_infeasible_plan_as_evaluate_does(base):
    # the empty plan replayed to an infinite mean and a NaN deviation
    with pytest.raises(PlanError, match="infeasible") as err:
        replay(base, Plan(), samples=10)
    assert {v.job for v in err.value.violations} == {"a", "b"}
    plan = rollout(base, make_policy("fifo"))
    assert math.isfinite(replay(base, plan, samples=10).mean_total)


@pytest.mark.parametrize("seed", [None, -1, "x", 1.5, True, 2**32])
def test_a_policy_seed_must_be_a_whole_number(seed):
    # None drew a fresh seed on every call; the rest failed inside numpy
    with pytest.raises(ValueError, match=f"seed = {seed!r}: must be a whole number"):
        make_policy("rg", seed=seed)


def test_a_policy_name_must_be_text():
    with pytest.raises(TypeError, match=r"policy = \['fifo'\]: must be a registered"):
        make_policy(["fifo"])  # type: ignore[arg-type]


def test_wrong_kinds_of_arguments_are_named_not_met_inside(base):
    """A second probe of the Python API (2026-12-06): each was an AttributeError,
    KeyError or TypeError from inside, or failed only once the run had started."""
    import numpy as np

    from heuristic.baselines.fifo import FifoPolicy
    from instances.topology import Topology
    from validation.montecarlo import sample_epochs
    from validation.scenario import scenario_instance

    with pytest.raises(TypeError, match=r"policy = .*FifoPolicy.*FifoPolicy\(\) builds one"):
        simulate(base, FifoPolicy)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="progress = 3: must be a function"):
        simulate(base, FifoPolicy(), progress=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="the seed is run_online's own argument"):
        run_online(base, "rg", options={"seed": 3})
    with pytest.raises(TypeError, match="rng = 3: must be a numpy Generator"):
        sample_epochs(base, 3)  # type: ignore[arg-type]
    full = {j.id: j.max_epochs for j in base.jobs}
    with pytest.raises(ValueError, match="epochs: no stop given for"):
        scenario_instance(base, {})
    with pytest.raises(TypeError, match="only = 'a': must be a list of job ids"):
        scenario_instance(base, full, only="a")  # type: ignore[arg-type]
    with pytest.raises(Exception, match="racks = 'r0': must be a list of Rack"):
        Topology(10.0, racks="r0")  # type: ignore[arg-type]
    rg = make_policy("rg", starts=np.int64(5))  # numpy's integers are integers
    assert rg.options.starts == 5 and type(rg.options.starts) is int


def test_solve_names_a_start_that_is_not_a_plan(base):
    import milp

    with pytest.raises(milp.MilpError, match=r"initial_plan = 'plan\.json': must be a Plan"):
        milp.solve(base, initial_plan="plan.json")  # type: ignore[arg-type]
    with pytest.raises(milp.MilpError, match="log_file = 3: must be a path"):
        milp.solve(base, log_file=3)  # type: ignore[arg-type]


def test_the_plan_helpers_name_an_argument_that_is_not_a_plan(base):
    from validation import busy_gpus, relaunch_notes

    with pytest.raises(PlanError, match="plan = 'p': must be a Plan"):
        relaunch_notes(base, "p")  # type: ignore[arg-type]
    with pytest.raises(PlanError, match="plan = 'p': must be a Plan"):
        busy_gpus("p")  # type: ignore[arg-type]
