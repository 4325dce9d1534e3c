"""The results store: one SQLite file per campaign (or several campaigns).

Each finished run is written in one transaction (its metrics, its jobs, its plan and,
once, its instance), so a campaign killed at any moment leaves only whole runs behind,
and a restart skips exactly those. Only the campaign's own process writes.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from experiments.campaign import Campaign
from experiments.execute import RunRecord
from instances import Instance, Plan
from instances.io import instance_from_dict, plan_from_dict

# every metric a run may report; absent ones (e.g. utilisation of a bound) stay NULL
METRICS = (
    "energy_cost",
    "tardiness_cost",
    "total_cost",
    "energy_kwh",
    "missed",
    "jobs",
    "utilisation",
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
]


class StoreError(RuntimeError):
    """The store file cannot be used (not SQLite, or from an incompatible version)."""


class Store:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.conn = sqlite3.connect(self.path)
            self.conn.execute("PRAGMA journal_mode=WAL")  # readers (reports) while writing
            self.conn.executescript(_SCHEMA)
            found = [r[1] for r in self.conn.execute("PRAGMA table_info(runs)")]
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"store {str(path)!r} is not a gpusched results store: {exc}"
            ) from None
        if found != _RUN_COLUMNS:
            self.conn.close()
            raise StoreError(
                f"store {str(path)!r} was written by another version of gpusched (its runs "
                f"table has columns {found}); use a new store file"
            )

    def close(self) -> None:
        self.conn.close()

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
                "with a different configuration; use another store or another name"
            )
        with self.conn:
            self.conn.execute(
                "INSERT OR IGNORE INTO campaigns VALUES (?, ?, ?, ?)",
                (campaign.name, campaign.description, campaign.text, _now()),
            )

    def finished(self, campaign: str) -> set[str]:
        """Keys of the runs of ``campaign`` already in the store (ok or error)."""
        rows = self.conn.execute("SELECT key FROM runs WHERE campaign = ?", (campaign,))
        return {r[0] for r in rows}

    def save(self, rec: RunRecord) -> None:
        """Write one run, all or nothing."""
        s = rec.spec
        values = [rec.metrics.get(m) for m in METRICS]
        with self.conn:
            if rec.instance_id:
                self.conn.execute(
                    "INSERT OR IGNORE INTO instances VALUES (?, ?)",
                    (rec.instance_id, rec.instance_json),
                )
            self.conn.execute(
                f"INSERT INTO runs VALUES ({', '.join('?' * (14 + len(METRICS)))})",
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
                ),
            )
            self.conn.executemany(
                f"INSERT INTO jobs VALUES ({', '.join('?' * (3 + len(JOB_COLUMNS)))})",
                [(s.campaign, s.key, j["job"], *(j.get(c) for c in JOB_COLUMNS)) for j in rec.jobs],
            )

    # -- reading ------------------------------------------------------------------------
    def runs(self, campaign: str | None = None) -> pd.DataFrame:
        """One row per run (without the plan text), in the campaign file's order
        (scenario, seed, policy) whatever order the workers finished them in."""
        cols = "key, campaign, scenario, generator, params, policy, seed, status, error, "
        cols += ", ".join(METRICS) + ", instance_id, worker, finished_at"
        sql = f"SELECT {cols} FROM runs"
        args: tuple[str, ...] = ()
        if campaign is not None:
            sql += " WHERE campaign = ?"
            args = (campaign,)
        return pd.read_sql_query(sql + " ORDER BY campaign, position", self.conn, params=args)

    def jobs(self, campaign: str, key: str) -> pd.DataFrame:
        return pd.read_sql_query(
            "SELECT * FROM jobs WHERE campaign = ? AND key = ? ORDER BY rowid",
            self.conn,
            params=(campaign, key),
        )

    def campaigns(self) -> pd.DataFrame:
        return pd.read_sql_query("SELECT * FROM campaigns ORDER BY started_at", self.conn)

    def plan_of(self, campaign: str, key: str) -> tuple[Instance, Plan]:
        """The instance and the realised plan of one run."""
        row = self.conn.execute(
            "SELECT r.plan, i.json FROM runs r JOIN instances i ON i.id = r.instance_id "
            "WHERE r.campaign = ? AND r.key = ?",
            (campaign, key),
        ).fetchone()
        if row is None:
            raise KeyError(f"no finished run {key!r} in campaign {campaign!r}")
        return instance_from_dict(json.loads(row[1])), plan_from_dict(json.loads(row[0]))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")
