"""AppTest flows for the workbench (issue 10): the sidebar, several named matrices, comparing them, matching
result names, the Corpora page's directories, renames and histograms, the Agreement page's reading."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from streamlit.testing.v1 import AppTest

from dashboard.agreement_view import flag_first_choice
from dashboard.loading import TABLE3_NAME
from simcore.analysis.agreement import agreement
from simcore.analysis.tables import to_long

from .app_helpers import charts, fresh, go, no_problems, state
from .conftest import SAMPLE_DATA

TABLE3 = SAMPLE_DATA / "results" / "dai2019_table3.csv"


@pytest.fixture(scope="module", autouse=True)
def cache(app_environment: Path) -> Path:
    return app_environment


def sidebar_text(at: AppTest) -> str:
    return " ".join(e.value for e in at.sidebar.caption)


def test_sidebar_names_the_home_page_and_is_never_one_action_behind():
    at = fresh()
    links = [link.proto.label for link in at.sidebar.get("page_link")]
    assert links[0] == "Home" and "app" not in links
    assert {"Corpora", "Similarity", "Sentence selection", "Compare results"} <= set(links)
    at.button(key="load_sample").click().run()
    no_problems(at)
    assert "Targets: 3" in sidebar_text(at) and "Sources: 6" in sidebar_text(at)
    # the main button is no longer "Load the sample data" once it is loaded
    assert not [b for b in at.button if b.label == "Load the sample data"]
    go(at, "pages/1_Corpora.py")
    at.text_input(key="path_text").set_value("targets")
    at.radio(key="path_role").set_value("target")
    at.radio(key="path_split").set_value("one corpus per file")
    at.button(key="add_path").click().run()
    no_problems(at)
    # three more targets, counted by the sidebar in the same response
    assert len(state(at).targets) == 6
    assert "Targets: 6" in sidebar_text(at)


def test_demo_home_does_not_offer_loading_the_sample_as_the_main_action(monkeypatch, tmp_path):
    monkeypatch.setenv("SIMCORE_DEMO", "1")
    at = fresh()
    no_problems(at)
    assert state(at).sources
    primary = [b for b in at.button if b.proto.type == "primary"]
    assert not primary, [b.label for b in primary]
    # its answer is being worked out (issue 19: no link to find first)
    assert any("Working it out in the background" in c.value for c in at.caption)
    job = state(at).jobs["matrix"]
    job.cancel()
    assert job.wait(90)


def test_server_directory_as_one_corpus_or_one_per_file_and_no_readme():
    at = go(fresh(), "pages/1_Corpora.py")
    offered = at.selectbox(key="path_pick").options
    assert offered and not [p for p in offered if p.lower().endswith((".md", "readme"))]
    assert any(p.endswith("sources") for p in offered) and any(p.endswith("news.txt") for p in offered)
    at.text_input(key="path_text").set_value("sources")
    at.radio(key="path_role").set_value("source")
    at.radio(key="path_split").set_value("one corpus per file")
    at.button(key="add_path").click().run()
    no_problems(at)
    expected = sorted(p.name.split(".")[0] for p in (SAMPLE_DATA / "sources").iterdir())
    assert sorted(state(at).sources) == expected
    # the whole directory as one corpus: all six files together (README.md of the sample root is not in it)
    at.text_input(key="path_text").set_value("sources")
    at.radio(key="path_split").set_value("one corpus (its files together)")
    at.button(key="add_path").click().run()
    no_problems(at)
    merged = state(at).sources["sources"].corpus
    assert sorted(f.name for f in merged.files) == sorted(p.name for p in (SAMPLE_DATA / "sources").iterdir())
    # the statistics table adds up: the merged corpus has the tokens of the six
    table = at.dataframe[0].value.set_index("name")
    assert table.loc["sources", "tokens"] == table.loc[expected, "tokens"].sum()
    # each corpus's sentence-length histogram has bars with both ends (they were empty axes); drawn once opened
    for name in state(at).sources:
        at.session_state[f"exp_source_{name}"] = True
    at.run()
    specs = [c.proto.spec for c in charts(at, "arrow_vega_lite_chart") + charts(at, "vega_lite_chart")]
    assert len(specs) == len(state(at).sources) and all('"x2"' in spec for spec in specs)


def test_table3_matrix_file_and_results_are_all_kept():
    at = go(fresh(), "pages/3_Predictiveness.py")
    at.button(key="load_table3").click().run()
    s = state(at)
    assert list(s.matrices) == ["Table 3 of Dai et al. (2019)"] and s.results is not None
    # a matrix file opened next is added, not swapped in
    go(at, "pages/6_Open_results.py")
    table = pd.read_csv(TABLE3)
    halved = table.assign(ppl=table["ppl"][::-1].to_numpy())  # a different PPL column
    at.get("file_uploader")[0].upload("other.csv", halved.to_csv(index=False).encode(), "text/csv").run()
    no_problems(at)
    assert list(s.matrices) == ["Table 3 of Dai et al. (2019)", "other.csv"] and s.active == "other.csv"
    # uploaded NER results are not replaced by loading Table 3 again
    go(at, "pages/3_Predictiveness.py")
    mine = table[["target", "source", "lm_f1"]].rename(columns={"lm_f1": "f1"})
    at.get("file_uploader")[0].upload("mine.csv", mine.to_csv(index=False).encode(), "text/csv").run()
    assert s.results_label == "upload: mine.csv"
    at.button(key="load_table3").click().run()
    assert s.results_label == "upload: mine.csv" and len(s.matrices) == 2
    assert s.active == "Table 3 of Dai et al. (2019)"
    # each page shows the matrix picked there
    go(at, "pages/4_Agreement.py")
    picker = next(sb for sb in at.selectbox if sb.key and sb.key.startswith("shown_agreement"))
    picker.set_value("other.csv").run()
    assert s.active == "other.csv"

    # Compare results: the rankings of the two side by side
    go(at, "pages/8_Compare_results.py")
    no_problems(at)
    at.selectbox(key="compare_a").set_value("Table 3 of Dai et al. (2019)").run()
    at.selectbox(key="compare_b").set_value("other.csv").run()
    summary = next(d.value for d in at.dataframe if "first choice changed" in d.value.columns)
    original, other = to_long(table), to_long(halved)
    for target in table["target"].unique():
        a = original[(original["measure"] == "ppl") & (original["target"] == target)]
        b = other[(other["measure"] == "ppl") & (other["target"] == target)]
        row = summary[(summary["target"] == target) & (summary["measure"] == "PPL")].iloc[0]
        assert row["first choice (A)"] == a.loc[a["value"].idxmin(), "source"]
        assert row["first choice (B)"] == b.loc[b["value"].idxmin(), "source"]
        rho = stats.spearmanr(a.set_index("source")["value"].rank(), b.set_index("source")["value"].rank()
                              .reindex(a["source"])).statistic
        assert row["Spearman ρ"] == pytest.approx(rho)
        tvc = summary[(summary["target"] == target) & (summary["measure"] == "TVC")].iloc[0]
        assert not tvc["first choice changed"]  # TVC was not touched
    # one ranking side by side: every source with its rank on both sides (PPL ranks ascending values)
    at.selectbox(key="compare_target").set_value("CADEC")
    at.selectbox(key="compare_measure").set_value("ppl").run()
    side = next(d.value for d in at.dataframe if "rank (A)" in d.value.columns).set_index("source")
    for long, column in ((original, "rank (A)"), (other, "rank (B)")):
        ppl = long[(long["measure"] == "ppl") & (long["target"] == "CADEC")].set_index("source")["value"]
        assert side[column].to_dict() == ppl.rank(method="min").astype(int).to_dict()


def test_result_names_can_be_mapped_to_corpus_names():
    at = go(fresh(), "pages/6_Open_results.py")
    at.button(key="open_table3").click().run()
    table = pd.read_csv(TABLE3)
    renamed = table.assign(target=table["target"].replace({"CoNLL2003": "dev", "WetLab": "wetlab"}))
    go(at, "pages/3_Predictiveness.py")
    upload = renamed[["target", "source", "lm_f1"]].rename(columns={"lm_f1": "f1"})
    at.get("file_uploader")[0].upload("results.csv", upload.to_csv(index=False).encode(), "text/csv").run()
    no_problems(at)
    assert at.selectbox(key=f"map_target_wetlab_{TABLE3_NAME}").value == "WetLab"  # suggested from the spelling
    assert at.selectbox(key=f"map_target_dev_{TABLE3_NAME}").value.startswith("(no match")  # nothing alike: the user picks
    pairs = lambda: next(c.value for c in at.caption if "pairs matched" in c.value)  # noqa: E731
    assert "25 (target, source) pairs" in pairs()
    at.selectbox(key=f"map_target_dev_{TABLE3_NAME}").set_value("CoNLL2003").run()
    no_problems(at)
    assert "30 (target, source) pairs" in pairs()
    corr = next(d.value for d in at.dataframe if "Pearson r" in d.value.columns).set_index("measure")
    # with no baseline the F1 itself is correlated: scipy on the published table
    assert corr.loc["PPL", "Pearson r"] == pytest.approx(stats.pearsonr(table["ppl"], table["lm_f1"]).statistic, abs=1e-3)
    # the mapping is remembered across pages
    go(at, "pages/1_Corpora.py")
    go(at, "pages/3_Predictiveness.py")
    assert at.selectbox(key=f"map_target_dev_{TABLE3_NAME}").value == "CoNLL2003"
    assert "30 (target, source) pairs" in pairs()


def test_agreement_reads_kappa_and_flags_first_choice_changes():
    at = go(fresh(), "pages/4_Agreement.py")
    at.button(key="agree_table3").click().run()
    no_problems(at)
    assert at.metric[0].value == "0.733"
    assert any("Substantial agreement" in m.value for m in at.markdown)
    shown = at.dataframe[-1].value
    long = to_long(pd.read_csv(TABLE3))
    result = agreement(long, ["ppl", "wvv", "tvc"])
    expected = flag_first_choice(result.disagreements, long, ["ppl", "wvv", "tvc"])
    assert list(shown["changes 1st choice"]) == list(expected)
    # by hand for one target: a flagged comparison involves a source some measure ranks first
    cadec = long[long["target"] == "CADEC"]
    firsts = {g.loc[g["value"].idxmin() if g["direction"].iloc[0] < 0 else g["value"].idxmax(), "source"]
              for m, g in cadec.groupby("measure") if m in ("ppl", "wvv", "tvc")}
    rows = shown[shown["target"] == "CADEC"]
    for row in rows.itertuples():
        assert row[4] == bool({row.first, row.second} & firsts)
    at.selectbox(key="agree_target").set_value("CADEC").run()
    assert set(at.dataframe[-1].value["target"]) == {"CADEC"} and len(at.dataframe[-1].value) == len(rows)
    at.checkbox(key="agree_only_first").check().run()
    filtered = at.dataframe[-1].value
    assert filtered["changes 1st choice"].all()
    assert len(filtered) == int(np.sum(rows["changes 1st choice"]))
    # the choices survive a visit to another page (Streamlit forgets the widgets of a page that was left)
    at.multiselect(key="agree_measures").set_value(["ppl", "tvc"]).run()
    go(at, "pages/1_Corpora.py")
    go(at, "pages/4_Agreement.py")
    assert at.multiselect(key="agree_measures").value == ["ppl", "tvc"]
    assert at.selectbox(key="agree_target").value == "CADEC" and at.checkbox(key="agree_only_first").value


def test_similarity_form_keeps_its_choices_and_adds_new_corpora():
    at = fresh()
    at.button(key="load_sample").click().run()
    go(at, "pages/2_Similarity.py")
    at.multiselect(key="f_sources").set_value(["news", "tweets"])
    at.multiselect(key="f_measures").set_value(["tvc"])
    at.slider(key="f_jsd").set_value(2)
    at.button(key="compute").click().run()
    job = state(at).jobs["matrix"]
    assert job.wait(180) and job.status == "done"
    go(at, "pages/1_Corpora.py")
    no_problems(at)
    matrix = state(at).matrices[state(at).active].long
    assert sorted(matrix["source"].unique()) == ["news", "tweets"] and set(matrix["measure"]) == {"tvc"}
    at.text_input(key="path_text").set_value("upload_example/med_forum_posts_sample.txt")
    at.radio(key="path_role").set_value("target")
    at.button(key="add_path").click().run()
    go(at, "pages/2_Similarity.py")
    no_problems(at)
    assert at.multiselect(key="f_sources").value == ["news", "tweets"]
    assert at.multiselect(key="f_measures").value == ["tvc"] and at.slider(key="f_jsd").value == 2
    assert set(at.multiselect(key="f_targets").value) == {"lab_protocol_ner", "med_forum_posts", "news_ner",
                                                           "med_forum_posts_sample"}


def test_kept_matrices_can_be_renamed_and_removed_on_open_results():
    at = go(fresh(), "pages/6_Open_results.py")
    at.button(key="open_table3").click().run()
    table = pd.read_csv(TABLE3)
    at.get("file_uploader")[0].upload("m.csv", table.to_csv(index=False).encode(), "text/csv").run()
    s = state(at)
    assert list(s.matrices) == ["Table 3 of Dai et al. (2019)", "m.csv"]
    at.selectbox(key="manage_pick").set_value("m.csv")
    at.text_input(key="manage_name").set_value("my copy")
    at.radio(key="manage_action").set_value("rename")
    next(b for b in at.button if b.label == "Apply").click().run()
    no_problems(at)
    assert list(s.matrices) == ["Table 3 of Dai et al. (2019)", "my copy"]
    assert "my copy" in list(at.dataframe[0].value["name"])
    at.selectbox(key="manage_pick").set_value("Table 3 of Dai et al. (2019)")
    at.radio(key="manage_action").set_value("remove")
    next(b for b in at.button if b.label == "Apply").click().run()
    no_problems(at)
    assert list(s.matrices) == ["my copy"] and s.active == "my copy"


# ---- issue 19: clicks that went wrong ------------------------------------------------------------------

SAMPLE_SOURCES = ["biomed_abstracts", "clinical_notes", "lab_protocols", "news", "product_reviews", "tweets"]


def sample_matrix_csv(shift: float = 0.0) -> bytes:
    """A made-up wide matrix over the sample's names (values need not be real: the pages only show them)."""
    rows = [{"target": t, "source": s, "tvc": 0.5 + i / 20 + shift, "ppl": 300.0 - 10 * i}
            for t in ("med_forum_posts", "news_ner") for i, s in enumerate(SAMPLE_SOURCES)]
    return pd.DataFrame(rows).to_csv(index=False).encode()


def open_matrix(at: AppTest, name: str, data: bytes) -> None:
    go(at, "pages/6_Open_results.py")
    at.get("file_uploader")[0].upload(name, data, "text/csv")
    at.run()
    no_problems(at)


def test_vague_upload_names_are_asked_for_and_renamed_in_one_form():
    at = go(fresh(), "pages/1_Corpora.py")
    at.get("file_uploader")[0].set_value([
        ("test.conll", (SAMPLE_DATA / "targets" / "news_ner.conll").read_bytes(), "text/plain")])
    at.button(key="add_uploads").click().run()
    at.get("file_uploader")[0].set_value([
        ("test.conll", (SAMPLE_DATA / "targets" / "med_forum_posts.conll").read_bytes(), "text/plain")])
    at.button(key="add_uploads").click().run()
    no_problems(at)
    assert sorted(state(at).targets) == ["test", "test (2)"]
    # which is which: upload order, size and first line, read from the files themselves
    from dashboard.markdown import md

    hints = [c.value for c in at.caption if c.value.startswith("uploaded ")]
    for i, file in enumerate(["news_ner.conll", "med_forum_posts.conll"]):
        path = SAMPLE_DATA / "targets" / file
        words = [line.split()[0] for line in path.read_text().splitlines()[:40] if line.strip()][:3]
        assert hints[i].startswith(f"uploaded {['1st', '2nd'][i]} · {path.stat().st_size / 1e3:.1f} kB · starts “")
        assert md(" ".join(words)) in hints[i], (words, hints[i])
    at.text_input(key="vague_target_test").set_value("news wire")
    at.text_input(key="vague_target_test (2)").set_value("forum posts")
    at.button(key="name_uploads_go").click().run()  # a form: Enter in a field submits it too
    no_problems(at)
    assert sorted(state(at).targets) == ["forum posts", "news wire"]
    assert not [t for t in at.text_input if t.key and t.key.startswith("vague_")]  # asked no more


def test_predictiveness_takes_new_results_columns_and_names_whatever_was_shown_before():
    """Issue 19: F1 results uploaded while Table 3 was shown kept its "(none)" baseline (raw F1 used
    silently) and every name match its "leave out"."""
    at = go(fresh(), "pages/3_Predictiveness.py")
    at.button(key="load_table3").click().run()  # Table 3 shown, its F1 as the results: no baseline column
    results = pd.DataFrame({"target": ["news-ner"] * 3, "source": ["news", "tweets", "biomed-abstracts"],
                            "f1": [80.0, 75.0, 70.0], "baseline": [72.0] * 3})
    at.get("file_uploader")[0].upload("f1.csv", results.to_csv(index=False).encode(), "text/csv")
    at.run()
    assert not at.exception  # (its names are not Table 3's: the page says so)
    version = state(at).extra["results_version"]
    assert at.selectbox(key=f"col_baseline_{version}").value == "baseline"
    open_matrix(at, "run.csv", sample_matrix_csv())  # now the newest, shown matrix has the sample's names
    go(at, "pages/3_Predictiveness.py")
    no_problems(at)
    picked = {s.key: s.value for s in at.selectbox if s.key and s.key.startswith("map_")}
    assert picked == {"map_target_news-ner_run.csv": "news_ner",
                      "map_source_biomed-abstracts_run.csv": "biomed_abstracts"}, picked
    assert "F1 − baseline" in " ".join(c.value for c in at.caption)


def test_compare_opens_on_two_results_that_share_something():
    at = go(fresh(), "pages/6_Open_results.py")
    open_matrix(at, "first.csv", sample_matrix_csv())
    at.button(key="open_table3").click().run()  # the newest shares nothing with the others
    go(at, "pages/8_Compare_results.py")
    no_problems(at)
    assert any("No two of your matrices can be compared" in i.value for i in at.info)
    open_matrix(at, "second.csv", sample_matrix_csv(shift=0.01))
    go(at, "pages/8_Compare_results.py")
    no_problems(at)
    assert (at.selectbox(key="compare_a").value, at.selectbox(key="compare_b").value) == ("first.csv", "second.csv")


def test_compare_a_run_against_the_papers_table3_through_a_name_mapping():
    """Issue 19: a run on the shared data names its corpora news_1bwb, wetlab_wlp...; Table 3 names them 1BWB, WetLab.
    The Compare page matches the names (suggested where the spelling allows) and then compares the rankings."""
    names = {"1BWB": "news_1bwb", "PubMed": "biomed_ohsumed_medline", "MIMIC": "clinical_mtsamples",
             "Wiki": "encyclopedia_wikitext2", "Yelp": "reviews_yelp", "CoNLL2003": "conll2003", "WetLab": "wetlab_wlp"}
    table3 = pd.read_csv(TABLE3)
    run = table3[table3["target"].isin(["CoNLL2003", "WetLab"])][["target", "source", "ppl", "wvv", "tvc"]]
    run = run.assign(target=run["target"].map(names), source=run["source"].map(names), tvc=run["tvc"] / 100)
    at = go(fresh(), "pages/6_Open_results.py")
    open_matrix(at, "run.csv", run.to_csv(index=False).encode())
    at.button(key="open_table3").click().run()
    go(at, "pages/8_Compare_results.py")
    no_problems(at)
    assert at.selectbox(key="compare_a").value == "run.csv"
    suggested = {s.key: s.value for s in at.selectbox if s.key and s.key.startswith("cmp_map_")}
    # the spelling finds these; PubMed and MIMIC are the user's to pick
    for paper in ("1BWB", "Wiki", "Yelp"):
        assert suggested[f"cmp_map_source_{paper}"] == names[paper], suggested
    assert suggested["cmp_map_target_CoNLL2003"] == "conll2003" and suggested["cmp_map_target_WetLab"] == "wetlab_wlp"
    at.selectbox(key="cmp_map_source_PubMed").set_value("biomed_ohsumed_medline")
    at.selectbox(key="cmp_map_source_MIMIC").set_value("clinical_mtsamples").run()
    no_problems(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Rankings compared"] == "8"  # 2 targets x (PPL, WVV, TVC and their combined ranking)
    assert metrics["First choice changed"] == "0" and metrics["Mean Spearman ρ"] == "1.000"
    assert state(at).extra["compare_name_map"]["source"]["PubMed"] == "biomed_ohsumed_medline"
