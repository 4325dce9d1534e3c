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


# heuristic/'s policy families: each may import heuristic.core, none another family
# (a family that truly reuses STS's profile would be listed here with "sts")
FAMILIES = ("sts", "baselines", "seeds")
FAMILY_MAY_USE: dict[str, set[str]] = {family: set() for family in FAMILIES}


def _imported_modules(path: Path) -> set[tuple[str, int]]:
    """(dotted module, line) of every absolute import in the file."""
    found: set[tuple[str, int]] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update((a.name, node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add((node.module, node.lineno))
            # "from heuristic import sts" imports the subpackage sts
            found.update((f"{node.module}.{a.name}", node.lineno) for a in node.names)
    return found


def _imported_packages(path: Path) -> set[tuple[str, int]]:
    """(top-level package, line) of every absolute import in the file."""
    return {(name.split(".")[0], line) for name, line in _imported_modules(path)}


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


def family_imports(family: str) -> list[str]:
    """``file:line imports heuristic.X`` for each import, from a module of ``family``,
    of another family X; ``core`` may import no family at all."""
    others = set(FAMILIES) - {family} - FAMILY_MAY_USE.get(family, set())
    found = set()
    for path in sorted((ROOT / "heuristic" / family).rglob("*.py")):
        for name, line in _imported_modules(path):
            parts = name.split(".")
            if parts[0] == "heuristic" and len(parts) > 1 and parts[1] in others:
                found.add((str(path.relative_to(ROOT)), line, parts[1]))
    return [f"{f}:{line} imports heuristic.{x}" for f, line, x in sorted(found)]


@pytest.mark.parametrize("family", ("core", *FAMILIES))
def test_no_policy_family_imports_another(family):
    assert (ROOT / "heuristic" / family / "__init__.py").is_file()
    assert family_imports(family) == []


def test_the_family_walk_sees_an_import_of_another_family(tmp_path, monkeypatch):
    for family in ("core", "seeds"):
        (tmp_path / "heuristic" / family).mkdir(parents=True)
    (tmp_path / "heuristic" / "seeds" / "bad.py").write_text(
        "from heuristic.sts.profile import exact_profile\nfrom heuristic import baselines\n"
    )
    (tmp_path / "heuristic" / "core" / "bad.py").write_text("import heuristic.seeds.gandiva\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert family_imports("seeds") == [
        "heuristic/seeds/bad.py:1 imports heuristic.sts",
        "heuristic/seeds/bad.py:2 imports heuristic.baselines",
    ]
    assert family_imports("core") == ["heuristic/core/bad.py:1 imports heuristic.seeds"]
