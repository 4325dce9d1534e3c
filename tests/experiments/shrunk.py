"""Bundled campaigns shrunk for a test: one seed, a few jobs, one load and one rate,
the policies given (the ``prices`` and ``idle`` campaigns share the families)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from experiments.campaign import load_campaign, parse_campaign
from experiments.runner import run_campaign
from experiments.store import Store


def shrunk(name: str, policies: tuple[str, ...]) -> str:
    """The bundled campaign ``name``'s text with the contended and thesis families cut
    to 0.5 hours of the week at load 1.2 and 6 jobs on 3 nodes at the high rate, one
    seed, and only ``policies``."""
    text = load_campaign(name).text
    text = text.replace("seeds = 3", "seeds = 1").replace("hours = 6.0", "hours = 0.5")
    text = text.replace("jobs = 60", "jobs = 6").replace("nodes = 10", "nodes = 3")
    text = text.replace("load = [0.6, 1.2]", "load = [1.2]")
    text = text.replace('rate = ["high", "exponential", "low"]', 'rate = ["high"]')
    table = "[policies]\n" + "".join(f"{p} = {{}}\n" for p in policies) + "\n"
    return re.sub(r"\[policies\].*?(?=\[\[scenarios\]\])", table, text, flags=re.S)


def run_small(name: str, text: str, folder: Path, runs: int) -> pd.DataFrame:
    """Run the campaign ``text`` in one process into a store under ``folder``; check
    that all ``runs`` ran without error and return its runs' table."""
    c = parse_campaign(text, base=Path("."), default_name=name)
    store = folder / f"{name}.sqlite"
    out = run_campaign(c, store, workers=1, progress=False)
    assert out.errors == () and out.ran == runs
    with Store(store, readonly=True) as s:
        table = s.runs(name)
    assert (table["status"] == "ok").all()
    return table
