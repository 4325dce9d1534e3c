"""A root stopped by its clock spends its last share of time on exact pricings with the
largest label budget, at the stability centre and at the last master's duals: they
run, prove every job of a small instance where the rounds' tiny budget proved none,
and their bounds count (and stay below the compact MILP's optimum)."""

from __future__ import annotations

import time
import types

from milp import solve as milp_solve
from milp.decomposition import colgen
from milp.decomposition.colgen import CgOptions, generate
from milp.decomposition.master import label_terms
from milp.decomposition.solve import FINAL_SHARE
from tests.milp.decomposition.instances import two_nodes
from tests.milp.decomposition.root import root_master

SLOTS = 8


def test_last_exact_pricing_proves_the_jobs_and_bounds(monkeypatch):
    inst = two_nodes(0, jobs=3, delta=0.2, tardiness="expected")
    master, oracle, floor = root_master(inst, SLOTS)
    calls: list[tuple[int | None, object, float]] = []
    real = oracle.price

    def spy(lam, upper, **kw):
        got = real(lam, upper, **kw)
        bound = float(got.proved.sum()) + label_terms(master.space, lam)
        calls.append((kw.get("budget"), got, bound))
        return got

    monkeypatch.setattr(oracle, "price", spy)
    # a clock that runs 100 s a reading from now: the rounds stop after a few readings,
    # while the pricers (on the real clock) are far from the deadline
    now = time.perf_counter()
    ticks = iter(range(10**6))
    fake = types.SimpleNamespace(perf_counter=lambda: now + 100.0 * next(ticks))
    monkeypatch.setattr(colgen, "time", fake)
    options = CgOptions(labels=1, labels_max=10**7, stall=0)  # every round exact, 1 label
    gen = generate(master, oracle, options, floor, now + 1000.0, final=FINAL_SHARE)
    assert gen.termination.name == "TIME_LIMIT"
    final = [(b, got, bound) for b, got, bound in calls if b == options.labels_max]
    assert len(final) == 2 and calls[-2:] == final  # at the centre, then the last duals
    assert all(got.exact.all() for _, got, _ in final)  # each proved every job
    assert not any(got.exact.all() for b, got, _ in calls if b == 1)
    assert gen.bound >= max(bound for _, _, bound in final) - 1e-12  # their bounds count
    exact = milp_solve(inst, slots=SLOTS, time_limit=120)
    assert exact.objective is not None
    assert gen.bound <= exact.objective + 1e-9 * max(1.0, exact.objective)
