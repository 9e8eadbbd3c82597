"""AppTest flow for the Corpora page's decontamination job (dashboard.decontaminate_job)."""

from __future__ import annotations

from pathlib import Path

import pytest

from simcore.corpus import Corpus
from simcore.decontaminate import decontaminate

from .app_helpers import finish_jobs, fresh, go, no_problems, state
from .conftest import SAMPLE_DATA


@pytest.fixture(scope="module", autouse=True)
def cache(app_environment: Path) -> Path:
    return app_environment


def test_the_corpora_page_writes_a_clean_copy_and_adds_it_as_a_source(tmp_path):
    at = fresh()
    at.button(key="load_sample").click().run()
    go(at, "pages/1_Corpora.py")
    no_problems(at)
    at.selectbox(key="decon_source").set_value("news")
    at.selectbox(key="decon_target").set_value("news_ner")
    at.button(key="decon_go").click().run()
    finish_jobs(at)
    no_problems(at)
    sources = state(at).sources
    assert "news_clean" in sources
    clean = Path(sources["news_clean"].corpus.path)
    # the same copy as the library's own, written elsewhere
    direct = decontaminate(Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt"),
                           Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll"), tmp_path / "news.txt")
    assert clean.read_bytes() == (tmp_path / "news.txt").read_bytes()
    original = (SAMPLE_DATA / "sources" / "news.txt").read_text(encoding="utf-8").splitlines()
    assert len(clean.read_text(encoding="utf-8").splitlines()) == len(original) - direct.units_dropped
    assert any("news_clean" in s.value and "dropped" in s.value for s in at.success)
