"""A job's bound alone on a finer grid than the pricing's (``Oracle._alone``): never
above its cheapest schedule alone (the exact pricing at no prices), with and without
overheads, sharing, a multi-node configuration and a price series, in both tardiness
modes; above the pricing grid's bound where that grid is coarse; and the same whether
it is spread over processes or not."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from milp.decomposition import oracle as oracle_module
from milp.decomposition.completion import alone_bound
from milp.decomposition.oracle import Oracle
from milp.decomposition.solve import _start
from milp.decomposition.space import Space
from tests.milp.decomposition.instances import priced, two_nodes

SLOTS = 8


def _space(inst) -> Space:
    from heuristic.sts.policy import StsPolicy
    from validation.simulator import rollout

    return _start(inst, rollout(inst, StsPolicy()), SLOTS, None).space


def _optimum_alone(oracle: Oracle) -> np.ndarray:
    """Each job's cheapest schedule alone: the exact pricing at no prices."""
    lam = np.zeros((len(oracle.space.resources), oracle.space.d.slots))
    got = oracle.price(lam, np.full(len(oracle.models), np.inf), beam=None, keep=1)
    assert got.exact.all()
    return got.value


@given(
    seed=st.integers(0, 10_000),
    delta=st.sampled_from([0.0, 0.2, 0.7]),
    shared=st.booleans(),
    mode=st.sampled_from(["worst_case", "expected"]),
    series=st.booleans(),
)
@settings(max_examples=25, deadline=None)
def test_the_bound_alone_is_never_above_the_job_alone(seed, delta, shared, mode, series):
    inst = two_nodes(seed, jobs=3, shared=shared, delta=delta, tardiness=mode)
    if series:
        inst = priced(inst, seed, carbon=False)
    space = _space(inst)
    coarse = Oracle(space, 8)  # the pricing's grid at its smallest: the finer one bites
    best = _optimum_alone(coarse)
    assert np.all(coarse.own <= best + 1e-9 * np.maximum(1.0, best))


def test_the_finer_grid_bites_and_spreading_changes_nothing(monkeypatch):
    """On the pricing's coarsest grid the bound alone rises above that grid's own
    completion bound for some jobs, and spread over processes it is the same."""
    risen = 0
    for seed in range(6):
        space = _space(two_nodes(seed, jobs=3, delta=0.2))
        one = Oracle(space, 8)
        alone = one._alone(1)
        least = np.array([space.d.job_bound(js.id) for js in space.jobs])
        grid = [alone_bound(m, s) for m, s in zip(one.models, one.steps, strict=True)]
        risen += int(np.sum(one.own > np.maximum(least, grid) + 1e-9))
        monkeypatch.setattr(oracle_module, "ALONE_SPREAD", 0)
        assert np.array_equal(Oracle(space, 8, workers=2)._alone(2), alone)
        monkeypatch.undo()
    assert risen > 0
