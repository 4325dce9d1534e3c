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

**A last exact pricing.** Stopped by its clock, a generation asked for one (``final``,
a share of its time; the root's) stops its rounds that share of the time early and
spends it on exact pricings with the largest label budget (``labels_max``), at the
stability centre and then at the last master's duals: the rounds price with a small
budget (a job that exceeds it counts in the bound by its open labels only) and the
centre's bound may be a heuristic round's (completion bounds), so a complete exact
pricing at the centre is at least its bound; at the last duals it may be more. A
pricing the deadline stops still bounds (its unfinished jobs by their open labels).
Measured in docs/benchmarks.md.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from heuristic.core.result import Termination
from milp.decomposition.branching import Decision
from milp.decomposition.master import Master, _holdings, label_terms
from milp.decomposition.oracle import Oracle, Round


@dataclass(frozen=True)
class CgOptions:
    """``alpha``: the smoothing weight on the stability centre; ``grid``: progress
    points of the completion bound; ``beam``: labels per state of the heuristic pricer;
    ``keep``: columns per job and round; ``tolerance``: relative gap at which the
    generation stops; ``rounds``: at most this many master solves; ``stall``: the
    exact pricer runs after this many heuristic rounds in a row that barely moved the
    master's value (its degenerate pivots would otherwise go on without a bound);
    ``labels``: the exact pricer's budget of labels per job and round (a job that
    exceeds it counts in the bound by its open labels, ``Priced.lower``); when that
    leaves no column pricing out at the master's duals, the budget is multiplied by 4, up to
    ``labels_max`` (``None``: no budget); ``workers``: processes a large pricing round is
    spread over (:mod:`milp.decomposition.spread`; ``None``: every core this process may
    run on); ``carry``: with idle power on nodes always on, the powered hours carried by
    one job a slot (:func:`milp.decomposition.lower.carried`; ``False``: the hours
    surely powered alone, a lower bound whose root converges sooner)."""

    alpha: float = 0.5
    grid: int = 2048
    beam: int = 4
    keep: int = 3
    tolerance: float = 1e-6
    rounds: int = 1000
    stall: int = 3
    labels: int | None = 200_000
    labels_max: int = 12_800_000
    workers: int | None = None
    carry: bool = True


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
    centre: np.ndarray | None = None  # the prices of the best bound


@dataclass
class _State:
    """The generation so far: the best bound, the master's last value, master solves,
    exact pricings, heuristic rounds since the master's value last fell by more than
    ``STALL_DROP`` of it, and the stability centre (its prices, its bound, and the
    mispricings in a row since it was last left)."""

    best: float
    z: float = np.inf
    rounds: int = 0
    exact: int = 0
    stall: int = 0
    centre: np.ndarray | None = None
    centre_value: float = -np.inf
    mispricings: int = 0
    budget: int | None = None  # the exact pricer's labels per job, grown when it falls short

    def solved(self, z: float) -> None:
        self.stall = 0 if z < self.z - STALL_DROP * abs(self.z) else self.stall + 1
        self.z = z
        self.rounds += 1

    def observe(self, lam: np.ndarray, value: float) -> None:
        """A round's bound at ``lam``: the best so far, and the centre if it is the best
        of the centres (any valid bound may be a centre; the exact ones shrink the gap
        as the module says)."""
        self.best = max(self.best, value)
        if value > self.centre_value:
            self.centre, self.centre_value = lam, value

    def result(self, termination: Termination, t0: float) -> Generation:
        elapsed = time.perf_counter() - t0
        return Generation(
            self.best,
            self.z,
            self.rounds,
            self.exact,
            termination,
            elapsed,
            self.centre,
        )


# a master solve that lowers the LP value by less than this share of it is a stall
STALL_DROP = 1e-4


def generate(
    master: Master,
    oracle: Oracle,
    options: CgOptions,
    floor: float,
    deadline: float | None,
    decisions: tuple[Decision, ...] = (),
    final: float = 0.0,
    centre: np.ndarray | None = None,
) -> Generation:
    """Column generation on ``master`` until it converges or a limit stops it; ``floor``
    is a bound already known (the best bound starts there); ``decisions``, the
    branching decisions of the search node (its master holds only columns that meet
    them); ``final``, the share of the time to the deadline kept for a last exact
    pricing (module docstring; 0: none); ``centre``, prices to start from (resources x
    slots): an exact pricing there gives the first bound and stability centre, and its
    schedules join the master. The master's last solution is left a vertex
    (:meth:`Master.vertex`) for what reads its values next: the branching rule, the
    dive, the support step."""
    out = _generate(master, oracle, options, floor, deadline, decisions, final, centre)
    master.vertex()
    return out


def _generate(
    master: Master,
    oracle: Oracle,
    options: CgOptions,
    floor: float,
    deadline: float | None,
    decisions: tuple[Decision, ...],
    final: float = 0.0,
    centre: np.ndarray | None = None,
) -> Generation:
    t0 = time.perf_counter()
    st = _State(floor, budget=options.labels)
    stop = deadline
    if deadline is not None and final > 0:
        stop = deadline - final * max(0.0, deadline - t0)
    if centre is not None:
        got = _exact_at(master, oracle, options, st, centre, st.budget, stop, decisions)
        master.add(got.columns)
    lam_out = None
    while True:
        if st.rounds >= options.rounds:
            return st.result(Termination.OTHER_LIMIT, t0)
        if stop is not None and time.perf_counter() > stop:
            if stop != deadline and lam_out is not None:
                # at the centre (its bound, a pricing's with a small budget or a
                # heuristic round's, can only rise there), then at the last duals
                centre = st.centre
                if centre is not None:
                    _last_exact(master, oracle, options, st, centre, deadline, decisions)
                if centre is not lam_out:
                    _last_exact(master, oracle, options, st, lam_out, deadline, decisions)
            return st.result(Termination.TIME_LIMIT, t0)
        z, lam_out, mu = master.solve()
        st.solved(z)
        if z - st.best <= options.tolerance * max(abs(z), 1e-9):
            return st.result(Termination.OPTIMAL, t0)
        alpha = _alpha(options.alpha, st)
        lam = lam_out if st.centre is None else alpha * st.centre + (1 - alpha) * lam_out
        upper = _best_known(master, lam)
        got = oracle.price(
            lam, upper, beam=options.beam, keep=options.keep, deadline=stop, decisions=decisions
        )
        st.observe(lam, _bound(master, lam, got))
        if st.stall < options.stall and _enter(master, got, lam_out, mu, z):
            continue
        got = _exact(master, oracle, options, st, lam, got, stop, decisions)
        if _enter(master, got, lam_out, mu, z):
            st.mispricings = 0
        elif alpha > 0:
            st.mispricings += 1
        elif got.exact.all():  # nothing prices out at the master's own duals
            return st.result(Termination.OPTIMAL, t0)
        elif stop is not None and time.perf_counter() > stop:
            continue  # the clock cut the pricing short, not the label budget
        elif st.budget is not None and st.budget < options.labels_max:
            st.budget *= 4  # some job ran out of labels: look further next round
        else:
            return st.result(Termination.OTHER_LIMIT, t0)


def _exact(
    master: Master,
    oracle: Oracle,
    options: CgOptions,
    st: _State,
    lam: np.ndarray,
    heuristic: Round,
    deadline: float | None,
    decisions: tuple[Decision, ...],
) -> Round:
    """The exact round at ``lam``, its bound observed; the heuristic's schedules are
    its incumbents (it looks below them) and join its columns."""
    got = oracle.price(
        lam,
        heuristic.value,
        beam=None,
        keep=options.keep,
        budget=st.budget,
        deadline=deadline,
        decisions=decisions,
    )
    got = replace(got, columns=heuristic.columns + got.columns)
    st.exact += 1
    st.stall = 0
    st.observe(lam, _bound(master, lam, got))
    return got


def _exact_at(
    master: Master,
    oracle: Oracle,
    options: CgOptions,
    st: _State,
    lam: np.ndarray,
    budget: int | None,
    deadline: float | None,
    decisions: tuple[Decision, ...],
) -> Round:
    """One exact pricing at ``lam`` within ``budget`` labels per job, below each job's
    best column in the master, its bound observed; the round, whose columns the caller
    may add."""
    got = oracle.price(
        lam,
        _best_known(master, lam),
        beam=None,
        keep=options.keep,
        budget=budget,
        deadline=deadline,
        decisions=decisions,
    )
    st.exact += 1
    st.observe(lam, _bound(master, lam, got))
    return got


def _last_exact(
    master: Master,
    oracle: Oracle,
    options: CgOptions,
    st: _State,
    lam: np.ndarray,
    deadline: float | None,
    decisions: tuple[Decision, ...],
) -> None:
    """One exact pricing at ``lam`` with the largest label budget, its bound observed
    (its columns are not added: the master is not solved again)."""
    budget = None if st.budget is None else max(options.labels_max, st.budget)
    _exact_at(master, oracle, options, st, lam, budget, deadline, decisions)


def _alpha(alpha: float, st: _State) -> float:
    """The smoothing weight of this round (0 before any centre; see the module)."""
    if st.centre is None:
        return 0.0
    return max(0.0, 1.0 - (st.mispricings + 1) * (1.0 - alpha))


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
    return float(np.sum(got.proved)) + label_terms(master.space, lam)


def _enter(master: Master, got: Round, lam: np.ndarray, mu: np.ndarray, z: float) -> bool:
    """Add the round's columns that price out at the master's duals; whether any did."""
    if not got.columns:
        return False
    held = _holdings(master.space, got.columns) @ lam.ravel()
    rc = np.array([c.cost for c in got.columns]) + held - mu[[c.job for c in got.columns]]
    eps = 1e-7 * max(1.0, abs(z))  # HiGHS's dual feasibility tolerance, scaled
    return master.add([c for c, r in zip(got.columns, rc, strict=True) if r < -eps]) > 0
