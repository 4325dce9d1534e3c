"""Writes ``instances/data/au_nsw_2023_jun_sep.csv.gz``: four months of hourly electricity
prices and grid carbon intensity of New South Wales (Australia), the slice that
``gpusched generate ... --prices au-nsw-2023`` lays over an instance.

Inputs, from HewlettPackard/green-dcc at commit 3f6ea95cb835 (``git show`` them out):

- ``data/electricity_prices/processed/AU-NSW/2023/AU-NSW_electricity_prices_2023.csv``:
  AEMO's NSW1 regional reference price (RRP, AUD/MWh) of each 5-minute dispatch
  interval, averaged by hour of the interval's end in market time (AEST, UTC+10; the
  column header says USD but the processed folder keeps the local currency). Each month's
  AEMO file also holds the interval ending at 00:00 of the next month, so that hour
  appears twice: once as that single interval and once as the mean of the 11 others.
  They are joined as the hour's mean of 12 intervals, ``(single + 11 x mean) / 12``, the
  single one told by having at most two decimals (AEMO's prices have two); where both
  do, their plain mean is taken.
- ``data/carbon_intensity/AU-NSW/2023/AU-NSW_2023_hourly.csv``: Electricity Maps'
  hourly carbon intensity of consumption, direct emissions (g CO2-eq/kWh), UTC.

Output columns: ``utc`` (the hour's start, ISO 8601), ``price_aud_per_mwh`` (negative
prices kept as published; the generator clips them), ``carbon_g_per_kwh``. Rows: the
hours 2023-06-01 00:00 to 2023-09-30 23:00 AEST, 2,928 hours.

Usage: ``python scripts/slice_au_nsw.py PRICES.csv CARBON.csv OUT.csv.gz``.
"""

from __future__ import annotations

import gzip
import sys

import pandas as pd

START, END = pd.Timestamp("2023-06-01 00:00"), pd.Timestamp("2023-09-30 23:00")  # AEST
AEST = pd.Timedelta(hours=10)


def _two_decimals(x: float) -> bool:
    return abs(round(x, 2) - x) < 1e-9


def hourly_prices(path: str) -> pd.Series:
    """The hourly mean price by hour start in AEST, month-boundary duplicates joined."""
    df = pd.read_csv(path)
    df.columns = ["hour", "price"]
    df["hour"] = pd.to_datetime(df["hour"])
    out = {}
    for hour, group in df.groupby("hour"):
        values = group["price"].tolist()
        if len(values) == 1:
            out[hour] = values[0]
            continue
        single = [v for v in values if _two_decimals(v)]
        mean = [v for v in values if not _two_decimals(v)]
        if len(values) == 2 and len(single) == 1 and len(mean) == 1:
            out[hour] = (single[0] + 11 * mean[0]) / 12
        else:
            out[hour] = sum(values) / len(values)
    return pd.Series(out).sort_index()


def main(prices_csv: str, carbon_csv: str, out: str) -> None:
    prices = hourly_prices(prices_csv)
    hours = pd.date_range(START, END, freq="h")
    missing = hours.difference(prices.index)
    if len(missing):
        raise SystemExit(f"prices missing for {len(missing)} hours, e.g. {missing[0]}")
    carbon = pd.read_csv(carbon_csv)
    carbon.index = pd.to_datetime(carbon["Datetime (UTC)"])
    intensity = carbon["Carbon Intensity gCO₂eq/kWh (direct)"]
    utc = hours - AEST
    gaps = utc.difference(intensity.index)
    if len(gaps):
        raise SystemExit(f"carbon missing for {len(gaps)} hours, e.g. {gaps[0]}")
    table = pd.DataFrame(
        {
            "utc": utc.strftime("%Y-%m-%dT%H:%MZ"),
            "price_aud_per_mwh": prices.loc[hours].round(4).to_numpy(),
            "carbon_g_per_kwh": intensity.loc[utc].to_numpy(),
        }
    )
    text = table.to_csv(index=False, lineterminator="\n")
    with open(out, "wb") as f:
        f.write(gzip.compress(text.encode(), compresslevel=9, mtime=0))
    print(f"wrote {out}: {len(table)} hours")


if __name__ == "__main__":
    main(*sys.argv[1:4])
