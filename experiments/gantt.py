"""Gantt charts of plans (matplotlib): one row per GPU, one colour per job."""

from __future__ import annotations

import io
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from instances import Instance, Plan
from instances.jsonfile import write_atomic


def literal(text: str) -> str:
    """``text`` as matplotlib draws it verbatim: a ``$`` escaped, so ids like ``$x$``
    are not parsed as mathtext (which fails on most such strings)."""
    return text.replace("$", r"\$")


def gantt_figure(instance: Instance, plan: Plan, title: str = "") -> Figure:
    """A Gantt chart of ``plan``; shared GPUs show their tenants stacked; a legend names
    each job's colour."""
    rows = [(n.id, g) for n in instance.nodes for g in range(n.num_gpus)]
    index = {r: i for i, r in enumerate(rows)}
    jobs = [j.id for j in instance.jobs]
    cmap = plt.get_cmap("tab20")
    colour = {j: cmap(i % 20) for i, j in enumerate(jobs)}
    columns = max(1, math.ceil(len(jobs) / 25))  # legend columns of at most 25 jobs
    height = max(0.35 * len(rows), 0.22 * min(len(jobs), 25)) + 1.5
    fig, ax = plt.subplots(figsize=(10 + 1.3 * columns, height), layout="constrained")
    for s in plan:
        height = 0.8 / instance.max_share if s.config.shared else 0.8
        for ref in s.gpus:
            y = index[ref] - 0.4
            if s.config.shared:  # tenants side by side in the row, by job order
                y += height * (jobs.index(s.job) % instance.max_share)
            ax.broken_barh([(s.start, s.end - s.start)], (y, height), color=colour[s.job])
        ref = s.gpus[0]
        ax.text(s.start, index[ref], literal(f" {s.job}"), va="center", fontsize=6)
    for j in instance.jobs:
        ax.axvline(j.due, color=colour[j.id], linestyle=":", linewidth=0.8)
    ax.set_yticks(range(len(rows)), [literal(f"{n}:{g}") for n, g in rows], fontsize=7)
    ax.set_xlabel("hours (dotted: due dates)")
    ax.set_title(literal(title or instance.name), fontsize=9)
    ax.invert_yaxis()
    legend = [Patch(color=colour[j], label=literal(j)) for j in jobs]
    ax.legend(
        handles=legend,
        title="jobs",
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize=6,
        title_fontsize=7,
        ncol=columns,
    )
    return fig


# for the HTML pages that embed these charts: records in the page itself that every
# image decoded, for readers and for the tests that open the pages in a headless browser
DECODE_SCRIPT = """
window.addEventListener("load", () => {
  const imgs = Array.from(document.images);
  const ok = imgs.filter((i) => i.complete && i.naturalWidth > 0).length;
  document.body.dataset.imagesDecoded = ok + "/" + imgs.length;
});
"""


def png(fig: Figure) -> bytes:
    """The figure as PNG bytes; the figure is closed."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return buf.getvalue()


def gantt(instance: Instance, plan: Plan, path: str | Path, title: str = "") -> Path:
    """Write a PNG Gantt chart of ``plan`` (whole or not at all)."""
    return write_atomic(path, png(gantt_figure(instance, plan, title)))
