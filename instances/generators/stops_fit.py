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

import math
from dataclasses import dataclass, replace
from functools import cache, cached_property
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from instances.distribution import EpochDistribution
from instances.errors import InstanceError
from instances.fields import is_number
from instances.generators.early_stopping import checkpoints
from instances.generators.histories import STATUSES, History, alibaba_history
from instances.jsonfile import check_numbers, load_json_file
from instances.sums import dot

CLASSES = ("1 GPU", "2+ GPUs")
MIN_CLASS_JOBS = 20  # below this a class borrows the pooled fit of all classes


def gpu_class(gpus: int) -> str:
    return CLASSES[0] if gpus <= 1 else CLASSES[1]


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
    # imported here: scipy.stats takes half a second, and the trace generators (which
    # import this module) only read fits
    from scipy.stats import CensoredData, ecdf

    sf = ecdf(CensoredData(uncensored=hours[event], right=hours[~event])).sf
    return np.asarray(sf.quantiles, float), np.asarray(sf.probabilities, float)


CLASS_FIELDS = (
    "jobs",
    "completion",
    "beyond",
    "plan_hours",
    "plan_mass",
    "stop_hours",
    "stop_survival",
)


def _known_keys(d: dict[str, Any], known: tuple[str, ...], where: str) -> None:
    """A key the reader does not know is refused: a misspelt field would be ignored."""
    for key in d:
        if key not in known:
            path = f"{where}.{key}" if where else str(key)
            raise InstanceError(path, d[key], f"is not a field here (known: {', '.join(known)})")


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
        return min(max(dot(lm, _step_survival(xt, xs, fraction * lt)), 0.0), 1.0)

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
            "beyond": {f"{k / 10:.1f}": round(self.beyond(k / 10), 6) for k in range(1, 10)},
            "plan_hours": list(self.plan_hours),
            "plan_mass": list(self.plan_mass),
            "stop_hours": list(self.stop_hours),
            "stop_survival": list(self.stop_survival),
        }

    @classmethod
    def from_dict(cls, label: str, d: dict[str, Any]) -> ClassFit:
        where = f"classes.{label}"
        if not isinstance(d, dict):
            raise InstanceError(where, type(d).__name__, "is not a stopping fit")
        _known_keys(d, CLASS_FIELDS, where)
        jobs = d.get("jobs")
        if not isinstance(jobs, dict):
            raise InstanceError(f"{where}.jobs", jobs, "must map each status to a count")
        counts = {}
        for status in STATUSES:
            n = jobs.get(status)
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                raise InstanceError(f"{where}.jobs.{status}", n, "must be a count of jobs")
            counts[status] = n
        arrays = {}
        for name in ("plan_hours", "plan_mass", "stop_hours", "stop_survival"):
            values = d.get(name)
            if not isinstance(values, list):
                raise InstanceError(f"{where}.{name}", values, "must be a list of numbers")
            for i, x in enumerate(values):
                ok = is_number(x) and math.isfinite(x)
                if not ok or x < 0 or (name.endswith(("mass", "survival")) and x > 1):
                    raise InstanceError(f"{where}.{name}[{i}]", x, "out of range")
            arrays[name] = tuple(float(x) for x in values)
        out = cls(
            label,
            counts,
            *(arrays[n] for n in ("plan_hours", "plan_mass", "stop_hours", "stop_survival")),
        )
        if len(out.plan_hours) != len(out.plan_mass) or not out.plan_hours:
            raise InstanceError(f"{where}.plan_mass", len(out.plan_mass), "must match plan_hours")
        if len(out.stop_hours) != len(out.stop_survival):
            raise InstanceError(
                f"{where}.stop_survival", len(out.stop_survival), "must match stop_hours"
            )
        # the survival is looked up by a sorted search and read as a step function
        for name, values, rising in (
            ("plan_hours", out.plan_hours, True),
            ("stop_hours", out.stop_hours, True),
            ("stop_survival", out.stop_survival, False),
        ):
            for i in range(1, len(values)):
                bad = values[i] <= values[i - 1] if rising else values[i] > values[i - 1]
                if bad:
                    what = "must increase" if rising else "must not increase"
                    raise InstanceError(f"{where}.{name}[{i}]", values[i], what)
        if out.plan_hours[0] <= 0:
            raise InstanceError(f"{where}.plan_hours[0]", out.plan_hours[0], "must be positive")
        if abs(math.fsum(out.plan_mass) - 1.0) > 1e-6:
            raise InstanceError(f"{where}.plan_mass", math.fsum(out.plan_mass), "must sum to 1")
        out._check_derived(d, where)
        return out

    def _check_derived(self, d: dict[str, Any], where: str) -> None:
        """``completion`` and ``beyond`` are written from the arrays for people to read;
        a file whose figures disagree with its arrays (an edit of one and not the other)
        is refused rather than read by the arrays alone, unseen."""
        shown = {"completion": d.get("completion")}
        beyond = d.get("beyond", {})
        if not isinstance(beyond, dict):
            raise InstanceError(f"{where}.beyond", beyond, "must map fractions to P(F > f)")
        for key, value in beyond.items():
            try:
                fraction = float(key)
            except ValueError:
                raise InstanceError(f"{where}.beyond", key, "is not a fraction") from None
            if not 0 <= fraction < 1:
                raise InstanceError(f"{where}.beyond", key, "is not a fraction in [0, 1)")
            shown[f"beyond.{key}"] = value
        for name, value in shown.items():
            if value is None:
                continue  # optional
            exact = self.completion() if name == "completion" else self.beyond(float(name[7:]))
            if not is_number(value):
                raise InstanceError(f"{where}.{name}", value, "must be a probability")
            if abs(value - exact) > 1e-6:  # written rounded to 6 decimals
                raise InstanceError(
                    f"{where}.{name}", value, f"disagrees with the fit's arrays ({exact:.6f})"
                )


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
        if not isinstance(d, dict):
            raise InstanceError("stopping_fit", type(d).__name__, "must be a JSON object")
        if not isinstance(d.get("classes"), dict):
            # an instance file given as the fit showed "classes = 'dict'", a value that
            # is in no file
            raise InstanceError(
                "classes", d.get("classes"), "must map the job classes (is it a stopping fit?)"
            )
        _known_keys(d, ("source", "method", "classes"), "")
        missing = [c for c in CLASSES if c not in d["classes"]]
        if missing:
            raise InstanceError("classes", sorted(d["classes"]), f"lacks {missing}")
        _known_keys(d["classes"], CLASSES, "classes")
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


@cache
def bundled_fit(running: str = "completed") -> StopsFit:
    """The fit of the whole bundled Alibaba trace, used by the trace generators."""
    return fit_stops(alibaba_history(running))
