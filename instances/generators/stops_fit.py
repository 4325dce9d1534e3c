"""Early-stopping distributions fitted from a trace's history (``gpusched fit-stops``).

A trace records how long each past job ran and how it ended: it completed (ran to the
end it was planned for), it stopped early (killed by its user, or failed), or it was
still running when the trace was cut (right-censored). An instance needs the
distribution of ``F``, the fraction of its maximum epochs a job really runs.

We read the two as competing risks on one clock, per job class (by GPU count): a job has
a planned length ``L`` and a stopping time ``X``, independent; it runs ``min(L, X)`` and
completes iff ``L <= X``. Kaplan-Meier estimates (``scipy.stats.ecdf`` on censored data)
give ``L``'s distribution, with the stopped and the censored jobs censored, and ``X``'s
survival, with the completed and the censored ones censored. Then, for ``0 <= f < 1``,

    P(F > f) = P(X > f L) = sum over l of P(L = l) S_X(f l).

Where ``L``'s estimate does not fall to zero (the longest runs never completed), the mass
left is put at the class's longest run: the longest plan the data can show. A job stops
at the first validation checkpoint at or after its stopping fraction, so checkpoint
``c_b`` of ``E`` epochs gets ``P(c_{b-1}/E < F <= c_b/E)`` and the last one the rest.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
from dataclasses import dataclass, replace
from functools import cache, cached_property
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import CensoredData, ecdf

from instances.distribution import EpochDistribution
from instances.errors import InstanceError
from instances.generators.early_stopping import checkpoints
from instances.generators.realdata import bundled_rows
from instances.io import check_numbers, load_json_file

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
CLASSES = ("1 GPU", "2+ GPUs")
MIN_CLASS_JOBS = 20  # below this a class borrows the pooled fit of all classes
# How an Alibaba pod deleted while its phase still read Running is read: as a job that
# ran to its end (the trace's simulator takes the deletion as the normal end), or as a
# job killed early. docs/model.md gives the figures of both.
RUNNING_READINGS = ("completed", "stopped")


def gpu_class(gpus: int) -> str:
    return CLASSES[0] if gpus <= 1 else CLASSES[1]


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


def _step_survival(times: np.ndarray, survival: np.ndarray, t: np.ndarray) -> np.ndarray:
    """A right-continuous Kaplan-Meier survival ``P(T > t)`` at ``t``."""
    if not len(times):  # no event: nothing ever ends this way
        return np.ones_like(t, dtype=float)
    idx = np.searchsorted(times, t, side="right") - 1
    return np.where(idx < 0, 1.0, survival[np.clip(idx, 0, None)])


def _km(hours: np.ndarray, event: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kaplan-Meier ``(times, P(T > time))`` at the times the estimate changes."""
    if not event.any():
        return np.zeros(0), np.zeros(0)
    sf = ecdf(CensoredData(uncensored=hours[event], right=hours[~event])).sf
    return np.asarray(sf.quantiles, float), np.asarray(sf.probabilities, float)


@dataclass(frozen=True)
class ClassFit:
    """One class's fit: ``L``'s probability mass and ``X``'s survival steps."""

    label: str
    counts: dict[str, int]
    plan_hours: tuple[float, ...]
    plan_mass: tuple[float, ...]
    stop_hours: tuple[float, ...]
    stop_survival: tuple[float, ...]

    @classmethod
    def fit(cls, label: str, hist: History) -> ClassFit:
        hours = np.asarray(hist.hours, float)
        done, stopped = hist.status == "complete", hist.status == "stopped"
        lt, ls = _km(hours, done)
        mass = -np.diff(np.concatenate([[1.0], ls]))
        keep = mass > 0
        lt, mass = lt[keep], mass[keep]
        tail = 1.0 - float(mass.sum())
        if tail > 1e-12:  # the longest plans were never seen to end
            lt = np.append(lt, hours.max())
            mass = np.append(mass, tail)
        xt, xs = _km(hours, stopped)
        counts = {s: int((hist.status == s).sum()) for s in STATUSES}
        return cls(label, counts, tuple(lt), tuple(mass), tuple(xt), tuple(xs))

    @cached_property
    def _arrays(self) -> tuple[np.ndarray, ...]:
        return tuple(
            np.asarray(a, float)
            for a in (self.plan_hours, self.plan_mass, self.stop_hours, self.stop_survival)
        )

    @cached_property
    def _made(self) -> dict[tuple[int, int], EpochDistribution]:
        return {}  # a trace's jobs share few (epochs, blocks) pairs

    def beyond(self, fraction: float) -> float:
        """``P(F > fraction)``, for a fraction in ``[0, 1)``: the job runs past it."""
        if fraction < 0:
            return 1.0
        lt, lm, xt, xs = self._arrays
        return float(np.clip(np.dot(lm, _step_survival(xt, xs, fraction * lt)), 0.0, 1.0))

    def completion(self) -> float:
        """``P(F = 1)``: the job runs to its planned end."""
        return self.beyond(1.0 - 1e-12)

    def distribution(self, max_epochs: int, blocks: int) -> EpochDistribution:
        """The fit on ``blocks`` checkpoints of a job with ``max_epochs`` epochs."""
        known = self._made.get((max_epochs, blocks))
        if known is None:
            known = self._made[(max_epochs, blocks)] = self._distribution(max_epochs, blocks)
        return known

    def _distribution(self, max_epochs: int, blocks: int) -> EpochDistribution:
        stops = checkpoints(max_epochs, blocks)
        above = [self.beyond(s / max_epochs) for s in stops[:-1]]
        probs = [1.0 - above[0]] if above else []
        probs += [a - b for a, b in pairwise(above)]
        # the last checkpoint takes the rest; a class that never completed would give it
        # nothing, and E must keep mass to stay the job's maximum (docs/model.md)
        probs.append(above[-1] if above else 1.0)
        probs = [max(p, 0.0) for p in probs]
        probs[-1] = max(probs[-1], 1e-6)
        total = math.fsum(probs)
        return EpochDistribution(stops, tuple(p / total for p in probs))

    def to_dict(self) -> dict[str, Any]:
        return {
            "jobs": self.counts,
            "completion": round(self.completion(), 6),
            "beyond": {f"{f:.1f}": round(self.beyond(f), 6) for f in np.arange(0.1, 1.0, 0.1)},
            "plan_hours": list(self.plan_hours),
            "plan_mass": list(self.plan_mass),
            "stop_hours": list(self.stop_hours),
            "stop_survival": list(self.stop_survival),
        }

    @classmethod
    def from_dict(cls, label: str, d: dict[str, Any]) -> ClassFit:
        try:
            out = cls(
                label,
                {s: int(d["jobs"][s]) for s in STATUSES},
                tuple(float(x) for x in d["plan_hours"]),
                tuple(float(x) for x in d["plan_mass"]),
                tuple(float(x) for x in d["stop_hours"]),
                tuple(float(x) for x in d["stop_survival"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InstanceError(f"classes.{label}", str(exc), "is not a stopping fit") from None
        if len(out.plan_hours) != len(out.plan_mass) or not out.plan_hours:
            raise InstanceError(
                f"classes.{label}.plan_mass", len(out.plan_mass), "must match plan_hours"
            )
        if len(out.stop_hours) != len(out.stop_survival):
            raise InstanceError(
                f"classes.{label}.stop_survival", len(out.stop_survival), "must match stop_hours"
            )
        for name in ("plan_hours", "plan_mass", "stop_hours", "stop_survival"):
            for i, x in enumerate(getattr(out, name)):
                if not math.isfinite(x) or x < 0 or (name.endswith(("mass", "survival")) and x > 1):
                    raise InstanceError(f"classes.{label}.{name}[{i}]", x, "out of range")
        if abs(math.fsum(out.plan_mass) - 1.0) > 1e-6:
            raise InstanceError(
                f"classes.{label}.plan_mass", math.fsum(out.plan_mass), "must sum to 1"
            )
        return out


@dataclass(frozen=True)
class StopsFit:
    """A trace's fit, per GPU class (a class with too few jobs has the pooled fit)."""

    source: str
    classes: dict[str, ClassFit]

    def for_gpus(self, gpus: int) -> ClassFit:
        return self.classes[gpu_class(gpus)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "method": "competing risks, Kaplan-Meier (docs/model.md, early stopping fitted)",
            "classes": {k: v.to_dict() for k, v in self.classes.items()},
        }

    @classmethod
    def from_dict(cls, d: Any) -> StopsFit:
        check_numbers(d)  # NaN, 1e400, a 400-digit integer: refused by their path
        if not isinstance(d, dict) or not isinstance(d.get("classes"), dict):
            raise InstanceError("classes", type(d).__name__, "a stopping fit has a 'classes' map")
        missing = [c for c in CLASSES if c not in d["classes"]]
        if missing:
            raise InstanceError("classes", sorted(d["classes"]), f"lacks {missing}")
        return cls(
            str(d.get("source", "")),
            {c: ClassFit.from_dict(c, d["classes"][c]) for c in CLASSES},
        )


def read_fit(path: str | Path) -> StopsFit:
    """A fit written by ``gpusched fit-stops --out`` (``.json`` or ``.json.gz``); a
    broken file is refused naming the field."""
    return StopsFit.from_dict(load_json_file(path, "stopping fit"))


def fit_stops(hist: History) -> StopsFit:
    """Fit each GPU class of ``hist`` (docs/model.md, "Early stopping fitted")."""
    if len(hist.hours) == 0:
        raise InstanceError("history", 0, "has no jobs to fit")
    if not (hist.status == "complete").any():
        raise InstanceError(
            "history", hist.source, "no job completed: the plans' lengths are unknown"
        )
    pooled = ClassFit.fit("all", hist)
    classes = {}
    for label in CLASSES:
        keep = np.array([gpu_class(int(g)) == label for g in hist.gpus], dtype=bool)
        sub = hist.where(keep, hist.source)
        if keep.sum() >= MIN_CLASS_JOBS and (sub.status == "complete").any():
            classes[label] = ClassFit.fit(label, sub)
        else:
            classes[label] = replace(pooled, label=label)
    return StopsFit(hist.source, classes)


# -- histories ---------------------------------------------------------------------------
def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


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


def csv_history(path: str | Path, recent: float | None = None) -> History:
    """A history file of one's own: CSV with columns ``hours``, ``status`` (complete,
    stopped, censored, or Pass / Killed / Failed / Succeeded / Running) and ``gpus``.
    ``recent``: only the jobs created in that many hours before the last one, read from
    a column ``created`` (hours, from any origin)."""
    check_recent(recent)
    p = Path(path)
    try:
        raw = p.read_bytes()
        text = (gzip.decompress(raw) if p.name.endswith(".gz") else raw).decode()
    except (OSError, UnicodeDecodeError, gzip.BadGzipFile, EOFError) as exc:
        raise InstanceError("trace", str(path), f"cannot be read: {exc}") from None
    rows = _rows(text)
    if not rows or not {"hours", "status", "gpus"} <= set(rows[0]):
        raise InstanceError("trace", str(path), "needs CSV columns hours, status, gpus")
    hours, status, gpus = [], [], []
    width = len(rows[0]) - (None in rows[0])
    for i, r in enumerate(rows):
        if None in r:  # csv puts a row's fields past the header's under None
            extra = ",".join(r[None])  # type: ignore[index]
            raise InstanceError(f"rows[{i}]", extra, f"fields past the header's {width} columns")
        try:
            h, g = float(r["hours"]), int(r["gpus"])
        except (TypeError, ValueError):
            raise InstanceError(
                f"rows[{i}]", f"{r['hours']},{r['gpus']}", "hours and gpus must be numbers"
            ) from None
        word = (r["status"] or "").strip().lower()
        if word not in STATUS_WORDS:
            raise InstanceError(
                f"rows[{i}].status", r["status"], f"must be one of {sorted(STATUS_WORDS)}"
            )
        hours.append(h)
        status.append(STATUS_WORDS[word])
        gpus.append(g)
    # every row is checked, with the file's row numbers, before a window drops any
    hist = History(np.array(hours, float), np.array(status), np.array(gpus), p.name)
    if recent is None:
        return hist
    created = np.array(_created(rows, str(path)))
    return hist.where(created >= created.max() - recent, f"{p.name} (last {recent:g} h)")


def _created(rows: list[dict[str, str]], path: str) -> list[float]:
    """Each row's creation time (hours), from the column ``created``."""
    if "created" not in rows[0]:
        raise InstanceError("trace", path, "needs a CSV column created (hours) for --recent")
    out = []
    for i, r in enumerate(rows):
        try:
            c = float(r["created"])
        except (TypeError, ValueError):
            c = math.nan
        if not math.isfinite(c):
            raise InstanceError(f"rows[{i}].created", r["created"], "must be a number of hours")
        out.append(c)
    return out


@cache
def bundled_fit(running: str = "completed") -> StopsFit:
    """The fit of the whole bundled Alibaba trace, used by the trace generators."""
    return fit_stops(alibaba_history(running))
