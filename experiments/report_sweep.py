"""A campaign's load sweep: scenarios that differ only in their offered ``load``
(docs/contended.md), read as curves of cost, energy and missed due dates against the
load, one line per policy with its 95% confidence band over seeds."""

from __future__ import annotations

import json
import math

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt
import pandas as pd

from experiments.gantt import literal
from experiments.report_charts import data_uri
from experiments.stats import ci95

# the figures a sweep plots: (run column, axis label, log scale)
PANELS = (
    ("total_cost", "total cost", True),
    ("energy_cost", "energy cost", False),
    ("missed", "due dates missed", False),
)


def sweep_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per family (a scenario's label before its grid values, for scenarios whose
    parameters differ only in ``load``), load and policy: runs, and the mean and 95%
    confidence half-width of each panel's figure. Empty where no family has two loads."""
    params = runs["params"].map(json.loads)
    swept = runs[params.map(lambda p: "load" in p)].copy()
    if swept.empty:
        return pd.DataFrame()
    p = params[swept.index]
    swept["load"] = p.map(lambda d: float(d["load"]))
    rest = p.map(lambda d: json.dumps({k: v for k, v in d.items() if k != "load"}, sort_keys=True))
    swept["family"] = swept["scenario"].str.split("[").str[0] + rest.map(lambda r: "\0" + r)
    g = swept.groupby(["family", "load", "policy"], sort=True)
    out = g.size().rename("runs").to_frame()
    for column, _, _ in PANELS:
        out[column] = g[column].mean()
        out[column + "_ci95"] = g[column].apply(ci95)
    out = out.reset_index()
    loads = out.groupby("family")["load"].nunique()
    out = out[out["family"].map(loads) >= 2]
    out["family"] = out["family"].str.split("\0").str[0]
    return out.reset_index(drop=True)


def sweep_chart(table: pd.DataFrame, family: str) -> str:
    """One family's curves: a panel per figure, a line per policy, its band the 95% CI."""
    rows = table[table["family"] == family]
    fig, axes = plt.subplots(1, len(PANELS), figsize=(13, 4.6))
    # up to 20 policies: a colour of tab20 and a line style each, so no two look alike
    palette = plt.get_cmap("tab20")
    for ax, (column, label, log) in zip(axes, PANELS, strict=True):
        for k, (policy, line) in enumerate(rows.groupby("policy", sort=False)):
            x = line["load"].to_numpy()
            y = line[column].to_numpy()
            name = literal(str(policy))
            style = ("-", "--", ":", "-.")[k % 4]
            colour = palette(k % palette.N)
            ax.plot(x, y, style, color=colour, marker="o", markersize=3, linewidth=1, label=name)
            # a load of one seed has no interval: the band narrows to its mean there, so
            # that the loads beside it keep theirs (a NaN erased both neighbours' bands)
            ci = line[column + "_ci95"].fillna(0.0).to_numpy()
            ax.fill_between(x, y - ci, y + ci, color=colour, alpha=0.1, linewidth=0)
        means = rows[column].to_numpy()
        if log and (means > 0).any():
            ax.set_yscale("log")
            # the means set the range: a band reaching below zero would stretch it to 1e-9
            ax.set_ylim(means[means > 0].min() / 2, means.max() * 2)
        ax.set_xlabel("offered load")
        ax.set_ylabel(label)
        ax.set_title(f"{literal(family)}: {label}", fontsize=9)
    axes[0].legend(fontsize=6, ncol=2)
    fig.tight_layout()
    return data_uri(fig)


def best_share(runs: pd.DataFrame, policy: str, within: float = 0.02) -> float:
    """The share of (scenario, seed) runs in which ``policy`` costs at most ``1 +
    within`` times the cheapest policy of that run (NaN where it did not run). ``runs``:
    the online runs (no reference)."""
    mine = runs[runs["policy"] == policy].set_index(["scenario", "seed"])["total_cost"]
    if mine.empty:
        return math.nan
    best = runs.groupby(["scenario", "seed"])["total_cost"].min()
    return float((mine <= (1 + within) * best.reindex(mine.index)).mean())
