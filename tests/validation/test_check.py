import pytest

from heuristic.core.registry import make_policy
from instances import Config, Plan, PlanError, Segment
from instances.bundled import bundled
from tests.validation.violations import kinds
from validation.check import check_plan
from validation.evaluate import evaluate
from validation.simulator import rollout

V1 = Config("v100", 1)
V2 = Config("v100", 2)
SH = Config("v100", 1, shared=True)
K1 = Config("k80", 1)


def feasible():
    return [
        Segment(0.0, 2.0, "a", V1, (("n1", 0),)),
        Segment(1.0, 1.25, "b", V1, (("n1", 1),)),
        Segment(1.25, 2.0, "b", V1, (("n1", 2),)),
    ]


def test_feasible_plan_has_no_violation(base):
    assert check_plan(base, Plan(tuple(feasible()))) == []


@pytest.mark.parametrize(
    ("segs", "kind"),
    [
        (
            [
                Segment(0.0, 2.0, "a", V1, (("n1", 0),)),
                Segment(0.5, 1.5, "b", V1, (("n1", 0),)),
                Segment(1.5, 2.0, "b", V2, (("n1", 1), ("n1", 2))),
            ],
            "capacity",
        ),
        (
            [Segment(0.0, 2.0, "a", V1, (("n1", 0),)), Segment(0.0, 1.0, "b", V1, (("n1", 1),))],
            "before-release",
        ),
        ([Segment(0.0, 1.0, "a", V1, (("n1", 0),))], "incomplete"),
        ([Segment(0.0, 2.0, "a", Config("k80", 2), (("n0", 0), ("n0", 1)))], "config-not-allowed"),
        ([Segment(0.0, 2.0, "a", V1, (("n0", 0),))], "bad-gpus"),
        ([Segment(0.0, 2.0, "a", V1, (("n9", 0),))], "bad-gpus"),
        ([Segment(0.0, 2.0, "a", V1, (("n1", 7),))], "bad-gpus"),
        ([Segment(0.0, 2.0, "a", V2, (("n1", 0),))], "bad-gpus"),
        (
            [Segment(0.0, 2.0, "a", V1, (("n1", 0),)), Segment(1.0, 2.0, "a", K1, (("n0", 0),))],
            "overlap",
        ),
        (
            [Segment(0.0, 2.0, "a", V1, (("n1", 0),)), Segment(3.0, 4.0, "a", V1, (("n1", 0),))],
            "after-completion",
        ),
        ([Segment(0.0, 2.0, "zz", V1, (("n1", 0),))], "unknown-job"),
    ],
)
def test_each_violation_is_found(base, segs, kind):
    assert kind in kinds(base, segs)


def test_shared_gpu_slots_and_memory(base):
    # a (6 GB) and b (4 GB) may share one 16 GB v100 with K_max = 2
    segs = [Segment(0.0, 3.0, "a", SH, (("n1", 0),)), Segment(1.0, 2.6, "b", SH, (("n1", 0),))]
    assert kinds(base, segs) == []
    assert "capacity" in kinds(base.replace(max_share=1), segs)
    big = base.replace(
        jobs=(
            base.job("a"),
            base.job("b").__class__(**{**base.job("b").__dict__, "memory_gb": 12.0}),
        )
    )
    assert "capacity" in kinds(big, segs)  # 6 + 12 GB > 16 GB
    # a shared slot next to an exclusive user of the same GPU is a conflict
    segs2 = [Segment(0.0, 3.0, "a", SH, (("n1", 0),)), Segment(1.0, 2.0, "b", V1, (("n1", 0),))]
    assert "capacity" in kinds(base, segs2)


def test_slot_alignment(base):
    inst = base.replace(slot=0.5)
    assert kinds(inst, feasible()) == ["off-slot"]  # b switches GPUs at t = 1.25


def test_evaluate_refuses_infeasible_plan_listing_every_violation(base):
    segs = [Segment(0.0, 1.0, "a", V1, (("n9", 0),))]
    with pytest.raises(PlanError) as info:
        evaluate(base, Plan(tuple(segs)))
    text = str(info.value)
    assert "unknown node 'n9'" in text and "job 'b'" in text and "incomplete" in text


def test_a_shortfall_below_the_printed_digits_is_named(base):
    # 2 h run the job's epochs; a ten-millionth short is incomplete, and the message
    # says by how much rather than "reaches 10 of its 10"
    v = check_plan(base, Plan((Segment(0.0, 2.0 * (1 - 1e-7), "a", V1, (("n1", 0),)),)))
    (why,) = [x.detail for x in v if x.kind == "incomplete" and x.job == "a"]
    epochs = base.job("a").max_epochs
    assert f"of its {epochs:g} epochs" in why and "short by" in why


def test_gpus_named_by_a_fraction_and_a_rounding_overlap_are_judged_as_the_rest():
    """GPU indices 0 and 0.5 of a one-GPU node passed as two GPUs; two segments meeting
    at 0.1 * 3 and 0.3 (5.6e-17 h apart) were reported as sharing a GPU, where every
    other check allows 1e-9 h."""
    inst = bundled("tiny")
    seg = next(iter(rollout(inst, make_policy("fifo"))))
    node = seg.gpus[0][0]
    half = Segment(seg.start, seg.end, seg.job, seg.config, ((node, 0.5),))  # type: ignore[arg-type]
    bad = check_plan(inst, Plan([half]))
    assert any("GPU index 0.5 of node" in v.detail and "whole number" in v.detail for v in bad)
    text = Segment(seg.start, seg.end, seg.job, seg.config, ((node, "0"),))  # type: ignore[arg-type]
    assert any("GPU index '0'" in v.detail for v in check_plan(inst, Plan([text])))
    first = Segment(0.0, 0.1 * 3, "j0", seg.config, seg.gpus)
    second = Segment(0.3, 1.0, "j1", seg.config, seg.gpus)
    assert first.end > second.start  # the rounding overlap itself
    assert not [v for v in check_plan(inst, Plan([first, second])) if v.kind == "capacity"]
    third = Segment(0.3 - 1e-6, 1.0, "j1", seg.config, seg.gpus)  # a real overlap
    assert [v for v in check_plan(inst, Plan([first, third])) if v.kind == "capacity"]


# -- boundaries a mutation check of the checker found untested (2026-12-06) -----------
M2 = Config("v100", 4, nodes=2)  # two GPUs on each of two whole nodes
FAST = Config("v100", 1, cpus=4, dram_gb=60.0)


def _two_nodes():
    """Two 4-GPU V100 nodes; ``a`` runs on both (2 + 2), ``b`` on one GPU."""
    from instances import EpochDistribution, GpuType, Instance, Job, Node

    a = Job("a", 0.0, 10.0, EpochDistribution.deterministic(4.0), {M2: 0.5}, 8.0)
    b = Job("b", 0.0, 10.0, EpochDistribution.deterministic(2.0), {V1: 0.5}, 8.0)
    nodes = (Node("n1", "v100", 4), Node("n2", "v100", 4))
    return Instance((GpuType("v100", 32.0, 300.0),), nodes, (a, b))


def _seven_cores():
    """One 2-GPU node of 7 cores; each job's configuration takes 4."""
    from instances import EpochDistribution, GpuType, Instance, Job, Node

    jobs = tuple(
        Job(f"j{i}", 0.0, 10.0, EpochDistribution.deterministic(4.0), {FAST: 0.5}, 8.0)
        for i in range(2)
    )
    node = Node("a", "v100", 2, cpu_cores=7, dram_gb=200.0)
    return Instance((GpuType("v100", 32.0, 300.0),), (node,), jobs)


B_ALONE = Segment(1.0, 2.0, "b", V1, (("n1", 1),))


@pytest.mark.parametrize(
    ("case", "segs", "expected"),
    [
        # two segments of one job overlapping by 5e-9 h: five times the clock's tolerance
        (
            "base",
            [
                Segment(0.0, 1.0, "a", V1, (("n1", 0),)),
                Segment(1.0 - 5e-9, 3.5, "a", K1, (("n0", 0),)),
                B_ALONE,
            ],
            ["overlap"],
        ),
        # a two-node segment holds both its nodes whole: no job on their other GPUs
        (
            "two_nodes",
            [
                Segment(0.0, 2.0, "a", M2, (("n1", 0), ("n1", 1), ("n2", 0), ("n2", 1))),
                Segment(0.0, 1.0, "b", V1, (("n1", 2),)),
            ],
            ["capacity"],
        ),
        # a job done at 2 h (10 epochs of 0.2 h) runs no segment from its completion on
        (
            "base",
            [
                Segment(0.0, 2.0, "a", V1, (("n1", 0),)),
                Segment(2.0, 3.0, "a", V1, (("n1", 0),)),
                B_ALONE,
            ],
            ["after-completion"],
        ),
        # a segment past its job's completion holds its GPU only until then
        (
            "base",
            [Segment(0.0, 3.0, "a", V1, (("n1", 0),)), Segment(2.0, 3.0, "b", V1, (("n1", 0),))],
            [],
        ),
        # 4 + 4 cores on a node of 7
        (
            "seven_cores",
            [
                Segment(0.0, 2.0, "j0", FAST, (("a", 0),)),
                Segment(0.0, 2.0, "j1", FAST, (("a", 1),)),
            ],
            ["host-capacity"],
        ),
        # GPU index 4 of a 4-GPU node
        ("base", [Segment(0.0, 2.0, "a", V1, (("n1", 4),)), B_ALONE], ["bad-gpus"]),
        # a configuration of two GPUs on each of two nodes, split 3 + 1
        (
            "two_nodes",
            [
                Segment(0.0, 2.0, "a", M2, (("n1", 0), ("n1", 1), ("n1", 2), ("n2", 0))),
                Segment(2.0, 3.0, "b", V1, (("n1", 0),)),
            ],
            ["bad-gpus"],
        ),
    ],
)
def test_the_checkers_boundaries(base, case, segs, expected):
    """Each case sits on a boundary of one rule: seven mutants of the checker (a
    tolerance ten times looser, a multi-node segment holding only the GPUs it names, a
    segment from the completion accepted, GPUs held to a segment's end past the
    completion, one core too many, the first index past a node's GPUs, a multi-node
    split unchecked) passed every test before these."""
    inst = {"base": base, "two_nodes": _two_nodes(), "seven_cores": _seven_cores()}[case]
    assert kinds(inst, segs) == expected
