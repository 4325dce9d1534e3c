"""The results store: one SQLite file per campaign (or several campaigns).

Each finished run is written in one transaction (its metrics, its jobs, its plan and,
once, its instance), so a campaign killed at any moment leaves only whole runs behind,
and a restart skips exactly those. Only the campaign's own process writes.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from experiments.campaign import Campaign
from experiments.execute import RunRecord
from instances import Instance, Plan
from instances.io import instance_from_dict, plan_from_dict
from validation.check import check_plan

# every metric a run may report; absent ones (e.g. utilisation of a bound) stay NULL
METRICS = (
    "energy_cost",
    "tardiness_cost",
    "total_cost",
    "energy_kwh",
    "missed",
    "relaunches",
    "overhead_kwh",
    "jobs",
    "utilisation",
    "peak_jobs",
    "makespan_h",
    "mean_jct_h",
    "max_jct_h",
    "decisions",
    "scheduler_s",
    "decision_mean_ms",
    "decision_p95_ms",
    "decision_max_ms",
    "bound",
    "proved",
    "wall_s",
)
# metrics added after stores were first written (the bill's carbon and the idle
# energy, docs/model.md): the last columns of ``runs``, added to an older store when
# it is opened for writing, read as NULL from one opened read-only
LATER_METRICS = ("carbon_cost", "carbon_kg", "idle_kwh")
# the metrics that count something (``proved``: 0 or 1)
COUNTS = ("missed", "relaunches", "jobs", "peak_jobs", "decisions", "proved")
JOB_COLUMNS = (
    "release_h",
    "epochs_run",
    "max_epochs",
    "energy_kwh",
    "energy_cost",
    "tardiness_cost",
    "total_cost",
    "completion_h",
    "due_h",
    "late_h",
    "missed",
    "jct_h",
)

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS campaigns (
    name TEXT PRIMARY KEY, description TEXT, config TEXT, started_at TEXT
);
CREATE TABLE IF NOT EXISTS instances (id TEXT PRIMARY KEY, json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    key TEXT NOT NULL, campaign TEXT NOT NULL, scenario TEXT NOT NULL,
    generator TEXT NOT NULL, params TEXT NOT NULL, policy TEXT NOT NULL,
    seed INTEGER NOT NULL, position INTEGER NOT NULL, status TEXT NOT NULL, error TEXT,
    {", ".join(f"{m} REAL" for m in METRICS)},
    instance_id TEXT, plan TEXT, worker TEXT, finished_at TEXT NOT NULL,
    {", ".join(f"{m} REAL" for m in LATER_METRICS)},
    PRIMARY KEY (campaign, key)
);
CREATE TABLE IF NOT EXISTS jobs (
    campaign TEXT NOT NULL, key TEXT NOT NULL, job TEXT NOT NULL,
    {", ".join(f"{c} REAL" for c in JOB_COLUMNS)},
    PRIMARY KEY (campaign, key, job)
);
"""


_RUN_COLUMNS = [
    *("key", "campaign", "scenario", "generator", "params", "policy", "seed", "position"),
    *("status", "error", *METRICS, "instance_id", "plan", "worker", "finished_at"),
    *LATER_METRICS,
]


_TABLES = {"campaigns", "instances", "runs", "jobs"}
# the end of every refusal of a store whose rows no run writes
DAMAGED = "the store is damaged; run the campaign into a new store"
# PRAGMA application_id of the files gpusched creates ("gpsc"); stores written before it
# was set have 0, and are recognised by their tables
APPLICATION_ID = 0x67707363


def _first_difference(stored: str, given: str) -> str:
    """Where the campaign file given first differs from the one the store holds: its
    line and both versions of it (the files are compared as text, so a comment counts)."""
    old, new = stored.splitlines(), given.splitlines()
    for k, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return f"line {k}: {b.strip()!r:.80}, the store's {a.strip()!r:.80}"
    if len(new) != len(old):
        k = min(len(old), len(new)) + 1
        return f"line {k}: the given file has {len(new)} lines, the store's {len(old)}"
    return "the same lines, other line endings"


class StoreError(RuntimeError):
    """The store file cannot be used: not one of ours, another version's, corrupt, in use
    by another campaign process, or the disk is full."""


class Store:
    """A results store. Nothing is written to a file until it is known to be a gpusched
    store (or new); ``writer=True`` takes the file's lock, so that two campaign
    processes never write one store; ``readonly=True`` opens it for reading only."""

    def __init__(self, path: str | Path, *, writer: bool = False, readonly: bool = False) -> None:
        self.path = Path(path)
        self._lock: int | None = None
        self._later = True  # the runs table has LATER_METRICS
        existed = self.path.exists()
        if self.path.is_dir():  # SQLite read it as a "disk I/O error"
            raise StoreError(f"store {str(path)!r} is a folder, not a store file")
        fresh = not existed or self.path.stat().st_size == 0
        if readonly and fresh:
            what = "an empty file, not a store" if existed else "no such store"
            raise StoreError(f"store {str(path)!r}: {what}")
        try:
            if writer:
                self._lock = _lock(self.path)
            if readonly:
                uri = self.path.resolve().as_uri() + "?mode=ro"
                self.conn = sqlite3.connect(uri, uri=True)
            else:
                self.conn = sqlite3.connect(self.path)
            if not fresh:
                self._recognise(readonly)
            if not readonly:
                self.conn.execute("PRAGMA journal_mode=WAL")  # readers (reports) while writing
            if fresh:
                self.conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                self.conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            self.close()
            if fresh and not readonly:
                # a new store that could not be made whole (a full disk, a file size
                # limit) is taken back, so that the same command can make it again
                self._undo_new(existed)
                raise StoreError(f"store {str(path)!r} could not be created: {exc}") from None
            if "I/O error" in str(exc):
                # the file is sound, SQLite's files beside it could not be written (a
                # file-size limit blamed the store, a hostile-input review)
                what = "could not be read (a full disk, a file-size limit?)"
            elif "malformed" in str(exc):
                what = "is corrupt"
            else:
                what = "is not a gpusched results store"
            raise StoreError(f"store {str(path)!r} {what}: {exc}") from None
        except StoreError:
            self.close()
            raise

    def _undo_new(self, existed: bool) -> None:
        """Take back a store this process began: the file (emptied if it was there,
        empty, before) and SQLite's journal files beside it."""
        for extra in ("-wal", "-shm", "-journal"):
            Path(f"{self.path}{extra}").unlink(missing_ok=True)
        if existed:
            self.path.write_bytes(b"")
        else:
            self.path.unlink(missing_ok=True)

    def _recognise(self, readonly: bool = False) -> None:
        """Refuse, before writing anything, a file that is not a sound gpusched store."""
        where = f"store {str(self.path)!r}"
        app = self.conn.execute("PRAGMA application_id").fetchone()[0]
        tables = {
            r[0]
            for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not r[0].startswith("sqlite_")
        }
        if app not in (0, APPLICATION_ID) or (tables != _TABLES and "runs" not in tables):
            raise StoreError(
                f"{where} is not a gpusched results store (an SQLite file with tables "
                f"{sorted(tables)}); it was left as it is"
            )
        found = [r[1] for r in self.conn.execute("PRAGMA table_info(runs)")]
        if tables == _TABLES and found == _RUN_COLUMNS[: -len(LATER_METRICS)]:
            self._later = False  # written before LATER_METRICS
            if not readonly:
                with self.conn:
                    for m in LATER_METRICS:
                        self.conn.execute(f"ALTER TABLE runs ADD COLUMN {m} REAL")
                self._later = True
            found = _RUN_COLUMNS
        if tables != _TABLES or found != _RUN_COLUMNS:
            raise StoreError(
                f"{where} was written by another version of gpusched (tables "
                f"{sorted(tables)}, runs columns {found}); use a new store file"
            )
        problems = [r[0] for r in self.conn.execute("PRAGMA quick_check(5)")]
        if problems != ["ok"]:
            raise StoreError(
                f"{where} is corrupt ({'; '.join(problems)}): its runs cannot be trusted; "
                "run the campaign into a new store"
            )

    def close(self) -> None:
        if hasattr(self, "conn"):
            self.conn.close()
        if self._lock is not None:  # after the connection: closing it drops SQLite's locks
            os.close(self._lock)
            self._lock = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def begin_campaign(self, campaign: Campaign) -> None:
        """Record the campaign; a different file under the same name is refused, since
        its finished runs would silently mix with the new ones."""
        row = self.conn.execute(
            "SELECT config FROM campaigns WHERE name = ?", (campaign.name,)
        ).fetchone()
        if row is not None and row[0] != campaign.text:
            raise StoreError(
                f"store {str(self.path)!r} already holds a campaign named {campaign.name!r} "
                f"with a different configuration ({_first_difference(row[0], campaign.text)}); "
                "use another store or another name"
            )
        with self.conn:
            self.conn.execute(
                "INSERT OR IGNORE INTO campaigns VALUES (?, ?, ?, ?)",
                (campaign.name, campaign.description, campaign.text, _now()),
            )

    def finished(self, campaign: str) -> set[str]:
        """Keys of the runs of ``campaign`` already in the store (ok or error); an ok run
        whose instance the store does not hold is not among them: it is made again (a
        hostile-input review found such a run counted as stored for ever, and the report
        refusing the store)."""
        rows = self.conn.execute(
            "SELECT r.key FROM runs r LEFT JOIN instances i ON i.id = r.instance_id "
            "WHERE r.campaign = ? AND (r.status != 'ok' OR i.id IS NOT NULL)",
            (campaign,),
        )
        return {r[0] for r in rows}

    def instance_ids(self, campaign: str) -> dict[tuple[str, int], str]:
        """The instance each finished run of ``campaign`` ran on, by (scenario, seed)."""
        rows = self.conn.execute(
            "SELECT scenario, seed, instance_id FROM runs "
            "WHERE campaign = ? AND instance_id IS NOT NULL",
            (campaign,),
        )
        return {(sc, seed): iid for sc, seed, iid in rows}

    def save(self, rec: RunRecord) -> None:
        """Write one run, all or nothing (a full disk is a :class:`StoreError`, and the
        run is not in the store)."""
        try:
            self._save(rec)
        except sqlite3.Error as exc:
            raise StoreError(
                f"store {str(self.path)!r}: cannot write run {rec.spec.key!r}: {exc}; the runs "
                "written before it are kept, and the campaign resumes from there"
            ) from None

    def _save(self, rec: RunRecord) -> None:
        s = rec.spec
        values = [rec.metrics.get(m) for m in METRICS]
        later = [rec.metrics.get(m) for m in LATER_METRICS]
        with self.conn:
            if rec.instance_id:
                self.conn.execute(
                    "INSERT OR IGNORE INTO instances VALUES (?, ?)",
                    (rec.instance_id, rec.instance_json),
                )
            # a run made again because its instance was lost replaces its old row
            self.conn.execute(
                "DELETE FROM runs WHERE campaign = ? AND key = ?", (s.campaign, s.key)
            )
            self.conn.execute(
                f"INSERT INTO runs VALUES ({', '.join('?' * (14 + len(METRICS) + len(later)))})",
                (
                    s.key,
                    s.campaign,
                    s.scenario.label,
                    s.scenario.generator,
                    s.scenario.params_json,
                    s.policy,
                    s.seed,
                    s.position,
                    rec.status,
                    rec.error,
                    *values,
                    rec.instance_id or None,
                    rec.plan_json or None,
                    rec.worker,
                    _now(),
                    *later,
                ),
            )
            # job rows of a run the store does not hold (its run row deleted by hand)
            # are leftovers: kept, they refused every resume by their unique key
            self.conn.execute(
                "DELETE FROM jobs WHERE campaign = ? AND key = ?", (s.campaign, s.key)
            )
            self.conn.executemany(
                f"INSERT INTO jobs VALUES ({', '.join('?' * (3 + len(JOB_COLUMNS)))})",
                [(s.campaign, s.key, j["job"], *(j.get(c) for c in JOB_COLUMNS)) for j in rec.jobs],
            )

    # -- reading ------------------------------------------------------------------------
    def runs(self, campaign: str | None = None) -> pd.DataFrame:
        """One row per run (without the plan text), in the campaign file's order
        (scenario, seed, policy) whatever order the workers finished them in."""
        cols = "key, campaign, scenario, generator, params, policy, seed, position, status, "
        cols += "error, "
        cols += ", ".join(METRICS) + ", instance_id, worker, finished_at, "
        cols += ", ".join(m if self._later else f"NULL AS {m}" for m in LATER_METRICS)
        sql = f"SELECT {cols} FROM runs"
        args: tuple[str, ...] = ()
        if campaign is not None:
            sql += " WHERE campaign = ?"
            args = (campaign,)
        return self._checked(self._query(sql + " ORDER BY campaign, position", args))

    def _checked(self, runs: pd.DataFrame) -> pd.DataFrame:
        """The runs, refused by name where a cell was edited into what no run writes: a
        metric that is not a number, a seed or position that is not a whole number,
        parameters that are not a JSON object, and what :func:`_consistent` refuses (the
        file may still pass SQLite's own check)."""
        where = f"store {str(self.path)!r}"
        for col in (*METRICS, *LATER_METRICS, "seed", "position"):
            values = runs[col]
            numbers = pd.to_numeric(values, errors="coerce")
            # a run never writes an infinite metric (execute.py stores None instead)
            bad = values.notna() & (numbers.isna() | (numbers.abs() == math.inf))
            if col in ("seed", "position"):
                bad |= numbers.notna() & (numbers != numbers.round())
            if bad.any():
                i = bad.idxmax()
                value = values.tolist()[runs.index.get_loc(i)]  # as plain Python
                what = "a whole number" if col in ("seed", "position") else "a finite number"
                raise StoreError(
                    f"{where}: run {_shown(runs.at[i, 'key'])} has {col} = {_shown(value)}, not "
                    f"{what}: " + DAMAGED
                )
            runs[col] = numbers
        _consistent(runs, where)
        for key, text in zip(runs["key"], runs["params"], strict=True):
            try:
                ok = isinstance(json.loads(text), dict)
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise StoreError(
                    f"{where}: run {_shown(key)} has params = {_shown(text)}, not a JSON object: "
                    + DAMAGED
                )
        return runs

    def jobs(self, campaign: str, key: str) -> pd.DataFrame:
        sql = "SELECT * FROM jobs WHERE campaign = ? AND key = ? ORDER BY rowid"
        return self._query(sql, (campaign, key))

    def campaign_names(self, wanted: str | None = None) -> list[str]:
        """``[wanted]``, or every campaign in the store; a :class:`StoreError` if the store
        holds none, or not ``wanted``."""
        names = list(self.campaigns()["name"])
        if not names:
            raise StoreError(f"store {str(self.path)!r} holds no campaign yet")
        # every run is written after its campaign: a run of another was reported by none
        held = self._query("SELECT DISTINCT campaign FROM runs", ())["campaign"]
        stray = sorted(set(held) - set(names))
        if stray:
            raise StoreError(
                f"store {str(self.path)!r} holds runs of campaign {_shown(stray[0])}, which it "
                f"does not list: {DAMAGED}"
            )
        if wanted is not None and wanted not in names:
            raise StoreError(
                f"store {str(self.path)!r} holds no campaign {wanted!r}; it holds {names}"
            )
        return names if wanted is None else [wanted]

    def campaigns(self) -> pd.DataFrame:
        return self._query("SELECT * FROM campaigns ORDER BY started_at", ())

    def _query(self, sql: str, args: tuple[str, ...]) -> pd.DataFrame:
        try:
            return pd.read_sql_query(sql, self.conn, params=args)
        except (sqlite3.DatabaseError, pd.errors.DatabaseError) as exc:
            raise StoreError(f"store {str(self.path)!r} cannot be read: {exc}") from None

    def plan_of(self, campaign: str, key: str) -> tuple[Instance, Plan]:
        """The instance and the realised plan of one run: a :class:`StoreError` where
        either is missing or damaged, or the plan names what its instance does not hold
        (a job, a node, a GPU, a configuration)."""
        row = self.conn.execute(
            "SELECT r.plan, r.instance_id, i.json FROM runs r "
            "LEFT JOIN instances i ON i.id = r.instance_id "
            "WHERE r.campaign = ? AND r.key = ?",
            (campaign, key),
        ).fetchone()
        if row is None:
            raise KeyError(f"no finished run {key!r} in campaign {campaign!r}")
        where = f"store {str(self.path)!r}: run {_shown(key)}"
        if row[2] is None:  # every stored run's instance is written with it
            raise StoreError(
                f"{where} names instance {_shown(row[1])}, which the store does not hold: {DAMAGED}"
            )
        try:
            inst, plan = instance_from_dict(json.loads(row[2])), plan_from_dict(json.loads(row[0]))
        except (ValueError, TypeError) as exc:  # JSON, InstanceError and PlanError alike
            raise StoreError(
                f"store {str(self.path)!r}: the stored instance or plan of run {_shown(key)} is "
                f"damaged ({exc}); run the campaign into a new store"
            ) from None
        # a realised plan stops its jobs early (incomplete, by the checker): only what
        # makes a segment foreign to the instance is refused
        foreign = [v for v in check_plan(inst, plan) if v.kind in _FOREIGN]
        if foreign:
            raise StoreError(
                f"{where}: its stored plan does not fit its instance ({foreign[0]}): {DAMAGED}"
            )
        return inst, plan


# what the checker finds in a plan whose segments name what its instance does not hold
_FOREIGN = {"unknown-job", "bad-time", "empty-segment", "config-not-allowed", "bad-gpus"}


def _consistent(runs: pd.DataFrame, where: str) -> None:
    """A :class:`StoreError` naming the first run whose row no run writes: a status
    other than ok or error, a metric below 0 (every one counts or costs something, but
    a bound), a count that is not whole, an ok run without its costs or whose total is
    not its energy, carbon and tardiness, or columns that do not make its key (a
    hostile-input review: each was reported as if real)."""

    def refuse(mask: pd.Series, what: str) -> None:
        """``what`` of the first run in ``mask`` (``{c}``: its cell of column ``c``)."""
        if mask.any():
            row = runs.iloc[int(mask.to_numpy().argmax())]
            said = what.format(**{str(c): _shown(v) for c, v in row.items()})
            raise StoreError(f"{where}: run {_shown(row['key'])} {said}: {DAMAGED}")

    status = runs["status"]
    refuse(~status.isin(("ok", "error")), "has status = {status}, not 'ok' or 'error'")
    for col in (*METRICS, *LATER_METRICS):
        if col != "bound":
            refuse(runs[col] < 0, f"has {col} = {{{col}}}, below 0")
    for col in COUNTS:
        value = runs[col]
        refuse(
            value.notna() & (value != value.round()), f"has {col} = {{{col}}}, not a whole count"
        )
    ok = status == "ok"
    for col in ("energy_cost", "tardiness_cost", "total_cost"):
        refuse(ok & runs[col].isna(), f"is ok but has no {col}")
    parts = runs["energy_cost"] + runs["carbon_cost"].fillna(0.0) + runs["tardiness_cost"]
    off = (runs["total_cost"] - parts).abs() > 1e-9 * runs["total_cost"].abs().clip(lower=1.0)
    refuse(
        ok & off,
        "has total_cost = {total_cost}, not its energy_cost {energy_cost} + carbon_cost "
        "{carbon_cost} + tardiness_cost {tardiness_cost}",
    )
    seeds = runs["seed"].astype("Int64").astype(str)
    made = runs["scenario"] + "/" + runs["policy"] + "/seed=" + seeds
    refuse(
        runs["key"] != made,
        "has scenario {scenario}, policy {policy} and seed {seed}, which do not make its key",
    )


def _shown(value: object) -> str:
    """A stored cell as a message shows it: a plain Python value's repr, cut at 80
    characters."""
    item = getattr(value, "item", None)
    text = repr(item() if callable(item) else value)
    return text if len(text) <= 80 else text[:77] + "..."


def _lock(path: Path) -> int:
    """An exclusive lock on the store file for this process's life (released by the
    kernel if it dies): a second campaign process on the store is refused at once."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise StoreError(
            f"store {str(path)!r} is being written by another campaign process; wait for it "
            "to finish (a campaign started again resumes where it stopped) or use another store"
        ) from None
    return fd


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")
