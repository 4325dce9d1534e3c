"""What a job's segments pay when the price of a kWh, or the carbon it carries, changes
with time (docs/model.md, 'Energy prices and carbon').

A segment's energy is drawn over the hours it runs; an hour of it is paid only if the job
is still running then. Its relaunch overhead runs first, paid with ``P(N > w0)``; then
its epochs ``[w0, w1)``, epoch ``w`` at time ``t(w) = start + lost + (w - w0)·τ``, paid
with ``S(w) = P(N > w)``, which is constant on each block between stopping points. So
the expected bill is a sum over (time interval, probability) pairs of the power times
the series' exact integral over the interval: :func:`exposure` lists the pairs,
:func:`expected_bill` prices them. With a flat price it equals ``π·e_c·(Φ(w1) −
Φ(w0))`` (plus the overhead's), which the evaluator keeps as its fast path so that a
flat series gives every figure of an instance without one to the last digit.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from instances import Instance
from instances.distribution import EpochDistribution, reaches
from instances.energy import Series
from validation.timeline import Piece

Exposure = list[tuple[float, float, float]]  # (from, to) in hours, probability paid


def exposure(dist: EpochDistribution, piece: Piece) -> Exposure:
    """The hours ``piece`` holds power, each with the probability that it is paid."""
    start = piece.segment.start
    out: Exposure = []
    if piece.lost > 0:  # overhead after w0 epochs: paid if the job goes past w0
        out.append((start, start + piece.lost, dist.beyond(piece.w0)))
    if piece.w1 <= piece.w0:
        return out
    out += dist.exposed(piece.w0, piece.w1, start + piece.lost, piece.epoch_time)
    return out


def realised_exposure(piece: Piece, stop: float) -> Exposure:
    """The hours ``piece`` holds power when the job stops at ``stop`` epochs, each paid
    (probability 1): its overhead unless the job stopped before it, and its epochs up
    to the stop."""
    start = piece.segment.start
    out: Exposure = []
    if piece.lost > 0 and not reaches(piece.w0, stop):
        out.append((start, start + piece.lost, 1.0))
    done = max(0.0, min(piece.w1, stop) - piece.w0)
    if done > 0:
        t0 = start + piece.lost
        out.append((t0, t0 + done * piece.epoch_time, 1.0))
    return out


def priced(series: Series, hours: Exposure) -> float:
    """``Σ p·∫ series`` over the exposure (value·hours)."""
    return sum(p * series.integral(a, b) for a, b, p in hours if p > 0)


Pieces = list[tuple[float, Exposure]]  # (power in kW, the hours it is paid)


def charged(series: Series, kwh: float, pieces: Callable[[], Pieces]) -> float:
    """What ``series`` charges for energy drawn as ``pieces`` say (``kwh`` in all):
    ``Σ kW · p · ∫ series``; for a flat series ``value · kwh``, the very product of an
    instance without a series (``pieces`` is then not built)."""
    value = series.constant
    if value is not None:
        return at_rate(value, kwh)
    return sum(kw * priced(series, hours) for kw, hours in pieces())


def job_bill(instance: Instance, kwh: float, pieces: Callable[[], Pieces]) -> tuple[float, float]:
    """(energy cost, grams of CO2-eq) of a job's energy, ``kwh`` drawn as ``pieces``."""
    built: Pieces | None = None

    def once() -> Pieces:  # built at most once, and only for a series that varies
        nonlocal built
        if built is None:
            built = pieces()
        return built

    money = charged(instance.price_series, kwh, once)
    carbon = instance.carbon
    grams = 0.0 if carbon is None else charged(carbon.intensity, kwh, once)
    return money, grams


def kwh_of(pieces: Pieces) -> float:
    """The energy of ``pieces`` (kWh): ``Σ kW · p · hours`` (hours paid with probability
    0 draw nothing, even endless ones: the sum is exact, so leaving zeros out moves
    nothing)."""
    return math.fsum(kw * p * (b - a) for kw, hours in pieces for a, b, p in hours if p > 0)


def at_rate(rate: float, amount: float) -> float:
    """``rate · amount``, where a rate of 0 charges nothing even for an endless amount: a
    plan costed unchecked may leave a job running for ever, its tardiness and its nodes'
    energy infinite, and ``0 · inf`` would make a free kWh or a weight of 0 NaN (a
    review of 2026-12-07). The same product wherever ``amount`` is finite."""
    return 0.0 if rate == 0 and math.isinf(amount) else rate * amount


def last_completion(ends: list[list[tuple[float, float]]]) -> Exposure:
    """``P(H > t)`` as steps, ``H`` the last job's completion, from each job's blocks
    (completion time, probability): jobs stop independently, so ``P(H <= t)`` is the
    product over jobs of ``P(C_j <= t)``, a step function jumping at the blocks' ends.
    The steps run from time 0 to the last possible completion."""
    events = sorted((t, j, p) for j, blocks in enumerate(ends) for t, p in blocks if p > 0)
    done = [0.0] * len(ends)  # P(C_j <= t) so far
    zeros = len(ends)  # jobs not yet possibly complete: the product is 0 while any
    # the product of the non-zero P(C_j <= t) kept as a sum of logarithms: a running
    # ratio done/before overflows where a first block's probability is subnormal
    # (1e-322 then 1.0), and 1 - inf priced at 0 made the bill NaN
    logs = 0.0
    out: Exposure = []
    t0 = 0.0
    for t, j, p in events:
        if t > t0:
            out.append((t0, t, 1.0 - (math.exp(logs) if zeros == 0 else 0.0)))
            t0 = t
        before = done[j]
        done[j] = min(1.0, before + p)
        if before == 0.0:
            zeros -= 1
            logs += math.log(done[j])
        else:
            logs += math.log(done[j]) - math.log(before)
    return out


def idle_pieces(instance: Instance, powered: Exposure, busy: Pieces) -> Pieces:
    """The power the cluster draws beyond its jobs' (kW, exposure): every node's base
    power and every GPU's idle power while the cluster is powered (``powered``), less
    the idle power of the GPUs the jobs keep busy (``busy``: each job piece's idle kW
    and exposure), which draw their configuration's power instead."""
    return [(instance.powered_kw, powered), *((-k, hours) for k, hours in busy)]
