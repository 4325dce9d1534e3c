from heuristic.occupancy import Occupancy
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
