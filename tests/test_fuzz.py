"""Fuzzing the readers and the commands with mutants of the bundled files (tests/fuzz.py).

Every mutant must end one of two ways: a clean refusal (InstanceError / PlanError, or
exit status 2 from the command) naming a field, or an accepted file whose figures are
all finite and whose policies' plans the evaluator accepts.
"""

from __future__ import annotations

import json
import math
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heuristic.core.registry import make_policy
from instances import InstanceError, PlanError, instance_from_dict, plan_from_dict, plan_to_dict
from instances.generators.liquid import LiquidSpec, liquid
from instances.io import instance_to_dict
from instances.jsonfile import check_numbers
from tests.fuzz import (
    BYTE_MUTANTS,
    NASTY,
    OPS,
    READABLE_MUTANTS,
    base_document,
    byte_mutant,
    mutate,
    names_field,
    normalized,
    paths,
    run_command,
    schema_fields,
)
from validation.evaluate import evaluate
from validation.montecarlo import replay
from validation.simulator import rollout


def _with_requests(doc: dict) -> dict:
    """The document with every job asking for its fewest exclusive GPUs, so that mutants
    reach the `requested` field too."""
    doc = json.loads(json.dumps(doc))
    for job in doc["jobs"]:
        counts = [c["gpus"] for c in job["configs"] if not c.get("shared")]
        job["requested"] = {"gpus": min(counts), "gpu_type": None}
    return doc


def _with_host(doc: dict) -> dict:
    """The document with CPU cores and DRAM (E3) on every node and on the first job's
    configurations (the others state none: a mix the model allows), and CPU power
    charged, so that mutants reach those fields too."""
    doc = json.loads(json.dumps(doc))
    doc["cpu_power_w"] = 5.0
    for node in doc["nodes"]:
        node.update(cpu_cores=64, dram_gb=512.0)
    for job in doc["jobs"][:1]:
        for c in job["configs"]:
            c.update(cpus=2 * c.get("nodes", 1), dram_gb=16.0 * c.get("nodes", 1))
    return doc


def _with_network(doc: dict) -> dict:
    """The document with a topology (E4): two racks in one domain, a third node so that
    a K80 job can spread over two racks, and the first job with distributed
    configurations, so that mutants reach those fields too."""
    doc = json.loads(json.dumps(doc))
    doc["topology"] = {
        "nic_gbps": 25.0,
        "racks": [
            {"id": "r0", "uplink_gbps": 40.0, "domain": "d0"},
            {"id": "r1", "uplink_gbps": 40.0, "domain": "d0"},
        ],
        "domains": [{"id": "d0", "uplink_gbps": 20.0}],
    }
    doc["nodes"].append({"id": "n2", "gpu_type": "k80", "num_gpus": 4})
    for node, rack in zip(doc["nodes"], ("r0", "r1", "r1"), strict=True):
        node["rack"] = rack
    doc["jobs"][0]["configs"] += [
        {"gpu_type": "k80", "gpus": 12, "span": "domain", "net_gbps": 10.0, "epoch_time": 0.3},
        {"gpu_type": "k80", "gpus": 4, "span": "rack", "net_gbps": 5.0, "epoch_time": 0.5},
    ]
    return doc


BASES = {name: base_document(name) for name in ("tiny", "small")}
BASES["tiny-host"] = _with_host(BASES["tiny"])
BASES["tiny-net"] = _with_network(BASES["tiny"])
BASES["tiny-requested"] = _with_requests(BASES["tiny"])
# the bundled files carry each job's overhead; this base has the instance's default too
BASES["tiny-relaunch"] = {**BASES["tiny"], "relaunch_hours": 0.05, "suspend_hours": 0.001}


def _described(doc: dict) -> dict:
    """The document with the optional fields no other base has: a description and an
    origin, a job's Gavel type and its own suspend overhead, and a configuration given
    by its throughput (epochs per hour) rather than its epoch time."""
    doc = json.loads(json.dumps(doc))
    doc.update(description="fuzzed", origin="tests/test_fuzz.py")
    job = doc["jobs"][0]
    job.update(job_type="ResNet-18 (batch size 32)", relaunch_hours=0.05, suspend_hours=0.01)
    config = job["configs"][0]
    config["throughput"] = 1.0 / config.pop("epoch_time")
    return doc


BASES["tiny-described"] = _described(BASES["tiny"])


def _priced(doc: dict, regular: bool) -> dict:
    """The document with a price series and a carbon series with its price, one on a
    regular grid (``step``) and the other by breakpoints (``times``), or the other way
    round, and idle power, so that mutants reach every field of them."""
    doc = json.loads(json.dumps(doc))
    grid = {"step": 1.0, "values": [0.1, 0.3, 0.2], "after": "repeat"}
    points = {"times": [0.0, 7.0, 22.0, 24.0], "values": [0.3, 0.1, 0.2], "after": "hold"}
    doc["prices"] = grid if regular else points
    carbon = points if regular else grid
    doc["carbon"] = {**carbon, "values": [300.0, 120.0, 250.0], "price": 80.0}
    for gpu in doc["gpu_types"]:  # idle power: idle GPUs and nodes' base power
        gpu["idle_w"] = 0.2 * gpu["power_w"]
    for node in doc["nodes"]:
        node["base_w"] = 150.0
    doc["power_off"] = {"after_h": 0.5, "boot_h": 0.1, "boot_kwh": 0.2}
    return doc


BASES["tiny-prices"] = _priced(BASES["tiny"], regular=True)
BASES["tiny-prices-times"] = _priced(BASES["tiny"], regular=False)
# a generated instance of Liquid's setting: racks, domains, distributed configurations
LIQUID = liquid(LiquidSpec(jobs=4, racks=2, nodes_per_rack=2, domains=1, relaunch="none"), 2)
BASES["liquid"] = instance_to_dict(LIQUID)
PATHS = {name: list(paths(doc)) for name, doc in BASES.items()}
# fields that refer to another object: a bad value shows where it is looked up
REFERENCES = {"gpu_type", "name", "id"}
SETTINGS = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@st.composite
def mutants(draw: st.DrawFn) -> tuple[dict, tuple, str]:
    base = draw(st.sampled_from(sorted(BASES)))
    path = draw(st.sampled_from(PATHS[base]))
    op = draw(st.sampled_from(OPS))
    value = draw(st.sampled_from(NASTY))
    return json.loads(json.dumps(mutate(BASES[base], path, op, value))), path, op


def _finite(*figures: float) -> bool:
    return all(math.isfinite(x) for x in figures)


def _accepted_is_sound(inst) -> None:
    for name in ("fifo", "sts", "static"):
        plan = rollout(inst, make_policy(name))
        ev = evaluate(inst, plan)  # a policy's own plan is never refused
        assert _finite(ev.energy_cost, ev.tardiness_cost, ev.total_cost)
        assert all(_finite(j.completion, j.total_cost) for j in ev.jobs)
    mc = replay(inst, plan, samples=20, seed=0)
    assert _finite(mc.mean_total, *mc.interval)


@SETTINGS
@given(mutants())
def test_a_mutated_instance_is_refused_naming_the_field_or_sound(case):
    doc, path, op = case
    try:
        inst = instance_from_dict(doc)
    except InstanceError as exc:
        assert exc.path, f"{exc} names no field"
        leaf = path[-1]
        if op == "replace" and isinstance(leaf, str) and leaf not in REFERENCES:
            assert names_field(str(exc), path), f"mutated {path}, refused as: {exc}"
        return
    _accepted_is_sound(inst)


def _every_mutant_refused_naming_or_sound(
    base: str, fields: tuple[str, ...], also_named: tuple[str, ...] = ()
) -> int:
    """Mutates every path of ``base`` that holds one of ``fields``, every way the fuzzer
    knows: a refusal names one of the fields (or of ``also_named``), an accepted mutant
    gives finite figures. Returns how many paths it mutated. Only ``replace`` takes a
    value: each other operation makes one mutant of a path, checked once."""
    where = [p for p in PATHS[base] if any(f in p for f in fields)]
    fields = (*fields, *also_named)
    for path in where:
        for op in OPS:
            for value in NASTY if op == "replace" else (None,):
                doc = json.loads(json.dumps(mutate(BASES[base], path, op, value)))
                try:
                    inst = instance_from_dict(doc)
                except InstanceError as exc:
                    named = any(f in str(exc) for f in fields)
                    assert named, f"mutated {path}, refused as: {exc}"
                    continue
                _accepted_is_sound(inst)
    return len(where)


def test_every_mutant_of_a_request_is_refused_naming_it_or_sound():
    """The `requested` field (sampling rarely lands on it)."""
    assert _every_mutant_refused_naming_or_sound("tiny-requested", ("requested",))


def test_every_mutant_of_a_relaunch_overhead_is_refused_naming_it_or_sound():
    """The instance's and each job's `relaunch_hours`, and the instance's
    `suspend_hours` (a suspend longer than a relaunch is refused naming the suspend)."""
    fields = ("relaunch_hours", "suspend_hours")
    # the instance's two and three jobs' relaunch
    assert _every_mutant_refused_naming_or_sound("tiny-relaunch", fields) == 5


def test_every_mutant_of_cores_dram_or_cpu_power_is_refused_naming_it_or_sound():
    """E3's fields: nodes' `cpu_cores` and `dram_gb`, configurations' `cpus` and
    `dram_gb`, the instance's `cpu_power_w`. A refusal may also name the job's
    `configs` (no configuration left that a node can feed)."""
    fields = ("cpu_cores", "dram_gb", "cpus", "cpu_power_w")
    assert _every_mutant_refused_naming_or_sound("tiny-host", fields, ("configs",)) > 10


def test_every_mutant_of_the_network_is_refused_naming_it_or_sound():
    """E4's fields: the topology's bandwidths, racks and domains, the nodes' racks, the
    configurations' `span` and `net_gbps`. A refusal may also name the job's `configs`
    (none left that the network can host) or `nodes` (a node's rack)."""
    fields = ("topology", "rack", "span", "net_gbps", "domain", "uplink_gbps", "nic_gbps")
    assert _every_mutant_refused_naming_or_sound("tiny-net", fields, ("configs",)) > 10


def _plan(base: str, policy: str) -> dict:
    inst = instance_from_dict(BASES[base])
    return plan_to_dict(rollout(inst, make_policy(policy)), instance=inst.name, policy=policy)


# plans of the bases, so that every field of a segment's configuration is mutated: the
# host's CPUs and DRAM (tiny-host), a distributed span and bandwidth (liquid)
PLANS = {"tiny": _plan("tiny", "fifo"), "tiny-host": _plan("tiny-host", "fifo")}
PLANS["liquid"] = _plan("liquid", "liquid")
PLAN = PLANS["tiny"]
PLAN_CASES = [(base, path) for base, plan in PLANS.items() for path in paths(plan)]


def test_every_schema_field_is_in_a_fuzz_base():
    """Every field of the instance and plan schemas is mutated by the fuzzer: a field
    added to a schema fails here until a base (above) holds it, and is then fuzzed by
    every test of this file with no other code."""
    have = {normalized(p) for ps in PATHS.values() for p in ps}
    assert schema_fields("instance") - have == set()
    assert schema_fields("plan") - {normalized(p) for _, p in PLAN_CASES} == set()


INSTANCE_FIELDS = sorted(schema_fields("instance"))


@pytest.mark.parametrize("field", INSTANCE_FIELDS)
def test_every_schema_field_is_mutated_every_way(field):
    """Each field of the instance schema, where a base first holds it: each operation
    once, with nasty values that turn with the field (over the fields, every value)."""
    base, path = next((b, p) for b, ps in PATHS.items() for p in ps if normalized(p) == field)
    k = INSTANCE_FIELDS.index(field)
    for i, op in enumerate(OPS):
        value = NASTY[(k * len(OPS) + i) % len(NASTY)]
        doc = json.loads(json.dumps(mutate(BASES[base], path, op, value)))
        try:
            inst = instance_from_dict(doc)
        except InstanceError as exc:
            assert exc.path, f"{exc} names no field"
            if op == "replace" and path[-1] not in REFERENCES and isinstance(path[-1], str):
                assert names_field(str(exc), path), f"mutated {path}, refused as: {exc}"
            continue
        _accepted_is_sound(inst)


@SETTINGS
@given(st.sampled_from(PLAN_CASES), st.sampled_from(OPS), st.sampled_from(NASTY))
def test_a_mutated_plan_is_refused_or_costed_finitely(case, op, value):
    base, path = case
    inst = instance_from_dict(BASES[base])
    doc = json.loads(json.dumps(mutate(PLANS[base], path, op, value)))
    try:
        ev = evaluate(inst, plan_from_dict(doc))
    except PlanError as exc:
        assert str(exc).strip()
        return
    assert _finite(ev.total_cost, *(j.completion for j in ev.jobs))


@settings(max_examples=25, deadline=None)
@given(mutants(), st.sampled_from(["solve", "evaluate"]))
def test_a_command_on_a_mutant_exits_cleanly_with_finite_figures(tmp_path_factory, case, cmd):
    doc, _, _ = case
    tmp = tmp_path_factory.mktemp("fuzz")
    (tmp / "i.json").write_text(json.dumps(doc))
    (tmp / "p.json").write_text(json.dumps(PLAN))
    argv = ["solve", str(tmp / "i.json"), "--policy", "edf", "--mc", "20"]
    if cmd == "evaluate":
        argv = ["evaluate", str(tmp / "i.json"), str(tmp / "p.json")]
    outcome, _, _, err = run_command(argv)
    assert outcome in ("ok", "refused"), f"{outcome}: {err}"


@given(st.sampled_from(BYTE_MUTANTS), st.sampled_from(sorted(BASES)))
@settings(deadline=None)
def test_byte_mutants_are_refused_or_read_whole(tmp_path_factory, kind, base):
    path = tmp_path_factory.mktemp("bytes") / "i.json"
    path.write_bytes(byte_mutant(BASES[base], kind))
    outcome, _, _, err = run_command(["solve", str(path), "--policy", "fifo"])
    assert outcome == ("ok" if kind in READABLE_MUTANTS else "refused"), err


def test_the_number_walk_reports_depth_without_recursing():
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    try:
        check_numbers({"jobs": deep})
    except InstanceError as exc:
        assert "nested deeper" in str(exc)
    else:
        raise AssertionError("a 100,000-deep document passed")
