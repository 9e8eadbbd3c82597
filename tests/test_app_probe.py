"""AppTest flows for the NER probe page: opened with nothing loaded, a tiny probe run as a session job
(it goes on while another page is open, its table equals ``probe()`` run directly, and it goes to the
Predictiveness page), and Cancel (the runs finished before it are stored and read back)."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.state import LoadedCorpus
from simcore.corpora.corpus import Corpus
from simcore.matrix.corpus_cache import corpora_in
from simcore.matrix.workbench import Workbench
from simcore.probe.config import ProbeCaps
from simcore.probe.data import TargetSplits
from simcore.probe.run import probe
from simcore.utils.store import ArtefactStore

from .conftest import ROOT, SAMPLE_DATA
from .test_probe import _sentence, _write_conll

PAGE = "pages/9_NER_probe.py"
CORPORA = "pages/1_Corpora.py"


@pytest.fixture(scope="module", autouse=True)
def cache(app_environment: Path) -> Path:
    return app_environment


def _open(page: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.run()
    if page:
        at.switch_page(str(ROOT / page)).run()
    return at


def _toy_target(directory: Path, seed: int) -> Path:
    rng = random.Random(seed)
    directory.mkdir()
    for split, n in (("train", 40), ("test", 20)):
        _write_conll(directory / f"{split}.conll", [_sentence(rng) for _ in range(n)])
    return directory


def _start(at: AppTest, sources: list[str], target: Path, epochs: int) -> None:
    """On the probe page: choose the sources, a server directory as the target, all train sentences; run."""
    at.switch_page(str(ROOT / PAGE)).run()
    assert not at.exception
    at.multiselect(key="probe_sources").set_value(sources)
    at.radio(key="probe_where").set_value("a directory on the server")
    at.text_input(key="probe_server").set_value(str(target))
    at.number_input(key="probe_train_n").set_value(0)
    at.number_input(key="probe_epochs").set_value(epochs)
    at.checkbox(key="probe_small_ok").check()  # toy targets: small caps on purpose
    at.button(key="probe_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _state(at: AppTest):
    return at.session_state["simcore_state"]


def test_probe_page_with_nothing_loaded_says_what_to_load():
    at = _open(PAGE)
    assert not at.exception and not at.error
    assert "No sources" in " ".join(i.value for i in at.info)
    assert at.get("page_link")


def test_probe_runs_as_a_job_while_another_page_is_open(tmp_path: Path, monkeypatch):
    target = _toy_target(tmp_path / "toy_ner", seed=11)
    monkeypatch.setenv("SIMCORE_DATA_ROOTS", f"{SAMPLE_DATA}:{tmp_path}")
    at = _open()
    at.button(key="load_sample").click().run()
    _start(at, ["biomed_abstracts", "news"], target, epochs=2)
    job = _state(at).jobs["probe"]
    at.switch_page(str(ROOT / CORPORA)).run()  # the user browses elsewhere at once
    assert job.wait(180) and job.status == "done", job.error
    at.run()  # the next run of whatever page is open files the result
    assert not at.exception and not at.error
    assert "NER probe: toy_ner, 2 sources" in " ".join(s.value for s in at.success)
    assert not at.sidebar.get("progress")
    table = _state(at).extra["probe_results"]
    assert len(job.partial) == 3  # the baseline and two sources, one seed

    # the same probe run directly, on a fresh store: the page handed it the same inputs
    sources = [c for c in corpora_in(SAMPLE_DATA / "sources") if c.name in ("biomed_abstracts", "news")]
    direct = probe(sources, [TargetSplits.from_directory(target)], workbench=Workbench(ArtefactStore(tmp_path / "s")),
                   caps=ProbeCaps(train_sentences=None, epochs=2), seeds=[0])
    timing = ["seconds"]  # wall-clock time differs from run to run
    pd.testing.assert_frame_equal(table.drop(columns=timing).reset_index(drop=True),
                                  direct.drop(columns=timing).reset_index(drop=True))
    assert "train_sentences=all" in table["caps"].iloc[0] and "epochs=2" in table["caps"].iloc[0]

    # coming back: the form has the choices that ran, and the results are shown
    at.switch_page(str(ROOT / PAGE)).run()
    assert at.number_input(key="probe_epochs").value == 2
    assert at.text_input(key="probe_server").value == str(target)
    assert at.multiselect(key="probe_sources").value == ["biomed_abstracts", "news"]
    shown = next(d.value for d in at.dataframe if "improvement" in d.value.columns)
    assert list(shown["source"]) == list(table["source"])

    at.button(key="probe_use").click().run()
    assert not at.exception
    state = _state(at)
    assert state.results is not None and state.results_columns["f1"] == "f1"
    assert state.results_columns["baseline"] == "baseline"


def test_cancel_stops_the_probe_and_keeps_the_finished_runs(tmp_path: Path, monkeypatch):
    target = _toy_target(tmp_path / "toy_cancel", seed=12)  # not the other test's target: nothing stored yet
    monkeypatch.setenv("SIMCORE_DATA_ROOTS", f"{SAMPLE_DATA}:{tmp_path}")
    log = tmp_path / "builds.log"
    monkeypatch.setenv("SIMCORE_BUILD_LOG", str(log))
    at = _open()
    at.button(key="load_sample").click().run()
    _start(at, ["news"], target, epochs=30)  # runs of some seconds each, so Cancel lands inside the second
    job = _state(at).jobs["probe"]
    at.switch_page(str(ROOT / CORPORA)).run()
    deadline = time.time() + 180
    while not job.partial and job.running and time.time() < deadline:
        time.sleep(0.1)
    assert [r["source"] for r in job.partial] == ["(none)"], "the baseline finished first"
    at.run()
    assert job.running
    assert len(at.sidebar.get("progress")) == 1  # any page's sidebar shows the probe, with its Cancel button
    next(b for b in at.sidebar.button if b.key == "cancel_probe").click().run()
    assert job.wait(60) and job.status == "cancelled", (job.status, job.error)
    at.run()
    assert any("cancelled" in i.value for i in at.info)
    assert "probe_results" not in _state(at).extra
    assert [r["source"] for r in job.partial] == ["(none)"]
    assert log.read_text().count("probe-run ") == 1  # the finished run is stored, the cancelled one is not
    at.switch_page(str(ROOT / PAGE)).run()
    assert not at.exception
    assert any(list(d.value["source"]) == ["(none)"] for d in at.dataframe)  # the runs finished before Cancel

    # a second probe reads the baseline back and trains only the source's run
    at.button(key="probe_run").click().run()
    again = _state(at).jobs["probe"]
    assert again is not job and again.wait(240) and again.status == "done", again.error
    at.run()
    assert log.read_text().count("probe-run ") == 2  # one new training run
    assert again.partial[0] == job.partial[0]  # the baseline's stored score, read back
    table = _state(at).extra["probe_results"]
    assert list(table["source"]) == ["news"] and table["baseline"].iloc[0] == job.partial[0]["f1"]


def test_bad_choices_are_one_line_errors_and_start_nothing(tmp_path: Path, monkeypatch):
    no_test = tmp_path / "no_test"
    no_test.mkdir()
    _write_conll(no_test / "train.conll", [_sentence(random.Random(3))])
    monkeypatch.setenv("SIMCORE_DATA_ROOTS", f"{SAMPLE_DATA}:{tmp_path}")
    at = _open()
    at.button(key="load_sample").click().run()
    at.switch_page(str(ROOT / PAGE)).run()

    def errors() -> str:
        assert not at.exception, [e.value for e in at.exception]
        return " ".join(e.value for e in at.error)

    at.multiselect(key="probe_sources").set_value([])
    at.button(key="probe_run").click().run()
    assert "choose at least one source" in errors()
    at.multiselect(key="probe_sources").set_value(["news"])
    at.radio(key="probe_where").set_value("a directory on the server")
    at.text_input(key="probe_server").set_value(str(no_test))
    at.button(key="probe_run").click().run()
    assert "has no test file" in errors()
    at.text_input(key="probe_server").set_value("/etc")
    at.button(key="probe_run").click().run()
    assert errors() and "/etc" in errors()  # outside the data folders this app may read
    at.radio(key="probe_where").set_value("files I upload")
    next(u for u in at.get("file_uploader") if u.label == "train").upload("train.conll", b"John\tB-PER\n", "text/plain")
    at.button(key="probe_run").click().run()
    assert "upload at least a train file and a test file" in errors()
    assert "probe" not in _state(at).jobs

    # the form keeps its choices across pages; a source loaded meanwhile is chosen too
    state = _state(at)
    state.sources["extra"] = LoadedCorpus(Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt", name="extra"), "test")
    at.switch_page(str(ROOT / CORPORA)).run()
    at.switch_page(str(ROOT / PAGE)).run()
    assert at.multiselect(key="probe_sources").value == ["news", "extra"]
    assert at.radio(key="probe_where").value == "files I upload"
    assert at.text_input(key="probe_server").value == "/etc"


def test_a_probe_that_fails_in_the_background_says_why(tmp_path: Path, monkeypatch):
    target = _toy_target(tmp_path / "toy_empty_test", seed=13)
    (target / "test.conll").write_text("-DOCSTART-\tO\n\n")  # found, but it holds no sentence
    monkeypatch.setenv("SIMCORE_DATA_ROOTS", f"{SAMPLE_DATA}:{tmp_path}")
    at = _open()
    at.button(key="load_sample").click().run()
    _start(at, ["news"], target, epochs=2)
    job = _state(at).jobs["probe"]
    assert job.wait(120) and job.status == "failed"
    at.run()
    assert not at.exception
    assert "toy_empty_test: the test file holds no tagged sentences" in " ".join(e.value for e in at.error)
    assert at.button(key="probe_run").disabled is False  # a new probe can be started


def test_caps_that_make_every_f1_meaningless_are_refused_before_the_run(tmp_path: Path, monkeypatch):
    """Issue 19: 500 sentences, 1 epoch and 5 s per run gave F1 0 for the baseline and a source, and the page
    warned only afterwards, in a column off-screen; the defaults (up to 45 minutes) came with no estimate."""
    target = _toy_target(tmp_path / "toy_caps", seed=13)
    monkeypatch.setenv("SIMCORE_DATA_ROOTS", f"{SAMPLE_DATA}:{tmp_path}")
    at = _open()
    at.button(key="load_sample").click().run()
    at.switch_page(str(ROOT / PAGE)).run()
    assert any("at most" in c.value and "training runs" in c.value for c in at.caption)  # the estimate, up front
    at.multiselect(key="probe_sources").set_value(["news"])
    at.radio(key="probe_where").set_value("a directory on the server")
    at.text_input(key="probe_server").set_value(str(target))
    at.number_input(key="probe_train_n").set_value(500)
    at.number_input(key="probe_epochs").set_value(1)
    at.number_input(key="probe_seconds").set_value(5)
    at.button(key="probe_run").click().run()
    assert not at.exception
    message = " ".join(e.value for e in at.error)
    assert "meaningless" in message and "1 epoch" in message and "5 s per run" in message and "500 train" in message
    assert "probe" not in _state(at).jobs  # nothing was started
    assert any("2 training runs of at most 5 s" in c.value for c in at.caption)


def test_the_probe_estimate_follows_the_form_before_any_run():
    """Issue 37: the time under the probe's form showed the last submitted choices. Each change now reruns the
    choices: the caption is dashboard.probe_job's bound for the widgets' values as they are, without a press;
    the language-model kind says what its own fields do instead."""
    from dashboard import probe_job as pj

    at = _open()
    at.button(key="load_sample").click().run()
    at.switch_page(str(ROOT / PAGE)).run()
    at.multiselect(key="probe_sources").set_value(["news"]).run()
    at.number_input(key="probe_seeds").set_value(3).run()
    at.number_input(key="probe_seconds").set_value(7).run()
    expected = pj.time_bound(ProbeCaps(train_sentences=ProbeCaps().train_sentences, epochs=ProbeCaps().epochs,
                                       seconds=7.0), 1, 3)
    assert expected.startswith("6 training runs of at most 7 s")  # (baseline + 1 source) x 3 seeds, worked by hand
    assert any(expected in c.value for c in at.caption)
    assert "probe" not in _state(at).jobs
    at.radio(key="probe_kind").set_value(pj.LM_KIND).run()
    lm = [c.value for c in at.caption if "LM tokens per source" in c.value]
    assert lm and "Refuse plans over (min)" in lm[0] and not any("training runs of at most" in c.value for c in at.caption)
