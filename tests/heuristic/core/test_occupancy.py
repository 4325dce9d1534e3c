from hypothesis import given
from hypothesis import strategies as st

from heuristic.core.occupancy import Occupancy
from instances import Config, GpuType, Instance, Job, Node
from instances.distribution import EpochDistribution


def cluster():
    g = GpuType("v100", 16.0, 300.0)
    nodes = (Node("a", "v100", 8), Node("b", "v100", 2), Node("c", "v100", 4), Node("d", "v100", 4))
    d = EpochDistribution.deterministic(4)
    jobs = tuple(
        Job(
            f"j{i}",
            0.0,
            10.0,
            d,
            {
                Config("v100", 1): 1.0,
                Config("v100", 1, shared=True): 1.5,
                Config("v100", 2): 0.6,
                Config("v100", 8, nodes=2): 0.2,
            },
            mem,
        )
        for i, mem in enumerate([6.0, 8.0, 4.0, 12.0])
    )
    return Instance((g,), nodes, jobs)


def test_best_fit_takes_the_tightest_node():
    inst = cluster()
    occ = Occupancy(inst)
    alloc = occ.find(inst.job("j0"), Config("v100", 2))
    assert alloc is not None and {n for n, _ in alloc.gpus} == {"b"}
    occ.place(inst.job("j0"), alloc)
    alloc = occ.find(inst.job("j1"), Config("v100", 2))
    assert {n for n, _ in alloc.gpus} == {"c"}


def test_shared_gpu_fills_by_memory_then_slots():
    inst = cluster()
    occ = Occupancy(inst)
    sh = Config("v100", 1, shared=True)
    a0 = occ.find(inst.job("j0"), sh)
    occ.place(inst.job("j0"), a0)
    a1 = occ.find(inst.job("j1"), sh)  # 6 + 8 <= 16: same GPU
    assert a1.gpus == a0.gpus
    occ.place(inst.job("j1"), a1)
    a2 = occ.find(inst.job("j2"), sh)  # slots full (K_max = 2): another GPU
    assert a2.gpus != a0.gpus
    occ.release("j0")
    occ.release("j1")
    assert occ.find(inst.job("j3"), Config("v100", 8, nodes=2)) is not None


def test_multi_node_takes_whole_nodes_and_release_restores():
    inst = cluster()
    occ = Occupancy(inst)
    alloc = occ.find(inst.job("j0"), Config("v100", 8, nodes=2))
    assert {n for n, _ in alloc.gpus} == {"c", "d"}
    occ.place(inst.job("j0"), alloc)
    assert occ.free["c"] == set() and occ.free["d"] == set()
    assert occ.why_not(inst.job("j1"), alloc) is not None
    occ.release("j0")
    assert occ.free["c"] == set(range(4))


def _scan_every_shared_gpu(occ, job, cfg):
    """The shared placement by a scan of every shared GPU (before the open-GPU index)."""
    inst = occ.instance
    cap = inst.gpu(cfg.gpu_type).memory_gb
    best = None
    for ref, tenants in occ.shared.items():
        if inst.node(ref[0]).gpu_type != cfg.gpu_type or len(tenants) >= inst.max_share:
            continue
        left = cap - sum(tenants.values()) - job.memory_gb
        if left >= -1e-9 and (best is None or (left, ref) < best):
            best = (left, ref)
    return None if best is None else best[1]


@given(st.lists(st.tuples(st.integers(0, 11), st.booleans()), max_size=60), st.integers(2, 3))
def test_the_open_shared_index_finds_what_a_full_scan_finds(moves, max_share):
    g = GpuType("v100", 16.0, 300.0)
    nodes = (Node("a", "v100", 4), Node("b", "v100", 2), Node("c", "p100", 2))
    gp = GpuType("p100", 16.0, 250.0)
    d = EpochDistribution.deterministic(4)
    jobs = tuple(
        Job(
            f"j{i}",
            0.0,
            10.0,
            d,
            {Config("v100", 1, shared=True): 1.0, Config("p100", 1, shared=True): 1.0},
            float(2 + (5 * i) % 9),
        )
        for i in range(12)
    )
    inst = Instance((g, gp), nodes, jobs, max_share=max_share)
    occ = Occupancy(inst)
    for k, place in moves:
        job = jobs[k]
        if job.id in occ.owner:
            if not place:
                occ.release(job.id)
            continue
        cfg = next(iter(job.epoch_times)) if k % 2 else list(job.epoch_times)[1]
        want = _scan_every_shared_gpu(occ, job, cfg)
        alloc = occ.find(job, cfg)
        if want is not None:
            assert alloc is not None and alloc.gpus == (want,)
        if alloc is not None:
            occ.place(job, alloc)
        assert occ.copy()._open == occ._open


def _two_types() -> Instance:
    """One job with a one-GPU level of each of two types, of equal epoch time; the
    level on type a needs 3 CPU cores, and no node states its cores (a fuzz's instance)."""
    job = Job(
        "j",
        0.0,
        10.0,
        EpochDistribution((3.0,), (1.0,)),
        {Config("a", 1, cpus=3): 0.5, Config("b", 1): 0.5},
        8.0,
    )
    types = (GpuType("a", 16.0, 100.0), GpuType("b", 16.0, 100.0))
    return Instance(types, (Node("n0", "b", 1), Node("n1", "a", 1)), (job,))


def test_a_configuration_on_a_node_of_another_type_is_refused():
    """The engine placed it and only the plan's checker refused the plan, after the run
    (synergy-opt put LP1's level of type a on the node of type b)."""
    from heuristic.core.occupancy import Allocation

    inst = _two_types()
    occ = Occupancy(inst)
    wrong = Allocation(Config("a", 1, cpus=3), (("n0", 0),))
    assert occ.why_not(inst.job("j"), wrong) == "node 'n0' has b GPUs, ax1+3cpu needs a"
    assert occ.why_not(inst.job("j"), Allocation(Config("a", 1, cpus=3), (("n1", 0),))) is None
