import pytest

from heuristic.baselines.fifo import FifoPolicy
from heuristic.core.registry import make_policy, policy_names
from instances import Config
from validation.evaluate import evaluate
from validation.simulator import simulate


def test_registry_knows_fifo():
    assert "fifo" in policy_names()
    assert make_policy("fifo").name == "fifo"
    with pytest.raises(ValueError, match="unknown policy 'nope'"):
        make_policy("nope")


def test_fifo_picks_cheapest_config_meeting_the_due_date(base):
    res = simulate(base, FifoPolicy())
    first = {s.job: s.config for s in reversed(res.plan.segments)}
    # a: the shared v100 slot (0.3 h x 150 W per epoch) is the cheapest and meets due 6.0
    assert first["a"] == Config("v100", 1, shared=True)
    ev = evaluate(base, res.plan)
    assert ev.missed == 0
    # each job keeps one configuration for its whole run
    assert all(len({s.config for s in res.plan.for_job(j)}) == 1 for j in ("a", "b"))


def test_fifo_starts_in_arrival_order_with_head_of_line_blocking(base):
    # b (released at 1) cannot overtake a: with a on the only GPU, b waits
    one_gpu = base.replace(
        nodes=(base.nodes[1].__class__("n1", "v100", 1),),
        gpu_types=base.gpu_types[1:],
        jobs=tuple(
            j.__class__(
                **{
                    **j.__dict__,
                    "epoch_times": {Config("v100", 1): j.epoch_times[Config("v100", 1)]},
                }
            )
            for j in base.jobs
        ),
    )
    res = simulate(one_gpu, FifoPolicy())
    starts = {j: res.plan.for_job(j)[0].start for j in ("a", "b")}
    assert starts["a"] == 0.0 and starts["b"] == pytest.approx(2.0)


def test_the_fastest_rule_takes_the_fastest_configuration_that_fits(base):
    res = simulate(base, make_policy("edf-fastest"))
    first = {s.job: s.config for s in reversed(res.plan.segments)}
    # a's fastest is 2 v100 (0.12 h an epoch, done at 1.2 h). b's is 4 v100, but at its
    # release (1 h) a holds 2 of the 4: b takes its fastest that fits, 1 v100 (0.25 h),
    # where the cheapest rule puts both on shared slots
    assert first == {"a": Config("v100", 2), "b": Config("v100", 1)}
    cheapest = simulate(base, make_policy("edf"))
    assert {s.config for s in cheapest.plan} == {Config("v100", 1, shared=True)}
    assert evaluate(base, res.plan).energy_cost > evaluate(base, cheapest.plan).energy_cost
    assert evaluate(base, res.plan).missed == 0
