"""A ledger of the GPUs that the profiles chosen at one STS decision will hold later, in
expectation.

STS places jobs one at a time, most urgent first, each on the cheapest profile whose
current step fits now. It does not look at the later, faster steps: a job with slack
may start on a type whose GPUs a more urgent job's last steps will need, and then both
want them at once. The ledger books each chosen profile's steps, per GPU type on a time
grid, so that a less urgent job can prefer a profile whose whole future fits beside the
booked ones: the GPUs of a type summed over its nodes, as the Lagrangian bound's
relaxation (a shared step books ``1 / K_max`` of a GPU), and, for configurations
taking more than half of a type's largest node, the nodes large enough to host them
(one such configuration per node; a multi-node configuration holds each of its whole
nodes: :meth:`Ledger.holds`).

Jobs not yet arrived will want the large nodes too, for their own last, fastest steps.
Beyond ``lead`` hours from now, the ledger lets the booked steps use only ``1 - reserve``
of each type's large nodes, rounded to the nearest whole node (ties keep the node in
use) and at least one: a safety margin, measured in docs/model.md. Rounding down kept
one of two nodes back, half a class, where the margin was measured as a quarter. A
job alone on the cluster is never held back by it.

A later step is booked with the probability that the job is still running when it
starts (its survival at the step's first epoch): STS's own bet that most jobs stop
early. Booking every step in full made STS hurry for collisions that early stops would
have avoided (rollouts 1.6% dearer than greedy STS on the synthetic family at the high
rate, against 0.7% booked by expectation; docs/model.md). With ``parts`` a step that
the job may stop inside is booked in parts, split where it may stop, each with the
probability that the job runs past the part's first epoch: the expectation itself,
where the whole step booked with its first epoch's counts a job's last step, which
holds most of its stopping points, as surely running to its end. Measured online and
not kept (docs/contended.md, 'The ledger booking what a job may run'): 0.9% cheaper
on the contended 32-GPU runs, 1.6-1.9% dearer on the real-data windows, where the
margin the whole step leaves pays.
"""

from __future__ import annotations

import hashlib
import math
from bisect import bisect_left, bisect_right
from collections.abc import Iterable

import numpy as np

from heuristic.sts.profile import Profile
from instances import Config, EpochDistribution, Instance, Job

# the large-node classes a step holds nodes of, and how many of each
Holds = tuple[tuple[tuple[str, int], int], ...]
# a booked part of a step: GPU type, first bin, end bin, GPUs, probability the job
# still runs, the large nodes it holds, and which step and which of its windows it is of
_Span = tuple[str, int, int, float, float, Holds, int, int]


class Ledger:
    """GPUs booked per GPU type on a grid of ``step`` hours from ``now``."""

    def __init__(
        self,
        instance: Instance,
        now: float,
        horizon: float,
        step: float,
        reserve: float = 0.0,
        lead: float = 0.0,
        parts: bool = False,
    ) -> None:
        self.instance, self.now, self.step = instance, now, step
        self.parts = parts  # book a step in parts where the job may stop inside it
        self.reserve = reserve
        self.lead = max(0, math.ceil(lead / step - 1e-9))  # bins before the reserve applies
        self.bins = max(1, math.ceil(horizon / step))
        self.capacity = {t: float(g) for t, g in instance.gpus_by_type.items()}
        self.load = {t: np.zeros(self.bins) for t in self.capacity}
        # a configuration taking more than half of the largest node of its type runs one
        # per node: such steps are also counted against the nodes large enough for them
        self._last: tuple[Profile, EpochDistribution, Job, list[_Span]] | None = None
        self.large: dict[tuple[str, int], np.ndarray] = {}
        self.hosts: dict[tuple[str, int], int] = {}
        self._sizes: dict[str, list[int]] = {}  # each type's node sizes, ascending
        self._holds: dict[Config, Holds] = {}
        for t, nodes in instance.nodes_by_type.items():
            sizes = self._sizes[t] = sorted(n.num_gpus for n in nodes)
            top = sizes[-1] if sizes else 0
            for g in sorted(set(sizes)):
                if 2 * g > top:
                    self.large[t, g] = np.zeros(self.bins)
                    self.hosts[t, g] = len(sizes) - bisect_left(sizes, g)
        # the types' and large-node classes' indices (kept bookings: heuristic.sts.kept)
        self.kinds = {t: i for i, t in enumerate(self.capacity)}
        self.keys = {k: i for i, k in enumerate(self.large)}
        # bookings are added only by book, book_since and add_rows, each counted here:
        # what room and state read is kept until the count moves
        self.version = 0
        self._full: dict[Config, tuple[int, np.ndarray]] = {}
        self._states: dict[tuple[str, ...], tuple[int, bytes]] = {}

    def _gpus(self, cfg: Config) -> float:
        if cfg.shared:
            return 1.0 / self.instance.max_share
        if cfg.nodes > 1:
            return float(cfg.nodes * cfg.gpus_per_node)
        return float(cfg.gpus)

    def _spans(
        self, job: Job, profile: Profile, dist: EpochDistribution, since: float = 0.0
    ) -> list[_Span]:
        """Each step's parts (:meth:`unclipped`), run back to back from now, or from
        ``since`` hours ago (the bins before now dropped)."""
        shift = int(since / self.step + 1e-9)
        if shift <= 0:
            return self._from_now(job, profile, dist)
        # shifted, then clipped at the horizon: the steps' bins up to the horizon count,
        # however long ago the profile was chosen
        shifted = [
            (t, max(0, lo - shift), min(self.bins, hi - shift), g, p, h, i, w)
            for t, lo, hi, g, p, h, i, w in self.unclipped(job, profile, dist)
        ]
        return [span for span in shifted if span[1] < span[2]]

    def _from_now(self, job: Job, profile: Profile, dist: EpochDistribution) -> list[_Span]:
        """:meth:`_spans` from now. The last profile's are kept: STS books the profile
        it has just checked."""
        last = self._last
        if last is not None and last[0] is profile and last[1] is dist and last[2] is job:
            return last[3]
        out = [
            (t, lo, min(self.bins, hi), g, p, h, i, w)
            for t, lo, hi, g, p, h, i, w in self.unclipped(job, profile, dist)
            if lo < min(self.bins, hi)
        ]
        self._last = (profile, dist, job, out)
        return out

    def unclipped(self, job: Job, profile: Profile, dist: EpochDistribution) -> list[_Span]:
        """:meth:`_from_now`'s spans, not clipped at the horizon: each step's run (back to
        back from now, or in the windows of a timed profile) cut where the job may stop
        inside it, each part with the chance that the epochs just after its start run,
        ``P(N > start)``. A bin that two parts of a step share goes to the earlier. Each
        span is labelled with its step and the profile's window it runs in (0 untimed)."""
        out: list[_Span] = []
        t = 0.0
        timed = bool(profile.runs)
        opens = [r[0] for r in profile.runs]
        for i, s in enumerate(profile.steps):
            per = self.instance.epoch_time(job, s.config)
            end = t + s.lost + s.epochs * per
            cfg = s.config
            gpus, holds = self._gpus(cfg), self.holds(cfg)
            cuts = dist.stops_between(s.start, s.end) if self.parts else []
            marks = [t, *(t + s.lost + (x - s.start) * per for x in cuts), end]
            chances = [dist.beyond(s.start), *(dist.beyond(x) for x in cuts)]
            taken = 0  # the end bin of the step's parts so far
            for k, p in enumerate(chances):
                a, b = marks[k], marks[k + 1]
                for u, v in profile.on_clock(a, b) if timed else ((a, b),):
                    # the window's index in the profile, not in this part: a later part's
                    # first stretch may run in any window
                    w = bisect_right(opens, u + 1e-9) - 1 if timed else 0
                    lo, hi = int(u / self.step), math.ceil(v / self.step - 1e-9)
                    if k > 0:
                        lo = max(lo, taken)
                    if lo < hi:
                        out.append((cfg.gpu_type, lo, hi, gpus, p, holds, i, w))
                        taken = max(taken, hi)
            t = end
        return out

    def fits(self, job: Job, profile: Profile, dist: EpochDistribution) -> bool:
        """Whether every later step fits beside what is booked (the first step is the
        one placed now, unless the profile waits; where it fits is the placement's
        business)."""
        spans = self._spans(job, profile, dist)
        # the parts of the first step's first window are placed now (unless it waits)
        now = (spans[0][6], spans[0][7]) if spans and profile.wait <= 0 else None
        for gpu_type, lo, hi, gpus, p, holds, i, w in spans:
            if (i, w) == now:
                continue
            if np.any(self.load[gpu_type][lo:hi] + p * gpus > self.capacity[gpu_type] + 1e-9):
                return False
            for key, n in holds:
                if np.any(self.large[key][lo:hi] + p * n > self._hosts(key, lo, hi) + 1e-9):
                    return False
        return True

    def room(self, cfg: Config, edges: np.ndarray) -> np.ndarray:
        """Whether ``cfg`` fits beside what is booked throughout each interval between
        ``edges`` (hours from now), as :meth:`fits` counts (the job surely running):
        where a timed profile may run (:mod:`heuristic.sts.timing`)."""
        kept = self._full.get(cfg)
        if kept is None or kept[0] != self.version:
            gpu_type, gpus = cfg.gpu_type, self._gpus(cfg)
            ok = self.load[gpu_type] + gpus <= self.capacity[gpu_type] + 1e-9
            for key, n in self.holds(cfg):
                ok &= self.large[key] + n <= self._hosts(key, 0, self.bins) + 1e-9
            # the full bins up to each bin, kept until the next booking: a decision asks
            # for the same configurations on many grids between two bookings
            kept = self._full[cfg] = (self.version, np.concatenate(([0], np.cumsum(~ok))))
        full = kept[1]
        lo = np.minimum((edges[:-1] / self.step).astype(int), self.bins)
        hi = np.minimum(np.ceil(edges[1:] / self.step - 1e-9).astype(int), self.bins)
        # a cell fits where no bin of it is full
        return (full[hi] - full[np.minimum(lo, hi)]) == 0

    def state(self, types: Iterable[str]) -> bytes:
        """A digest of everything :meth:`room` reads for configurations of ``types``: the
        grid, the reserve, and each type's capacity, booked GPUs and large-node classes.
        Two ledgers with the same digest answer :meth:`room` alike for those types, so
        that a profile timed beside one is the profile timed beside the other
        (:class:`heuristic.sts.hulls.JobProfiles`). Kept until the next booking."""
        names = tuple(sorted(set(types)))
        kept = self._states.get(names)
        if kept is not None and kept[0] == self.version:
            return kept[1]
        h = hashlib.blake2b(digest_size=16)
        h.update(repr((self.now, self.step, self.bins, self.reserve, self.lead)).encode())
        for t in names:
            h.update(repr((t, self.capacity[t])).encode())
            h.update(self.load[t].tobytes())
            for key, booked in self.large.items():
                if key[0] == t:
                    h.update(repr((key, self.hosts[key])).encode())
                    h.update(booked.tobytes())
        digest = h.digest()
        self._states[names] = (self.version, digest)
        return digest

    def _hosts(self, key: tuple[str, int], lo: int, hi: int) -> np.ndarray:
        """Large nodes the booked steps may use in bins ``lo..hi``: all of them up to the
        lead time, less the reserve after it (to the nearest whole node, at least one)."""
        hosts = float(self.hosts[key])
        room = np.full(hi - lo, hosts)
        later = max(0, self.lead - lo)
        if later < hi - lo and self.reserve > 0:
            room[later:] = max(1.0, math.floor(hosts * (1 - self.reserve) + 0.5 + 1e-9))
        return room

    def holds(self, cfg: Config) -> Holds:
        """The large-node classes a step on ``cfg`` holds nodes of, and how many of each
        it surely holds. A class ``(type, g)`` is the type's nodes of at least ``g``
        GPUs. A step on one node holds one node of the classes of at most its GPUs where
        it takes more than half of the type's largest node (one such step per node); a
        multi-node step holds each of its whole nodes, of the classes of at most its
        GPUs per node. A class of larger nodes is held too where fewer nodes of the sizes
        between could take the step than it needs (a 6-GPU step where every node has 8;
        two 4-GPU nodes' step on a type of 8-GPU nodes). Shared slots hold none. A
        distributed configuration (any GPUs within its span, the rest of each node free
        for others) counts once against the classes of at most its GPUs, as every step
        did until 2026-11-30: it need not hold a whole node, and how many it touches is
        the placement's."""
        memo = self._holds.get(cfg)
        if memo is not None:
            return memo
        t = cfg.gpu_type
        whole = cfg.nodes > 1
        per, need = (cfg.gpus_per_node, cfg.nodes) if whole else (cfg.gpus, 1)
        sizes = self._sizes.get(t, [])
        out: list[tuple[tuple[str, int], int]] = []
        if cfg.distributed:
            out = [(k, 1) for k in self.large if k[0] == t and k[1] <= cfg.gpus]
        elif not cfg.shared and (whole or 2 * per > (sizes[-1] if sizes else 0)):
            for key in self.large:
                if key[0] == t:
                    # the nodes that could take it without being of the class (none
                    # where the class holds nodes smaller than the step's per node)
                    between = max(0, bisect_left(sizes, key[1]) - bisect_left(sizes, per))
                    if need > between:
                        out.append((key, need - between))
        held = self._holds[cfg] = tuple(out)
        return held

    def book(self, job: Job, profile: Profile, dist: EpochDistribution) -> None:
        self._add(self._spans(job, profile, dist))

    def book_since(self, job: Job, profile: Profile, dist: EpochDistribution, since: float) -> None:
        """Book what is left of a profile chosen ``since`` hours ago (its steps run back
        to back from then): a job kept as it was planned at an earlier decision."""
        self._add(self._spans(job, profile, dist, since))

    def _add(self, spans: list[_Span]) -> None:
        for gpu_type, lo, hi, gpus, p, holds, _, _ in spans:
            self.load[gpu_type][lo:hi] += p * gpus
            for key, n in holds:
                self.large[key][lo:hi] += p * n
        self.version += 1

    def add_rows(self, loads: np.ndarray, large: np.ndarray | None) -> None:
        """Add bookings given per bin, a row per type (in :attr:`kinds`' order) and, if
        any, a row per large-node class (in :attr:`keys`' order)."""
        for name, i in self.kinds.items():
            self.load[name] += loads[i]
        if large is not None:
            for key, i in self.keys.items():
                self.large[key] += large[i]
        self.version += 1

    def last_step_full(
        self, job: Job, profile: Profile, dist: EpochDistribution, since: float = 0.0
    ) -> bool:
        """Whether, while the profile's last step would run (chosen ``since`` hours ago),
        its class is booked to its true capacity (no reserve), this job's own booking
        included: its type's GPUs, or the nodes large enough for it."""
        spans = self._spans(job, profile, dist, since)
        if not spans:
            return False
        last = spans[-1][6:]  # the last step's last window, each of its parts
        for t, lo, hi, _, _, holds, i, w in spans:
            if (i, w) != last:
                continue
            if np.any(self.load[t][lo:hi] >= self.capacity[t] - 1e-9):
                return True
            if any(np.any(self.large[key][lo:hi] >= self.hosts[key] - 1e-9) for key, _ in holds):
                return True
        return False
