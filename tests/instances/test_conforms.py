"""The fast structure check: a yes only where check_numbers and the JSON Schema both
accept, and a yes for the valid files (else it saves nothing)."""

from __future__ import annotations

import json
import math

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from instances import InstanceError, instance_to_dict
from instances.bundled import bundled
from instances.conforms import compile_schema
from instances.generators.traces import TraceSpec, trace_instance
from instances.io import check_structure, schema
from instances.jsonfile import check_numbers
from tests.fuzz import NASTY, OPS, mutate, normalized
from tests.test_fuzz import BASES, PATHS, PLAN_CASES, PLANS

FAST = {kind: compile_schema(schema(kind)) for kind in ("instance", "plan")}


def _full_checks_accept(doc: object, kind: str) -> bool:
    try:
        check_numbers(doc)
    except InstanceError:
        return False
    validator = jsonschema.Draft202012Validator(schema(kind))
    return next(iter(validator.iter_errors(doc)), None) is None


def _sound(doc: object, kind: str) -> bool:
    fast = FAST[kind]
    assert fast is not None
    return not fast(doc) or _full_checks_accept(doc, kind)


def test_both_schemas_compile():
    """A keyword added to a schema that the fast check does not know would send every
    file to the slow path (seconds on a whole trace): it fails here first."""
    assert FAST["instance"] is not None and FAST["plan"] is not None


def test_valid_files_pass_the_fast_check():
    week_day = trace_instance(TraceSpec(trace="philly-week", start=0.0, hours=6.0), 0)
    for inst in (bundled("tiny"), bundled("small"), bundled("medium"), week_day):
        doc = json.loads(json.dumps(instance_to_dict(inst)))
        assert FAST["instance"](doc), inst.name
    for name, doc in BASES.items():
        assert FAST["instance"](doc), name
    for name, plan in PLANS.items():
        assert FAST["plan"](json.loads(json.dumps(plan))), name


def test_every_mutant_gets_a_yes_only_if_the_full_checks_accept():
    """Every field of every fuzz base (where the base first holds it), every operation,
    three nasty values turning with the field: many mutants are refused, and none of
    those gets a yes. Only ``replace`` takes the value: another operation's one mutant
    is checked once and counted for its three values."""
    refused = total = 0
    fast = FAST["instance"]
    assert fast is not None
    for name, doc in BASES.items():
        first = {normalized(p): p for p in reversed(PATHS[name])}
        for k, path in enumerate(first.values()):
            for i, op in enumerate(OPS):
                for r in range(3) if op == "replace" else range(1):
                    value = NASTY[(k * len(OPS) * 3 + i * 3 + r) % len(NASTY)]
                    mutant = json.loads(json.dumps(mutate(doc, path, op, value)))
                    full = _full_checks_accept(mutant, "instance")
                    assert not fast(mutant) or full, (name, path, op, value)  # _sound
                    times = 1 if op == "replace" else 3
                    refused += times * (not full)
                    total += times
    assert refused > total / 5


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_random_mutants_get_a_yes_only_if_the_full_checks_accept(data):
    name = data.draw(st.sampled_from(sorted(BASES)))
    path = data.draw(st.sampled_from(PATHS[name]))
    op, value = data.draw(st.sampled_from(OPS)), data.draw(st.sampled_from(NASTY))
    mutant = json.loads(json.dumps(mutate(BASES[name], path, op, value)))
    assert _sound(mutant, "instance")


def test_every_plan_mutant_gets_a_yes_only_if_the_full_checks_accept():
    for k, (name, path) in enumerate(PLAN_CASES):
        for i, op in enumerate(OPS):
            value = NASTY[(k * len(OPS) + i) % len(NASTY)]
            mutant = json.loads(json.dumps(mutate(PLANS[name], path, op, value)))
            assert _sound(mutant, "plan"), (name, path, op, value)


class _Dict(dict):  # type: ignore[type-arg]
    pass


@pytest.mark.parametrize(
    ("change", "accepted"),
    [
        (lambda c: c.update(gpus=True), False),  # true is no integer
        (lambda c: c.update(gpus=1.0), True),  # 1.0 is one (JSON Schema 2020-12)
        (lambda c: c.update(gpus=1.5), False),
        (lambda c: c.update(gpus=2**60), False),  # check_numbers refuses it
        (lambda c: c.update(epoch_time=math.nan), False),
        (lambda c: c.update(epoch_time=-math.inf), False),
        (lambda c: c.update(throughput=2.0), False),  # both: oneOf refuses
        (lambda c: c.pop("epoch_time"), False),  # neither
        (lambda c: c.update(span="rack", net_gbps=0), False),
        (lambda c: c.update(span="row"), False),
        (lambda c: c.update(cpus=0), False),
        (lambda c: c.update(shared="yes"), False),
        (lambda c: c.update(extra=1), False),
    ],
)
def test_the_python_values_a_caller_may_pass(change, accepted):
    doc = json.loads(json.dumps(BASES["tiny"]))
    change(doc["jobs"][0]["configs"][0])
    assert _full_checks_accept(doc, "instance") == accepted
    assert FAST["instance"](doc) == accepted


def test_python_containers_json_does_not_make_go_to_the_full_checks():
    """A tuple, a dict subclass, a float subclass: never a yes (the full checks then
    decide as they did); each still read as before."""
    for change in (
        lambda d: d["jobs"][0]["distribution"].update(
            stops=tuple(d["jobs"][0]["distribution"]["stops"])
        ),
        lambda d: d["jobs"].__setitem__(0, _Dict(d["jobs"][0])),
        lambda d: d["jobs"][0].update(due=type("F", (float,), {})(d["jobs"][0]["due"])),
    ):
        doc = json.loads(json.dumps(BASES["tiny"]))
        change(doc)
        assert not FAST["instance"](doc)
        accepted = _full_checks_accept(doc, "instance")
        if accepted:
            check_structure(doc, "instance")
        else:
            with pytest.raises(InstanceError):
                check_structure(doc, "instance")


def test_a_refused_document_gets_the_full_checks_message():
    doc = json.loads(json.dumps(BASES["tiny"]))
    doc["jobs"][1]["configs"][0]["gpus"] = math.nan
    with pytest.raises(
        InstanceError, match=r"^jobs\[1\]\.configs\[0\]\.gpus = nan: must be a finite"
    ):
        check_structure(doc, "instance")
    doc["jobs"][1]["configs"][0]["gpus"] = "2"
    with pytest.raises(
        InstanceError, match=r"^jobs\[1\]\.configs\[0\]\.gpus = '2': '2' is not of type"
    ):
        check_structure(doc, "instance")


def test_a_schema_with_an_unknown_keyword_is_left_to_jsonschema():
    assert compile_schema({"type": "string", "pattern": "^a"}) is None
    assert compile_schema({"type": "object", "properties": {"a": {"not": {}}}}) is None
    # an object open to other names may hide a NaN: not compiled
    assert compile_schema({"type": "object", "properties": {}}) is None
    # a oneOf whose options are not checked exactly could count two valid as one
    assert compile_schema({"oneOf": [{"type": "integer"}, {"minimum": 0}]}) is None


def test_a_value_the_schema_does_not_describe_is_checked_for_its_numbers():
    fast = compile_schema(
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {"a": {"description": "anything"}},
        }
    )
    assert fast is not None
    assert fast({"a": 1.0}) and fast({"a": "x"}) and fast({})
    assert not fast({"a": math.nan}) and not fast({"a": 10**400})
    assert not fast({"a": [1.0]})  # a container: the slow path walks it
