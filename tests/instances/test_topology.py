"""E4: the network (racks, domains, link bandwidths) and distributed configurations, in
the model, the files, the checker, the engine's occupancy and the MILP's refusal; a
topology that no configuration uses changes no figure."""

from __future__ import annotations

import json

import pytest

from heuristic.core.occupancy import Allocation, Occupancy
from heuristic.core.registry import make_policy, policy_names
from instances import (
    Config,
    Domain,
    EpochDistribution,
    GpuType,
    Instance,
    InstanceError,
    Job,
    Node,
    Plan,
    Rack,
    Segment,
    Topology,
    instance_from_dict,
    instance_to_dict,
    plan_from_dict,
    plan_to_dict,
)
from instances.bundled import bundled
from milp import MilpError
from milp.solve import solve
from tests.plans import cases, plain_rollout
from validation.check import check_plan
from validation.evaluate import evaluate
from validation.simulator import simulate

V100 = GpuType("v100", 32.0, 300.0)
# 2 domains; rack r0, r1 in d0, r2 in d1; two 2-GPU nodes per rack
TOPO = Topology(
    25.0,
    (Rack("r0", 30.0, "d0"), Rack("r1", 30.0, "d0"), Rack("r2", 30.0, "d1")),
    (Domain("d0", 12.0), Domain("d1", 12.0)),
)
NODES = tuple(Node(f"{r}n{i}", "v100", 2, rack=r) for r in ("r0", "r1", "r2") for i in (0, 1))
RACK4 = Config("v100", 4, span="rack", net_gbps=20.0)
DOM4 = Config("v100", 4, span="domain", net_gbps=10.0)
ONE2 = Config("v100", 2)


def _job(i: int, times: dict[Config, float], release: float = 0.0) -> Job:
    return Job(f"j{i}", release, 40.0, EpochDistribution.deterministic(4.0), times, 8.0)


def _cluster(jobs: int = 3) -> Instance:
    times = {ONE2: 1.0, RACK4: 0.6, DOM4: 0.9}
    return Instance((V100,), NODES, tuple(_job(i, times) for i in range(jobs)), topology=TOPO)


def test_links_and_spans_follow_the_tree():
    net = _cluster().network
    assert net is not None
    assert net.span(["r0n0"]) == "node" and net.links(["r0n0"]) == ()
    assert net.span(["r0n0", "r0n1"]) == "rack"
    assert net.links(["r0n0", "r0n1"]) == (("node", "r0n0"), ("node", "r0n1"))
    # across racks of one domain: both NICs and both racks' uplinks, not the domain's
    assert net.span(["r0n0", "r1n1"]) == "domain"
    assert set(net.links(["r0n0", "r1n1"])) == {
        ("node", "r0n0"),
        ("rack", "r0"),
        ("node", "r1n1"),
        ("rack", "r1"),
    }
    # across domains: up to the core
    assert net.span(["r0n0", "r2n0"]) == "cluster"
    assert ("domain", "d0") in net.links(["r0n0", "r2n0"])
    assert ("domain", "d1") in net.links(["r0n0", "r2n0"])
    assert net.capacity[("rack", "r1")] == 30.0 and net.capacity[("node", "r2n1")] == 25.0
    assert [len(g) for g in net.groups("domain")] == [4, 2]


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"span": "row", "net_gbps": 1.0}, "span"),
        ({"span": "rack"}, "net_gbps"),
        ({"span": "rack", "net_gbps": 0.0}, "net_gbps"),
        ({"span": "rack", "net_gbps": float("inf")}, "net_gbps"),
        ({"span": "rack", "net_gbps": 5.0, "shared": True}, "shared"),
        ({"span": "rack", "net_gbps": 5.0, "cpus": 4}, "cpus"),
        ({"span": "rack", "net_gbps": 5.0, "nodes": 2, "gpus": 4}, "nodes"),
    ],
)
def test_bad_distributed_configurations_are_refused_naming_the_field(fields, path):
    with pytest.raises(InstanceError) as err:
        Config("v100", **{"gpus": 2, **fields})
    assert err.value.path == path


def test_instances_refuse_inconsistent_topologies():
    with pytest.raises(InstanceError) as err:  # a distributed configuration, no network
        Instance((V100,), NODES, (_job(0, {RACK4: 1.0}),))
    assert err.value.path == "jobs[0].configs[0].span"
    with pytest.raises(InstanceError) as err:  # a node outside every rack
        Instance((V100,), (*NODES, Node("x", "v100", 2)), (_job(0, {ONE2: 1.0}),), topology=TOPO)
    assert err.value.path == "nodes[6].rack"
    with pytest.raises(InstanceError) as err:
        Topology(25.0, (Rack("r0", 30.0, "nowhere"),))
    assert err.value.path == "racks[0].domain"
    with pytest.raises(InstanceError) as err:
        Topology(25.0, (Rack("r0", 30.0), Rack("r0", 30.0)))
    assert err.value.path == "racks[1].id"
    with pytest.raises(InstanceError) as err:
        Topology(25.0, (Rack("r0", 30.0, "d"),), (Domain("d", 9.0), Domain("d", 9.0)))
    assert err.value.path == "domains[1].id"


def test_a_span_is_hosted_only_where_a_group_has_the_gpus_and_the_links():
    inst = _cluster()
    assert inst.hosts(RACK4) and inst.hosts(DOM4)
    # 8 GPUs need two racks: a rack span cannot; a domain span can (rack uplinks 30)
    assert not inst.hosts(Config("v100", 8, span="rack", net_gbps=1.0))
    assert inst.hosts(Config("v100", 8, span="domain", net_gbps=10.0))
    # holding more than a rack's uplink carries: only within a rack, so not 8 GPUs
    assert not inst.hosts(Config("v100", 8, span="cluster", net_gbps=31.0))


def test_files_round_trip_and_files_without_topology_keep_their_form():
    inst = _cluster()
    doc = instance_to_dict(inst)
    assert doc["topology"]["racks"][0] == {"id": "r0", "uplink_gbps": 30.0, "domain": "d0"}
    assert instance_from_dict(json.loads(json.dumps(doc))) == inst
    plain = instance_to_dict(bundled("tiny"))
    assert "topology" not in plain
    assert all("span" not in c for j in plain["jobs"] for c in j["configs"])
    plan = Plan.of(
        [Segment(0.0, 2.4, "j0", RACK4, (("r0n0", 0), ("r0n0", 1), ("r0n1", 0), ("r0n1", 1)))]
    )
    assert plan_from_dict(json.loads(json.dumps(plan_to_dict(plan)))) == plan


def test_a_bad_topology_in_a_file_is_refused_naming_the_field():
    doc = instance_to_dict(_cluster())
    doc["topology"]["racks"][1]["uplink_gbps"] = -3
    with pytest.raises(InstanceError) as err:
        instance_from_dict(doc)
    assert "topology" in str(err.value) and "uplink_gbps" in str(err.value)


def _seg(job: str, cfg: Config, gpus: list[tuple[str, int]], start: float = 0.0) -> Segment:
    return Segment(
        start, start + 4.0 * {RACK4: 0.6, DOM4: 0.9, ONE2: 1.0}[cfg], job, cfg, tuple(gpus)
    )


def test_the_checker_enforces_spans_and_link_bandwidth():
    inst = _cluster(jobs=2)
    rack = [("r0n0", 0), ("r0n0", 1), ("r0n1", 0), ("r0n1", 1)]
    ok = Plan.of([_seg("j0", RACK4, rack), _seg("j1", ONE2, [("r2n0", 0), ("r2n0", 1)])])
    assert check_plan(inst, ok) == []
    wide = [("r0n0", 0), ("r0n0", 1), ("r1n0", 0), ("r1n0", 1)]  # two racks: not a rack span
    bad = check_plan(
        inst, Plan.of([_seg("j0", RACK4, wide), _seg("j1", ONE2, [("r2n0", 0), ("r2n0", 1)])])
    )
    assert [v.kind for v in bad] == ["bad-gpus"] and "span the domain" in bad[0].detail
    # two domain-span jobs at 10 Gb/s sharing racks r0, r1 and the NICs of r1n0, r1n1
    a = [("r0n0", 0), ("r0n0", 1), ("r1n1", 0), ("r1n0", 0)]
    b = [("r0n1", 0), ("r0n1", 1), ("r1n1", 1), ("r1n0", 1)]
    fine = Plan.of([_seg("j0", DOM4, a), _seg("j1", DOM4, b)])
    assert check_plan(inst, fine) == []  # 20 Gb/s on each shared NIC and rack uplink
    rack_heavy = Config("v100", 4, span="domain", net_gbps=16.0)
    inst_h = Instance(
        (V100,), NODES, tuple(_job(i, {rack_heavy: 0.9}) for i in range(2)), topology=TOPO
    )
    hot = Plan.of(
        [
            Segment(0.0, 3.6, "j0", rack_heavy, tuple(a)),
            Segment(0.0, 3.6, "j1", rack_heavy, tuple(b)),
        ]
    )
    kinds = {(v.kind, v.detail.split(":")[0]) for v in check_plan(inst_h, hot)}
    assert ("link-capacity", "the uplink of rack 'r0'") in kinds  # 32 Gb/s on 30
    assert ("link-capacity", "the NIC of node 'r1n1'") in kinds  # 32 Gb/s on 25
    assert ("link-capacity", "the uplink of domain 'd0'") not in kinds  # not crossed


def test_occupancy_holds_and_gives_back_link_bandwidth():
    inst = _cluster(jobs=2)
    occ = Occupancy(inst)
    j0, j1 = inst.jobs
    found = occ.find(j0, DOM4)
    assert found is not None and inst.network is not None
    # the default placement consolidates: one rack, two whole nodes, no uplink held
    assert inst.network.span(found.gpus[i][0] for i in range(4)) == "rack"
    occ.place(j0, found)
    assert occ.link_free[("rack", "r0")] == 30.0
    spread = Allocation(DOM4, (("r1n0", 0), ("r1n0", 1), ("r2n0", 0), ("r2n0", 1)))
    assert "span the cluster" in (occ.why_not(j1, spread) or "")
    occ.release(j0.id)
    assert occ.link_free == inst.network.capacity and all(len(f) == 2 for f in occ.free.values())


def test_every_policy_respects_gpus_spans_and_links():
    inst = _cluster(jobs=6)
    for name in policy_names():
        plan = simulate(inst, make_policy(name, seed=0), mode="rollout").plan
        assert check_plan(inst, plan) == [], name


def test_the_milp_refuses_distributed_configurations_with_a_clear_error():
    inst = _cluster(jobs=1).replace(slot=0.25)
    with pytest.raises(MilpError, match="distributed configurations"):
        solve(inst, time_limit=5)


# Liquid reads the topology to place (the network score, the GA for bursts), so a
# topology may change its plans even where no configuration spans nodes; every other
# policy must give the same figures with and without one.
TOPOLOGY_AWARE = {"liquid", "liquid-forest"}


@pytest.mark.parametrize(("name", "policy"), cases(["tiny", "small", "medium"], policy_names()))
def test_a_topology_no_configuration_uses_changes_no_figure(name, policy):
    inst = bundled(name)
    racks = tuple(Rack(f"r{k}", 10.0) for k in range(2))
    nodes = tuple(
        Node(n.id, n.gpu_type, n.num_gpus, n.cpu_cores, n.dram_gb, f"r{k % 2}")
        for k, n in enumerate(inst.nodes)
    )
    wired = inst.replace(nodes=nodes, topology=Topology(5.0, racks))
    plan = simulate(wired, make_policy(policy, seed=0), mode="rollout").plan
    if policy in TOPOLOGY_AWARE:  # they place by the network: other plans, still legal
        assert check_plan(wired, plan) == []
        return
    # the plan without the topology only for the policies compared with it
    a = evaluate(inst, plain_rollout(inst, policy))
    b = evaluate(wired, plan)
    assert (a.energy_cost, a.tardiness_cost) == (b.energy_cost, b.tardiness_cost)
