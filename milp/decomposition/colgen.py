"""Stabilised column generation at a node of the search: the master LP, priced by the
oracle at smoothed duals, with a valid Lagrangian bound from every round.

**The bound.** For any prices ``lam >= 0`` on the master's coupling rows,
``L(lam) = sum_j v_j(lam) + sum_y min(0, rc_y(lam)) - lam . b`` is at most the optimum,
``v_j`` being job ``j``'s cheapest schedule with what it holds priced (weak duality:
every plan is a schedule per job within the capacities). Every round prices at some
``lam`` and gets either each ``v_j`` exactly (the exact pricer) or a lower bound on it
(the completion bound), so every round gives a valid bound and the best is kept: a run
stopped at any point still certifies. At the master's own duals, ``L`` is the textbook
``z_RMP + sum_j min(0, reduced cost_j)``.

**Stabilisation** (Wentges smoothing; Pessoa, Sadykov, Uchoa and Vanderbeck's
in-out reading of it). The oracle prices at ``lam_sep = alpha * lam_in + (1 - alpha) *
lam_out``, ``lam_in`` the prices of the best bound so far (the stability centre) and
``lam_out`` the master's duals. A column found there enters if its reduced cost at
``lam_out`` is negative. If none is (a *mispricing*), the exact round's bound satisfies
``L(lam_sep) >= alpha L(lam_in) + (1 - alpha) z_RMP`` (the schedules found there are a
linear minorant of ``L`` that is at least ``z_RMP`` at ``lam_out``), so the centre moves
and the gap ``z_RMP - L`` shrinks by the factor ``alpha`` at least. The ``k``-th
mispricing in a row prices at ``alpha_k = max(0, 1 - (k + 1)(1 - alpha))``, so after at
most ``1 / (1 - alpha)`` of them the oracle prices at ``lam_out`` itself.

**Convergence rule.** The heuristic pricer runs first; the exact one only when the
heuristic finds no column pricing out at ``lam_out``. The generation stops, converged,
when the exact pricer finds none at ``lam_out`` (then ``L(lam_out) = z_RMP``: the master
LP is the Dantzig-Wolfe bound) or when ``z_RMP - best bound <= tolerance * |z_RMP|``;
else at the round or time limit, with the best bound found.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from heuristic.core.result import Termination
from milp.decomposition.master import Master, _holdings, label_terms
from milp.decomposition.oracle import Oracle, Round


@dataclass(frozen=True)
class CgOptions:
    """``alpha``: the smoothing weight on the stability centre; ``grid``: progress
    points of the completion bound; ``beam``: labels per state of the heuristic pricer;
    ``keep``: columns per job and round; ``tolerance``: relative gap at which the
    generation stops; ``rounds``: at most this many master solves."""

    alpha: float = 0.5
    grid: int = 64
    beam: int = 4
    keep: int = 3
    tolerance: float = 1e-6
    rounds: int = 1000


@dataclass(frozen=True)
class Generation:
    """What a column generation ended with: the best ``bound``, the master's last LP
    value ``lp_value``, master solves (``rounds``) and exact pricings, and why it
    stopped (optimal: converged)."""

    bound: float
    lp_value: float
    rounds: int
    exact_rounds: int
    termination: Termination
    runtime: float


@dataclass
class _Centre:
    lam: np.ndarray | None = None
    value: float = -np.inf
    mispricings: int = 0


def generate(
    master: Master,
    oracle: Oracle,
    options: CgOptions,
    floor: float,
    deadline: float | None,
) -> Generation:
    """Column generation on ``master`` until it converges or a limit stops it; ``floor``
    is a bound already known (the best bound starts there)."""
    t0 = time.perf_counter()
    centre = _Centre()
    best, z, rounds, exact = floor, np.inf, 0, 0
    while True:
        if rounds >= options.rounds:
            return Generation(
                best, z, rounds, exact, Termination.OTHER_LIMIT, time.perf_counter() - t0
            )
        if deadline is not None and time.perf_counter() > deadline:
            return Generation(
                best, z, rounds, exact, Termination.TIME_LIMIT, time.perf_counter() - t0
            )
        z, lam_out, mu = master.solve()
        rounds += 1
        if z - best <= options.tolerance * max(abs(z), 1e-9):
            return Generation(best, z, rounds, exact, Termination.OPTIMAL, time.perf_counter() - t0)
        alpha = _alpha(options.alpha, centre)
        lam = lam_out if centre.lam is None else alpha * centre.lam + (1 - alpha) * lam_out
        upper = _best_known(master, lam)
        got = oracle.price(lam, upper, beam=options.beam, keep=options.keep, deadline=deadline)
        best = max(best, _bound(master, lam, got))
        if _enter(master, got, lam_out, mu, z, options):
            continue
        got = oracle.price(lam, upper, beam=None, keep=options.keep, deadline=deadline)
        exact += got.exact
        value = _bound(master, lam, got)
        best = max(best, value)
        if got.exact and value > centre.value:
            centre.lam, centre.value = lam, value
        if _enter(master, got, lam_out, mu, z, options):
            centre.mispricings = 0
            continue
        if alpha == 0 and got.exact:  # nothing prices out at the master's own duals
            return Generation(best, z, rounds, exact, Termination.OPTIMAL, time.perf_counter() - t0)
        centre.mispricings += 1


def _alpha(alpha: float, centre: _Centre) -> float:
    """The smoothing weight of this round (0 before any centre; see the module)."""
    if centre.lam is None:
        return 0.0
    return max(0.0, 1.0 - (centre.mispricings + 1) * (1.0 - alpha))


def _best_known(master: Master, lam: np.ndarray) -> np.ndarray:
    """Per job, its cheapest column in the master at prices ``lam`` (``inf``: none)."""
    out = np.full(master.n_jobs, np.inf)
    if master.columns:
        jobs = np.array([c.job for c in master.columns])
        np.minimum.at(out, jobs, master.priced(lam))
    return out


def _bound(master: Master, lam: np.ndarray, got: Round) -> float:
    """``L(lam)``, from the exact values where the round was exact, else from the
    completion bounds (valid either way)."""
    jobs = got.value if got.exact else got.lower
    return float(np.sum(jobs)) + label_terms(master.space, lam)


def _enter(
    master: Master, got: Round, lam: np.ndarray, mu: np.ndarray, z: float, options: CgOptions
) -> bool:
    """Add the round's columns that price out at the master's duals; whether any did."""
    if not got.columns:
        return False
    held = _holdings(master.space, got.columns) @ lam.ravel()
    rc = np.array([c.cost for c in got.columns]) + held - mu[[c.job for c in got.columns]]
    eps = 1e-9 * max(1.0, abs(z))
    return master.add([c for c, r in zip(got.columns, rc, strict=True) if r < -eps]) > 0
