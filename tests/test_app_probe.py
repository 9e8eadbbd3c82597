"""AppTest flows for the NER probe page: opened with nothing loaded, and a tiny probe run whose
results table goes to the Predictiveness page."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from .conftest import ROOT, SAMPLE_DATA
from .test_probe import _sentence, _write_conll

PAGE = "pages/9_NER_probe.py"


@pytest.fixture(scope="module", autouse=True)
def cache(app_environment: Path) -> Path:
    return app_environment


def _open(page: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.run()
    if page:
        at.switch_page(str(ROOT / page)).run()
    return at


def test_probe_page_with_nothing_loaded_says_what_to_load():
    at = _open(PAGE)
    assert not at.exception and not at.error
    assert "No sources" in " ".join(i.value for i in at.info)
    assert at.get("page_link")


def test_probe_page_runs_and_hands_its_results_to_predictiveness(tmp_path: Path, monkeypatch):
    rng = random.Random(11)
    target = tmp_path / "toy_ner"
    target.mkdir()
    for split, n in (("train", 40), ("test", 20)):
        _write_conll(target / f"{split}.conll", [_sentence(rng) for _ in range(n)])
    monkeypatch.setenv("SIMCORE_DATA_ROOTS", f"{SAMPLE_DATA}:{tmp_path}")
    at = _open()
    at.button(key="load_sample").click().run()
    at.switch_page(str(ROOT / PAGE)).run()
    assert not at.exception
    at.multiselect(key="probe_sources").set_value(["biomed_abstracts", "news"])
    at.radio(key="probe_where").set_value("a directory on the server")
    at.text_input(key="probe_server").set_value(str(target))
    at.number_input(key="probe_train_n").set_value(0)
    at.number_input(key="probe_epochs").set_value(2)
    at.button(key="probe_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    table = at.session_state["simcore_state"].extra["probe_results"]
    assert sorted(table["source"]) == ["biomed_abstracts", "news"]
    assert (table["target"] == "toy_ner").all() and table["f1"].between(0, 100).all()
    assert "train_sentences=all" in table["caps"].iloc[0]
    at.button(key="probe_use").click().run()
    assert not at.exception
    state = at.session_state["simcore_state"]
    assert state.results is not None and state.results_columns["f1"] == "f1"
    assert state.results_columns["baseline"] == "baseline"
