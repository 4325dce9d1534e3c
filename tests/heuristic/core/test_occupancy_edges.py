"""The occupancy's cases a mutation test found untested (2026-12-07)."""

from heuristic.core.occupancy import Allocation, Occupancy
from instances import Config, GpuType, Instance, Job, Node
from instances.distribution import EpochDistribution
from tests.heuristic.core.test_occupancy import cluster


def test_a_job_that_holds_gpus_cannot_be_placed_again():
    """(mutant O04: the 'already holds GPUs' check dropped) a second placement would
    overwrite the owner entry and leak the first allocation's GPUs forever."""
    inst = cluster()
    occ = Occupancy(inst)
    j0 = inst.job("j0")
    occ.place(j0, Allocation(Config("v100", 1), (("b", 0),)))
    assert "already holds" in occ.why_not(j0, Allocation(Config("v100", 1), (("b", 1),)))
    assert not occ.keep(j0, Allocation(Config("v100", 1), (("b", 1),)), Config("v100", 1))


def test_a_multi_node_job_needs_its_nodes_wholly_free():
    """(mutant O07: the whole-node check skipped for 2-node configurations) free GPUs
    0-3 of node a while a's GPU 7 is busy do not make a whole node."""
    inst = cluster()
    occ = Occupancy(inst)
    occ.place(inst.job("j0"), Allocation(Config("v100", 1), (("a", 7),)))
    multi = Config("v100", 8, nodes=2)
    alloc = Allocation(multi, tuple(("a", i) for i in range(4)) + tuple(("c", i) for i in range(4)))
    assert "wholly free" in occ.why_not(inst.job("j1"), alloc)
    found = occ.find(inst.job("j1"), multi)
    assert found is not None and {n for n, _ in found.gpus} == {"c", "d"}


def _host_cluster():
    g = GpuType("v100", 16.0, 300.0)
    nodes = (Node("h", "v100", 4, cpu_cores=8, dram_gb=64.0),)
    cfg = Config("v100", 1, cpus=4, dram_gb=32.0)
    d = EpochDistribution.deterministic(2)
    jobs = tuple(Job(f"j{i}", 0.0, 10.0, d, {cfg: 1.0}, 4.0) for i in range(3))
    return Instance((g,), nodes, jobs), cfg


def test_a_node_with_exactly_the_cores_left_hosts_the_job_and_release_gives_them_back():
    """(mutant O01: `cpus_per_node > cpus` turned `>=`; mutant O13: the release does
    not give back cores and DRAM) two 4-core jobs fill an 8-core node exactly; after
    one leaves, a third fits again."""
    inst, cfg = _host_cluster()
    occ = Occupancy(inst)
    a0 = occ.find(inst.job("j0"), cfg)
    occ.place(inst.job("j0"), a0)
    a1 = occ.find(inst.job("j1"), cfg)  # 4 cores and 32 GB left: exactly enough
    assert a1 is not None
    occ.place(inst.job("j1"), a1)
    assert occ.cpus_free["h"] == 0 and occ.dram_free["h"] == 0.0
    assert occ.find(inst.job("j2"), cfg) is None  # GPUs left, no cores
    occ.release("j0")
    assert occ.cpus_free["h"] == 4 and occ.dram_free["h"] == 32.0
    assert occ.find(inst.job("j2"), cfg) is not None


def test_a_shared_gpu_on_a_node_without_cores_left_is_passed_over():
    """(mutant O18: the host check of the open shared GPUs dropped) the open slot on
    h1 has GPU memory but h1 has no cores left: the tenant goes to h2, and the engine's
    own check (why_not) agrees the slot on h1 is refused."""
    g = GpuType("v100", 16.0, 300.0)
    nodes = (Node("h1", "v100", 2, cpu_cores=4), Node("h2", "v100", 2, cpu_cores=8))
    sh = Config("v100", 1, shared=True, cpus=4)
    d = EpochDistribution.deterministic(2)
    jobs = tuple(Job(f"j{i}", 0.0, 10.0, d, {sh: 1.0}, 4.0) for i in range(2))
    inst = Instance((g,), nodes, jobs)
    occ = Occupancy(inst)
    occ.place(inst.job("j0"), Allocation(sh, (("h1", 0),)))
    assert occ.cpus_free["h1"] == 0
    found = occ.find(inst.job("j1"), sh)
    assert found is not None and found.gpus[0][0] == "h2"
    assert occ.why_not(inst.job("j1"), Allocation(sh, (("h1", 0),))) is not None


def test_best_fit_among_equal_nodes_takes_one_that_is_on():
    """Where empty nodes power off, of two nodes that fit alike the one on is taken, then
    the one booting soonest, and an off node only where no other fits (a mutation that
    ranked the nodes on last passed every test: it boots a node for nothing)."""
    from heuristic.core.power import PowerStates

    inst = cluster()  # nodes c and d: four GPUs each, equally tight for two GPUs
    job, two = inst.job("j0"), Config("v100", 2)
    for states, want in [
        (PowerStates(off=frozenset({"c"})), "d"),
        (PowerStates(off=frozenset({"d"})), "c"),
        (PowerStates(booting={"c": 0.3, "d": 0.1}), "d"),
        (PowerStates(off=frozenset({"c"}), booting={"d": 0.2}), "d"),
    ]:
        occ = Occupancy(inst)
        occ.place(inst.job("j1"), Allocation(Config("v100", 8), tuple(("a", g) for g in range(8))))
        occ.place(inst.job("j2"), Allocation(Config("v100", 2), (("b", 0), ("b", 1))))
        occ.power = states
        alloc = occ.find(job, two)
        assert alloc is not None and {n for n, _ in alloc.gpus} == {want}, (states, alloc)
