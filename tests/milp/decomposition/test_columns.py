"""A column's cost is the evaluator's cost of that job's schedule alone (at one price and
under a price series), and a plan cut into columns gives them back."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heuristic.sts.policy import StsPolicy
from instances.bundled import bundled
from milp.data import milp_data
from milp.decomposition.columns import columns_of_plan, first_completion
from milp.decomposition.plans import assemble
from milp.decomposition.space import build_space
from milp.solve import base_slots
from tests.milp.decomposition.instances import priced, two_nodes
from validation.evaluate import evaluate
from validation.simulator import rollout

SLOTS = 14


def _costs_what_the_evaluator_says(inst, job: int, drawn: list[int]) -> None:
    """The drawn schedule of ``job`` (choices past its choices idle), completed on its
    fastest choice: the column's cost is the evaluator's for the job alone."""
    space = build_space(milp_data(inst, SLOTS, check_size=False))
    js = space.jobs[job]
    fastest = max(range(len(js.choices)), key=lambda c: js.jd.speed[js.choices[c].k])
    choices = [c if c < len(js.choices) else -1 for c in drawn] + [fastest] * SLOTS
    col = first_completion(space, job, js.jd.first_slot, choices)
    assert col is not None
    alone = inst.replace(jobs=(js.jd.job,))
    plan = assemble(space, [col])
    assert evaluate(alone, plan).total_cost == pytest.approx(col.cost, rel=1e-9, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 10_000),
    st.sampled_from([0.0, 0.2, 0.7]),
    st.sampled_from(["worst_case", "expected"]),
    st.integers(0, 1),
    st.lists(st.integers(-1, 40), max_size=8),
)
def test_a_column_costs_what_the_evaluator_says(seed, delta, mode, job, drawn):
    """Random schedules (pauses, switches of configuration, node and shared label, a
    multi-node configuration, overheads shorter and longer than a slot), completed on
    the fastest choice: the column's cost is the evaluator's for the job alone."""
    _costs_what_the_evaluator_says(two_nodes(seed, delta=delta, tardiness=mode), job, drawn)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 10_000),
    st.sampled_from([0.0, 0.2, 0.7]),
    st.sampled_from(["worst_case", "expected"]),
    st.integers(0, 1),
    st.lists(st.integers(-1, 40), max_size=8),
    st.booleans(),
)
def test_a_column_costs_what_the_evaluator_says_under_a_series(
    seed, delta, mode, job, drawn, carbon
):
    """The same under a price of a kWh that changes every slot or every two (free slots
    among them), with and without a priced carbon series: each slot's epochs and
    overhead are paid at that slot's price, as the evaluator integrates the series."""
    inst = priced(two_nodes(seed, delta=delta, tardiness=mode), seed, carbon=carbon)
    _costs_what_the_evaluator_says(inst, job, drawn)


@pytest.mark.parametrize("name", ["small", "tiny"])
def test_an_sts_plan_cut_into_columns_costs_what_it_did(name):
    """The STS rollout of a bundled instance (overheads, shared GPUs, jobs moved by STS)
    cut into columns: every column costs what its job costs in the plan, or less where
    STS moved a job to other GPUs of its node (the column keeps them), and the plan
    assembled from the columns costs what the columns say."""
    inst = bundled(name)
    plan = rollout(inst, StsPolicy())
    space = build_space(milp_data(inst, base_slots(inst, plan), check_size=False))
    columns = columns_of_plan(space, plan)
    per_job = evaluate(inst, plan).by_job()["total_cost"]
    for col in columns:
        assert col.cost <= per_job[space.jobs[col.job].id] * (1 + 1e-9) + 1e-12
    again = evaluate(inst, assemble(space, columns))
    assert again.total_cost == pytest.approx(sum(c.cost for c in columns), rel=1e-9)
