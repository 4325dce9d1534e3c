"""The library's constructors, called as a user calls them: the values and types the
file reader refuses are refused here too, naming the field, and numpy's numbers are
taken as numbers (found by a probe of the Python API, 2026-12-04)."""

import dataclasses
import json

import numpy as np
import pytest

from instances import (
    Config,
    EpochDistribution,
    Instance,
    InstanceError,
    Node,
    Plan,
    PlanError,
    Segment,
    instance_to_dict,
)


def test_a_series_given_as_a_mapping_or_a_set_is_refused():
    """A dict of hour -> price was read by its keys, the hours billed as prices (2.56
    against 0.34 on ``tiny``), and a set in its hash order (a hunt of the library's
    arguments): refused as the stops of a distribution are."""
    from instances.energy import Series

    times = (0.0, 1.0, 2.0, 3.0)
    with pytest.raises(InstanceError, match=r"values = .*must be a list of numbers, in order"):
        Series(times, {0: 0.30, 1: 0.05, 2: 0.05})  # type: ignore[arg-type]
    with pytest.raises(InstanceError, match=r"values = .*must be a list of numbers, in order"):
        Series(times, {0.3, 0.05, 0.2})  # type: ignore[arg-type]
    with pytest.raises(InstanceError, match=r"times = .*must be a list of numbers, in order"):
        Series({0.0: 1, 1.0: 2}, (0.3,))  # type: ignore[arg-type]
    assert Series(np.array(times), [0.3, 0.05, 0.05]).values == (0.3, 0.05, 0.05)


def test_stops_given_as_text_or_a_set_are_refused():
    # "12" was read character by character: stops (1.0, 2.0)
    with pytest.raises(InstanceError, match="stops = '12': must be a list of numbers"):
        EpochDistribution("12", "01")  # type: ignore[arg-type]
    with pytest.raises(InstanceError, match=r"stops = .*must be a list of numbers"):
        EpochDistribution({1.0, 2.0}, (0.5, 0.5))  # type: ignore[arg-type]
    with pytest.raises(InstanceError, match=r"stops\[0\] = 'abc': must be a number"):
        EpochDistribution(("abc",), (1.0,))  # type: ignore[arg-type]
    with pytest.raises(InstanceError, match=r"probabilities\[0\] = None: must be a number"):
        EpochDistribution((1.0,), (None,))  # type: ignore[arg-type]
    with pytest.raises(InstanceError, match="stops = None"):
        EpochDistribution(None, None)  # type: ignore[arg-type]
    with pytest.raises(InstanceError, match=r"stops\[0\] = True"):
        EpochDistribution((True,), (1.0,))
    assert EpochDistribution(np.array([1.0, 2.0]), [0.5, 0.5]).stops == (1.0, 2.0)


@pytest.mark.parametrize(
    ("stops", "bad"),
    [((1e-300,), 0), ((1e-9,), 0), ((1e-300, 1.0), 0), ((1.0, 1.0 + 1e-13), 1)],
)
def test_a_stop_that_progress_at_the_previous_one_reaches_is_refused(stops, bad):
    """A job with one stop at 1e-300 epochs was complete before it ran: every policy's
    plan passed the checker, and the evaluator billed infinite tardiness."""
    probs = (1.0,) if len(stops) == 1 else (0.5, 0.5)
    with pytest.raises(InstanceError, match=rf"stops\[{bad}\] = .*already reaches it"):
        EpochDistribution(stops, probs)


def test_the_shortest_stops_the_tolerance_allows_are_costed_by_every_path(base):
    """Just above the tolerance a job runs a sliver of an epoch: the engine, the
    checker and the evaluator agree, with a finite cost."""
    from heuristic import make_policy
    from validation import check_plan, evaluate, simulate

    job = base.jobs[0]
    dist = EpochDistribution((2e-9, 1.0), (0.5, 0.5))
    inst = base.replace(jobs=(dataclasses.replace(job, distribution=dist), *base.jobs[1:]))
    for name in ("sts", "fifo", "lp"):
        plan = simulate(inst, make_policy(name)).plan
        assert check_plan(inst, plan) == []
        assert np.isfinite(evaluate(inst, plan).total_cost)


def test_numpy_numbers_are_numbers_and_are_stored_as_python_ones(base):
    node = Node("n9", "v100", np.int64(4), cpu_cores=np.int64(8), dram_gb=np.float32(64))
    assert type(node.num_gpus) is int and type(node.cpu_cores) is int
    assert type(node.dram_gb) is float
    cfg = Config("v100", np.int64(2))
    assert type(cfg.gpus) is int and cfg == Config("v100", 2)
    job = dataclasses.replace(base.jobs[0], release=np.float32(0.5), memory_gb=np.int64(4))
    inst = base.replace(nodes=(*base.nodes, node), jobs=(job, *base.jobs[1:]))
    json.dumps(instance_to_dict(inst))  # a numpy number would not be written


def test_numpy_numbers_are_numbers_to_the_other_entry_points_too(base):
    """A series' breakpoints, an STS option given as a number and the MILP's gap took
    a Python float but refused numpy's integers as "must be a number", each by a check
    of its own; they share ``instances.fields.is_number`` now."""
    from heuristic.core.registry import make_policy
    from instances.energy import Series
    from milp.solve import solve as solve_milp

    series = Series(np.arange(3), (0.1, 0.2))
    assert series.times == (0.0, 1.0, 2.0) and type(series.times[1]) is float
    assert make_policy("sts", lead_hours=np.int64(2)).options.lead_hours == 2.0
    tiny = base.replace(jobs=base.jobs[:1])
    assert solve_milp(tiny, slot=0.5, mip_gap=np.float32(0.0), time_limit=30).plan is not None


def test_containers_of_the_wrong_kind_are_refused_naming_the_field(base):
    with pytest.raises(InstanceError, match="jobs = 'abc': must be a list of Job"):
        base.replace(jobs="abc")
    with pytest.raises(InstanceError, match=r"jobs\[0\] = None: must be a Job"):
        base.replace(jobs=(None,))
    with pytest.raises(InstanceError, match=r"nodes = .*must be a list of Node"):
        base.replace(nodes={n.id: n for n in base.nodes})
    with pytest.raises(InstanceError, match=r"gpu_types\[0\] = 'v100': must be a GpuType"):
        base.replace(gpu_types=("v100",))
    job = base.jobs[0]
    pairs = list(job.epoch_times.items())
    with pytest.raises(InstanceError, match=r"epoch_times = .*must map each Config"):
        dataclasses.replace(job, epoch_times=pairs)
    with pytest.raises(InstanceError, match=r"configs\[0\] = 'v100x1': must be a Config"):
        dataclasses.replace(job, epoch_times={"v100x1": 1.0})
    assert isinstance(base.replace(jobs=list(base.jobs)), Instance)
    assert base.replace(jobs=(j for j in base.jobs)).jobs == base.jobs  # read once


def test_segments_of_the_wrong_types_are_refused_naming_the_field(base):
    cfg = Config("v100", 1)
    gpus = (("n1", 0),)
    assert Plan((Segment(0, 1, "a", cfg, gpus),))  # integers are times
    assert len(Plan(Segment(float(k), k + 1.0, "a", cfg, gpus) for k in range(3))) == 3
    with pytest.raises(PlanError, match=r"segments\[0\] = \(0.0, 1.0.*must be a Segment"):
        Plan(((0.0, 1.0, "a", cfg, gpus),))  # type: ignore[arg-type]
    with pytest.raises(PlanError, match=r"segments\[1\].start = '0': must be a number"):
        Plan((Segment(0.0, 1.0, "b", cfg, gpus), Segment("0", 1.0, "a", cfg, gpus)))  # type: ignore[arg-type]
    with pytest.raises(PlanError, match=r"segments\[0\].config = 'v100x1': must be a Config"):
        Plan((Segment(0.0, 1.0, "a", "v100x1", gpus),))  # type: ignore[arg-type]
    with pytest.raises(PlanError, match=r"segments\[0\].gpus = \[.*must be a tuple"):
        Plan((Segment(0.0, 1.0, "a", cfg, [("n1", 0)]),))  # type: ignore[arg-type]


def test_a_negative_zero_is_stored_as_zero(base):
    inst = base.replace(energy_price=-0.0)
    assert str(inst.energy_price) == "0.0"


def test_series_built_in_code_are_held_to_the_files_bounds():
    """Carbon intensity built in code was held to a price's bound (1e6), not carbon's
    (1e5 g/kWh): the instance was costed and written, and its own file then refused by
    the reader; a price series built with a larger ``upper`` passed too (a hunt of the
    library's arguments)."""
    from instances.bundled import bundled
    from instances.energy import Carbon, Series

    tiny = bundled("tiny")
    with pytest.raises(InstanceError, match=r"carbon.values\[0\] = 500000.0: must be at most"):
        tiny.replace(carbon=Carbon(Series.flat(5e5), price=10.0))
    with pytest.raises(
        InstanceError, match=r"prices.values\[0\] = 50000000.0: must be at most 1e\+06 per kWh"
    ):
        tiny.replace(prices=Series((0.0, 1.0), (5e7,), upper=1e9))
    assert tiny.replace(carbon=Carbon(Series.flat(1e5), price=10.0)).carbon is not None
