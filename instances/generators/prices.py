"""Real price and carbon series laid over an instance (docs/model.md, 'Energy prices and
carbon over time'; the data in instances/data/README.md).

``lay_prices(instance, "au-nsw-2023:240", carbon_price=100)`` gives the instance the
bundled series starting 240 hours into it: the instance's time 0 is that hour. The
series is rotated (its hours from the offset on, then those before it), so it repeats
with its full length as period and every hour of it is used. Its prices:

- negative hours are clipped at 0 (a negative price would pay for burned energy; files
  refuse them);
- are scaled so that their mean over the whole series is the instance's
  ``energy_price``: the shape is real, the level the instance's own, so the default
  tardiness weights stay ten times the typical hour's energy cost, and a price-blind
  plan pays about what it paid before, on average over the hours.

The carbon intensity is laid as published (g CO2-eq/kWh), priced at ``carbon_price``
per tonne (default 0: counted, not charged).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np
import pandas as pd

from instances.energy import Carbon, Series
from instances.errors import InstanceError
from instances.limits import MAX_CARBON, MAX_PRICE
from instances.model import Instance

# name -> (bundled file, what it is)
SERIES: dict[str, tuple[str, str]] = {
    "au-nsw-2023": (
        "au_nsw_2023_jun_sep.csv.gz",
        "New South Wales, June-September 2023: AEMO NSW1 hourly prices, Electricity Maps "
        "carbon intensity",
    ),
}
DIGITS = 7  # decimals of a laid price (per kWh): files stay small, means exact to 1e-7


@dataclass(frozen=True)
class RealSeries:
    """One bundled series: hourly prices (currency per MWh, as published) and carbon
    intensity (g CO2-eq/kWh), from its first hour (``start``, UTC)."""

    name: str
    start: str
    price_per_mwh: np.ndarray
    carbon_g_per_kwh: np.ndarray

    @property
    def hours(self) -> int:
        return len(self.price_per_mwh)


@cache
def real_series(name: str) -> RealSeries:
    """The bundled series ``name`` (one of ``SERIES``)."""
    if name not in SERIES:
        raise InstanceError("prices", name, f"unknown series; bundled: {sorted(SERIES)}")
    raw = resources.files("instances.data").joinpath(SERIES[name][0]).read_bytes()
    df = pd.read_csv(io.BytesIO(raw), compression="gzip")
    return RealSeries(
        name,
        str(df["utc"].iloc[0]),
        df["price_aud_per_mwh"].to_numpy(dtype=float),
        df["carbon_g_per_kwh"].to_numpy(dtype=float),
    )


def parse_prices(text: str) -> tuple[str, int]:
    """``NAME`` or ``NAME:OFFSET`` (whole hours into the series) as (name, offset)."""
    name, colon, offset = text.partition(":")
    series = real_series(name)
    if not colon:
        return name, 0
    try:
        hours = int(offset)
    except ValueError:
        raise InstanceError("prices", text, "the offset after ':' is whole hours") from None
    if not 0 <= hours < series.hours:
        raise InstanceError(
            "prices", text, f"the offset must be in [0, {series.hours}) hours of {name}"
        )
    return name, hours


def lay_prices(instance: Instance, text: str, carbon_price: float = 0.0) -> Instance:
    """``instance`` billed at the bundled series ``text`` (``NAME[:OFFSET]``), its
    prices scaled to a mean of the instance's ``energy_price``, its carbon priced at
    ``carbon_price`` per tonne."""
    name, offset = parse_prices(text)
    series = real_series(name)
    order = np.roll(np.arange(series.hours), -offset)
    clipped = np.clip(series.price_per_mwh[order], 0.0, None)
    mean = float(clipped.mean())
    if mean <= 0:  # pragma: no cover - the bundled series are not all free
        raise InstanceError("prices", text, "the series is free at every hour")
    prices = np.round(clipped * (instance.energy_price / mean), DIGITS)
    if prices.max() > MAX_PRICE:  # named here: the series' own check knows no field
        raise InstanceError(
            "prices",
            text,
            f"scaled to a mean of the energy price {instance.energy_price:g}, its dearest "
            f"hour costs {float(prices.max()):g}, above {MAX_PRICE:g} (docs/model.md, bounds)",
        )
    carbon = Carbon(
        Series.regular(1.0, tuple(series.carbon_g_per_kwh[order]), "repeat", upper=MAX_CARBON),
        carbon_price,
    )
    laid = Series.regular(1.0, tuple(prices), "repeat", upper=MAX_PRICE)
    return instance.replace(prices=laid, carbon=carbon)
