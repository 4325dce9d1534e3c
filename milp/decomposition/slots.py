"""One slot of one job, vectorised: the progress, energy and tardiness of a slot run on a
choice from a given progress, exactly as :func:`milp.decomposition.columns.schedule_cost`
counts them (and so as the evaluator does), for many labels at once. The pricing
dynamic program and its completion bound both step through it."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from instances import TardinessMode
from milp.decomposition.columns import TOL_E, TOL_STOP
from milp.decomposition.space import JobSpace


@dataclass(frozen=True)
class SlotModel:
    """A job's slot arithmetic: per choice its configuration's epochs per slot
    (``speed``), energy cost per epoch (``ecost``) and a whole slot's energy cost at its
    power (``opower``) at the instance's one energy price; the stopping points
    (``stops``, block starts, survival ``q`` and tardiness weights ``late``); the
    overhead ``delta`` (hours) and the positions in a run that still carry some
    (``positions``).

    With prices that change by the slot (``price``: a kWh's price, carbon in, per slot
    of the horizon, as :func:`milp.data.slot_prices` gives it; ``None``: one price), a
    slot ``t`` costs per epoch ``energy * price[t]`` and per slot of power ``kwh *
    price[t]`` instead (:meth:`rates`), as the compact MILP and the evaluator charge it
    when the series are constant within each slot."""

    slot: float
    big_e: float
    delta: float
    positions: int
    omega: float
    due: float
    first: int
    last: int
    speed: np.ndarray  # per choice
    ecost: np.ndarray
    opower: np.ndarray
    k: np.ndarray  # configuration of each choice
    stops: np.ndarray  # e_b
    starts: np.ndarray  # e_{b-1}
    q: np.ndarray  # P(N >= e_b)
    late: np.ndarray  # tardiness weight of reaching e_b
    knots: np.ndarray  # 0 and the stops
    phi_knots: np.ndarray  # Phi there
    energy: np.ndarray  # kWh per epoch, per choice
    kwh: np.ndarray  # kWh of a whole slot at its power, per choice
    price: np.ndarray | None  # per slot of the horizon; None: the one price above

    @classmethod
    def of(cls, js: JobSpace, slot: float, mode: TardinessMode) -> SlotModel:
        jd = js.jd
        dist = jd.job.distribution
        k = np.array([ch.k for ch in js.choices], dtype=np.int64)
        stops = np.array(dist.stops, dtype=float)
        probs = np.array(dist.probabilities, dtype=float)
        late = probs.copy() if mode == "expected" else np.zeros(len(stops))
        if mode == "worst_case":
            late[-1] = 1.0
        delta = jd.relaunch * slot
        q = np.array(dist.block_survival, dtype=float)
        return cls(
            slot=slot,
            big_e=float(dist.max_epochs),
            delta=delta,
            positions=max(1, math.ceil(delta / slot - 1e-12)),
            omega=jd.omega,
            due=jd.job.due,
            first=jd.first_slot,
            last=jd.last_slot,
            speed=np.array(jd.speed)[k],
            ecost=np.array(jd.cost)[k],
            opower=np.array(jd.slot_power_cost)[k],
            k=k,
            stops=stops,
            starts=np.concatenate([[0.0], stops[:-1]]),
            q=q,
            late=late,
            knots=np.concatenate([[0.0], stops]),
            phi_knots=np.concatenate(
                [[0.0], np.cumsum(q * np.diff(np.concatenate([[0.0], stops])))]
            ),
            energy=np.array(jd.energy)[k],
            kwh=np.array(jd.slot_kwh)[k],
            price=None if jd.slot_price is None else np.array(jd.slot_price),
        )

    def rates(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Per choice, the cost of an epoch and of a whole slot at its power in slot
        ``t`` (the same in every slot at one price)."""
        if self.price is None:
            return self.ecost, self.opower
        return self.energy * self.price[t], self.kwh * self.price[t]

    def window_prices(self) -> np.ndarray:
        """The price of a kWh in each slot of the window (prices by the slot only)."""
        assert self.price is not None
        return self.price[self.first : self.last + 1]

    def phi(self, w: np.ndarray) -> np.ndarray:
        """Expected epochs run among the first ``w``: the integral of the survival,
        linear between the stops."""
        return np.interp(w, self.knots, self.phi_knots)

    def beyond(self, w: np.ndarray) -> np.ndarray:
        """``P(N > w)``, as ``EpochDistribution.beyond``."""
        b = np.searchsorted(self.stops, w, side="right")
        return np.where(b < len(self.q), self.q[np.minimum(b, len(self.q) - 1)], 0.0)

    def step(
        self, t: int, w: np.ndarray, choice: np.ndarray, lost: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Slot ``t`` on ``choice`` from progress ``w`` with ``lost`` hours of overhead:
        the progress after it, its cost (energy at the slot's price of a kWh and
        tardiness; the master's prices not included) and whether the job completes in
        it."""
        ecost, opower = self.rates(t)
        return self.advance(t, w, choice, lost, ecost, opower)

    def advance(
        self,
        t: int,
        w: np.ndarray,
        choice: np.ndarray,
        lost: np.ndarray,
        ecost: np.ndarray,
        opower: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`step` with the energy costs given per choice (``ecost`` per epoch,
        ``opower`` per slot of power): at a price of 1, ``energy`` and ``kwh`` give the
        slot's expected kWh."""
        w1 = np.minimum(self.big_e, w + (self.slot - lost) * self.speed[choice] / self.slot)
        done = self.big_e - w1 <= TOL_E * max(1.0, self.big_e)
        w1 = np.where(done, self.big_e, w1)
        cost = ecost[choice] * (self.phi(w1) - self.phi(w))
        cost = cost + opower[choice] * (lost / self.slot) * self.beyond(w)
        late = self.omega * max(0.0, (t + 1) * self.slot - self.due)
        if late > 0:
            e = self.stops
            crossed = (w[:, None] < e - TOL_STOP) & (e - TOL_STOP <= w1[:, None])
            cost = cost + late * (crossed @ self.late)
        return w1, cost, done
