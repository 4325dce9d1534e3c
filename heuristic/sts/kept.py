"""The kept jobs' bookings in a decision's ledger, all at once.

A partial decision of ``sts-incremental`` books, before placing the jobs it re-plans,
what is left of every other job's earlier profile (:meth:`Ledger.book_since`), and then
checks whether any of their last steps finds its class booked full
(:meth:`Ledger.last_step_full`). On the Philly week some 400 jobs are kept at each of
~13,000 decisions: computed one by one (each profile's steps walked in Python, each
span added by its own numpy slice), the two took 126 of 330 profiled seconds and made
the week's replay twice as slow as before the bookings.

Here each kept profile's spans are computed once, on the grid of the decision that
chose it (its bins from then, not clipped at any horizon), and memoised while the job
keeps that profile; a decision shifts them all to its own grid, clips them at its
horizon as :meth:`Ledger.book_since` does, and adds them with one cumulative sum per
GPU type and large-node class. The figures are :meth:`Ledger.book_since`'s and
:meth:`Ledger.last_step_full`'s (tests compare the two on random profiles), up to the
order of the floating-point sums (the ledger compares with a tolerance of 1e-9).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from heuristic.sts.ledger import Ledger
from heuristic.sts.profile import Profile
from instances import EpochDistribution, Job

Kept = tuple[Job, Profile, EpochDistribution, float]  # job, profile, its distribution, when


@dataclass(frozen=True)
class KeptSpans:
    """One kept profile's booked steps, bins from when it was chosen (not clipped)."""

    profile: Profile  # the profile and distribution they were computed for (identity)
    dist: EpochDistribution
    kind: np.ndarray  # GPU type's index
    lo: np.ndarray
    hi: np.ndarray
    gpus: np.ndarray
    p: np.ndarray  # the probability that the job still runs when the step starts
    # the large-node classes each span counts against: (span, class index) pairs
    key_span: np.ndarray
    key: np.ndarray
    # whether STS would weigh pulling its last step forward (several steps, not timed)
    pullable: bool


def spans_of(ledger: Ledger, job: Job, profile: Profile, dist: EpochDistribution) -> KeptSpans:
    """A profile's spans from ``ledger.now`` on its grid, not clipped at its horizon."""
    kinds, keys = ledger.kinds, ledger.keys
    rows = ledger.unclipped(job, profile, dist)
    key_span, key = [], []
    for i, (t, _, _, g, _) in enumerate(rows):
        for k in ledger.thresholds(t, g):
            key_span.append(i)
            key.append(keys[k])
    return KeptSpans(
        profile,
        dist,
        np.array([kinds[r[0]] for r in rows], dtype=np.int64),
        np.array([r[1] for r in rows], dtype=np.int64),
        np.array([r[2] for r in rows], dtype=np.int64),
        np.array([r[3] for r in rows], dtype=float),
        np.array([r[4] for r in rows], dtype=float),
        np.array(key_span, dtype=np.int64),
        np.array(key, dtype=np.int64),
        len(profile.steps) > 1 and not profile.runs,
    )


class KeptBookings:
    """The kept profiles as booked in one ledger (shifted to its grid and clipped)."""

    def __init__(self, ledger: Ledger, kept: Sequence[Kept], memo: dict[str, KeptSpans]) -> None:
        self.ledger = ledger
        spans: list[KeptSpans] = []
        shifts: list[int] = []
        for job, profile, dist, at in kept:
            m = memo.get(job.id)
            if m is None or m.profile is not profile or m.dist is not dist:
                m = spans_of(ledger, job, profile, dist)
            spans.append(m)
            # whole bins since it was chosen, as ``Ledger.book_since`` shifts them
            shifts.append(int((ledger.now - at) / ledger.step + 1e-9))
        # the memo keeps the profiles still kept only
        self.memo = {k[0].id: m for k, m in zip(kept, spans, strict=True)}
        self.spans, self.shifts = spans, shifts
        counts = np.array([len(m.lo) for m in spans], dtype=np.int64)
        self.owner = np.repeat(np.arange(len(spans)), counts)
        if not spans or not counts.sum():
            self.kind = self.lo = self.hi = self.owner[:0]
            self.gpus = self.p = np.zeros(0)
            self.key_span = self.key = self.owner[:0]
            return
        shift = np.repeat(np.array(shifts, dtype=np.int64), counts)
        self.kind = np.concatenate([m.kind for m in spans])
        self.gpus = np.concatenate([m.gpus for m in spans])
        self.p = np.concatenate([m.p for m in spans])
        # clipped at this ledger's horizon, then shifted (``Ledger.book_since``'s order)
        lo = np.concatenate([m.lo for m in spans])
        hi = np.concatenate([m.hi for m in spans])
        self.lo = np.maximum(0, lo - shift)
        self.hi = np.minimum(ledger.bins, hi) - shift
        offset = np.concatenate(([0], np.cumsum(counts)[:-1]))
        self.key_span = np.concatenate([m.key_span + o for m, o in zip(spans, offset, strict=True)])
        self.key = np.concatenate([m.key for m in spans])

    def book(self) -> None:
        """Add every kept span to the ledger's loads."""
        ledger = self.ledger
        live = self.lo < self.hi
        loads = _summed(
            self.kind[live],
            self.lo[live],
            self.hi[live],
            (self.p * self.gpus)[live],
            len(ledger.kinds),
            ledger.bins,
        )
        for name, i in ledger.kinds.items():
            ledger.load[name] += loads[i]
        if len(self.key):
            s = self.key_span[live[self.key_span]]
            k = self.key[live[self.key_span]]
            large = _summed(k, self.lo[s], self.hi[s], self.p[s], len(ledger.keys), ledger.bins)
            for key, i in ledger.keys.items():
                ledger.large[key] += large[i]

    def last_step_full(self) -> bool:
        """Whether any pullable kept job's last step (of those left on this ledger's
        grid) finds its class booked full: :meth:`Ledger.last_step_full` for each."""
        ledger = self.ledger
        pullable = np.array([m.pullable for m in self.spans], dtype=bool)
        live = (self.lo < self.hi) & pullable[self.owner]
        idx = np.flatnonzero(live)
        if not len(idx):
            return False
        owner = self.owner[idx]
        last = idx[np.r_[owner[1:] != owner[:-1], True]]  # each job's last live span
        names = list(ledger.kinds)
        loads = np.stack([ledger.load[t] for t in names])
        cap = np.array([ledger.capacity[t] for t in names])
        if _any_full(loads, cap, self.kind[last], self.lo[last], self.hi[last]).any():
            return True
        if not len(self.key):
            return False
        mine = np.isin(self.key_span, last)
        s, k = self.key_span[mine], self.key[mine]
        large = np.stack([ledger.large[key] for key in ledger.keys])
        hosts = np.array([float(ledger.hosts[key]) for key in ledger.keys])
        return bool(_any_full(large, hosts, k, self.lo[s], self.hi[s]).any())


def _summed(
    row: np.ndarray, lo: np.ndarray, hi: np.ndarray, w: np.ndarray, rows: int, bins: int
) -> np.ndarray:
    """``out[row, lo:hi] += w`` for every span at once (a difference array)."""
    diff = np.zeros((rows, bins + 1))
    np.add.at(diff, (row, lo), w)
    np.add.at(diff, (row, hi), -w)
    return np.cumsum(diff[:, :bins], axis=1)


def _any_full(
    load: np.ndarray, cap: np.ndarray, row: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> np.ndarray:
    """Per span, whether some bin of ``load[row, lo:hi]`` reaches ``cap[row]``."""
    full = load >= cap[:, None] - 1e-9
    count = np.concatenate(
        (np.zeros((len(cap), 1), dtype=np.int64), np.cumsum(full, axis=1)), axis=1
    )
    return count[row, hi] - count[row, lo] > 0
