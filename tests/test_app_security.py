"""Security of the dashboard: text from files is shown as text, exports cannot run formulas,
server paths stay inside the configured roots (links included)."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.paths import resolve_server_path
from simcore.utils.errors import SimcoreError

from .conftest import ROOT

HOSTILE_SOURCE = "=HYPERLINK(\"http://evil\")"
HOSTILE_TARGET = "[click](javascript:alert(1)) <img src=x onerror=alert(1)>"


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMCORE_CACHE", str(tmp_path / "store"))
    monkeypatch.setenv("SIMCORE_DATA_ROOTS", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    return tmp_path


def test_hostile_names_in_an_opened_matrix_are_shown_as_text_and_exported_safely():
    matrix = pd.DataFrame({"source": [HOSTILE_SOURCE, "plain"] * 2, "target": [HOSTILE_TARGET] * 2 + ["t2"] * 2,
                           "measure": ["ppl"] * 4, "value": [10.0, 20.0, 30.0, 5.0]})
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page(str(ROOT / "pages/6_Open_results.py")).run()
    at.get("file_uploader")[0].upload("m<b>x</b>.csv", matrix.to_csv(index=False).encode(), "text/csv").run()
    assert not at.exception
    at.switch_page(str(ROOT / "pages/5_Ranking_and_export.py")).run()
    assert not at.exception
    rendered = [m.value for m in at.markdown] + [c.value for c in at.caption]
    assert any(r"\[click\]\(javascript\:alert\(1\)\)" in text for text in rendered)
    assert not any("[click](javascript" in text for text in rendered), "markdown from a file is never live"
    assert not any(re.search(r"(?<!\\)<(img|b)", text) for text in rendered), "HTML from a file is escaped"
    parts = next(iter(at.session_state["simcore_state"].extra["report_parts"].values()))
    rows = pd.read_csv(io.StringIO(parts.csv))
    assert set(rows["source"]) == {"'" + HOSTILE_SOURCE, "plain"}, "spreadsheet formulas are escaped"
    assert "<img src=x" not in parts.html and "&lt;img src=x" in parts.html


def test_server_paths_stay_inside_the_roots(tmp_path):
    root = tmp_path / "data"
    (root / "ok.txt").write_text("fine\n")
    outside = tmp_path / "secret.txt"
    outside.write_text("secret\n")
    (root / "link.txt").symlink_to(outside)
    folder = root / "folder"
    folder.mkdir()
    (folder / "a.txt").write_text("a\n")
    (folder / "escape.txt").symlink_to(outside)
    roots = [root.resolve()]
    assert resolve_server_path("ok.txt", roots) == (root / "ok.txt").resolve()
    for text, message in [("../secret.txt", "'..'"), (str(outside), "outside"), ("link.txt", "outside"),
                          ("folder", "link to a place outside"), ("/etc/passwd", "outside"), ("nope.txt", "not found")]:
        with pytest.raises(SimcoreError, match=message):
            resolve_server_path(text, roots)


def test_upload_limit_is_set_in_the_config():
    config = (ROOT / ".streamlit" / "config.toml").read_text()
    assert "maxUploadSize = 50" in config
    assert os.path.getsize(ROOT / ".streamlit" / "config.toml") > 0
    assert Path(ROOT / ".streamlit" / "config.toml").is_file()


def test_hostile_uploads_give_messages_and_lose_nothing_already_loaded():
    from .test_hostile_inputs import HOSTILE

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.button(key="load_sample").click().run()
    at.switch_page(str(ROOT / "pages/4_Agreement.py")).run()
    at.button(key="agree_table3").click().run()
    state = at.session_state["simcore_state"]
    before = (sorted(state.sources), sorted(state.targets), len(state.matrix))
    at.switch_page(str(ROOT / "pages/1_Corpora.py")).run()
    outcomes = {}
    for name, (data, _) in sorted(HOSTILE.items()):
        if not data:
            continue  # an empty upload never reaches the server (the browser sends no file)
        at.get("file_uploader")[0].set_value([(name, data, "application/octet-stream")])
        at.button[0].click().run()
        assert not at.exception, name
        outcomes[name] = " ".join(e.value for e in at.error)
        assert outcomes[name], f"{name}: no message"
    state = at.session_state["simcore_state"]
    assert (sorted(state.sources), sorted(state.targets), len(state.matrix)) == before
    assert len(outcomes) >= 12


def test_a_symlink_loop_inside_a_data_root_is_no_crash(tmp_path):
    root = tmp_path / "data"
    folder = root / "corpus"
    folder.mkdir(parents=True)
    (folder / "a.txt").write_text("words here\n")
    (folder / "self").symlink_to(folder / "self")
    (folder / "ping").symlink_to(folder / "pong")
    (folder / "pong").symlink_to(folder / "ping")
    roots = [root.resolve()]
    assert resolve_server_path("corpus", roots) == folder.resolve()
    with pytest.raises(SimcoreError, match="not found"):
        resolve_server_path("corpus/self", roots)
    from simcore.corpora.corpus import Corpus

    assert [p.name for p in Corpus.from_path(folder).files] == ["a.txt"]


def test_a_path_outside_the_roots_is_refused_naming_the_roots_and_the_setting(tmp_path: Path):
    """Issue 37: the refusal did not say which directories are allowed nor how to allow another."""
    root = tmp_path / "allowed"
    root.mkdir()
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("a b c\n")
    with pytest.raises(SimcoreError) as refused:
        resolve_server_path(str(outside), [root])
    message = str(refused.value)
    assert "SIMCORE_DATA_ROOTS" in message and str(root) in message and "\n" not in message
