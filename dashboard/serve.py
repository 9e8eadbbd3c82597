"""Start the dashboard with the modules its pages import already loaded.

``python -m dashboard.serve [streamlit run options]`` is ``streamlit run app.py`` (the options go to
it) with one difference: what app.py, the pages and the dashboard import (pandas, altair, scipy,
simcore's modules), the dashboard's own modules and what Streamlit imports at a page's first
``st.set_page_config`` (its emoji table) are imported first, before the server listens, so a server's
first page opens as fast as the next instead of paying for those imports (2-3 s of a first Home on 2
cores, then 0.15-0.5 s of the dashboard's and Streamlit's own before Home's title): the wait moves
to the server's start, before its address is printed. Streamlit runs every page in this process,
where each module is then found loaded. (Imported before the server starts, not in a thread beside
it: two threads importing modules that import each other can see one half-made.)
"""

from __future__ import annotations

import ast
import gc
import importlib
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LEFT_TO_PAGES = ("dashboard", "streamlit", "__future__")  # listed apart (below), or not modules
# Imported by Streamlit inside a page's first call: the emoji table (a large regular expression,
# compiled on import) behind st.set_page_config's icon, the icon names behind st.page_link's.
STREAMLIT_FIRST_RUN = ("streamlit.emojis", "streamlit.material_icon_names")


def page_imports(root: Path = ROOT) -> list[str]:
    """The modules app.py, the pages and the dashboard's modules import, at their top or inside a
    function (imported there so that a page's title is drawn first), in order, each once; not the
    dashboard's own nor streamlit's (their caches are made when a page runs, where streamlit's
    runtime is)."""
    names: list[str] = []
    scripts = [root / "app.py", *sorted((root / "pages").glob("*.py")),
               *sorted((root / "dashboard").rglob("*.py"))]
    for script in scripts:
        for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.append(node.module)
                names.extend(f"{node.module}.{a.name}" for a in node.names  # "from scipy import stats"
                             if _is_module(f"{node.module}.{a.name}"))
    return [n for n in dict.fromkeys(names)
            if n.split(".")[0] not in LEFT_TO_PAGES]


def dashboard_modules(root: Path = ROOT) -> list[str]:
    """Every module of the dashboard package but this launcher, packages before their modules. Their
    ``st.cache_data`` functions are made at import and find their storage when first called, in a
    page's run."""
    names = []
    for path in sorted((root / "dashboard").rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return [n for n in sorted(names, key=lambda n: (n.count("."), n)) if n != "dashboard.serve"]


def _is_module(name: str) -> bool:
    """Whether ``name`` is a module (its package imported to know), not a name defined in one."""
    if name.split(".")[0] in LEFT_TO_PAGES:
        return False
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def warm(names: list[str]) -> list[str]:
    """Import ``names``; those that fail are left to the page that needs them (which says why)."""
    failed = []
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the page importing it reports the error in its own words
            failed.append(name)
    return failed


def fill_module_table() -> None:
    """Fill the table of every loaded module's file that :mod:`inspect` builds on its first lookup of a
    frame's module. Streamlit's first element in a process looks the script thread's frames up
    (``inspect.stack()``, to tell whether it runs in a REPL): with the dashboard's 2,100 modules
    loaded, 0.07 s of the first page's title on an idle core; looked up here once, it finds them
    listed."""
    import inspect

    inspect.stack()


def main(argv: list[str] | None = None) -> int:
    """``streamlit run app.py ARGS`` in this process, the pages' modules, Streamlit's first-run ones
    and the dashboard's imported first."""
    from streamlit.web import cli

    warm([*page_imports(), *STREAMLIT_FIRST_RUN, *dashboard_modules()])
    fill_module_table()
    gc.freeze()  # the modules' objects live as long as the server: no full collection walks them again
    sys.argv = ["streamlit", "run", str(ROOT / "app.py"), *(sys.argv[1:] if argv is None else argv)]
    try:
        cli.main()
    except SystemExit as done:
        return int(done.code or 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
