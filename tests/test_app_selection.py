"""AppTest flows for the Sentence selection page."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from simcore.corpus import Corpus
from simcore.selection import SelectionOptions, choose, kept_indices, score_pool
from simcore.store import ArtefactStore

from .conftest import ROOT, SAMPLE_DATA

PAGE = "pages/7_Sentence_selection.py"


@pytest.fixture(scope="module", autouse=True)
def cache(app_environment: Path) -> Path:
    """A temporary SIMCORE_CACHE shared by this module's tests (the first computation fills it)."""
    return app_environment


def no_problems(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_page_opened_directly_with_nothing_loaded_shows_a_hint():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page(str(ROOT / PAGE)).run()
    no_problems(at)
    assert any("load a target" in e.value for e in at.info)
    assert at.get("page_link")


def test_selection_on_the_sample_matches_the_library(cache):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.button(key="load_sample").click().run()
    at.switch_page(str(ROOT / PAGE)).run()
    no_problems(at)
    at.selectbox(key="sel_pool").set_value("news")
    at.selectbox(key="sel_target").set_value("news_ner")
    at.selectbox(key="sel_method").set_value("xent")
    at.number_input(key="sel_top").set_value(40)
    at.button(key="sel_run").click().run()
    no_problems(at)
    runs = at.session_state["simcore_state"].extra["selection_runs"]
    (label,) = runs
    run = runs[label]
    assert run["cutoff"].n_kept == 40
    # The same selection computed directly with the library, in another store.
    news = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    scores = score_pool(news, target, SelectionOptions(method="xent"), ArtefactStore(cache / "direct"))
    expected = kept_indices(scores, choose(scores, top=40))
    assert np.array_equal(kept_indices(run["scores"], run["cutoff"]), expected)
    assert {"best kept", "first dropped"} <= set(run["examples"]["group"])
    assert not any("<" in str(md.value) and "script" in str(md.value) for md in at.markdown)

    # A second method on the same pool: the overlap of the two selections is shown.
    at.selectbox(key="sel_method").set_value("ppl")
    at.button(key="sel_run").click().run()
    no_problems(at)
    runs = at.session_state["simcore_state"].extra["selection_runs"]
    assert len(runs) == 2
    overlap = at.session_state["simcore_state"].extra["selection_overlap"]
    a, b = (kept_indices(r["scores"], r["cutoff"]) for r in runs.values())
    assert overlap == pytest.approx(len(np.intersect1d(a, b)) / len(np.union1d(a, b)))

    # Downloads: the kept sentences are the pool's lines at the kept indices.
    at.button(key="sel_prepare").click().run()
    no_problems(at)
    shown = runs[at.selectbox(key="sel_shown").value]
    selected, table = shown["files"]
    with gzip.open(selected, "rt", encoding="utf-8") as f:
        kept_text = f.read().splitlines()
    lines = [" ".join(u.split()) for u in (SAMPLE_DATA / "sources" / "news.txt").read_text(encoding="utf-8").splitlines()
             if u.strip()]
    assert [" ".join(t.split()) for t in kept_text] == [lines[i] for i in kept_indices(shown["scores"], shown["cutoff"])]
    assert table.read_text(encoding="utf-8").startswith("index,score,kept,duplicate_of_target,text")
