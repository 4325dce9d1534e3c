"""Early-stopping distributions of the number of epochs a job really runs.

A job may stop only at validation checkpoints ``e_1 < e_2 < ... < e_B = E`` (epochs);
``P(N = e_b)`` is given. With ``S(w) = P(N > w)`` constant on each block
``(e_{b-1}, e_b]`` and equal to ``q_b = P(N >= e_b)``, the expected energy of epochs
``[w0, w1)`` run at ``e`` kWh per epoch is ``e * (Phi(w1) - Phi(w0))`` with
``Phi(w) = integral_0^w S(u) du`` (docs/model.md, 'Early stopping').
"""

from __future__ import annotations

import functools
import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np

from instances.errors import InstanceError
from instances.fields import numbers_in
from instances.limits import MAX_EPOCHS, MAX_STOPS

GIVEN_CACHE = 64  # conditional distributions kept per distribution

# Progress within this many epochs of a stopping point (relative to the stop, absolute
# below one epoch) is at it: progress is summed from segment lengths in hours, so a job
# planned to stop at 2 epochs may show 1.9999999999999996. The evaluator, the Monte
# Carlo replay, the engine and the checker all read progress against the stops through
# :func:`reaches` and the methods below, so a job is never at a stop for one of them
# and short of it for another. At 1e-9 the tolerance is above the rounding of a sum of
# segments (1e-16 relative per segment) and below the shortest block for any stop
# under 1e6 epochs (``MIN_BLOCK_EPOCHS``).
STOP_TOL = 1e-9


def stop_tolerance(stop: float) -> float:
    """Epochs within which progress is at ``stop``."""
    return STOP_TOL * max(1.0, stop)


def reaches(progress: float, stop: float) -> bool:
    """Whether ``progress`` epochs have reached the stopping point ``stop``."""
    return progress >= stop - stop_tolerance(stop)


@dataclass(frozen=True)
class EpochDistribution:
    """PMF of the number of epochs ``N`` on stopping points (epochs, increasing).

    The last stopping point is the job's maximum epochs ``E``.
    """

    stops: tuple[float, ...]
    probabilities: tuple[float, ...]
    # Precomputed lookups (not part of equality or of the JSON form).
    _q: tuple[float, ...] = field(init=False, repr=False, compare=False)
    _phi_at_stop: tuple[float, ...] = field(init=False, repr=False, compare=False)
    _lengths: tuple[float, ...] = field(init=False, repr=False, compare=False)
    # conditional distributions already computed, by progress: a policy asks for a
    # job's twice per decision, and again at every decision while the job waits
    _given: dict[float, EpochDistribution] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        stops = numbers_in("stops", self.stops)
        probs = numbers_in("probabilities", self.probabilities)
        object.__setattr__(self, "stops", stops)
        object.__setattr__(self, "probabilities", probs)
        if not stops:
            raise InstanceError("stops", stops, "needs at least one stopping point")
        if len(stops) > MAX_STOPS:
            raise InstanceError("stops", len(stops), f"at most {MAX_STOPS} stopping points")
        if len(stops) != len(probs):
            raise InstanceError(
                "probabilities",
                probs,
                f"has {len(probs)} entries but there are {len(stops)} stopping points",
            )
        for i, s in enumerate(stops):
            if not math.isfinite(s) or s <= 0:
                raise InstanceError(f"stops[{i}]", s, "must be a positive number of epochs")
            if s > MAX_EPOCHS:
                raise InstanceError(
                    f"stops[{i}]",
                    s,
                    f"must be at most {MAX_EPOCHS:g} epochs (docs/model.md, bounds)",
                )
            if i and s <= stops[i - 1]:
                raise InstanceError(
                    f"stops[{i}]", s, f"stopping points must increase (previous is {stops[i - 1]})"
                )
            before = stops[i - 1] if i else 0.0
            if reaches(before, s):
                # progress at the previous stop (or at 0) would already be at this one: a
                # job would be complete before it runs, or pass two stops as one, and the
                # evaluator and the checker would read it differently
                raise InstanceError(
                    f"stops[{i}]",
                    s,
                    f"must be more than {stop_tolerance(s):g} epochs after the previous "
                    f"stopping point (or 0), which already reaches it",
                )
        for i, p in enumerate(probs):
            if not math.isfinite(p) or p < 0 or p > 1:
                raise InstanceError(f"probabilities[{i}]", p, "must lie in [0, 1]")
        total = math.fsum(probs)
        if abs(total - 1.0) > 1e-6:
            raise InstanceError("probabilities", probs, f"must sum to 1 (they sum to {total:.9g})")
        if probs[-1] <= 0:
            # Zero mass at E would make E unreachable: E must be the largest stop with mass,
            # otherwise the maximum epochs is not what the file says.
            raise InstanceError(
                f"probabilities[{len(probs) - 1}]",
                probs[-1],
                "the last stopping point is the maximum epochs and needs a positive probability",
            )
        self._precompute()

    def _precompute(self) -> None:
        q = []
        tail = 1.0
        for p in self.probabilities:
            q.append(max(0.0, min(1.0, tail)))
            tail -= p
        phi = [0.0]
        prev = 0.0
        for s, qb in zip(self.stops, q, strict=True):
            phi.append(phi[-1] + qb * (s - prev))
            prev = s
        object.__setattr__(self, "_q", tuple(q))
        prev_stops = (0.0, *self.stops[:-1])
        lengths = tuple(s - p for s, p in zip(self.stops, prev_stops, strict=True))
        object.__setattr__(self, "_lengths", lengths)  # every profile solve reads them
        object.__setattr__(self, "_phi_at_stop", tuple(phi))
        object.__setattr__(self, "_given", {})

    @classmethod
    def _trusted(cls, stops: tuple[float, ...], probs: tuple[float, ...]) -> EpochDistribution:
        """A distribution derived from a valid one (floats, increasing positive stops,
        probabilities summing to 1), built without the checks: policies condition every
        present job's distribution at every decision, and the checks were a seventh of
        an online run's time."""
        out = object.__new__(cls)
        object.__setattr__(out, "stops", stops)
        object.__setattr__(out, "probabilities", probs)
        out._precompute()
        return out

    # -- constructors -------------------------------------------------------------------
    @classmethod
    def deterministic(cls, max_epochs: float) -> EpochDistribution:
        """Always runs to the end (no early stopping)."""
        return cls((float(max_epochs),), (1.0,))

    # -- basic facts ----------------------------------------------------------------------
    @property
    def max_epochs(self) -> float:
        """``E``: the last stopping point."""
        return self.stops[-1]

    @property
    def block_lengths(self) -> tuple[float, ...]:
        """``L_b = e_b - e_{b-1}`` (epochs), with ``e_0 = 0``."""
        return self._lengths

    @property
    def block_survival(self) -> tuple[float, ...]:
        """``q_b = P(N >= e_b)``: the probability that block ``b`` is run at all."""
        return self._q

    @functools.cached_property
    def block_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:attr:`block_lengths`, :attr:`block_survival` and the stops as read-only
        arrays, made once (STS's compiled profile search reads them)."""
        out = (np.array(self._lengths), np.array(self._q), np.array(self.stops, dtype=float))
        for a in out:
            a.flags.writeable = False
        return out

    def mean(self) -> float:
        """``E[N]`` in epochs; equals ``Phi(E)``."""
        return self._phi_at_stop[-1]

    def survival(self, w: float) -> float:
        """``S(w) = P(N >= w)`` for ``w > 0`` (1 at 0): the probability that epoch ``w``
        is reached. Left-continuous, the density of ``Phi``; at a stopping point it still
        counts the jobs that stop there (:meth:`beyond` does not)."""
        if w < 0:
            return 1.0
        b = self.block_of(w, last=False)
        # w in (e_{b-1}, e_b]  ->  q_b; w beyond E -> 0. w == 0 -> block 0 -> q_0 = 1.
        return self._q[b] if b < len(self.stops) else 0.0

    def beyond(self, w: float) -> float:
        """``P(N > w)``: the probability that the job runs past ``w`` epochs (a job that
        stops at exactly ``w`` does not)."""
        if w < 0:
            return 1.0
        b = self._passed(w)
        return self._q[b] if b < len(self.stops) else 0.0

    def stops_between(self, a: float, b: float) -> list[float]:
        """The stopping points that progress from ``a`` to ``b`` epochs passes on the way,
        not reached at ``a`` nor at ``b`` (:func:`reaches`): where :meth:`beyond`
        changes strictly inside the run."""
        out = []
        for e in self.stops[self._passed(a) :]:
            if reaches(e, b):  # at b, or past it
                break
            out.append(e)
        return out

    def _passed(self, w: float) -> int:
        """How many stopping points ``w`` epochs have reached (:func:`reaches`)."""
        b = bisect_right(self.stops, w)
        if b < len(self.stops) and reaches(w, self.stops[b]):
            b += 1
        return b

    def phi(self, w: float) -> float:
        """``Phi(w)``: expected number of epochs among the first ``w`` that are really run."""
        if w <= 0:
            return 0.0
        if w >= self.stops[-1]:
            return self._phi_at_stop[-1]
        b = bisect_left(self.stops, w)
        start = self.stops[b - 1] if b > 0 else 0.0
        return self._phi_at_stop[b] + self._q[b] * (w - start)

    def block_of(self, w: float, *, last: bool = True) -> int:
        """Index ``b`` of the block that contains epoch position ``w`` (``(e_{b-1}, e_b]``;
        a ``w`` within the tolerance above ``e_{b-1}`` is at it, in block ``b - 1``); beyond
        ``E``, the last block (or ``B`` with ``last=False``)."""
        b = bisect_left(self.stops, w)
        if b > 0 and w - self.stops[b - 1] <= stop_tolerance(self.stops[b - 1]):
            b -= 1
        return min(b, len(self.stops) - 1) if last else b

    def exposed(
        self, w0: float, w1: float, t0: float, tau: float
    ) -> list[tuple[float, float, float]]:
        """Epochs ``[w0, w1)`` run from time ``t0`` at ``tau`` hours each, as (from, to,
        probability that they run): the stops strictly inside cut them into blocks of
        constant ``S`` (the evaluator's exposure, :func:`validation.billing.exposure`)."""
        stops = self.stops
        cuts = [w0]
        cuts += [e for e in stops[bisect_right(stops, w0) :] if e < w1]
        cuts.append(w1)
        out = []
        for a, b in pairwise(cuts):
            if b > a:
                q = self.survival(0.5 * (a + b))  # S on (a, b): one block's q
                out.append((t0 + (a - w0) * tau, t0 + (b - w0) * tau, q))
        return out

    # -- conditioning and sampling -------------------------------------------------------
    def conditional(self, progress: float) -> EpochDistribution:
        """Distribution of the *remaining* epochs ``N - w`` given ``N > w`` (``w = progress``).

        Stops at or before ``progress`` have been passed without the job stopping, so their
        mass is removed and the rest renormalised; stops are shifted by ``progress``.
        """
        if progress <= 0:
            return self
        known = self._given.get(progress)
        if known is not None:
            return known
        first = self._passed(progress)  # stops passed (a job at a stop has gone past it)
        if first >= len(self.stops):
            raise InstanceError("progress", progress, f"is not below the maximum {self.max_epochs}")
        if len(self._given) >= GIVEN_CACHE:  # a running job's progress rarely repeats
            self._given.clear()
        keep = range(first, len(self.stops))
        mass = math.fsum(self.probabilities[i] for i in keep)
        stops = tuple(self.stops[i] - progress for i in keep)
        probs = [self.probabilities[i] / mass for i in keep]
        # renormalise exactly to 1 against rounding
        probs[-1] = max(0.0, 1.0 - math.fsum(probs[:-1])) if len(probs) > 1 else 1.0
        out = self._given[progress] = EpochDistribution._trusted(stops, tuple(probs))
        return out

    def sample(self, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        """Sampled numbers of epochs (one of the stopping points each)."""
        p = np.asarray(self.probabilities)
        idx = rng.choice(len(self.stops), size=size, p=p / p.sum())
        return np.asarray(self.stops)[idx]

    def to_dict(self) -> dict[str, list[float]]:
        return {"stops": list(self.stops), "probabilities": list(self.probabilities)}
