"""simcore's modules import one way: no import circle among them.

The graph is read from the source with :mod:`ast`, so no module is imported to build it. It holds
every ``import`` and ``from ... import`` of a simcore module wherever it stands: at module level,
inside functions (a late import still ties the two modules together) and under ``if TYPE_CHECKING:``
(a type named in an annotation is a module the reader must read too). ``from package import name``
is an edge to the submodule ``package.name`` when there is one, else to the package. The import of a
package's ``__init__`` that Python runs before any of its submodules is not an edge: package
``__init__`` files only re-export, so counting it would make every package a circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the simcore package under ``root``."""
    modules = {}
    for path in sorted((root / "simcore").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _imported(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The simcore modules that module ``name`` imports anywhere in its source."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return {m for m in found if m in modules and m != name}


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    modules = _modules(root)
    return {name: _imported(name, path, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as a path ``[a, b, ..., a]``, or None when the graph has none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_no_import_circle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_graph_sees_every_kind_of_import(tmp_path):
    """The graph finds circles made by late imports, type-only imports and ``from package import module``."""
    pkg = tmp_path / "simcore"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .a import A\n")
    (pkg / "a.py").write_text("from .sub import b\nA = 1\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..c import C\n")
    (pkg / "c.py").write_text("def f():\n    import simcore.a\n")
    graph = import_graph(tmp_path)
    assert graph["simcore"] == {"simcore.a"}
    assert graph["simcore.a"] == {"simcore.sub.b"}  # the submodule, not the package it is in
    assert graph["simcore.sub"] == set()
    assert find_cycle(graph) == ["simcore.a", "simcore.sub.b", "simcore.c", "simcore.a"]
    (pkg / "c.py").write_text("def f():\n    pass\n")
    assert find_cycle(import_graph(tmp_path)) is None


def test_graph_reads_this_repository():
    """The real tree is parsed: all its modules, and a known edge between two of them."""
    graph = import_graph()
    assert len(graph) == len(list((ROOT / "simcore").rglob("*.py")))
    assert "simcore.models.kenlm_tools" in graph["simcore.measures.ppl"]
