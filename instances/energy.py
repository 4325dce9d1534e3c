"""Energy as a bill (docs/model.md, 'Energy prices and carbon'): piecewise-constant
series over time, an energy price series and a carbon-intensity series with its price.

A :class:`Series` holds ``n`` values over ``n`` intervals ``[t_i, t_{i+1})`` that start
at time 0 (hours on the instance's clock); past its end it repeats itself (``after =
"repeat"``, period ``t_n``) or holds its last value (``"hold"``). What a segment pays is
the integral of the series over the hours it runs, computed exactly from the cumulative
integral at the breakpoints (:meth:`Series.integral`): no sampling, no rounding to slots.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from instances.errors import InstanceError
from instances.fields import in_order, is_number, positive
from instances.limits import MAX_CARBON, MAX_HOURS, MAX_PRICE, MAX_SERIES, MIN_SLOT_HOURS

After = Literal["repeat", "hold"]
AFTER: tuple[str, ...] = ("repeat", "hold")


@dataclass(frozen=True)
class Series:
    """A piecewise-constant function of time: ``values[i]`` on ``[times[i], times[i+1])``.

    ``times`` has one entry more than ``values``, starts at 0 and increases (each
    interval at least ``MIN_SLOT_HOURS``); built with :meth:`hourly` (or any ``step``)
    for a regular grid. ``upper`` is the largest value allowed (a price per kWh, or
    grams per kWh), ``what`` names the unit in errors.
    """

    times: tuple[float, ...]
    values: tuple[float, ...]
    after: After = "repeat"
    upper: float = field(default=MAX_PRICE, repr=False, compare=False)
    # derived: cumulative integral at each breakpoint, as arrays for bisection
    _t: np.ndarray = field(init=False, repr=False, compare=False)
    _v: np.ndarray = field(init=False, repr=False, compare=False)
    _cum: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        values = self._checked_values()
        times = self._checked_times(len(values))
        if self.after not in AFTER:
            raise InstanceError("after", self.after, f"must be one of {list(AFTER)}")
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "times", times)
        t = np.asarray(times, dtype=float)
        v = np.asarray(values, dtype=float)
        cum = np.concatenate(([0.0], np.cumsum(np.diff(t) * v)))
        object.__setattr__(self, "_t", t)
        object.__setattr__(self, "_v", v)
        object.__setattr__(self, "_cum", cum)

    def _checked_values(self) -> tuple[float, ...]:
        # a mapping's keys or a set's hash order are not the caller's series
        if not in_order(self.values) or not hasattr(self.values, "__len__"):
            raise InstanceError("values", self.values, "must be a list of numbers, in order")
        if len(self.values) == 0:
            raise InstanceError("values", [], "the series is empty: give at least one value")
        if len(self.values) > MAX_SERIES:
            raise InstanceError(
                "values", len(self.values), f"at most {MAX_SERIES} values (docs/model.md, bounds)"
            )
        return tuple(
            positive(f"values[{i}]", v, allow_zero=True, upper=self.upper)
            for i, v in enumerate(self.values)
        )

    def _checked_times(self, n: int) -> tuple[float, ...]:
        # a mapping's keys or a set's hash order are not the caller's series
        if not in_order(self.times) or not hasattr(self.times, "__len__"):
            raise InstanceError("times", self.times, "must be a list of numbers, in order")
        if len(self.times) != n + 1:
            raise InstanceError(
                "times",
                list(self.times)[:8],
                f"has {len(self.times)} entries: {n} values need {n + 1} breakpoints "
                "(the start of each interval and the end of the last)",
            )
        out: list[float] = []
        for i, t in enumerate(self.times):
            if not is_number(t) or not math.isfinite(t):
                raise InstanceError(f"times[{i}]", t, "must be a finite number of hours")
            if t < 0:
                raise InstanceError(f"times[{i}]", t, "must not be negative (hours from 0)")
            if i == 0 and t != 0:
                raise InstanceError("times[0]", t, "the series starts at time 0")
            # within 1e-9 h of the least interval: i * 0.001 rounds to 0.009000000000000001
            # beside 0.01, and a step of 0.001 is allowed
            if i and (t <= out[-1] or t - out[-1] < MIN_SLOT_HOURS - 1e-9):
                why = "times must increase" if t <= out[-1] else "an interval is too short"
                raise InstanceError(
                    f"times[{i}]",
                    t,
                    f"{why}: at least {MIN_SLOT_HOURS:g} h after the previous ({out[-1]:g})",
                )
            if t > MAX_HOURS:
                raise InstanceError(
                    f"times[{i}]", t, f"must be at most {MAX_HOURS:g} h (docs/model.md, bounds)"
                )
            out.append(float(t))
        return tuple(out)

    # -- constructors ----------------------------------------------------------------------
    @classmethod
    def regular(
        cls, step: Any, values: Any, after: After = "repeat", *, upper: float = MAX_PRICE
    ) -> Series:
        """Values over intervals of ``step`` hours each, from time 0."""
        hours = positive("step", step, upper=MAX_HOURS)
        if hours < MIN_SLOT_HOURS:
            raise InstanceError("step", step, f"must be at least {MIN_SLOT_HOURS:g} h")
        n = len(values) if hasattr(values, "__len__") and not isinstance(values, str) else 0
        if n * hours > MAX_HOURS:
            raise InstanceError(
                "step",
                step,
                f"{n} values of {hours:g} h end after {MAX_HOURS:g} h (docs/model.md, bounds)",
            )
        return cls(tuple(i * hours for i in range(n + 1)), values, after, upper=upper)

    def scaled(self, factor: float) -> Series:
        """Every value times ``factor`` (a solver's change of currency unit), refused
        where one passes the series' bound."""
        values = tuple(v * factor for v in self.values)
        top = max(values, default=0.0)
        if not math.isfinite(top) or top > self.upper:
            raise InstanceError(
                "values", top, f"scaled by {factor:g}, must be at most {self.upper:g}"
            )
        return Series._trusted(self.times, values, self.after)

    @classmethod
    def _trusted(cls, times: tuple[float, ...], values: tuple[float, ...], after: After) -> Series:
        """A series derived from a valid one (values checked, times increasing from 0),
        built without the checks: a shift may leave a first interval shorter than the
        bound on a file's intervals, which is no error."""
        out = object.__new__(cls)
        for name, value in (("times", times), ("values", values), ("after", after)):
            object.__setattr__(out, name, value)
        object.__setattr__(out, "upper", MAX_PRICE)
        t, v = np.asarray(times, dtype=float), np.asarray(values, dtype=float)
        object.__setattr__(out, "_t", t)
        object.__setattr__(out, "_v", v)
        object.__setattr__(out, "_cum", np.concatenate(([0.0], np.cumsum(np.diff(t) * v))))
        return out

    def shifted(self, hours: float) -> Series:
        """The series from ``hours`` on: its value at ``t`` is this one's at ``hours + t``
        (the rolling MILP plans from its own time 0)."""
        if hours <= 0:
            return self
        if self.after == "hold":
            if hours >= self.end:
                return Series._trusted((0.0, 1.0), (self.values[-1],), "hold")
            k = int(np.searchsorted(self._t, hours, side="right")) - 1
            times = (0.0, *(t - hours for t in self.times[k + 1 :]))
            return Series._trusted(times, self.values[k:], "hold")
        h = hours - math.floor(hours / self.end) * self.end
        if h <= 0 or h >= self.end:
            return self
        k = int(np.searchsorted(self._t, h, side="right")) - 1
        end = self.end
        wrapped: list[float] = [0.0, *(t - h for t in self.times[k + 1 :])]
        wrapped += [end - h + t for t in self.times[1 : k + 1]]
        values = [*self.values[k:], *self.values[:k]]
        # the wrapped part of interval k closes the period, unless a shift a hair past
        # its start leaves it no width once rounded (an empty last interval, whose
        # times would not read back: a review of 2026-12-07)
        if h > self.times[k] and wrapped[-1] < end:
            wrapped.append(end)
            values.append(self.values[k])
        return Series._trusted(tuple(wrapped), tuple(values), "repeat")

    def off_grid(self, slot: float, horizon: float) -> list[float]:
        """The times in ``(0, horizon)`` where the value may change off the grid of
        ``slot`` hours (empty: the series is constant within every slot)."""

        def off(times: list[float]) -> list[float]:
            return [t for t in times if abs(t / slot - round(t / slot)) > 1e-9 * max(1.0, t / slot)]

        if self.constant is not None:
            return []
        if self.after != "repeat" or horizon <= self.end:
            return off(self.breakpoints(0.0, horizon))
        # repeating: each period's breakpoints are the first's shifted by whole periods, so
        # with the period's end on the grid they are on it where the first period's are
        # (listing every period's could build millions: a probe, 2026-12-05)
        return off([*self.breakpoints(0.0, self.end), self.end])

    def slot_means(self, slot: float, slots: int) -> tuple[float, ...]:
        """The mean value over each of ``slots`` slots of ``slot`` hours from time 0."""
        edges = np.arange(slots + 1, dtype=float) * slot
        return tuple(float(x) / slot for x in self.integrals(edges))

    @classmethod
    def flat(cls, value: float, *, upper: float = MAX_PRICE) -> Series:
        """One value for ever (one hour, repeated)."""
        return cls((0.0, 1.0), (value,), "repeat", upper=upper)

    # -- facts ---------------------------------------------------------------------------
    @property
    def end(self) -> float:
        """Hours the series covers before its rule ``after`` takes over."""
        return self.times[-1]

    @property
    def values_array(self) -> np.ndarray:
        """The values as a float array (read it, do not write it)."""
        return self._v

    @property
    def step(self) -> float | None:
        """The common length of its intervals, if they are all equal (to 1e-12 h)."""
        # worked out once: STS asks at every profile it bounds under a series
        if "_step" not in self.__dict__:
            widths = np.diff(self._t)
            same = np.allclose(widths, widths[0], rtol=0, atol=1e-12)
            object.__setattr__(self, "_step", float(widths[0]) if same else None)
        found: float | None = self.__dict__["_step"]
        return found

    @property
    def constant(self) -> float | None:
        """Its one value if every value is the same (a flat series), else ``None``."""
        first = self.values[0]
        return first if all(v == first for v in self.values) else None

    def mean(self) -> float:
        """Its time-weighted mean over ``[0, end]``."""
        return float(self._cum[-1] / self.end)

    def at(self, t: float) -> float:
        """The value at time ``t`` (hours): on ``[t_i, t_{i+1})`` the ``i``-th."""
        local = t
        if self.after == "repeat" and t >= self.end:  # the next period starts at its end
            local = t - math.floor(t / self.end) * self.end
        k = int(np.searchsorted(self._t, local, side="right")) - 1
        return float(self._v[min(max(k, 0), len(self.values) - 1)])

    # -- integrals -----------------------------------------------------------------------
    def _fold(self, t: float) -> tuple[float, float]:
        """``t`` as (time within the series, integral of the periods before it): for
        ``repeat``, whole periods folded away; for ``hold``, ``t`` beyond the end stays
        (its integral past the end is the last value's)."""
        end = self.end
        if t <= end or self.after == "hold":
            return t, 0.0
        periods = math.floor(t / end)
        local = t - periods * end
        if local < 0:  # rounding of a huge t
            periods, local = periods - 1, local + end
        return local, periods * float(self._cum[-1])

    def cumulative(self, t: float) -> float:
        """``∫_0^t`` of the series (value·hours); before 0 the first value holds."""
        if t == math.inf:
            # an endless run (a plan that never completes a job, costed unchecked): the
            # integral is unbounded where the series stays above 0 past its end
            total = float(self._cum[-1])
            past = total if self.after == "repeat" else self.values[-1]
            if past > 0:
                return math.inf
            return 0.0 if self.after == "repeat" else total
        local, before = self._fold(t)
        if local <= 0:
            return before + self.values[0] * local
        if local >= self.end:  # only for ``hold`` (or t at the very end)
            return before + float(self._cum[-1]) + self.values[-1] * (local - self.end)
        k = int(np.searchsorted(self._t, local, side="right")) - 1
        return before + float(self._cum[k]) + float(self._v[k]) * (local - float(self._t[k]))

    def integral(self, a: float, b: float) -> float:
        """``∫_a^b`` of the series (value·hours), exact for the piecewise-constant
        function; 0 when ``b <= a``."""
        if b <= a:
            return 0.0
        return self.cumulative(b) - self.cumulative(a)

    def integrals(self, edges: np.ndarray) -> np.ndarray:
        """The integral over each interval between consecutive ``edges`` (increasing)."""
        # np.diff's own subtraction without its wrapper: the same floats, and STS
        # bills every profile it tries here (400,000 calls on one priced contended run)
        cum = self.cumulatives(np.asarray(edges, dtype=float))
        out: np.ndarray = cum[1:] - cum[:-1]
        return out

    def cumulatives(self, ts: np.ndarray) -> np.ndarray:
        """:meth:`cumulative` at each of ``ts`` (finite times: grid edges), in the same
        operations in the same order (so the same floats): STS bills every profile it
        tries this way."""
        end, total = self.end, float(self._cum[-1])
        local = ts.copy()
        before = np.zeros(len(ts))
        if self.after == "repeat":
            wrap = ts > end
            if wrap.any():
                periods = np.floor(ts[wrap] / end)
                folded = ts[wrap] - periods * end
                low = folded < 0  # rounding of a huge t
                periods[low] -= 1
                folded[low] += end
                local[wrap] = folded
                before[wrap] = periods * total
        k = np.searchsorted(self._t, local, side="right") - 1
        k = np.minimum(np.maximum(k, 0), len(self._v) - 1)  # np.clip's, at half its cost
        inside = before + self._cum[k] + self._v[k] * (local - self._t[k])
        first = before + self._v[0] * local
        last = before + total + self._v[-1] * (local - end)
        out: np.ndarray = np.where(local <= 0, first, np.where(local >= end, last, inside))
        return out

    def breakpoints(self, a: float, b: float) -> list[float]:
        """The times in ``(a, b)`` where the value may change (for a grid of slots)."""
        if b <= a:
            return []
        inner = self._t[:-1] if self.after == "repeat" else self._t
        if self.after == "hold":
            return [float(t) for t in inner if a < t < b]
        end = self.end
        first, last = math.floor(a / end), math.floor(b / end)
        if (last - first + 1) * len(inner) > MAX_SERIES:
            raise ValueError(f"{(last - first + 1) * len(inner)} breakpoints in ({a:g}, {b:g})")
        bases = np.arange(first, last + 1, dtype=float)[:, None] * end
        points = (bases + inner[None, :]).ravel()
        return [float(t) for t in points if a < t < b]

    # -- JSON ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """``step`` where the intervals are equal, else ``times``; always ``after``."""
        step = self.step
        if step is not None and all(
            t == i * step for i, t in enumerate(self.times)
        ):  # written as a step only where it reads back to the very same times
            return {"step": step, "values": list(self.values), "after": self.after}
        return {"times": list(self.times), "values": list(self.values), "after": self.after}


def series_from_dict(doc: dict[str, Any], *, upper: float) -> Series:
    """A series from its JSON form: ``step`` (hours) or ``times``, ``values``, ``after``."""
    after = doc.get("after", "repeat")
    if ("step" in doc) == ("times" in doc):
        raise InstanceError(
            "step" if "step" in doc else "times",
            doc.get("step", doc.get("times")),
            "give exactly one of 'step' (hours of every interval) or 'times' (breakpoints)",
        )
    if "step" in doc:
        return Series.regular(doc["step"], doc["values"], after, upper=upper)
    return Series(tuple(doc["times"]), doc["values"], after, upper=upper)


@dataclass(frozen=True)
class Carbon:
    """The grid's carbon intensity over time (g CO2-eq per kWh) and the price of a
    tonne of it (the instance's currency), charged on every kWh as the energy is."""

    intensity: Series
    price: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.intensity, Series):
            raise InstanceError("carbon", self.intensity, "must be a Series")
        # a Series built in code is held to a price's bound: the file's is carbon's
        at_most("carbon", self.intensity.values_array, MAX_CARBON, "g CO2-eq per kWh")
        object.__setattr__(
            self, "price", positive("price", self.price, allow_zero=True, upper=MAX_PRICE)
        )

    @property
    def price_per_gram(self) -> float:
        """Currency per gram (the price is per tonne, 1e6 g)."""
        return self.price / 1e6

    def to_dict(self) -> dict[str, Any]:
        return {**self.intensity.to_dict(), "price": self.price}


def at_most(path: str, values: np.ndarray, upper: float, unit: str) -> None:
    """Every value of a series within the model's bound for it (docs/model.md, bounds):
    a series built in code carries its own ``upper``, which a file's reader sets."""
    over = np.flatnonzero(values > upper)
    if len(over):
        i = int(over[0])
        raise InstanceError(
            f"{path}.values[{i}]", float(values[i]), f"must be at most {upper:g} {unit}"
        )


def carbon_from_dict(doc: dict[str, Any]) -> Carbon:
    series = series_from_dict(doc, upper=MAX_CARBON)
    return Carbon(series, doc.get("price", 0.0))
