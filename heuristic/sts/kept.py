"""The kept jobs' bookings in a decision's ledger, all at once.

A partial decision of ``sts`` (:mod:`heuristic.sts.incremental`) books, before placing
the jobs it re-plans, what is left of every other job's earlier profile
(:meth:`Ledger.book_since`), and then checks whether any of their last steps finds its
class booked full (:meth:`Ledger.last_step_full`). On the Philly week some 400 jobs
are kept at each of ~13,000 decisions: computed one by one (each profile's steps walked
in Python, each span added by its own numpy slice), the two took 126 of 330 profiled
seconds and made the week's replay twice as slow as before the bookings.

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
    # a row per span: GPU type's index, first bin, end bin, GPUs, the probability that
    # the job still runs, and the step it is a part of (one array: one concatenation)
    rows: np.ndarray
    # the large-node classes each span holds nodes of: (span, class index, nodes held)
    keys: np.ndarray
    # whether STS would weigh pulling its last step forward (several steps, not timed)
    pullable: bool


def spans_of(ledger: Ledger, job: Job, profile: Profile, dist: EpochDistribution) -> KeptSpans:
    """A profile's spans from ``ledger.now`` on its grid, not clipped at its horizon."""
    kinds, keys = ledger.kinds, ledger.keys
    spans = ledger.unclipped(job, profile, dist)
    triples = [(i, keys[k], n) for i, span in enumerate(spans) for k, n in span[5]]
    return KeptSpans(
        profile,
        dist,
        np.array(
            [(kinds[t], lo, hi, g, p, i) for t, lo, hi, g, p, _, i, _ in spans], dtype=float
        ).reshape(-1, 6),
        np.array(triples, dtype=np.int64).reshape(-1, 3),
        len(profile.steps) > 1 and not profile.runs,
    )


class KeptBookings:
    """The kept profiles as booked in one ledger (shifted to its grid and clipped)."""

    def __init__(self, ledger: Ledger, kept: Sequence[Kept], memo: dict[str, KeptSpans]) -> None:
        self.ledger = ledger
        spans: list[KeptSpans] = []
        for job, profile, dist, _ in kept:
            m = memo.get(job.id)
            if m is None or m.profile is not profile or m.dist is not dist:
                m = spans_of(ledger, job, profile, dist)
            spans.append(m)
        # the memo keeps the profiles still kept only
        self.memo = {k[0].id: m for k, m in zip(kept, spans, strict=True)}
        self.pullable = np.array([m.pullable for m in spans], dtype=bool)
        counts = np.array([len(m.rows) for m in spans], dtype=np.int64)
        self.owner = np.repeat(np.arange(len(spans)), counts)
        rows = np.concatenate([m.rows for m in spans]) if spans else np.zeros((0, 6))
        # whole bins since each was chosen, as ``Ledger.book_since`` shifts them
        at = np.array([k[3] for k in kept], dtype=float)
        shift = ((ledger.now - at) / ledger.step + 1e-9).astype(np.int64)[self.owner]
        self.kind = rows[:, 0].astype(np.int64)
        self.gpus, self.p = rows[:, 3], rows[:, 4]
        self.step = rows[:, 5].astype(np.int64)
        # shifted, then clipped at this ledger's horizon (as ``Ledger.book_since``)
        self.lo = np.maximum(0, rows[:, 1].astype(np.int64) - shift)
        self.hi = np.minimum(ledger.bins, rows[:, 2].astype(np.int64) - shift)
        triples = np.concatenate([m.keys for m in spans]) if spans else np.zeros((0, 3), np.int64)
        first = np.cumsum(counts) - counts  # each job's first row
        per_job = np.array([len(m.keys) for m in spans], dtype=np.int64)
        self.key_span = triples[:, 0] + np.repeat(first, per_job)
        self.key = triples[:, 1]
        self.held = triples[:, 2].astype(float)

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
        large = None
        if len(self.key):
            on = live[self.key_span]
            s, k = self.key_span[on], self.key[on]
            w = self.p[s] * self.held[on]
            large = _summed(k, self.lo[s], self.hi[s], w, len(ledger.keys), ledger.bins)
        ledger.add_rows(loads, large)

    def last_step_full(self) -> bool:
        """Whether any pullable kept job's last step (of those left on this ledger's
        grid) finds its class booked full: :meth:`Ledger.last_step_full` for each."""
        ledger = self.ledger
        live = (self.lo < self.hi) & self.pullable[self.owner]
        idx = np.flatnonzero(live)
        if not len(idx):
            return False
        owner = self.owner[idx]
        # each job's last live span, and every live part of the step it is of (a pullable
        # profile is not timed: a step has one window)
        tail = idx[np.r_[owner[1:] != owner[:-1], True]]
        last_step = np.full(len(self.pullable), -1, dtype=np.int64)
        last_step[self.owner[tail]] = self.step[tail]
        last = idx[self.step[idx] == last_step[owner]]
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
