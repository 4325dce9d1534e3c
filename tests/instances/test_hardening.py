"""Files and values no reader should trust: each is refused with the field and the value,
never with a traceback, an overflow, or a figure of inf or nan."""

from __future__ import annotations

import json

import pytest

from instances import InstanceError, PlanError, read_instance, read_plan
from instances.bundled import bundled
from tests.fuzz import base_document, byte_mutant, mutate


@pytest.fixture
def doc():
    return base_document("tiny")


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("utf16", "UTF-16"),
        ("latin1", "not UTF-8"),
        ("bad_utf8", "not UTF-8 text: byte 0xff"),
        ("deep", "nested deeper than"),
        ("long_number", r"release = '9+\.\.\. \(5,000 digits\)': is too large"),
        ("nan_literal", "must be a finite number"),
    ],
)
def test_bytes_no_instance_has_are_refused(tmp_path, doc, kind, reason):
    path = tmp_path / "i.json"
    path.write_bytes(byte_mutant(doc, kind))
    with pytest.raises(InstanceError, match=reason):
        read_instance(path)


def test_a_utf8_byte_order_mark_is_accepted(tmp_path, doc):
    path = tmp_path / "i.json"
    path.write_bytes(byte_mutant(doc, "bom"))
    assert read_instance(path) == bundled("tiny")


@pytest.mark.parametrize(
    ("path", "value", "reason"),
    [
        (("jobs", 0, "release"), 10**400, "must be a finite|too large"),
        (("energy_price",), 1e308, "at most"),
        # STS chose another plan at 2e-16 (a probe, 2026-12-05); 0 stays a price
        (("energy_price",), 2e-16, "must be 0 or at least 1e-09 per kWh"),
        (("gpu_types", 0, "power_w"), 1e308, "at most"),
        (("jobs", 0, "priority"), 1e308, "at most"),
        (("jobs", 0, "due"), 1e308, "at most"),
        (("slot",), 5e-324, "at least"),
        (("slot",), 1e9, "at most"),
        (("jobs", 0, "configs", 0, "epoch_time"), 1e-9, "between"),
        (("jobs", 0, "configs", 0, "epoch_time"), 1e307, "between"),
        (("nodes", 0, "num_gpus"), 10**9, "at most"),
        (("max_share",), 10**6, "at most"),
        (("jobs", 0, "id"), "a\nb", "printable"),
        (("jobs",), [], "non-empty|at least one job"),
    ],
)
def test_values_beyond_the_bounds_are_refused_naming_the_field(tmp_path, doc, path, value, reason):
    file = tmp_path / "i.json"
    file.write_text(json.dumps(mutate(doc, path, "replace", value)))
    with pytest.raises(InstanceError, match=reason) as exc:
        read_instance(file)
    field = ".".join(str(p) if isinstance(p, str) else f"[{p}]" for p in path)
    assert exc.value.path.replace(".[", "[") == field.replace(".[", "[")


def test_a_price_series_value_below_the_least_price_is_refused_naming_it(tmp_path, doc):
    """As the flat price: a positive hour below 1e-9 per kWh is refused (0 is read)."""
    file = tmp_path / "i.json"
    doc = {**doc, "prices": {"step": 1.0, "values": [0.2, 0.0, 2e-16]}}
    file.write_text(json.dumps(doc))
    with pytest.raises(InstanceError, match="must be 0 or at least 1e-09 per kWh") as exc:
        read_instance(file)
    assert exc.value.path == "prices.values[2]"
    doc["prices"]["values"][2] = 1e-9
    file.write_text(json.dumps(doc))
    assert read_instance(file).prices.values == (0.2, 0.0, 1e-9)


def test_a_zero_reference_price_beside_a_billing_series_is_refused(tmp_path, doc):
    """``energy_price`` sets the default tardiness weights: at 0 beside a series that
    bills energy (prices, or carbon with a price), a job 500,000 h late cost nothing (a
    hostile-input review). Read where every job gives its own weight, or where the
    series bills nothing either."""
    file = tmp_path / "i.json"
    series = {"step": 1.0, "values": [0.2, 0.0, 0.3]}
    doc = {**doc, "energy_price": 0.0, "prices": series}
    file.write_text(json.dumps(doc))
    with pytest.raises(InstanceError, match="must be above 0 beside a price series") as exc:
        read_instance(file)
    assert exc.value.path == "energy_price"
    weighed = {**doc, "jobs": [{**j, "weight": 1.0} for j in doc["jobs"]]}
    file.write_text(json.dumps(weighed))
    assert read_instance(file).energy_price == 0.0
    free = {**doc, "prices": {"step": 1.0, "values": [0.0, 0.0]}}
    file.write_text(json.dumps(free))
    assert read_instance(file).energy_price == 0.0
    # a priced carbon series bills the energy too: a job 5,000 h late cost nothing
    # beside one (a hostile-input review of 2026-12-07)
    carbon = {"step": 1.0, "values": [300.0, 500.0], "price": 100.0}
    bare = {k: v for k, v in doc.items() if k != "prices"}
    for priced in ({**bare, "carbon": carbon}, {**free, "carbon": carbon}):
        file.write_text(json.dumps(priced))
        with pytest.raises(InstanceError, match="beside a carbon series with a price") as exc:
            read_instance(file)
        assert exc.value.path == "energy_price"
    unpriced = {**bare, "carbon": {**carbon, "price": 0.0}}
    file.write_text(json.dumps(unpriced))
    assert read_instance(file).energy_price == 0.0  # carbon counted, not charged


@pytest.mark.parametrize("text", ["[]", "5", '"plan"'])
def test_a_plan_file_that_is_no_object_is_called_a_plan(tmp_path, text):
    """It was refused as ``bad plan: <instance> = []``, calling the plan an instance (a
    hostile-input review)."""
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(PlanError, match=r"^bad plan: plan = .*is not of type 'object'"):
        read_plan(path)


@pytest.mark.parametrize("end", ["1e308", "Infinity", "NaN", "-1"])
def test_a_plan_segment_ending_at_no_real_time_is_refused(tmp_path, end):
    from heuristic.baselines.fifo import FifoPolicy
    from instances import plan_to_dict
    from validation.simulator import rollout

    inst = bundled("tiny")
    doc = plan_to_dict(rollout(inst, FifoPolicy()))
    text = json.dumps(doc).replace(f'"end": {doc["segments"][0]["end"]}', f'"end": {end}', 1)
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(PlanError, match=r"segments\[0\]\.end"):
        read_plan(path)


@pytest.mark.parametrize("index", [1.0, 0.5, -1, True])
def test_a_gpu_index_that_is_not_a_whole_number_is_refused(tmp_path, index):
    """JSON Schema's integer takes 1.0, which was then read as GPU 1 (a hostile-input
    hunt); an instance refuses ``num_gpus: 8.0``, and a plan its GPU indices alike."""
    from heuristic.baselines.fifo import FifoPolicy
    from instances import plan_to_dict
    from validation.simulator import rollout

    doc = plan_to_dict(rollout(bundled("tiny"), FifoPolicy()))
    doc["segments"][0]["gpus"][0][1] = index
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(PlanError, match=r"segments\[0\]\.gpus\[0\]"):
        read_plan(path)


def test_a_device_or_pipe_is_refused_not_read_forever():
    with pytest.raises(InstanceError, match="not a regular file"):
        read_instance("/dev/zero")


@pytest.mark.parametrize("source", [None, 123, b"/tmp/i.json", {"nodes": []}])
def test_a_source_that_is_no_path_is_refused_naming_it(source):
    """``read_instance(None)`` raised a bare ``TypeError`` from pathlib naming no
    argument (a hostile-input review of the Python API, 2026-12-07)."""
    with pytest.raises(InstanceError, match="the instance file must be a path") as exc:
        read_instance(source)
    assert exc.value.path == "instance"
    assert exc.value.value is source  # shown as itself (a long one was shown as a quoted repr)
    with pytest.raises(PlanError, match="the plan file must be a path"):
        read_plan(source)
