"""No private name crosses a module boundary: a ``_name`` is imported from nowhere, and read on another
module's object only where that module defines it (issue 39). None is left."""

from __future__ import annotations

import ast
from pathlib import Path

from .conftest import ROOT

LEFT: set[tuple[str, str]] = set()  # (file, private name): a crossing allowed for now; none is


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _defined(tree: ast.AST) -> set[str]:
    """Names a module defines: functions, classes, assigned names and attributes, annotated fields."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            out.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
    return out


def crossings() -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    files = [*sorted((ROOT / "simcore").rglob("*.py")), *sorted((ROOT / "dashboard").rglob("*.py")),
             *sorted((ROOT / "pages").glob("*.py")), ROOT / "app.py"]
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        here = _defined(tree)
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                found |= {(rel, a.name) for a in node.names if _private(a.name)}
            elif isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in here:
                if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls", "st", "sys", "os")):
                    found.add((rel, node.attr))
    return found


def test_no_private_name_crosses_a_module_boundary():
    assert crossings() - LEFT == set()


def test_the_check_finds_a_crossing(tmp_path: Path, monkeypatch):
    """The scan sees both kinds of crossing (an import, another module's object) and not a module's own."""
    source = ("from .tables import _frame\nimport x\n\nclass A:\n    _mine = 1\n\n"
              "def f(a, b):\n    return x._theirs(a._mine, b._other)\n")
    (tmp_path / "simcore").mkdir()
    (tmp_path / "simcore" / "m.py").write_text(source)
    for folder in ("dashboard", "pages"):
        (tmp_path / folder).mkdir()
    (tmp_path / "app.py").write_text("")
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert crossings() == {("simcore/m.py", "_frame"), ("simcore/m.py", "_theirs"), ("simcore/m.py", "_other")}
