"""Synergy's repack of a round whose GPUs are scattered (heuristic/seeds/synergy_place.py),
by hand on two 4-GPU nodes: when it applies, which movers it weighs, what a move costs,
the order it tries them in, and where the movers go. Cases a mutation review found free
to move (2026-12-07: 23 mutants, 6 killed by test_synergy.py and the seeds' review; of
the 17 others these tests kill 15, and 2 are equivalent: a job with no level makes
``repack`` return nothing whether or not it is called scattered, and a mover put back on
the node being emptied leaves it too few GPUs, the movers being a minimal set)"""

from __future__ import annotations

import pytest

from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.seeds.synergy_place import (
    Round,
    _minimal_sets,
    _move_cost,
    _moved,
    repack,
    scattered,
)
from instances import Config, EpochDistribution, GpuType, Instance, Job, Node, Requested

ONE = EpochDistribution.deterministic(1.0)
BIG = Config("v100", 4)


def _job(i: str, cfgs: tuple[Config, ...], relaunch: float = 0.1) -> Job:
    """A job of ``cfgs``'s size, the one holding the most cores the fastest."""
    times = {c: 1.0 / (1 + (c.cpus or 0)) for c in cfgs}
    asked = None if cfgs[0].shared else Requested(cfgs[0].gpus, "v100")
    return Job(i, 0.0, 100.0, ONE, times, 8.0, requested=asked, relaunch_hours=relaunch)


def _round(
    cores: tuple[int | None, int | None], placed: dict[str, tuple[Job, str, Config]]
) -> tuple[Round, Job]:
    """Nodes ``x`` and ``y`` of 4 V100s with ``cores``, the jobs of ``placed`` on them
    (each on its node's first free GPUs) and ``big``, waiting for 4 GPUs."""
    nodes = (Node("x", "v100", 4, cpu_cores=cores[0]), Node("y", "v100", 4, cpu_cores=cores[1]))
    big = _job("big", (BIG,))
    jobs = (*(j for j, _, _ in placed.values()), big)
    inst = Instance((GpuType("v100", 32.0, 300.0),), nodes, jobs)
    r = Round(inst, Occupancy(inst), {})
    for jid, (job, node, cfg) in placed.items():
        gpus = sorted(r.occ.free[node])[: cfg.gpus]
        alloc = Allocation(cfg, tuple((node, g) for g in gpus))
        r.occ.place(job, alloc)
        r.placed[jid] = alloc
    return r, big


def _place_big(big: Job):
    return lambda t: t.occ.find(big, BIG)


def _node(r: Round, jid: str) -> str:
    return r.placed[jid].gpus[0][0]


def test_scattered_means_the_gpus_are_free_in_total_and_on_no_node():
    c1, c2 = Config("v100", 1), Config("v100", 2)
    one, two, twin = _job("one", (c1,)), _job("two", (c2,)), _job("twin", (c2,))
    r, big = _round((None, None), {"one": (one, "x", c1)})
    assert not scattered(r, big)  # y has its 4 GPUs free: nothing to move
    r, big = _round((None, None), {"two": (two, "x", c2), "twin": (twin, "y", c2)})
    assert scattered(r, big)  # 4 free in total, 2 on each node
    r, big = _round((None, None), {"two": (two, "x", c2), "one": (one, "y", c1)})
    assert scattered(r, big)  # 5 free in total, at most 3 on a node
    r, big = _round(
        (None, None), {"two": (two, "x", c2), "twin": (twin, "y", c2), "one": (one, "y", c1)}
    )
    assert not scattered(r, big)  # 3 free in total


def test_the_movers_weighed_are_the_minimal_sets_holding_enough_gpus():
    a = Allocation(Config("v100", 1), (("x", 0),))
    b = Allocation(Config("v100", 1), (("x", 1),))
    c = Allocation(Config("v100", 2), (("x", 2), ("x", 3)))
    sets = {tuple(j for j, _ in s) for s in _minimal_sets([("a", a), ("b", b), ("c", c)], 2)}
    assert sets == {("c",), ("a", "b")}  # not {a, c}: a could stay; nor all three
    assert {tuple(j for j, _ in s) for s in _minimal_sets([("a", a), ("c", c)], 3)} == {("a", "c")}


def test_a_move_costs_its_relaunch_on_every_gpu_unless_the_job_starts_this_round():
    two = Config("v100", 2)
    job = _job("j", (two,), relaunch=0.25)
    r, _ = _round((None, None), {"j": (job, "x", two)})
    here = Allocation(two, (("x", 0), ("x", 1)))
    there = Allocation(two, (("y", 0), ("y", 1)))
    assert _move_cost(r.inst, "j", here, {"j": here}) == pytest.approx(0.5)
    assert _move_cost(r.inst, "j", here, {"j": there}) == 0.0  # placed afresh this round
    assert _move_cost(r.inst, "j", here, {"j": None}) == 0.0


C1, C2 = Config("v100", 1), Config("v100", 2)


@pytest.mark.parametrize(
    ("placed", "running", "to", "moved"),
    [
        # a running job costs its relaunch, a fresh one nothing: the fresh 2-GPU job moves
        ({"r1": ("x", C1), "f2": ("y", C2)}, ("r1",), "y", {"f2": "x"}),
        # both fresh: the fewest GPUs move
        ({"f1": ("x", C1), "f2": ("y", C2)}, (), "x", {"f1": "y"}),
        # both fresh, as many GPUs: the fewest jobs move
        ({"a": ("x", C1), "b": ("x", C1), "f2": ("y", C2)}, (), "y", {"f2": "x"}),
    ],
)
def test_repack_moves_the_cheapest_then_the_fewest_gpus_then_the_fewest_jobs(
    placed, running, to, moved
):
    jobs = {j: (_job(j, (cfg,)), node, cfg) for j, (node, cfg) in placed.items()}
    r, big = _round((None, None), jobs)
    assert scattered(r, big)
    was = dict(r.placed)
    out = repack(r, big, {j: was[j] for j in running}, _place_big(big))
    assert out is not None and _node(out, "big") == to
    assert {j: _node(out, j) for j in placed if out.placed[j] != was[j]} == moved
    assert r.placed == was and "big" not in r.placed  # the round given is not changed


def test_repack_tries_the_next_movers_where_one_has_no_home():
    """x: a fresh 1-GPU job holding 1 of its 16 cores; y: a fresh 2-GPU job holding all 8
    of its cores. Moving the 1-GPU job is the fewer GPUs, but y has no core left for it:
    the 2-GPU job moves to x instead (no job is lost on the way)."""
    lean, wide = Config("v100", 1, cpus=1), Config("v100", 2, cpus=8)
    r, big = _round(
        (16, 8), {"f1": (_job("f1", (lean,)), "x", lean), "f2": (_job("f2", (wide,)), "y", wide)}
    )
    out = repack(r, big, {}, _place_big(big))
    assert out is not None and _node(out, "big") == "y"
    assert set(out.placed) == {"f1", "f2", "big"}
    assert _node(out, "f1") == "x" and _node(out, "f2") == "x"


def test_repack_moves_no_tenant_of_a_shared_gpu():
    """x: a shared slot's tenant; y: a fresh 2-GPU job. The tenant is not among the jobs
    a repack moves (one-node jobs only): the 2-GPU job moves, the big job goes to y."""
    slot = Config("v100", 1, shared=True)
    r, big = _round(
        (None, None), {"s": (_job("s", (slot,)), "x", slot), "f2": (_job("f2", (C2,)), "y", C2)}
    )
    out = repack(r, big, {}, _place_big(big))
    assert out is not None and _node(out, "big") == "y" and out.placed["s"] == r.placed["s"]


@pytest.mark.parametrize(("held", "level"), [(None, 4), (6, 1)])
def test_a_mover_keeps_its_level_where_it_fits_else_takes_its_share(held, level):
    """The 1-GPU job on x runs 4 cores (its share of y is 2: one core); y holds a fresh
    2-GPU job with ``held`` cores of its 8. Moved to y it keeps its 4 cores where they
    are free there, and runs at its share where only 2 are."""
    lo, hi = Config("v100", 1, cpus=1), Config("v100", 1, cpus=4)
    two = Config("v100", 2, cpus=held)
    r, big = _round(
        (16, 8), {"f1": (_job("f1", (hi, lo)), "x", hi), "g": (_job("g", (two,)), "y", two)}
    )
    out = repack(r, big, {}, _place_big(big))
    assert out is not None and _node(out, "big") == "x"
    assert _node(out, "f1") == "y" and out.placed["f1"].config.cpus == level


def test_the_movers_go_largest_first():
    """x holds a 1-GPU job on 6 cores and a 2-GPU job on 4, each able to run on one core
    a GPU; y has 8 cores. The 2-GPU job first: its 4 cores on y, the other at its share
    (2 cores: one). The 1-GPU job first would take 6 of y's cores and leave the 2-GPU
    job below its share (4), with no home."""
    six, one = Config("v100", 1, cpus=6), Config("v100", 1, cpus=1)
    four, two = Config("v100", 2, cpus=4), Config("v100", 2, cpus=2)
    small, large = _job("small", (six, one)), _job("large", (four, two))
    r, _ = _round((16, 8), {"small": (small, "x", six), "large": (large, "x", four)})
    out = _moved(r, "x", ("small", "large"))
    assert out is not None
    assert out.placed["large"].config == four and out.placed["small"].config == one
    assert {_node(out, "small"), _node(out, "large")} == {"y"}
