"""Fuzzing the other file formats a user hands gpusched (tests/fuzz.py): campaign files
(the bundled ones, and one scenario per generator of the table with every field set),
stopping fits (``fit-stops --out``) and history CSVs (every cell, and whole-file
mutants: line ends, encodings, compression, sizes).

Every mutant ends one of two ways: refused cleanly, naming the field, the row or the
file; or read, with sound figures.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from experiments.campaign import _EXTRA_KEYS, CampaignError, parse_campaign
from instances import InstanceError
from instances.generators import GENERATORS
from instances.generators.histories import COLUMNS, csv_history
from instances.generators.stops_fit import StopsFit, bundled_fit
from tests.fuzz import (
    HISTORY_BYTES,
    HISTORY_NASTY,
    NASTY,
    OPS,
    READERS,
    base_document,
    campaign_document,
    generator_scenario,
    history_bytes,
    history_text,
    mutate,
    names_field,
    paths,
    run_command,
    toml_text,
)

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "40"))
CAMPAIGNS = {
    name: campaign_document(name)
    for name in ("thesis-rates", "sharing", "bound", "thesis-calibrated", "philly-week")
}
# the whole week would be built at every example: a one-hour window has every trace field
CAMPAIGNS["philly-week"]["scenarios"][0].update(start=30.0, hours=1.0, running="completed")
# the policies as a table of options (the contended campaign's form), on one small
# contended scenario
CAMPAIGNS["contended"] = campaign_document("contended")
CAMPAIGNS["contended"]["scenarios"] = CAMPAIGNS["contended"]["scenarios"][:1]
CAMPAIGNS["contended"]["scenarios"][0].update(hours=1.0, grid={"load": [0.6, 1.2]})
# one campaign per generator of the table, its scenario setting every field the spec
# has, and one per scenario kind that reads instances (file, suite) with every key
for _name in GENERATORS:
    CAMPAIGNS[f"table:{_name}"] = {
        "policies": ["fifo"],
        "seeds": [0],
        "scenarios": [generator_scenario(_name)],
    }
    if generator_scenario(_name, alternative=True) != generator_scenario(_name):
        CAMPAIGNS[f"table:{_name}:alt"] = {
            "policies": ["fifo"],
            "seeds": [0],
            "scenarios": [generator_scenario(_name, alternative=True)],
        }
for _name, _keys in READERS.items():
    CAMPAIGNS[f"table:{_name}"] = {
        "policies": ["fifo"],
        "seeds": [0],
        "scenarios": [{"generator": _name, **_keys}],
    }


@pytest.fixture(scope="module")
def fit_dir(tmp_path_factory) -> Path:
    """A folder holding the bundled fit as ``fit-stops --out`` writes it, ``fit.json``:
    the campaigns' ``stops`` (relative to the campaign, the folder)."""
    folder = tmp_path_factory.mktemp("fit")
    (folder / "fit.json").write_text(json.dumps(bundled_fit("completed").to_dict()))
    (folder / "tiny.json").write_text(json.dumps(base_document("tiny")))  # a file scenario's
    return folder


def test_every_generator_field_is_in_its_fuzzed_campaign():
    """A field added to a spec is fuzzed with no new code if its default is a value; if
    it is None, tests/fuzz.py's OPTIONAL needs a value for it (TOML has no null). A key
    added to the file or suite scenarios needs a value in READERS."""
    for name, gen in GENERATORS.items():
        fuzzed = {*generator_scenario(name), *generator_scenario(name, alternative=True)}
        assert fuzzed == {"generator", *gen.fields}, f"{name}: add a value to OPTIONAL"
    for name, keys in _EXTRA_KEYS.items():
        assert set(READERS[name]) == keys, f"{name}: add a value to READERS"


def _parse(doc: dict, base: Path) -> object:
    text = toml_text(doc)
    assert text is not None
    return parse_campaign(text, base=base, default_name="fuzz")


def test_the_fuzzed_campaigns_are_valid(fit_dir):
    for name, doc in CAMPAIGNS.items():
        if name.startswith("table:"):
            assert _parse(doc, fit_dir).runs(), name  # type: ignore[attr-defined]


def _check_campaign_mutant(doc: dict, path: tuple, op: str, value: object, base: Path) -> None:
    """Refused naming the mutated field (or the scenario whose instance cannot be
    built from it), or expanded into runs."""
    text = toml_text(mutate(doc, path, op, value))
    if text is None:
        return
    try:
        campaign = parse_campaign(text, base=base, default_name="fuzz")
    except CampaignError as exc:
        message = str(exc)
        assert " = " in message, f"{message} names no field"
        key = next((k for k in reversed(path) if isinstance(k, str)), "")
        assert key in message or "scenario" in message or op != "replace", (
            f"mutated {path} to {value!r}, refused as: {message}"
        )
        return
    assert campaign.runs() and all(r.time_limit > 0 for r in campaign.runs())


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.data())
def test_a_mutated_campaign_file_is_refused_naming_the_field_or_expands(fit_dir, data):
    name = data.draw(st.sampled_from(sorted(CAMPAIGNS)))
    doc = json.loads(json.dumps(CAMPAIGNS[name]))
    if name == "philly-week":
        doc["scenarios"][0]["stops"] = "fit.json"
    path = data.draw(st.sampled_from(list(paths(doc))))
    value = data.draw(st.sampled_from([v for v in NASTY if v is not None]))
    _check_campaign_mutant(doc, path, data.draw(st.sampled_from(OPS)), value, fit_dir)


TABLE_FIELDS = [
    (table, field)
    for table in CAMPAIGNS
    if table.startswith("table:") and table.split(":")[1] in GENERATORS
    for field in CAMPAIGNS[table]["scenarios"][0]
    if field != "generator"
]


@pytest.mark.parametrize(("name", "field"), TABLE_FIELDS)
def test_every_generator_field_is_mutated(fit_dir, name, field):
    """Each field of each generator replaced by a few nasty values (which ones turns
    with the field, so that over the fields every value is tried)."""
    doc = CAMPAIGNS[name]
    k = TABLE_FIELDS.index((name, field))
    for value in [v for v in NASTY if v is not None][k % 5 :: 5][:3]:
        _check_campaign_mutant(doc, ("scenarios", 0, field), "replace", value, fit_dir)


def _every_class_is_a_distribution(fit: StopsFit) -> None:
    for label in fit.classes:
        probs = fit.classes[label].distribution(20, 5).probabilities
        assert all(math.isfinite(p) for p in probs) and math.fsum(probs) == pytest.approx(1.0)


FIT = bundled_fit("completed").to_dict()
FIT_PATHS = list(paths(FIT))


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "60")), deadline=None)
@given(st.sampled_from(FIT_PATHS), st.sampled_from(OPS), st.sampled_from(NASTY))
def test_a_mutated_stopping_fit_is_refused_naming_the_field_or_sound(path, op, value):
    """A fit file (``fit-stops --out``, read by ``generate --stops``): refused naming
    the field, or every class gives a valid distribution of finite probabilities."""
    doc = json.loads(json.dumps(mutate(FIT, path, op, value)))
    try:
        fit = StopsFit.from_dict(doc)
    except InstanceError as exc:
        assert names_field(str(exc), path), f"mutated {path}, refused as: {exc}"
        return
    _every_class_is_a_distribution(fit)


# a history CSV of one's own (``fit-stops FILE [--recent H]``): every cell of every
# column the reader knows (histories.COLUMNS, and ``created`` for a window) mutated to
# text a user's export may hold
HISTORY = [
    {**dict(zip(COLUMNS, (h, s, g), strict=True)), "created": 100 + i}
    for i, (h, s, g) in enumerate(
        [(2, "Pass", 1), (1, "Killed", 1), (3, "Pass", 2), (0.5, "Running", 1)] * 2
    )
]
CSV_CELLS = [(i, column) for i in range(len(HISTORY)) for column in HISTORY[0]]


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "60")), deadline=None)
@given(st.sampled_from(CSV_CELLS), st.sampled_from(HISTORY_NASTY), st.booleans())
def test_a_mutated_history_csv_is_refused_naming_the_row_or_fitted(
    tmp_path_factory, cell, value, recent
):
    """Refused (exit 2) naming the mutated row, or the history as a whole when no job
    in it completed, with nothing written; or fitted, every class a valid distribution."""
    tmp = tmp_path_factory.mktemp("history")
    row, column = cell
    rows = [dict(r) for r in HISTORY]
    rows[row][column] = value
    (tmp / "h.csv").write_text(history_text(rows))
    out = tmp / "fit.json"
    argv = ["fit-stops", str(tmp / "h.csv"), "--out", str(out)]
    outcome, _, _, err = run_command(argv + (["--recent", "24"] if recent else []))
    if outcome == "refused":
        assert f"rows[{row}]" in err or "history" in err, err
        assert not out.exists()
        return
    assert outcome == "ok", f"{outcome}: {err}"
    fit = StopsFit.from_dict(json.loads(out.read_text()))
    _every_class_is_a_distribution(fit)


@pytest.mark.parametrize("kind", sorted(HISTORY_BYTES))
def test_a_history_file_of_any_bytes_is_read_whole_or_refused(tmp_path, kind):
    """Line ends, encodings, compression and sizes: the readable mutants give the
    history their text gives; the others are refused (exit 2) naming the file or the
    row, with nothing written."""
    text = history_text(HISTORY)
    (tmp_path / "plain.csv").write_text(text)
    path = tmp_path / "h.csv"
    path.write_bytes(history_bytes(text, kind))
    out = tmp_path / "fit.json"
    outcome, _, _, err = run_command(["fit-stops", str(path), "--out", str(out)])
    if HISTORY_BYTES[kind]:
        assert outcome == "ok", err
        got, want = csv_history(path), csv_history(tmp_path / "plain.csv")
        assert list(got.hours) == list(want.hours) and list(got.status) == list(want.status)
        return
    assert outcome == "refused", f"{outcome}: {err}"
    assert ("trace = " in err and "h.csv" in err) or "rows[" in err, err
    assert not out.exists()
