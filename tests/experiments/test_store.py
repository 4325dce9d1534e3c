"""The results store against what other programs, disks and users do to files."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from experiments.cli import main
from experiments.runner import run_campaign
from experiments.store import Store, StoreError
from tests.experiments.test_campaign import SMALL, _parse


@pytest.fixture(scope="module")
def _filled_once(tmp_path_factory) -> Path:
    # a campaign starts a process pool (about 2 s); each test gets a copy to damage
    store = tmp_path_factory.mktemp("filled") / "s.sqlite"
    run_campaign(_parse(SMALL), store, workers=1, progress=False)
    assert not Path(f"{store}-wal").exists()  # closed whole: the one file is the store
    return store


@pytest.fixture
def filled(tmp_path, _filled_once) -> Path:
    return Path(shutil.copy(_filled_once, tmp_path / "s.sqlite"))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("extra", ["CREATE TABLE notes (x TEXT)", "PRAGMA journal_mode=DELETE"])
def test_another_programs_sqlite_file_is_refused_untouched(tmp_path, extra):
    path = tmp_path / "theirs.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE accounts (id INTEGER, name TEXT)")
        conn.execute(extra)
    before = _digest(path)
    for opener in (Store, lambda p: Store(p, writer=True), lambda p: Store(p, readonly=True)):
        with pytest.raises(StoreError, match="not a gpusched results store"):
            opener(path)
    assert _digest(path) == before
    assert not Path(f"{path}-wal").exists()
    with sqlite3.connect(path) as conn:  # still theirs: no table added, journal unchanged
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert tables <= {"accounts", "notes"}
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_a_corrupt_store_is_refused_not_reported_in_part(filled, tmp_path, capsys):
    data = bytearray(filled.read_bytes())
    filled.write_bytes(bytes(data[: len(data) // 2]))  # a copy cut short
    out = tmp_path / "r.html"
    assert main(["report", str(filled), "--out", str(out)]) == 2
    assert "corrupt" in capsys.readouterr().err
    assert not out.exists()


def test_a_second_campaign_process_on_one_store_is_refused(filled):
    with Store(filled, writer=True):
        with pytest.raises(StoreError, match="another campaign process"):
            run_campaign(_parse(SMALL), filled, workers=1, progress=False)
        with Store(filled, readonly=True) as reader:  # reports still read it
            assert len(reader.runs()) == 12
    with Store(filled, writer=True):  # the lock went with its holder
        pass


def test_a_full_disk_is_a_store_error_and_leaves_whole_runs(filled):
    from experiments.execute import execute

    spec = _parse(SMALL.replace('name = "small"', 'name = "more"')).runs()[0]
    rec = execute(spec)
    with Store(filled, writer=True) as store:
        pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
        store.conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's 'disk is full'
        big = type(rec)(**{**rec.__dict__, "plan_json": "x" * 200_000})
        with pytest.raises(StoreError, match="full"):
            store.save(big)
        assert store.finished("more") == set()  # nothing of the run was written
        assert len(store.runs()) == 12


def test_a_store_written_before_the_carbon_columns_gains_them(filled):
    """A store whose runs table predates LATER_METRICS (carbon, idle energy) is read
    with those as NULL read-only, and gains them, its runs kept, when written."""
    with sqlite3.connect(filled) as conn:  # as an older gpusched wrote it
        for m in ("carbon_cost", "carbon_kg", "idle_kwh"):
            conn.execute(f"ALTER TABLE runs DROP COLUMN {m}")
    with Store(filled, readonly=True) as store:
        old = store.runs()
        assert old["carbon_kg"].isna().all() and len(old) > 0
    with Store(filled, writer=True) as store:
        again = store.runs()
    assert len(again) == len(old)
    assert list(again.columns) == list(old.columns)
    with sqlite3.connect(filled) as conn:
        cols = [r[1] for r in conn.execute("PRAGMA table_info(runs)")]
    assert cols[-3:] == ["carbon_cost", "carbon_kg", "idle_kwh"]


def test_runs_store_their_carbon_and_idle_energy(filled):
    with Store(filled, readonly=True) as store:
        runs = store.runs()
    done = runs[runs["status"] == "ok"]
    assert len(done) > 0
    assert (done["carbon_kg"] == 0).all() and (done["idle_kwh"] == 0).all()


@pytest.mark.parametrize("empty_before", [False, True])
def test_a_store_that_cannot_be_created_is_taken_back(tmp_path, monkeypatch, empty_before):
    """A new store whose tables cannot all be made (a full disk, a file size limit:
    here a schema that fails half-way) leaves no half-made store that the same command
    would then refuse as not one of ours: the file goes (or is emptied again), and the
    command run again makes it."""
    import experiments.store as store_module

    path = tmp_path / "new.sqlite"
    if empty_before:
        path.write_bytes(b"")
    good = store_module._SCHEMA
    monkeypatch.setattr(store_module, "_SCHEMA", good + "\nCREATE TABLE broken (;")
    with pytest.raises(StoreError, match="could not be created"):
        run_campaign(_parse(SMALL), path, workers=1, progress=False)
    assert path.exists() == empty_before and (not empty_before or path.stat().st_size == 0)
    assert not Path(f"{path}-wal").exists()
    monkeypatch.setattr(store_module, "_SCHEMA", good)
    run_campaign(_parse(SMALL), path, workers=1, progress=False)
    with Store(path, readonly=True) as s:
        assert len(s.runs()) == 12


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ("total_cost = 'abc'", "total_cost = 'abc', not a finite number"),
        # a run stores an infinite metric as NULL: 9e999 was reported as inf
        ("total_cost = 9e999", "total_cost = inf, not a finite number"),
        ("energy_kwh = -9e999", "energy_kwh = -inf, not a finite number"),
        ("seed = 1.5", "seed = 1.5, not a whole number"),
        ("params = 'notjson'", "params = 'notjson', not a JSON object"),
        ("params = '[1]'", "params = '[1]', not a JSON object"),
        # reported as if real until a hostile-input review (2026-12-07)
        ("status = 'weird'", "status = 'weird', not 'ok' or 'error'"),
        ("position = 'x'", "position = 'x', not a whole number"),
        ("total_cost = -5", "total_cost = -5.0, below 0"),
        ("missed = -4", "missed = -4.0, below 0"),
        # reported as 2.5 missed due dates until a hostile-input probe (2026-12-08)
        ("missed = 2.5", "missed = 2.5, not a whole count"),
        ("proved = 0.5", "proved = 0.5, not a whole count"),
        ("total_cost = NULL", "is ok but has no total_cost"),
        ("total_cost = total_cost + 42", "not its energy_cost"),
        ("policy = 'nosuch'", "which do not make its key"),
        ("key = key || 'x'", "which do not make its key"),
        ("campaign = 'other'", "holds runs of campaign 'other', which it does not list"),
    ],
)
def test_a_cell_edited_into_what_no_run_writes_is_refused_by_name(
    filled, tmp_path, capsys, edit, message
):
    """The file still passes SQLite's own check; the report names the run and the cell,
    and writes nothing."""
    with sqlite3.connect(filled) as conn:
        conn.execute(f"UPDATE runs SET {edit} WHERE rowid = 1")
    out = tmp_path / "r.html"
    assert main(["report", str(filled), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and "damaged" in err and "Traceback" not in err
    assert not out.exists()


def test_a_report_into_its_own_store_is_refused(filled, capsys):
    """``report S --out S`` replaced the store with the page (every run lost)."""
    before = filled.read_bytes()
    for extra in ([], ["--markdown"]):
        assert main(["report", str(filled), *extra, "--out", str(filled)]) == 2
        assert "--out" in capsys.readouterr().err
    assert filled.read_bytes() == before
    with Store(filled, readonly=True) as s:
        assert len(s.runs()) == 12


def test_a_folder_or_an_empty_file_is_named_as_such(tmp_path):
    # a folder read as "disk I/O error", an empty file as "no such store"
    (tmp_path / "adir").mkdir()
    with pytest.raises(StoreError, match="is a folder, not a store file"):
        Store(tmp_path / "adir", readonly=True)
    with pytest.raises(StoreError, match="is a folder, not a store file"):
        Store(tmp_path / "adir", writer=True)
    (tmp_path / "empty.sqlite").write_bytes(b"")
    with pytest.raises(StoreError, match="an empty file, not a store"):
        Store(tmp_path / "empty.sqlite", readonly=True)
    with pytest.raises(StoreError, match="no such store"):
        Store(tmp_path / "none.sqlite", readonly=True)


def test_a_run_row_deleted_by_hand_is_run_again(filled):
    # its job rows, left behind, refused every resume ("UNIQUE constraint failed")
    store = filled
    with sqlite3.connect(store) as conn:
        key = conn.execute("SELECT key FROM runs WHERE status = 'ok' LIMIT 1").fetchone()[0]
        jobs = conn.execute("SELECT count(*) FROM jobs WHERE key = ?", (key,)).fetchone()[0]
        conn.execute("DELETE FROM runs WHERE key = ?", (key,))
    out = run_campaign(_parse(SMALL), store, workers=1, progress=False)
    assert out.ran == 1
    with sqlite3.connect(store) as conn:
        assert conn.execute("SELECT count(*) FROM jobs WHERE key = ?", (key,)).fetchone()[0] == jobs


def test_a_run_whose_instance_was_lost_is_run_again(filled, tmp_path):
    """A run whose instance row is gone was counted as stored for ever, and the report
    refused the store (a hostile-input review, 2026-12-07): a resume makes it again,
    its row replaced, and the report reads the store."""
    store = filled
    with sqlite3.connect(store) as conn:
        iid = conn.execute("SELECT instance_id FROM runs WHERE status = 'ok' LIMIT 1").fetchone()[0]
        runs = conn.execute("SELECT count(*) FROM runs").fetchone()[0]
        lost = conn.execute("SELECT count(*) FROM runs WHERE instance_id = ?", (iid,)).fetchone()[0]
        conn.execute("DELETE FROM instances WHERE id = ?", (iid,))
    out = run_campaign(_parse(SMALL), store, workers=1, progress=False)
    assert out.ran == lost >= 1
    with sqlite3.connect(store) as conn:
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == runs
        assert conn.execute("SELECT count(*) FROM instances WHERE id = ?", (iid,)).fetchone()[0]
    assert main(["report", str(store), "--out", str(tmp_path / "r.html")]) == 0


def test_a_store_read_under_a_file_size_limit_is_not_called_foreign(tmp_path):
    """A sound store read where SQLite cannot write its files beside it (a file-size
    limit of 0): the reader said it was not a gpusched results store (a hostile-input
    review); it says it could not be read, and why."""
    import resource
    import subprocess
    import sys

    path = tmp_path / "s.sqlite"
    with Store(path):
        pass
    code = (
        "from experiments.store import Store, StoreError\n"
        "try:\n"
        f"    Store({str(path)!r}, readonly=True)\n"
        "except StoreError as exc:\n"
        "    print(exc)\n"
    )

    def no_writes() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, preexec_fn=no_writes, capture_output=True, text=True
    )
    assert "could not be read (a full disk, a file-size limit?): disk I/O error" in done.stdout
    assert "not a gpusched results store" not in done.stdout


def test_a_runs_missing_or_foreign_plan_is_refused_by_name(filled):
    """The page's Gantt chart stopped with a traceback on a stored plan naming a job its
    instance does not hold, and with a wrong one ('no finished run') where the run's
    instance was missing (a hostile-input review, 2026-12-07)."""
    import json

    with Store(filled, readonly=True) as store:
        name = store.campaign_names()[0]
        key = str(store.runs(name)["key"].iloc[0])
        store.plan_of(name, key)  # sound as written
    with sqlite3.connect(filled) as conn:
        text = conn.execute("SELECT plan FROM runs WHERE key = ?", (key,)).fetchone()[0]
        plan = json.loads(text)
        plan["segments"][0]["job"] = "ghost"
        conn.execute("UPDATE runs SET plan = ? WHERE key = ?", (json.dumps(plan), key))
    with Store(filled, readonly=True) as store, pytest.raises(StoreError) as exc:
        store.plan_of(name, key)
    assert "does not fit its instance" in str(exc.value) and "'ghost'" in str(exc.value)
    with sqlite3.connect(filled) as conn:
        conn.execute(
            "UPDATE runs SET plan = ?, instance_id = 'deadbeef' WHERE key = ?", (text, key)
        )
    with Store(filled, readonly=True) as store, pytest.raises(StoreError) as exc:
        store.plan_of(name, key)
    assert "names instance 'deadbeef', which the store does not hold" in str(exc.value)
