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


def test_the_library_does_not_import_the_command_line():
    """simcore.cli sits on top: a library module importing it (as distributed.cluster once did for an
    argparse type) would make every user of the library load the parser."""
    outside = {name: sorted(m for m in deps if m == "simcore.cli" or m.startswith("simcore.cli."))
               for name, deps in import_graph().items()
               if not name.startswith("simcore.cli") and name not in ("simcore.__main__",)}
    assert {name: deps for name, deps in outside.items() if deps} == {}


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


# Each thing has one home (issue 39): an import names the module that defines the name, no module
# only re-exports others, and a file name means one thing. A package's ``__init__`` may gather its
# submodules' names for users (``simcore``, ``simcore.analysis``, ``simcore.selection`` are the
# public library, docs/library.md), but no code of the project, tests and benchmarks included,
# imports through one: a reader following an import lands where the name is defined, and a test
# patching a name patches the module that uses it.
IMPORTERS = ("simcore", "dashboard", "pages", "tests", "bench", "scripts")
PACKAGES = ("simcore", "dashboard")
SAME_ROLE = {"options.py"}  # corpora/, measures/, selection/: each package's options, one dataclass
REEXPORTS_LEFT: set[str] = set()  # modules allowed to keep re-exports for now: none


def _top_level(body: list[ast.stmt]):
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.With)):
            yield from _top_level(node.body)
            yield from _top_level(getattr(node, "orelse", []))
        elif isinstance(node, ast.Try):
            for part in (node.body, node.orelse, node.finalbody, *[h.body for h in node.handlers]):
                yield from _top_level(part)


def _defined_at_top(tree: ast.Module) -> set[str]:
    """What a module defines itself: functions, classes, assigned names (not what it imports)."""
    out: set[str] = set()
    for node in _top_level(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for target in getattr(node, "targets", None) or [node.target]:
                out |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return out


def _package_modules(root: Path) -> dict[str, Path]:
    modules = {}
    for top in PACKAGES:
        for path in sorted((root / top).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _compiled_modules(root: Path) -> set[str]:
    """Extension modules built from a C file beside the package's modules (setup.py)."""
    return {".".join(path.relative_to(root).with_suffix("").parts)
            for top in PACKAGES for path in sorted((root / top).rglob("*.c"))}


def indirect_imports(root: Path = ROOT) -> list[str]:
    """``file:line: module.name`` for every import of a name its module does not define."""
    modules, compiled = _package_modules(root), _compiled_modules(root)
    defined = {name: _defined_at_top(ast.parse(path.read_text(encoding="utf-8")))
               for name, path in modules.items()}
    files = [p for d in IMPORTERS if (root / d).is_dir() for p in sorted((root / d).rglob("*.py"))]
    files += [p for p in [root / "app.py"] if p.is_file()]
    found = []
    for path in files:
        rel = path.relative_to(root)
        here = ".".join(rel.with_suffix("").parts)
        is_init = path.name == "__init__.py"
        package = here.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                kept = package[: len(package) - node.level + 1]
                base = ".".join(kept + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base not in modules:
                continue
            if is_init and node.level and rel.parts[0] in PACKAGES:
                continue  # a package gathering its own submodules' names for its users
            for alias in node.names:
                whole = f"{base}.{alias.name}"
                if alias.name not in defined[base] and whole not in modules and whole not in compiled:
                    found.append(f"{rel.as_posix()}:{node.lineno}: {base}.{alias.name}")
    return found


def shim_modules(root: Path = ROOT) -> list[str]:
    """Modules (not a package's ``__init__``) with only imports, or keeping names to re-export."""
    found = []
    for path in _package_modules(root).values():
        rel = path.relative_to(root).as_posix()
        if path.name == "__init__.py":
            continue
        text = path.read_text(encoding="utf-8")
        body = [n for n in ast.parse(text).body
                if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))  # docstring
                and not (isinstance(n, ast.Assign)
                         and [getattr(t, "id", "") for t in n.targets] == ["__all__"])]
        if body and all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in body):
            found.append(f"{rel}: only re-exports")
        elif "noqa: F401" in text and rel not in REEXPORTS_LEFT:
            found.append(f"{rel}: an import kept only to be re-exported (noqa: F401)")
    return found


def repeated_file_names(root: Path = ROOT) -> dict[str, list[str]]:
    """File names used by more than one module of simcore/ or dashboard/, but for the same role."""
    by_name: dict[str, list[str]] = {}
    for path in _package_modules(root).values():
        if path.name not in ("__init__.py", "__main__.py", *SAME_ROLE):
            by_name.setdefault(path.name, []).append(path.relative_to(root).as_posix())
    return {name: sorted(paths) for name, paths in by_name.items() if len(paths) > 1}


def test_every_import_names_the_defining_module():
    assert indirect_imports() == []


def test_no_module_only_re_exports():
    assert shim_modules() == []


def test_no_two_modules_share_a_file_name():
    assert repeated_file_names() == {}


def test_the_house_checks_find_what_they_look_for(tmp_path):
    """An import through a re-export, a shim, a kept re-export and a repeated file name are all
    seen; an ``__init__`` gathering its submodules' names, or a module import, is no fault."""
    pkg = tmp_path / "simcore"
    (pkg / "sub").mkdir(parents=True)
    (tmp_path / "dashboard").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .real import thing\n")
    (pkg / "sub" / "real.py").write_text("def thing():\n    pass\n")
    (pkg / "old.py").write_text('"""Old."""\nfrom .sub.real import thing\n__all__ = ["thing"]\n')
    (pkg / "user.py").write_text("from .sub import thing\nfrom .sub import real\n"
                                 "from .old import thing as t\nX = thing()\n")
    (pkg / "keeper.py").write_text("from .sub.real import thing  # noqa: F401\nX = 1\n")
    (tmp_path / "dashboard" / "real.py").write_text("Y = 2\n")
    assert indirect_imports(tmp_path) == ["simcore/user.py:1: simcore.sub.thing",
                                          "simcore/user.py:3: simcore.old.thing"]
    assert sorted(shim_modules(tmp_path)) == [
        "simcore/keeper.py: an import kept only to be re-exported (noqa: F401)",
        "simcore/old.py: only re-exports"]
    repeated = {"real.py": ["dashboard/real.py", "simcore/sub/real.py"]}
    assert repeated_file_names(tmp_path) == repeated
