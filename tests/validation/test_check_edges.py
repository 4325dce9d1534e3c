"""Plan-checker rules a mutation test (2026-12-07) found free to move with every
checker test passing: each case sits where the mutant and the code disagree (a
tolerance ten times looser, a check skipped for shared, multi-node or two-node
distributed segments, a span read wrongly, an early return dropped)."""

from __future__ import annotations

from instances import (
    Config,
    Domain,
    EpochDistribution,
    GpuType,
    Instance,
    Job,
    Node,
    Plan,
    Rack,
    Segment,
    Topology,
)
from tests.validation.violations import kinds
from validation.check import check_plan

V100 = GpuType("v100", 32.0, 300.0)
C1 = Config("v100", 1)
SH = Config("v100", 1, shared=True)


def _job(
    name: str,
    times: dict[Config, float],
    epochs: float = 2.0,
    release: float = 0.0,
    memory: float = 8.0,
) -> Job:
    return Job(
        name, release, release + 20.0, EpochDistribution.deterministic(epochs), times, memory
    )


def test_a_shared_slot_naming_two_gpus_is_refused():
    """A shared configuration is one slot of one GPU (mutant: any number of GPUs)."""
    inst = Instance((V100,), (Node("n0", "v100", 2),), (_job("a", {SH: 1.0}),))
    seg = Segment(0.0, 2.0, "a", SH, (("n0", 0), ("n0", 1)))
    assert kinds(inst, [seg]) == ["bad-gpus"]
    assert kinds(inst, [Segment(0.0, 2.0, "a", SH, (("n0", 1),))]) == []


def test_a_start_five_clock_tolerances_before_release_is_before_release():
    """TIME_TOL is 1e-9 h: 5e-9 h early is early (mutant: 1e-8 h of slack)."""
    inst = Instance((V100,), (Node("n0", "v100", 1),), (_job("a", {C1: 1.0}, release=1.0),))
    early = Segment(1.0 - 5e-9, 3.0, "a", C1, (("n0", 0),))
    assert kinds(inst, [early]) == ["before-release"]
    within = Segment(1.0 - 5e-10, 3.0, "a", C1, (("n0", 0),))
    assert kinds(inst, [within]) == []


def test_a_start_five_clock_tolerances_before_zero_is_negative_time():
    inst = Instance((V100,), (Node("n0", "v100", 1),), (_job("a", {C1: 1.0}),))
    seg = Segment(-5e-9, 2.0, "a", C1, (("n0", 0),))
    assert kinds(inst, [seg]) == ["before-release", "negative-time"]


def test_two_jobs_overlapping_five_clock_tolerances_on_one_gpu_conflict():
    """The sweep forgives 1e-9 h at a segment's end, not 1e-8 h."""
    jobs = (_job("a", {C1: 1.0}, epochs=1.0), _job("b", {C1: 1.0}, epochs=1.0))
    inst = Instance((V100,), (Node("n0", "v100", 1),), jobs)
    a = Segment(0.0, 1.0, "a", C1, (("n0", 0),))
    late = 1.0 - 5e-9
    plan = [a, Segment(late, late + 1.0, "b", C1, (("n0", 0),))]
    assert kinds(inst, plan) == ["capacity"]
    ok = 1.0 - 5e-10
    assert kinds(inst, [a, Segment(ok, ok + 1.0, "b", C1, (("n0", 0),))]) == []


def test_shared_memory_over_by_five_billionths_of_a_gb_is_refused():
    jobs = (_job("a", {SH: 1.0}, memory=16.0), _job("b", {SH: 1.0}, memory=16.0 + 5e-9))
    inst = Instance((V100,), (Node("n0", "v100", 1),), jobs)
    plan = [Segment(0.0, 2.0, j, SH, (("n0", 0),)) for j in ("a", "b")]
    assert kinds(inst, plan) == ["capacity"]
    exact = Instance(
        (V100,), (Node("n0", "v100", 1),), (jobs[0], _job("b", {SH: 1.0}, memory=16.0))
    )
    assert kinds(exact, plan) == []


def test_a_multi_node_segment_holds_cores_on_every_node_it_uses():
    """4 cores on each of two nodes: node 'c' has 2 (mutant: only the first node counted)."""
    m2 = Config("v100", 4, nodes=2, cpus=8)
    inst = Instance(
        (V100,),
        (
            Node("a", "v100", 2, cpu_cores=6),
            Node("b", "v100", 2, cpu_cores=6),
            Node("c", "v100", 2, cpu_cores=2),
        ),
        (_job("j", {m2: 1.0}),),
    )
    on = lambda *ns: Segment(0.0, 2.0, "j", m2, tuple((n, i) for n in ns for i in (0, 1)))  # noqa: E731
    assert kinds(inst, [on("a", "b")]) == []
    (v,) = check_plan(inst, Plan.of([on("a", "c")]))
    assert v.kind == "host-capacity" and "node 'c'" in v.detail


def test_two_node_distributed_segments_hold_their_nics():
    """Two rack-span jobs on the same two nodes at 15 Gb/s: 30 Gb/s on 25 Gb/s NICs
    (mutant: only segments over three or more nodes were swept)."""
    topo = Topology(25.0, (Rack("r0", 100.0),))
    nodes = (Node("r0n0", "v100", 2, rack="r0"), Node("r0n1", "v100", 2, rack="r0"))
    d2 = Config("v100", 2, span="rack", net_gbps=15.0)
    inst = Instance((V100,), nodes, (_job("j0", {d2: 1.0}), _job("j1", {d2: 1.0})), topology=topo)
    plan = [Segment(0.0, 2.0, f"j{i}", d2, (("r0n0", i), ("r0n1", i))) for i in (0, 1)]
    found = check_plan(inst, Plan.of(plan))
    assert {v.kind for v in found} == {"link-capacity"}
    assert {v.detail.split(":")[0] for v in found} == {
        "the NIC of node 'r0n0'",
        "the NIC of node 'r0n1'",
    }
    serial = [plan[0], Segment(2.0, 4.0, "j1", d2, (("r0n0", 1), ("r0n1", 1)))]
    assert check_plan(inst, Plan.of(serial)) == []


def test_two_racks_outside_any_domain_span_the_cluster():
    """Racks r2 and r3 belong to no domain: together they are no domain (mutant: a set
    of domains {None} read as one domain)."""
    topo = Topology(
        25.0,
        (Rack("r0", 30.0, "d0"), Rack("r1", 30.0, "d0"), Rack("r2", 30.0), Rack("r3", 30.0)),
        (Domain("d0", 30.0),),
    )
    nodes = tuple(Node(f"{r}n0", "v100", 2, rack=r) for r in ("r0", "r1", "r2", "r3"))
    dom = Config("v100", 2, span="domain", net_gbps=5.0)
    inst = Instance((V100,), nodes, (_job("j", {dom: 1.0}),), topology=topo)
    ok = Segment(0.0, 2.0, "j", dom, (("r0n0", 0), ("r1n0", 0)))
    assert kinds(inst, [ok]) == []
    wide = Segment(0.0, 2.0, "j", dom, (("r2n0", 0), ("r3n0", 0)))
    (v,) = check_plan(inst, Plan.of([wide]))
    assert v.kind == "bad-gpus" and "span the cluster" in v.detail


def test_a_configuration_not_allowed_is_judged_no_further():
    """A segment on a configuration the job may not use is that one violation: its GPUs
    are not judged against it (mutant: no early return; a distributed configuration
    on an instance without a network then failed an assertion)."""
    inst = Instance((V100,), (Node("n0", "v100", 2),), (_job("a", {C1: 1.0}),))
    dist = Config("v100", 2, span="rack", net_gbps=10.0)
    seg = Segment(0.0, 2.0, "a", dist, (("n0", 0), ("n0", 1)))
    assert kinds(inst, [seg, Segment(0.0, 2.0, "a", C1, (("n0", 0),))]) == [
        "config-not-allowed",
        "overlap",
    ]
    k80 = Segment(0.0, 2.0, "a", Config("k80", 1), (("n0", 0),))
    assert [v.kind for v in check_plan(inst, Plan.of([k80]))] == [
        "config-not-allowed",
        "incomplete",
    ]


def test_two_distinct_conflicts_on_one_gpu_are_both_reported():
    """check_plan lists every violation: a with b, then b with c on the same GPU."""
    jobs = tuple(_job(j, {C1: 1.0}) for j in "abc")
    inst = Instance((V100,), (Node("n0", "v100", 1),), jobs)
    plan = [
        Segment(0.0, 2.0, "a", C1, (("n0", 0),)),
        Segment(1.0, 3.0, "b", C1, (("n0", 0),)),
        Segment(2.5, 4.5, "c", C1, (("n0", 0),)),
    ]
    found = [v for v in check_plan(inst, Plan.of(plan)) if v.kind == "capacity"]
    assert [(v.job, v.time) for v in found] == [("b", 1.0), ("c", 2.5)]


def test_a_negative_gpu_index_is_refused():
    """GPU -1 of a one-GPU node does not exist (mutant: only the upper bound checked, and
    GPUs -1 and 0 of one GPU were two GPUs to the sweep)."""
    jobs = (_job("a", {C1: 1.0}), _job("b", {C1: 1.0}))
    inst = Instance((V100,), (Node("n0", "v100", 1),), jobs)
    plan = [Segment(0.0, 2.0, "a", C1, (("n0", -1),)), Segment(0.0, 2.0, "b", C1, (("n0", 0),))]
    (v,) = check_plan(inst, Plan.of(plan))
    assert v.kind == "bad-gpus" and v.job == "a"


def test_dram_over_by_five_billionths_of_a_gb_is_refused():
    f = Config("v100", 1, dram_gb=60.0)
    g = Config("v100", 1, dram_gb=60.0 + 5e-9)
    jobs = (_job("j0", {f: 1.0}), _job("j1", {g: 1.0}))
    inst = Instance((V100,), (Node("n0", "v100", 2, dram_gb=120.0),), jobs)
    plan = [Segment(0.0, 2.0, "j0", f, (("n0", 0),)), Segment(0.0, 2.0, "j1", g, (("n0", 1),))]
    assert kinds(inst, plan) == ["host-capacity"]


def test_a_link_over_by_five_billionths_of_a_gbps_is_refused():
    topo = Topology(25.0, (Rack("r0", 100.0),))
    nodes = (Node("r0n0", "v100", 2, rack="r0"), Node("r0n1", "v100", 2, rack="r0"))
    d0 = Config("v100", 2, span="rack", net_gbps=12.5)
    d1 = Config("v100", 2, span="rack", net_gbps=12.5 + 5e-9)
    inst = Instance((V100,), nodes, (_job("j0", {d0: 1.0}), _job("j1", {d1: 1.0})), topology=topo)
    plan = [
        Segment(0.0, 2.0, "j0", d0, (("r0n0", 0), ("r0n1", 0))),
        Segment(0.0, 2.0, "j1", d1, (("r0n0", 1), ("r0n1", 1))),
    ]
    assert kinds(inst, plan) == ["link-capacity"]


def test_a_segment_shorter_than_the_clock_tolerance_is_swept_without_error():
    """A job of 1e-3 h epochs with a 5e-10 h segment between two others on one GPU:
    feasible (mutant: the sweep moved every end 1e-9 h early, the short segment ended
    before it started, and the sweep raised ValueError)."""
    tau = 1e-3
    inst = Instance((V100,), (Node("n0", "v100", 1),), (_job("a", {C1: tau}, epochs=2.0),))
    cut = tau - 5e-10
    plan = [
        Segment(0.0, cut, "a", C1, (("n0", 0),)),
        Segment(cut, tau, "a", C1, (("n0", 0),)),
        Segment(tau, 2 * tau, "a", C1, (("n0", 0),)),
    ]
    assert check_plan(inst, Plan.of(plan)) == []


def test_one_segment_late_in_a_trace_short_by_ten_clock_ulps_is_incomplete():
    """0.05-s epochs at 5,000 h, one segment 1e-6 epochs short: more than one segment's
    clock rounding (4 ulps of 5,000 h: 2.8e-7 epochs), so incomplete (mutant: 40 ulps)."""
    tau, rel = 1.3e-5, 5000.3
    job = Job("a", rel, rel + 1.0, EpochDistribution((3.0,), (1.0,)), {C1: tau}, 6.0)
    inst = Instance((V100,), (Node("n0", "v100", 1),), (job,))
    short = Segment(rel, rel + (3 - 1e-6) * tau, "a", C1, (("n0", 0),))
    assert kinds(inst, [short]) == ["incomplete"]
    close = Segment(rel, rel + (3 - 1e-7) * tau, "a", C1, (("n0", 0),))
    assert kinds(inst, [close]) == []


def test_a_segment_the_job_needs_is_not_after_its_completion_within_the_clock_tolerance():
    """A last piece of 5e-10 h (5e-7 epochs of 1e-3 h, far above the stop tolerance)
    started within the clock's tolerance before the completion: flagged as starting
    after the job completed, and without it the plan is short, so no form of the plan
    was accepted (a review, 2026-12-07). A segment at the completion itself still is."""
    tau = 1e-3
    job = Job("a", 0.0, 20.0, EpochDistribution.deterministic(1.0), {C1: tau}, 8.0)
    inst = Instance((V100,), (Node("n0", "v100", 2),), (job,))
    cut = tau - 5e-10
    first = Segment(0.0, cut, "a", C1, (("n0", 0),))
    assert kinds(inst, [first]) == ["incomplete"]
    for gpu in (0, 1):  # the same GPUs, and a move
        assert check_plan(inst, Plan.of([first, Segment(cut, tau, "a", C1, (("n0", gpu),))])) == []
    whole = Segment(0.0, tau, "a", C1, (("n0", 0),))
    extra = Segment(tau, 2 * tau, "a", C1, (("n0", 1),))
    assert kinds(inst, [whole, extra]) == ["after-completion"]
