"""AppTest flow for the Corpora page's decontamination job (dashboard.decontaminate_job)."""

from __future__ import annotations

from pathlib import Path

import pytest

from simcore.contamination.decontaminate import decontaminate
from simcore.corpora.corpus import Corpus

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


def test_a_contaminated_source_is_flagged_on_the_heatmap_and_listed_on_the_ranking_page():
    from .app_helpers import charts
    from .test_overlap import answer_table

    table = answer_table(0.093)
    table["ci_low"], table["ci_high"] = table["value"], table["value"]
    at = go(fresh(), "pages/6_Open_results.py")
    at.get("file_uploader")[0].upload("matrix.csv", table.to_csv(index=False).encode(), "text/csv").run()
    no_problems(at)
    go(at, "pages/2_Similarity.py")
    no_problems(at)
    figure = charts(at, "plotly_chart")[0]
    assert "⚑ holds test text" in figure.proto.spec and "9.3% of the test sentences" in figure.proto.spec
    go(at, "pages/5_Ranking_and_export.py")
    no_problems(at)
    assert any("1 contaminated pair" in e.label for e in at.expander)
    shown = [m.value.replace("\\", "") for m in at.markdown]  # markdown escapes: 9\.3%
    assert any("of the votes (moderate)" in m and "alpha holds 9.3% of your test sentences (13-word overlap)" in m
               for m in shown)
