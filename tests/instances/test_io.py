import json

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from instances import (
    instance_from_dict,
    instance_to_dict,
    plan_from_dict,
    plan_to_dict,
    read_instance,
    write_instance,
)
from instances.bundled import bundled, bundled_names
from instances.io import schema
from tests.strategies import instances, serial_plans


def test_bundled_instances_round_trip_and_match_schema(tmp_path):
    assert {"tiny", "small", "medium"} <= set(bundled_names())
    for name in bundled_names():
        inst = bundled(name)
        doc = instance_to_dict(inst)
        jsonschema.validate(doc, schema("instance"))
        write_instance(inst, tmp_path / "x.json")
        again = read_instance(tmp_path / "x.json")
        assert again == inst
        assert instance_to_dict(again) == doc


@given(instances())
def test_json_round_trip_is_exact(inst):
    doc = json.loads(json.dumps(instance_to_dict(inst)))
    jsonschema.validate(doc, schema("instance"))
    again = instance_from_dict(doc)
    assert again == inst
    assert all(again.tardiness_weight(j.id) == inst.tardiness_weight(j.id) for j in inst.jobs)


@given(st.data())
def test_plan_round_trip_is_exact(data):
    inst = data.draw(instances(max_jobs=3))
    plan = data.draw(serial_plans(inst))
    doc = json.loads(json.dumps(plan_to_dict(plan, instance=inst.name)))
    jsonschema.validate(doc, schema("plan"))
    assert plan_from_dict(doc) == plan


def test_default_tardiness_weight_is_ten_times_top_hourly_energy(base):
    # job a: most powerful config v100x2 = 600 W; price 0.25 -> 10 * 0.25 * 0.6 = 1.5 per hour
    assert base.tardiness_weight("a") == 1.5
    assert base.tardiness_weight("b") == 2.0  # given explicitly
