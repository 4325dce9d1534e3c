"""When a node is powered if empty nodes are powered off (docs/model.md, 'Idle power').

The rule: a node's busy set is the union of its segments' active parts (a segment is
active until its job completes). With the idle delay ``d`` and the boot time ``b``, the
node is powered at a time ``t`` before the last completion ``H`` when it is busy
somewhere in ``[t − d, t + b]``, time 0 counting as busy (nodes start on): an empty spell
longer than ``d + b`` turns it off ``d`` after it went empty and boots it ``b`` before its
next work, a shorter one keeps it on. Each boot costs the option's ``boot_kwh``.

Exact in expectation because jobs stop independently and a job's work on a node only
ever starts at a planned segment start. The node is quiet on a window iff every job
completed before its first planned moment on the node inside the window, so
``P(quiet)`` is a product over jobs of their completion CDFs, and so are
``P(powered at t) = P(not quiet) − P(not quiet, H ≤ t)`` and the probability of a boot
at a segment start (a quiet spell before it, and some job starting there active). Both
are piecewise constant in ``t`` between the segments' edges shifted by ``−b`` and ``+d``
and the completions (and those ``+ d``), so the expected powered hours are a finite sum.
A realised scenario is the same computation with each job's one completion.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from instances import Instance, Plan
from instances.energy import Series
from instances.power import PowerOff
from validation.billing import Exposure, Pieces
from validation.timeline import TIME_TOL

Spans = dict[int, list[tuple[float, float]]]  # by job index: its planned [start, end) on a node
Boots = list[tuple[float, float]]  # (time the node's work starts, probability of a boot)


@dataclass(frozen=True)
class Completion:
    """A job's completion time ``C`` as a step CDF, from its atoms (time, probability)."""

    times: np.ndarray
    cum: np.ndarray  # P(C <= times[k]), with a leading 0

    @classmethod
    def of(cls, atoms: list[tuple[float, float]]) -> Completion:
        atoms = sorted((t, p) for t, p in atoms if p > 0)
        times = np.array([t for t, _ in atoms], dtype=float)
        cum = np.minimum(1.0, np.concatenate(([0.0], np.cumsum([p for _, p in atoms]))))
        return cls(times, cum)

    def by(self, x: np.ndarray) -> np.ndarray:
        """``P(C <= x)`` elementwise, a completion within the clock's tolerance of ``x``
        counting as by it (a job ending exactly where its next segment starts is not
        busy there); 1 at ``x = inf``."""
        return self.cum[np.searchsorted(self.times, x + TIME_TOL, side="right")]

    @property
    def last(self) -> float:
        return float(self.times[-1]) if len(self.times) else 0.0


def node_spans(instance: Instance, plan: Plan) -> dict[str, Spans]:
    """Every node's planned intervals, by job index (a multi-node segment on each of
    its nodes)."""
    index = {j.id: i for i, j in enumerate(instance.jobs)}
    out: dict[str, Spans] = {n.id: defaultdict(list) for n in instance.nodes}
    for s in plan.segments:
        if s.end > s.start:
            for n in s.node_ids:
                out[n][index[s.job]].append((s.start, s.end))
    return out


def _first_moments(spans: list[tuple[float, float]], lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Each window ``[lo, hi]``'s first planned moment of a job (``inf``: none)."""
    first = np.full(lo.shape, math.inf)
    for s, e in spans:
        inside = (s <= hi) & (e > lo)
        first = np.where(inside, np.minimum(first, np.maximum(s, lo)), first)
    return first


def _edges(spans: Spans, completions: list[Completion], option: PowerOff) -> np.ndarray:
    """The times between which ``P(powered)`` is constant, from 0 to the last possible
    completion."""
    d, b = option.after_h, option.boot_h
    last = max(c.last for c in completions)
    points = [0.0, d, last]
    for c in completions:
        points.extend(c.times)
    for j, intervals in spans.items():
        points.extend(completions[j].times + d)
        for s, e in intervals:
            points.extend((s - b, s, s + d, e + d))
    edges = np.unique(np.array(points, dtype=float))
    return edges[(edges >= 0.0) & (edges <= last)]


def powered(spans: Spans, completions: list[Completion], option: PowerOff) -> Exposure:
    """``P(node powered at t)`` as steps (from, to, probability) up to the last possible
    completion: ``P(t < H)`` while ``t <= d``; later ``P(not quiet) − P(not quiet, H <= t)``
    with quiet meaning no job busy on the node in ``[t − d, t + b]``."""
    edges = _edges(spans, completions, option)
    if len(edges) < 2:
        return []
    mid = 0.5 * (edges[:-1] + edges[1:])
    by_t = np.array([c.by(mid) for c in completions])  # P(C_j <= t), jobs x steps
    all_done = by_t.prod(axis=0)  # P(H <= t)
    quiet = np.ones_like(mid)  # P(no job busy in the window)
    quiet_done = np.ones_like(mid)  # the same, and every job done by t
    for j, row in enumerate(by_t):
        if j in spans:
            first = _first_moments(spans[j], mid - option.after_h, mid + option.boot_h)
            quiet *= completions[j].by(first)
            quiet_done *= completions[j].by(np.minimum(first, mid))
        else:
            quiet_done *= row
    later = (1.0 - quiet) - (all_done - quiet_done)
    p = np.clip(np.where(mid <= option.after_h, 1.0 - all_done, later), 0.0, 1.0)
    return [
        (float(a), float(z), float(q))
        for a, z, q in zip(edges[:-1], edges[1:], p, strict=True)
        if q > 0
    ]


def boots(spans: Spans, completions: list[Completion], option: PowerOff) -> Boots:
    """Each segment start ``σ`` on the node later than ``d + b`` (time 0 keeps it on
    before) with the probability of a boot there: no job busy within ``d + b`` before
    ``σ`` (a job whose work reaches ``σ − d − b``, or starts later and runs), less the
    same with no job starting at ``σ`` still running."""
    gap = option.gap
    starts = sorted({s for intervals in spans.values() for s, _ in intervals if s > gap + TIME_TOL})
    sigma = np.array(_distinct(starts))
    lo = sigma - gap
    quiet = np.ones_like(sigma)  # no job keeps the node on within d + b before sigma
    quiet_idle = np.ones_like(sigma)  # that, and no job starting at sigma still running
    for j, intervals in spans.items():
        # the job keeps the node on if its work reaches lo (a completion at lo, within
        # the tolerance, still does) or starts later and runs at all
        keep = np.full(sigma.shape, math.inf)
        starting = np.zeros(sigma.shape, dtype=bool)
        for s, e in intervals:
            inside = (s < sigma - TIME_TOL) & (e >= lo - TIME_TOL)
            keep = np.where(inside, np.minimum(keep, np.maximum(s, lo - 2 * TIME_TOL)), keep)
            starting |= np.abs(s - sigma) <= TIME_TOL
        quiet *= completions[j].by(keep)
        quiet_idle *= completions[j].by(np.where(starting, np.minimum(keep, sigma), keep))
    p = quiet - quiet_idle
    return [(float(t), float(q)) for t, q in zip(sigma, p, strict=True) if q > 0]


def _distinct(times: list[float]) -> list[float]:
    """Sorted times with those within the clock's tolerance of the previous dropped."""
    out: list[float] = []
    for t in times:
        if not out or t > out[-1] + TIME_TOL:
            out.append(t)
    return out


def node_pieces(
    instance: Instance, plan: Plan, ends: list[list[tuple[float, float]]]
) -> tuple[Pieces, Boots]:
    """Every node's base and idle power while it is powered (kW, exposure), and every
    boot (time of the work it boots for, probability), from each job's completion atoms
    ``ends`` (in the instance's job order)."""
    assert instance.power_off is not None
    option = instance.power_off
    completions = [Completion.of(atoms) for atoms in ends]
    pieces: Pieces = []
    starts: Boots = []
    for node_id, spans in node_spans(instance, plan).items():
        node = instance.node(node_id)
        kw = (node.base_w + instance.gpu(node.gpu_type).idle_w * node.num_gpus) / 1000.0
        if kw > 0:
            pieces.append((kw, powered(spans, completions, option)))
        starts.extend(boots(spans, completions, option))
    return pieces, starts


def boot_bill(instance: Instance, started: Boots) -> tuple[float, float, float]:
    """(kWh, energy cost, grams of CO2-eq) of the boots: each draws ``boot_kwh`` over the
    ``boot_h`` hours before the work it boots for (at the price of that instant when the
    boot takes no time)."""
    assert instance.power_off is not None
    energy, hours = instance.power_off.boot_kwh, instance.power_off.boot_h
    kwh = math.fsum(p * energy for _, p in started)
    if kwh == 0:
        return 0.0, 0.0, 0.0

    def bill(series: Series) -> float:
        value = series.constant
        if value is not None:  # the product a flat price gives every other figure
            return value * kwh
        if hours > 0:
            return math.fsum(p * energy * series.integral(t - hours, t) / hours for t, p in started)
        return math.fsum(p * energy * series.at(t) for t, p in started)

    carbon = instance.carbon
    return kwh, bill(instance.price_series), 0.0 if carbon is None else bill(carbon.intensity)
