"""The power-off option (instances/power.py): JSON round trip, refusals naming the
field and the value, and files without it read as before."""

from __future__ import annotations

import json

import pytest

from instances import InstanceError, instance_from_dict, instance_to_dict
from instances.bundled import bundled, bundled_names
from instances.power import PowerOff


def test_round_trip(small):
    doc = instance_to_dict(small)
    doc["power_off"] = {"after_h": 0.5, "boot_h": 0.1, "boot_kwh": 0.2}
    inst = instance_from_dict(json.loads(json.dumps(doc)))
    assert inst.power_off == PowerOff(0.5, 0.1, 0.2)
    assert instance_from_dict(instance_to_dict(inst)) == inst
    # boot_h and boot_kwh default to 0; integers are read as hours and kWh
    doc["power_off"] = {"after_h": 2}
    assert instance_from_dict(doc).power_off == PowerOff(2.0, 0.0, 0.0)


@pytest.mark.parametrize(
    "option, path, words",
    [
        ({"after_h": -1.0}, "power_off.after_h", "non-negative"),
        ({"after_h": 1.0, "boot_h": -0.5}, "power_off.boot_h", "non-negative"),
        ({"after_h": 1.0, "boot_kwh": 1e9}, "power_off.boot_kwh", "at most"),
        ({"after_h": 1e9}, "power_off.after_h", "at most"),
        ({"after_h": "soon"}, "power_off.after_h", "number"),
        ({"after_h": 1.0, "boot_h": True}, "power_off.boot_h", "number"),
    ],
)
def test_refusals_name_the_field_and_value(small, option, path, words):
    doc = instance_to_dict(small)
    doc["power_off"] = option
    with pytest.raises(InstanceError) as err:
        instance_from_dict(doc)
    assert err.value.path == path and words in str(err.value), str(err.value)


@pytest.mark.parametrize("option", [{"boot_h": 1.0}, {"after_h": 1.0, "delay": 2.0}, [1.0]])
def test_malformed_option_refused_by_the_schema(small, option):
    doc = instance_to_dict(small)
    doc["power_off"] = option
    with pytest.raises(InstanceError) as err:
        instance_from_dict(doc)
    assert "power_off" in str(err.value)


def test_the_constructor_refuses_non_finite_values():
    with pytest.raises(InstanceError, match=r"after_h = inf: must be a non-negative number"):
        PowerOff(float("inf"))
    with pytest.raises(InstanceError, match=r"boot_kwh = nan"):
        PowerOff(1.0, 0.0, float("nan"))


@pytest.mark.parametrize("name", bundled_names())
def test_files_without_it_read_and_write_as_before(name):
    inst = bundled(name)
    assert inst.power_off is None
    assert "power_off" not in instance_to_dict(inst)
