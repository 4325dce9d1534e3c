"""The campaign report's charts (:mod:`experiments.report`), each a PNG data URI."""

from __future__ import annotations

import base64

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from experiments.gantt import gantt_figure, literal, png
from experiments.store import Store
from validation.online import busy_gpus


def data_uri(fig: Figure) -> str:
    """The figure as a PNG data URI, for a self-contained page."""
    return "data:image/png;base64," + base64.b64encode(png(fig)).decode()


def grouped_bars(table: pd.DataFrame, column: str, err: str | None, ylabel: str, title: str) -> str:
    """Bars of ``column`` per scenario, one per policy, with ``err`` as error bars."""
    scenarios = list(dict.fromkeys(table.index.get_level_values(0)))
    policies = list(dict.fromkeys(table.index.get_level_values(1)))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(scenarios) * len(policies) / 3), 4))
    width = 0.8 / len(policies)
    x = np.arange(len(scenarios))
    for k, pol in enumerate(policies):
        vals = [table[column].get((s, pol), np.nan) for s in scenarios]
        errs = [table[err].get((s, pol), 0.0) for s in scenarios] if err else None
        ax.bar(x + k * width, vals, width, yerr=errs, capsize=2, label=literal(str(pol)))
    labels = [literal(str(s)) for s in scenarios]
    ax.set_xticks(x + 0.4 - width / 2, labels, rotation=20, ha="right", fontsize=7)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return data_uri(fig)


def cost_breakdown(table: pd.DataFrame) -> str:
    """Mean energy and tardiness per run, stacked, per (scenario, policy)."""
    labels = [literal(f"{s} / {p}") for s, p in table.index]
    fig, ax = plt.subplots(figsize=(8, 0.25 * len(labels) + 1.5))
    y = np.arange(len(labels))
    ax.barh(y, table["energy"], label="energy")
    ax.barh(y, table["tardiness"], left=table["energy"], label="tardiness")
    ax.set_yticks(y, labels, fontsize=6)
    ax.invert_yaxis()
    ax.set_xlabel("mean cost per run")
    ax.set_title("Cost breakdown: expected energy vs tardiness", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return data_uri(fig)


def utilisation_chart(store: Store, campaign: str, online: pd.DataFrame) -> tuple[str, str]:
    """Busy GPUs over time of the online runs of the first online run's scenario and
    seed, and the caption naming them."""
    first = online.iloc[0]
    same = online[(online["scenario"] == first["scenario"]) & (online["seed"] == first["seed"])]
    fig, ax = plt.subplots(figsize=(8, 3.5))
    for _, r in same.iterrows():
        inst, plan = store.plan_of(campaign, r["key"])
        steps = busy_gpus(plan)
        gpus = sum(n.num_gpus for n in inst.nodes)
        ax.step(
            steps["time"], steps["busy"] / gpus, where="post", label=literal(str(r["policy"])), lw=1
        )
    ax.set_xlabel("hours")
    ax.set_ylabel("busy GPUs / all GPUs")
    caption = f"{first['scenario']}, seed {first['seed']}"
    ax.set_title(literal(f"GPU utilisation over time ({caption})"), fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return data_uri(fig), caption


def gantt_chart(store: Store, campaign: str, online: pd.DataFrame) -> tuple[str, str]:
    """The Gantt chart of an online STS run (else of the first online run), and its
    caption."""
    pick = online[online["policy"] == "sts"]
    r = (pick if not pick.empty else online).iloc[0]
    inst, plan = store.plan_of(campaign, r["key"])
    caption = f"{r['policy']} on {r['scenario']}, seed {r['seed']}"
    return data_uri(gantt_figure(inst, plan, title=f"Gantt: {caption}")), caption


def gap_chart(gaps: pd.DataFrame) -> str:
    """Box plots of each policy's gap to the clairvoyant bound."""
    policies = list(dict.fromkeys(gaps["policy"]))
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.boxplot([100 * gaps[gaps["policy"] == p]["gap"] for p in policies], showmeans=True)
    ax.set_xticks(range(1, len(policies) + 1), [literal(str(p)) for p in policies])
    ax.set_ylabel("cost above the clairvoyant bound (%)")
    ax.set_title("Gap to the clairvoyant bound, per scenario and seed", fontsize=9)
    fig.tight_layout()
    return data_uri(fig)
