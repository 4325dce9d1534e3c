"""Gantt charts of plans (matplotlib): one row per GPU, one colour per job."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from instances import Instance, Plan


def gantt_figure(instance: Instance, plan: Plan, title: str = "") -> Figure:
    """A Gantt chart of ``plan``; shared GPUs show their tenants stacked."""
    rows = [(n.id, g) for n in instance.nodes for g in range(n.num_gpus)]
    index = {r: i for i, r in enumerate(rows)}
    jobs = [j.id for j in instance.jobs]
    cmap = plt.get_cmap("tab20")
    colour = {j: cmap(i % 20) for i, j in enumerate(jobs)}
    fig, ax = plt.subplots(figsize=(10, 0.35 * len(rows) + 1.5))
    for s in plan:
        height = 0.8 / instance.max_share if s.config.shared else 0.8
        for ref in s.gpus:
            y = index[ref] - 0.4
            if s.config.shared:  # tenants side by side in the row, by job order
                y += height * (jobs.index(s.job) % instance.max_share)
            ax.broken_barh([(s.start, s.end - s.start)], (y, height), color=colour[s.job])
        ref = s.gpus[0]
        ax.text(s.start, index[ref], f" {s.job}", va="center", fontsize=6)
    for j in instance.jobs:
        ax.axvline(j.due, color=colour[j.id], linestyle=":", linewidth=0.8)
    ax.set_yticks(range(len(rows)), [f"{n}:{g}" for n, g in rows], fontsize=7)
    ax.set_xlabel("hours (dotted: due dates)")
    ax.set_title(title or instance.name, fontsize=9)
    ax.invert_yaxis()
    fig.tight_layout()
    return fig


def gantt(instance: Instance, plan: Plan, path: str | Path, title: str = "") -> Path:
    """Write a PNG Gantt chart of ``plan``."""
    fig = gantt_figure(instance, plan, title)
    path = Path(path)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path
