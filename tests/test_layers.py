"""Imports flow one way (the README's layout): each package uses only those below it.

Every module of every package is parsed and each of its imports, including those made
inside functions (lazy imports are still dependencies), is checked against the layer
order. Registry strings ("milp.rolling:RollingMilpPolicy") are registered by the layer
that owns them, so they are not imports of the layer below.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# bottom to top; a package may import itself and any package before it
LAYERS = ("instances", "heuristic", "validation", "milp", "experiments", "benchmarks")


def _imported_packages(path: Path) -> set[tuple[str, int]]:
    """(top-level package, line) of every absolute import in the file."""
    found: set[tuple[str, int]] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update((a.name.split(".")[0], node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add((node.module.split(".")[0], node.lineno))
    return found


def upward_imports(package: str) -> list[str]:
    """``file:line imports X`` for each import of a package above ``package``."""
    rank = LAYERS.index(package)
    above = set(LAYERS[rank + 1 :])
    return [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for name, line in sorted(_imported_packages(path))
        if name in above
    ]


@pytest.mark.parametrize("package", LAYERS)
def test_no_package_imports_one_above_it(package):
    assert (ROOT / package).is_dir()
    assert upward_imports(package) == []


def test_the_walk_sees_lazy_imports(tmp_path, monkeypatch):
    # a check that cannot fail is no check: an import inside a function is found
    pkg = tmp_path / "heuristic"
    pkg.mkdir()
    (pkg / "bad.py").write_text("def f():\n    from milp import solve\n    return solve\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert upward_imports("heuristic") == ["heuristic/bad.py:2 imports milp"]
