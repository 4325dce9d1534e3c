"""The README's library snippet runs as written: its fenced python block is executed
as is, in a folder holding the ``i.json`` it reads (a small slotted suite instance, so
that its MILP solves take seconds)."""

from __future__ import annotations

import re
from pathlib import Path

from instances import write_instance
from instances.generators.suite import milp_suite

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_snippet() -> str:
    """The README's one fenced python block."""
    blocks = re.findall(r"^```python\n(.*?)^```", README.read_text(), re.S | re.M)
    assert len(blocks) == 1, f"README.md has {len(blocks)} python blocks, expected 1"
    return blocks[0]


def test_the_readme_snippet_shows_policy_options_and_a_result_summary():
    code = readme_snippet()
    assert 'make_policy("sts", reserve=0.3)' in code
    assert ".summary()" in code


def test_the_readme_snippet_runs_as_written(tmp_path, monkeypatch, capsys):
    write_instance(milp_suite()[0], tmp_path / "i.json")
    monkeypatch.chdir(tmp_path)
    scope: dict[str, object] = {"__name__": "readme"}
    exec(compile(readme_snippet(), str(README), "exec"), scope)
    out = capsys.readouterr().out
    # the MILP's and the search's summaries, in the one vocabulary
    assert "MILP of 'suite-share-2n4j-s1'" in out and "STS search on" in out
    for label in ("objective", "bound", "gap", "status", "runtime"):
        assert re.search(rf"^  {label} ", out, re.M), label
    assert "model" in scope and "sets" in scope  # it ran to its last line
