"""Past jobs to fit early stopping on (``gpusched fit-stops``): the bundled Alibaba
trace, or a CSV history of one's own.

A history file is read as a stream (``instances/files.py``): plain or gzip by content,
any line ends (LF, CRLF, CR alone, mixed), at most ``MAX_FILE_BYTES`` of text and
``MAX_HISTORY_JOBS`` rows. Every fault is refused naming the file or the row: a byte
that is not UTF-8, a field longer than the csv module's limit, a corrupt or truncated
gzip body, a cell that is not what its column holds.
"""

from __future__ import annotations

import csv
import math
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from instances.errors import InstanceError
from instances.files import open_text
from instances.generators.realdata import bundled_rows
from instances.limits import MAX_GPUS_PER_NODE, MAX_HISTORY_JOBS, MAX_HOURS, MAX_NODES

STATUSES = ("complete", "stopped", "censored")
# The words traces use for how a job ended (Philly's Pass / Killed / Failed, Kubernetes
# pod phases, Helios' states), read as one of STATUSES.
STATUS_WORDS = {
    "complete": "complete",
    "completed": "complete",
    "pass": "complete",
    "succeeded": "complete",
    "stopped": "stopped",
    "killed": "stopped",
    "cancelled": "stopped",
    "failed": "stopped",
    "censored": "censored",
    "running": "censored",
}
# How an Alibaba pod deleted while its phase still read Running is read: as a job that
# ran to its end (the trace's simulator takes the deletion as the normal end), or as a
# job killed early. docs/model.md gives the figures of both.
RUNNING_READINGS = ("completed", "stopped")
COLUMNS = ("hours", "status", "gpus")  # a history CSV's columns; ``created`` for a window
MAX_JOB_GPUS = MAX_GPUS_PER_NODE * MAX_NODES  # more than the largest cluster allowed
MAX_LINE_CHARS = 1 << 20  # a history's row holds a few numbers and words


@dataclass(frozen=True)
class History:
    """Past jobs: run time (hours), how each ended, GPUs. ``source`` names the trace."""

    hours: np.ndarray
    status: np.ndarray  # of STATUSES
    gpus: np.ndarray
    source: str

    def __post_init__(self) -> None:
        n = len(self.hours)
        if not len(self.status) == len(self.gpus) == n:
            raise InstanceError("history", n, "hours, status and gpus differ in length")
        for i, h in enumerate(self.hours):
            if not math.isfinite(h) or h <= 0:
                raise InstanceError(f"rows[{i}].hours", float(h), "must be a positive number")
        for i, s in enumerate(self.status):
            if s not in STATUSES:
                raise InstanceError(f"rows[{i}].status", s, f"must be one of {STATUSES}")
        for i, g in enumerate(self.gpus):
            if g < 1:
                raise InstanceError(f"rows[{i}].gpus", int(g), "must be at least 1")

    def where(self, keep: np.ndarray, source: str) -> History:
        return History(self.hours[keep], self.status[keep], self.gpus[keep], source)


def alibaba_pods() -> list[dict[str, str]]:
    """The bundled Alibaba GPU pods (docs: instances/data/README.md)."""
    return bundled_rows("alibaba_openb_gpu_pods.csv.gz")


def alibaba_runs(pods: list[dict[str, str]]) -> list[tuple[dict[str, str], float]]:
    """The pods that ran, each with its run time in hours (scheduled to deleted): the
    pods never scheduled, and the few deleted at their scheduling, have no run."""
    out = []
    for r in pods:
        if r["scheduled_time"] == "":
            continue
        hours = (float(r["deletion_time"]) - float(r["scheduled_time"])) / 3600.0
        if hours > 0:
            out.append((r, hours))
    return out


def check_recent(recent: float | None) -> None:
    """``recent`` (hours of history to fit, counted back from its last job) must be a
    positive number where given."""
    if recent is not None and not (math.isfinite(recent) and recent > 0):
        raise InstanceError("recent", recent, "must be a positive number of hours")


def alibaba_history(
    running: str = "completed",
    pods: list[dict[str, str]] | None = None,
    recent: float | None = None,
) -> History:
    """The Alibaba pods that ran: a pod deleted within an hour of the trace's last
    deletion is censored; ``Failed`` stopped early; ``Succeeded`` completed; a pod
    deleted while ``Running`` as ``running`` says. Pending pods never ran. ``recent``:
    only the pods created in that many hours before the last creation (a sliding
    window: docs/model.md measures its regret); the censoring still reads the end of
    the whole trace."""
    if running not in RUNNING_READINGS:
        raise InstanceError("running", running, f"must be one of {RUNNING_READINGS}")
    check_recent(recent)
    rows = [r for r in (pods or alibaba_pods()) if r["scheduled_time"] != ""]
    end = max(float(r["deletion_time"]) for r in rows)
    if recent is not None:
        last = max(float(r["creation_time"]) for r in rows)
        rows = [r for r in rows if float(r["creation_time"]) >= last - 3600.0 * recent]
    hours, status, gpus = [], [], []
    for r, h in alibaba_runs(rows):
        if float(r["deletion_time"]) >= end - 3600.0:
            s = "censored"
        elif r["pod_phase"] == "Running":
            s = "complete" if running == "completed" else "stopped"
        else:
            s = STATUS_WORDS[r["pod_phase"].lower()]
        hours.append(h)
        status.append(s)
        gpus.append(int(r["num_gpu"]))
    window = "" if recent is None else f", last {recent:g} h"
    return History(
        np.array(hours), np.array(status), np.array(gpus), f"alibaba (running={running}{window})"
    )


@dataclass
class _Columns:
    """A history's columns as they are read: compact arrays, not a dict per row (a
    history may hold millions)."""

    hours: array[float]
    status: array[int]  # index into STATUSES
    gpus: array[int]
    created: array[float] | None  # when the file has a column ``created``


def csv_history(path: str | Path, recent: float | None = None) -> History:
    """A history file of one's own: CSV with columns ``hours``, ``status`` (complete,
    stopped, censored, or Pass / Killed / Failed / Succeeded / Running) and ``gpus``.
    ``recent``: only the jobs created in that many hours before the last one, read from
    a column ``created`` (hours, from any origin). Every row is checked, with the
    file's row numbers, before a window drops any."""
    check_recent(recent)
    p = Path(path)
    with open_text(p, "history", "trace", errors="surrogateescape") as text:
        cols = _read_rows(csv.reader(_lines(text)), str(path), recent is not None)
    statuses = np.array(STATUSES, dtype=object)  # one str object per status, not per row
    hist = History(
        np.frombuffer(cols.hours, float),
        statuses[np.frombuffer(cols.status, np.int8)],
        np.frombuffer(cols.gpus, np.int64),
        p.name,
    )
    if recent is None or cols.created is None:  # the second: never, with recent
        return hist
    created = np.frombuffer(cols.created, float)
    return hist.where(created >= created.max() - recent, f"{p.name} (last {recent:g} h)")


def _read_rows(reader: Any, path: str, windowed: bool) -> _Columns:
    """The rows of ``reader`` (the header first) as columns, each row checked."""
    i = -1  # the data row being read: -1, the header (blank lines are no rows)
    try:
        header = [h.strip() for h in next(reader, [])]
        i = 0
        if not set(COLUMNS) <= set(header):
            raise InstanceError("trace", path, f"needs CSV columns {', '.join(COLUMNS)}")
        twice = sorted({h for h in header if header.count(h) > 1 and h in (*COLUMNS, "created")})
        if twice:  # which of the two is meant is not ours to guess (a hostile-input hunt)
            raise InstanceError("trace", path, f"has the CSV column {twice[0]} twice")
        if windowed and "created" not in header:
            raise InstanceError("trace", path, "needs a CSV column created (hours) for --recent")
        at = {c: header.index(c) for c in (*COLUMNS, "created") if c in header}
        # creation times are read (and checked) only for a window
        created = array("d") if windowed else None
        cols = _Columns(array("d"), array("b"), array("q"), created)
        for row in reader:
            if not row:
                continue
            if i >= MAX_HISTORY_JOBS:
                raise InstanceError("trace", path, f"has over {MAX_HISTORY_JOBS:,} jobs")
            _add_row(cols, i, row, at, len(header))
            i += 1
    except _NotUtf8 as exc:
        reason = f"not UTF-8 text: byte {exc.byte:#04x} (line {reader.line_num + 1})"
        raise InstanceError(_row(i), path, reason) from None
    except _LongLine:
        reason = f"a line longer than {MAX_LINE_CHARS:,} characters (line {reader.line_num + 1})"
        raise InstanceError(_row(i), path, reason) from None
    except csv.Error as exc:
        line = f"line {reader.line_num}"
        if "field larger than field limit" in str(exc):
            reason = f"a field longer than {csv.field_size_limit():,} characters ({line})"
        else:
            reason = f"not CSV: {exc} ({line})"
        raise InstanceError(_row(i), path, reason) from None
    return cols


# What a CSV number is to spreadsheets and pandas: Python's own readers also take
# ``1_0`` (as 10) and digits of other scripts, which no other tool reads so
_DECIMAL = {
    float: re.compile(
        r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*|\s*[+-]?(inf|nan)\s*", re.A | re.I
    ),
    int: re.compile(r"\s*[+-]?\d+\s*", re.A),
}


def _decimal(text: str, kind: type[float] | type[int]) -> Any:
    if not _DECIMAL[kind].fullmatch(text):
        raise ValueError(text)
    return kind(text)


def _row(i: int) -> str:
    return "trace" if i < 0 else f"rows[{i}]"


class _LongLine(Exception):
    pass


class _NotUtf8(Exception):
    def __init__(self, byte: int) -> None:
        self.byte = byte


# the characters a byte that is not UTF-8 decodes to under errors="surrogateescape"
_ESCAPED = re.compile("[\udc80-\udcff]")


def _lines(text: TextIO) -> Iterator[str]:
    """The text's lines, none longer than ``MAX_LINE_CHARS`` (a file iterator would
    read a line of gigabytes whole before the csv module could refuse its field), and
    none holding a byte that is not UTF-8 (found by line: the decoder reads ahead)."""
    while line := text.readline(MAX_LINE_CHARS + 1):
        if len(line) > MAX_LINE_CHARS:
            raise _LongLine
        bad = _ESCAPED.search(line)
        if bad:
            raise _NotUtf8(ord(bad.group()) - 0xDC00)
        yield line


def _add_row(cols: _Columns, i: int, row: list[str], at: dict[str, int], width: int) -> None:
    """Row ``i``'s cells appended to ``cols``, or refused naming the row and column."""
    if len(row) > width:
        extra = ",".join(row[width:])
        raise InstanceError(f"rows[{i}]", extra, f"fields past the header's {width} columns")
    cell = {c: row[k] if k < len(row) else "" for c, k in at.items()}
    try:
        h, g = _decimal(cell["hours"], float), _decimal(cell["gpus"], int)
    except ValueError:  # not a number, or an integer of thousands of digits
        shown = f"{cell['hours'][:40]},{cell['gpus'][:40]}"
        raise InstanceError(f"rows[{i}]", shown, "hours and gpus must be numbers") from None
    if not (math.isfinite(h) and 0 < h <= MAX_HOURS):
        raise InstanceError(
            f"rows[{i}].hours", h, f"must be a number of hours in (0, {MAX_HOURS:g}]"
        )
    if not 1 <= g <= MAX_JOB_GPUS:
        raise InstanceError(f"rows[{i}].gpus", g, f"must be from 1 to {MAX_JOB_GPUS:,}")
    word = cell["status"].strip().lower()
    if word not in STATUS_WORDS:
        raise InstanceError(
            f"rows[{i}].status", cell["status"], f"must be one of {sorted(STATUS_WORDS)}"
        )
    if cols.created is not None:
        try:
            c = _decimal(cell["created"], float)
        except ValueError:
            c = math.nan
        if not math.isfinite(c):
            raise InstanceError(f"rows[{i}].created", cell["created"], "must be a number of hours")
        cols.created.append(c)
    cols.hours.append(h)
    cols.status.append(STATUSES.index(STATUS_WORDS[word]))
    cols.gpus.append(g)
