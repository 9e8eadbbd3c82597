"""AppTest flows for the Sentence selection page."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from simcore.corpora.corpus import Corpus
from simcore.corpora.tokenize import tokenize
from simcore.selection.choosing import choose, default_min_tokens, kept_indices
from simcore.selection.driver import score_pool
from simcore.selection.options import SelectionOptions
from simcore.utils.store import ArtefactStore

from .app_helpers import finish_jobs, no_problems
from .conftest import ROOT, SAMPLE_DATA

PAGE = "pages/7_Sentence_selection.py"


@pytest.fixture(scope="module", autouse=True)
def cache(app_environment: Path) -> Path:
    """A temporary SIMCORE_CACHE shared by this module's tests (the first computation fills it)."""
    return app_environment


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
    # a loaded source is the pool: no upload or path field (they showed whatever the pool)
    assert not at.get("file_uploader") and not [t for t in at.text_input if t.key == "sel_path"]
    at.button(key="sel_run").click().run()
    finish_jobs(at)
    no_problems(at)
    runs = at.session_state["simcore_state"].extra["selection_runs"]
    (label,) = runs
    run = runs[label]
    assert run["cutoff"].n_kept == 40
    # The same selection computed directly with the library, in another store.
    news = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    scores = score_pool(news, target, SelectionOptions(method="xent"), ArtefactStore(cache / "direct"))
    # xent's own shortest sentence (the form's 0): one-liners are not kept
    expected = kept_indices(scores, choose(scores, top=40, min_tokens=default_min_tokens("xent")))
    assert np.array_equal(kept_indices(run["scores"], run["cutoff"]), expected)
    assert run["cutoff"].min_tokens == default_min_tokens("xent") > 1 and f"{run['cutoff'].min_tokens}+ tokens" in label
    assert {"best kept", "first dropped"} <= set(run["examples"]["group"])
    assert not any("<" in str(md.value) and "script" in str(md.value) for md in at.markdown)
    # the page says what xent rewards (everyday words the target shares; short sentences at both ends)
    assert any("What xent rewards" in cap.value for cap in at.caption)

    # A second method on the same pool: the overlap of the two selections is shown.
    at.selectbox(key="sel_method").set_value("ppl")
    at.button(key="sel_run").click().run()
    finish_jobs(at)
    no_problems(at)
    runs = at.session_state["simcore_state"].extra["selection_runs"]
    assert len(runs) == 2
    # the new run is the one shown (the page showed the previous run after a new one)
    assert at.selectbox(key="sel_shown").value.startswith("ppl")
    assert at.metric[1].value == "40"
    # the example sentences are shown whole (a table wraps them; the data frame cut them off)
    texts = [t for table in at.table for t in table.value["text"]]
    assert texts and set(texts) <= set(runs[at.selectbox(key="sel_shown").value]["examples"]["text"])
    # the form kept its choices across pages
    at.switch_page(str(ROOT / "app.py")).run()
    at.switch_page(str(ROOT / PAGE)).run()
    assert at.selectbox(key="sel_method").value == "ppl" and at.number_input(key="sel_top").value == 40
    overlap = at.session_state["simcore_state"].extra["selection_overlap"]
    a, b = (kept_indices(r["scores"], r["cutoff"]) for r in runs.values())
    assert overlap == pytest.approx(len(np.intersect1d(a, b)) / len(np.union1d(a, b)))

    # Downloads: the kept sentences are the pool's lines at the kept indices.
    at.selectbox(key="sel_shown").set_value(next(iter(runs))).run()
    at.selectbox(key="sel_shown").set_value(list(runs)[-1]).run()
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


def test_a_minimum_length_on_the_page_leaves_short_sentences_out(cache):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.button(key="load_sample").click().run()
    at.switch_page(str(ROOT / PAGE)).run()
    assert at.number_input(key="sel_min_tokens").value == 0   # the method's own default unless asked
    at.selectbox(key="sel_pool").set_value("news")
    at.selectbox(key="sel_target").set_value("news_ner")
    at.selectbox(key="sel_method").set_value("ppl")
    at.number_input(key="sel_top").set_value(30)
    at.number_input(key="sel_min_tokens").set_value(8)
    at.button(key="sel_run").click().run()
    finish_jobs(at)
    no_problems(at)
    (label, run), = at.session_state["simcore_state"].extra["selection_runs"].items()
    assert "8+ tokens" in label
    # the count of too-short sentences, from the pool's lines tokenized here and the library's scores
    news = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    scores = score_pool(news, target, SelectionOptions(method="ppl"), ArtefactStore(cache / "direct-min"))
    lines = [u for u in (SAMPLE_DATA / "sources" / "news.txt").read_text(encoding="utf-8").splitlines() if u.strip()]
    lengths = np.array([len(tokenize(line)) for line in lines])
    too_short = int((np.isfinite(scores.scores()) & (lengths < 8)).sum())
    assert too_short > 0
    shown = {m.label: m.value for m in at.metric}
    assert shown["Under 8 tokens"] == f"{too_short:,}" and shown["Kept"] == "30"
    kept = kept_indices(run["scores"], run["cutoff"])
    assert np.array_equal(kept, kept_indices(scores, choose(scores, top=30, min_tokens=8)))
    assert all(lengths[i] >= 8 for i in kept)
    # the form keeps the minimum across pages
    at.switch_page(str(ROOT / "app.py")).run()
    at.switch_page(str(ROOT / PAGE)).run()
    assert at.number_input(key="sel_min_tokens").value == 8


def test_upload_field_shows_only_for_an_uploaded_pool():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.button(key="load_sample").click().run()
    at.switch_page(str(ROOT / PAGE)).run()
    at.selectbox(key="sel_pool").set_value("a file I upload").run()
    assert len(at.get("file_uploader")) == 1 and not [t for t in at.text_input if t.key == "sel_path"]
    at.selectbox(key="sel_pool").set_value("a file on the server").run()
    assert not at.get("file_uploader") and [t for t in at.text_input if t.key == "sel_path"]


def test_histogram_axis_spans_the_bulk_of_the_scores(cache):
    """PPL scores with a long tail: the axis ran to the maximum (18,000) and squashed the data into one bar."""
    from dashboard.selection_chart import clipped_histogram

    news = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    scores = score_pool(news, target, SelectionOptions(method="ppl"), ArtefactStore(cache / "hist"))
    cutoff = choose(scores, top=40)
    values = np.asarray(scores.scores(), dtype=float)
    hist = clipped_histogram(scores, cutoff, False)
    assert hist["count"].sum() == np.isfinite(values).sum()  # every sentence is counted once
    assert hist["high"].max() <= max(np.quantile(values, 0.99), cutoff.score(scores.higher_kept)) + 1e-9
    kept = hist[hist["kept"] == "kept"]["count"].sum()
    assert kept == cutoff.n_kept
    # the bulk spreads over many bars rather than one
    per_bin = hist.groupby("low")["count"].sum()
    assert (per_bin > 0).sum() >= 10


def test_short_selection_warning():
    from dashboard.selection_chart import short_selection_warning

    assert short_selection_warning([2, 3, 3, 4], 21.5)  # '"Fun," he said.'
    assert short_selection_warning([18, 22, 25], 21.5) is None
    assert short_selection_warning([], 21.5) is None
    # running xent, the advice no longer says "consider xent" (issue 19)
    assert "consider xent" in short_selection_warning([2, 3, 3, 4], 21.5, "ppl")
    xent = short_selection_warning([2, 3, 3, 4], 21.5, "xent")
    assert xent and "consider xent" not in xent


def test_encoder_selection_on_the_page_says_which_encoder(cache):
    pytest.importorskip("torch", reason="the encoder is not installed (scripts/install.sh --encoder)")
    from simcore.models.sentence_encoder import encoder_installed

    if not encoder_installed():
        pytest.skip("the bundled encoder is not installed")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    at.button(key="load_sample").click().run()
    at.switch_page(str(ROOT / PAGE)).run()
    at.selectbox(key="sel_pool").set_value("news")
    at.selectbox(key="sel_target").set_value("news_ner")
    at.selectbox(key="sel_method").set_value("encoder")
    at.number_input(key="sel_top").set_value(30)
    at.button(key="sel_run").click().run()
    finish_jobs(at)
    no_problems(at)
    (run,) = at.session_state["simcore_state"].extra["selection_runs"].values()
    news = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    scores = score_pool(news, target, SelectionOptions(method="encoder"), ArtefactStore(cache / "direct-encoder"))
    np.testing.assert_allclose(run["scores"].scores(), scores.scores(), atol=1e-5)
    assert any("all" in str(c.value) and "MiniLM" in str(c.value) for c in at.caption)
