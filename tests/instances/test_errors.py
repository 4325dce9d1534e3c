"""Every deliberately broken file in tests/data gets an error naming the field and value."""

import pytest

from instances import InstanceError, read_instance
from tests.conftest import DATA

CASES = [
    ("malformed", "", "malformed JSON at line"),
    ("missing_field", "jobs[0].due", "missing field"),
    ("unknown_field", "jobs[0].deadline", "unknown field"),
    ("negative_epoch_time", "jobs[0].configs[0].epoch_time = -0.5", "positive"),
    ("zero_epoch_time", "jobs[0].configs[0].epoch_time = 0.0", "positive"),
    ("zero_throughput", "jobs[0].configs", "every throughput is 0"),
    (
        "probabilities_not_one",
        "jobs[0].distribution.probabilities = (0.5, 0.4)",
        "must sum to 1 (they sum to 0.9)",
    ),
    ("negative_probability", "jobs[0].distribution.probabilities[0] = -0.5", "[0, 1]"),
    ("stops_not_increasing", "jobs[0].distribution.stops[1] = 5.0", "must increase"),
    ("stops_not_max_epochs", "jobs[0].distribution.stops = [5.0, 10.0]", "max_epochs (12.0)"),
    ("due_before_release", "jobs[0].due = 3.0", "after the release time (4.0)"),
    ("no_node_fits", "jobs[0].configs = ['v100x8']", "fits no node"),
    (
        "shared_memory_too_big",
        "jobs[0].memory_gb = 40.0",
        "fit one GPU (gpu_types[1].memory_gb = 16.0 GB)",
    ),
    ("unknown_gpu_type", "nodes[1].gpu_type = 'h100'", "unknown GPU type"),
    ("unknown_config_gpu_type", "jobs[0].configs[0].gpu_type = 'a100'", "unknown GPU type"),
    ("duplicate_job_id", "jobs[1].id = 'a'", "duplicate id"),
    ("duplicate_node_id", "nodes[1].id = 'n0'", "duplicate id"),
]


@pytest.mark.parametrize(("name", "where", "reason"), CASES, ids=[c[0] for c in CASES])
def test_broken_file_is_named_precisely(name, where, reason):
    with pytest.raises(InstanceError) as info:
        read_instance(DATA / f"{name}.json")
    text = str(info.value)
    assert text.startswith(where) or (not where and "malformed" in text), text
    assert reason in text
    assert f"{name}.json" in text  # the file is named too


def test_every_broken_file_has_a_case():
    files = (
        {p.stem for p in DATA.glob("*.json")}
        - {"base"}
        - {p.stem for p in DATA.glob("plan_*.json")}
    )
    assert files == {c[0] for c in CASES}


def test_base_file_is_valid(base):
    assert [j.id for j in base.jobs] == ["a", "b"]


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(InstanceError, match="cannot read instance file"):
        read_instance(tmp_path / "nope.json")


def test_a_file_that_cannot_be_read_is_named_as_what_it_was_read_as(tmp_path):
    """A plan's path was shown as ``<instance> = ...`` (a hostile-input hunt)."""
    from instances import PlanError, read_plan

    with pytest.raises(InstanceError) as err:
        read_instance(tmp_path / "nope.json")
    assert str(err.value).startswith("instance = ")
    with pytest.raises(PlanError) as bad:
        read_plan(tmp_path / "nope.json")
    assert str(bad.value).startswith("bad plan: plan = ") and "<instance>" not in str(bad.value)
