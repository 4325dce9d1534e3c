import gzip
import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from heuristic.core.registry import make_policy
from instances import (
    InstanceError,
    instance_from_dict,
    instance_to_dict,
    plan_from_dict,
    plan_to_dict,
    read_instance,
    read_plan,
    write_instance,
    write_plan,
)
from instances.bundled import bundled, bundled_names
from instances.io import schema
from tests.strategies import instances, serial_plans
from validation.simulator import simulate


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


def test_gzip_files_are_read_and_written_transparently(tmp_path):
    inst = bundled("small")
    write_instance(inst, tmp_path / "x.json.gz")
    raw = (tmp_path / "x.json.gz").read_bytes()
    assert raw[:2] == b"\x1f\x8b"  # compressed, and the same bytes every time
    write_instance(inst, tmp_path / "y.json.gz")
    assert (tmp_path / "y.json.gz").read_bytes() == raw
    assert read_instance(tmp_path / "x.json.gz") == inst
    # the content decides, not the name: a gzip file named .json reads too
    (tmp_path / "z.json").write_bytes(raw)
    assert read_instance(tmp_path / "z.json") == inst
    plan = simulate(inst, make_policy("fifo"), mode="rollout").plan
    write_plan(plan, tmp_path / "p.json.gz")
    assert read_plan(tmp_path / "p.json.gz") == plan


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda raw: raw[: len(raw) // 2], "cut short"),
        (lambda raw: raw[:10] + b"\x00" * 20 + raw[30:], "not a valid gzip file"),
        (lambda raw: raw + b"trailing junk", "not a valid gzip file"),
    ],
)
def test_a_broken_gzip_file_is_refused_naming_the_file(tmp_path, make, reason):
    target = tmp_path / "x.json.gz"
    write_instance(bundled("tiny"), target)
    target.write_bytes(make(target.read_bytes()))
    with pytest.raises(InstanceError, match=reason) as err:
        read_instance(target)
    assert str(target) in str(err.value)


def test_a_gzip_file_is_read_in_pieces_whole_over_several_members(tmp_path, monkeypatch):
    import instances.jsonfile as io

    monkeypatch.setattr(io, "_PIECE", 97)  # many pieces per member, none aligned
    inst = bundled("small")
    write_instance(inst, tmp_path / "x.json")
    text = (tmp_path / "x.json").read_bytes()
    half = len(text) // 2
    target = tmp_path / "two.json.gz"
    target.write_bytes(gzip.compress(text[:half]) + gzip.compress(text[half:]))
    assert read_instance(target) == inst
    target.write_bytes(gzip.compress(text[:half]) + gzip.compress(text[half:])[:-9])
    with pytest.raises(InstanceError, match="cut short"):
        read_instance(target)


def test_a_gzip_file_that_expands_too_far_is_refused(tmp_path, monkeypatch):
    import instances.jsonfile as io

    monkeypatch.setattr(io, "MAX_FILE_BYTES", 1 << 20)
    target = tmp_path / "bomb.json.gz"
    target.write_bytes(gzip.compress(b" " * (2 << 20)))  # 2 KiB that expand to 2 MiB
    with pytest.raises(InstanceError, match="expands to over 1 MiB"):
        read_instance(target)


def test_a_configuration_equal_to_one_read_before_is_still_checked():
    """Configurations are built once per file for equal field values of equal types:
    ``1.0`` (an integer to the schema) equals ``1`` as a dict key but is no GPU count,
    refused where it stands even after a ``1`` was read."""
    doc = instance_to_dict(bundled("tiny"))
    first = doc["jobs"][0]["configs"][0]
    assert first["gpus"] == 1
    doc["jobs"][1]["configs"] = [{**first, "gpus": 1.0}, *doc["jobs"][1]["configs"]]
    with pytest.raises(
        InstanceError, match=r"^jobs\[1\]\.configs\[0\]\.gpus = 1\.0: must be a positive integer"
    ):
        instance_from_dict(doc)


def test_configurations_read_are_shared_between_jobs(tmp_path):
    inst = bundled("small")
    write_instance(inst, tmp_path / "s.json")
    again = read_instance(tmp_path / "s.json")
    assert again == inst
    seen: dict = {}
    for job in again.jobs:
        for cfg in job.epoch_times:
            assert seen.setdefault(cfg, cfg) is cfg


BASE = Path(__file__).parents[1] / "data" / "base.json"


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        # Python's reader keeps the last of two values of one key; others keep the first
        ('"energy_price": ', '"energy_price": 9, "energy_price": ', "'energy_price' appears"),
        ('"id": "a"', '"id": "a", "id": "z"', "'id' appears twice"),
        # too small for a double: it would read as 0 unseen (1e400, infinity, is refused too)
        ('"energy_price": 0.25', '"energy_price": 1e-400', "1e-400 is too small for a double"),
        ('"energy_price": 0.25', '"energy_price": 0.5E-330', "0.5E-330 is too small"),
    ],
)
def test_json_that_reads_differently_elsewhere_is_refused(tmp_path, old, new, message):
    text = json.dumps(json.loads((BASE).read_text()), indent=1)
    assert old in text
    path = tmp_path / "x.json"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(InstanceError, match=message):
        read_instance(path)
    path.write_text(text.replace('"energy_price": 0.25', '"energy_price": 25e-2', 1))
    assert read_instance(path).energy_price == 0.25  # an exponent alone is no fault


def test_an_integer_of_thousands_of_digits_is_refused_naming_its_field(tmp_path):
    # Python's reader refuses it before any field is known; it is read again to name it
    text = json.dumps(json.loads(BASE.read_text()), indent=1)
    path = tmp_path / "x.json"
    path.write_text(text.replace('"energy_price": 0.25', '"energy_price": 1' + "0" * 5000, 1))
    with pytest.raises(InstanceError, match=r"^energy_price = '1000.*\(5,001 digits\)'"):
        read_instance(path)
    # malformed further on, the message stays the reader's
    path.write_text(path.read_text()[:-2] + ', "x": }')
    with pytest.raises(InstanceError, match="a number JSON cannot hold"):
        read_instance(path)
