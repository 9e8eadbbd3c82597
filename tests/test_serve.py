"""dashboard.serve: the modules the pages import, loaded before the server listens."""

from __future__ import annotations

import importlib.util
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from dashboard.serve import STREAMLIT_FIRST_RUN, dashboard_modules, page_imports, warm

from .conftest import ROOT

IMPORT = re.compile(r"^\s*(?:import ([\w.]+)|from (\w[\w.]*) import)", re.MULTILINE)


def test_the_modules_are_those_the_scripts_import():
    """Read here with a regular expression over the lines that start with an import."""
    scripts = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")),
               *sorted((ROOT / "dashboard").rglob("*.py"))]
    found = {a or b for s in scripts for a, b in IMPORT.findall(s.read_text(encoding="utf-8"))}
    expected = {n for n in found if n.split(".")[0] not in ("dashboard", "streamlit", "__future__")}
    names = page_imports()
    assert expected <= set(names) and "altair" in names  # a function's import too
    for extra in set(names) - expected:  # "from scipy import stats": the module named after import
        package, _, name = extra.rpartition(".")
        assert package in expected and importlib.util.find_spec(extra) is not None
    assert "scipy.stats" in names
    assert len(names) == len(set(names)) and "pandas" in names
    assert not any(n.startswith(("dashboard", "streamlit")) for n in names)


def test_the_dashboards_modules_and_streamlits_first_run_ones_import_before_the_runtime():
    """Every dashboard module (found here by its file) but the launcher, each package before its
    modules, imports outside a page's run; so do the modules Streamlit imports at a page's first call
    (a Streamlit that renamed them would leave them to the first page)."""
    files = sorted((ROOT / "dashboard").rglob("*.py"))
    expected = {".".join(f.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__") for f in files}
    names = dashboard_modules()
    assert set(names) == expected - {"dashboard.serve"} and len(names) == len(set(names))
    assert names.index("dashboard.workspace") < names.index("dashboard.workspace.opening")
    assert warm([*STREAMLIT_FIRST_RUN, *names]) == []


def test_a_module_that_fails_to_import_is_left_to_its_page():
    assert warm(["json", "simcore_no_such_module"]) == ["simcore_no_such_module"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/PID/maps")
def test_the_server_listens_with_the_pages_modules_loaded(tmp_path):
    """Before any browser opens a page, the server process has the pages' compiled modules mapped
    (pandas', the overlap scan's): the imports were made at its start, not at the first page."""
    port = _free_port()
    env = {**os.environ, "SIMCORE_CACHE": str(tmp_path / "cache")}
    with open(tmp_path / "log", "w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "dashboard.serve", "--server.headless=true",
             "--server.address=127.0.0.1", f"--server.port={port}", "--browser.gatherUsageStats=false",
             "--server.fileWatcherType=none"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120  # a guard against a server that never starts, not a budget
        while True:
            assert server.poll() is None, (tmp_path / "log").read_text()
            try:
                if urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                assert time.monotonic() < deadline, (tmp_path / "log").read_text()
                time.sleep(0.3)
        maps = Path(f"/proc/{server.pid}/maps").read_text()
        assert re.search(r"pandas/_libs/\S+\.so", maps)
        import simcore.contamination.ngrams as ngrams
        if ngrams.compiled is not None:
            assert Path(ngrams.compiled.__file__).name in maps
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()


def test_the_module_table_holds_every_loaded_module_after_it_is_filled():
    """What inspect would otherwise build in Streamlit's first element: each loaded module's file mapped
    to its name (checked against sys.modules itself), so a lookup of any of them finds it listed."""
    import inspect

    from dashboard.serve import fill_module_table

    warm(["pandas", "scipy.stats"])
    fill_module_table()
    loaded = {name: module for name, module in sys.modules.copy().items()
              if inspect.ismodule(module) and getattr(module, "__file__", None)}
    assert len(loaded) > 100
    missing = [name for name, module in loaded.items() if inspect.getabsfile(module) not in inspect.modulesbyfile]
    assert not missing
    assert inspect.modulesbyfile[inspect.getabsfile(sys.modules["pandas"])] == "pandas"
