"""The campaigns' statistics: 95% confidence intervals of means over seeds."""

from __future__ import annotations

import math

import pandas as pd

# two-sided 95% Student t quantiles by degrees of freedom (1..30); 1.96 beyond
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip


def t95(n: int) -> float:
    """The 95% t quantile for a mean of ``n`` values (n >= 2)."""
    return _T95[n - 2] if n - 1 <= len(_T95) else 1.96


def ci95(values: pd.Series) -> float:
    """Half-width of the 95% confidence interval of the mean; NaN for one value, which
    gives no interval (a 0 there read as certainty: the tables print it as n/a)."""
    n = int(values.count())
    return t95(n) * float(values.std(ddof=1)) / math.sqrt(n) if n > 1 else math.nan
