"""AppTest: adding a target on the Corpora page starts its work in the background
(simcore.matrix.ahead, issue 37) and the page answers at once; the work lands in the store where
Compute finds it."""

from __future__ import annotations

from pathlib import Path

import pytest

from dashboard import jobs
from dashboard.resources import get_bench
from dashboard.target_job import kind_of
from simcore.corpora.tokenize import TokenizerOptions
from simcore.matrix.workbench import Workbench
from simcore.models.tagging import tagged_stored
from simcore.utils.store import ArtefactStore

from .app_helpers import fresh, go, no_problems, state
from .conftest import SAMPLE_DATA


@pytest.fixture(scope="module", autouse=True)
def cache(app_environment: Path) -> Path:
    return app_environment


def big_target(copies: int = 3) -> bytes:
    """The three sample targets ``copies`` times over (3: about 30k tokens, enough to be worth it)."""
    text = "".join(
        (SAMPLE_DATA / "targets" / name).read_text()
        for name in ("news_ner.conll", "lab_protocol_ner.conll", "med_forum_posts.conll")
    )
    return "\n".join([text] * copies).encode()


def test_adding_a_target_starts_its_work_and_the_page_does_not_wait_for_it(cache: Path):
    at = go(fresh(), "pages/1_Corpora.py")
    # another computation of this server runs: the target's job must wait for it
    with get_bench().lock:
        at.get("file_uploader")[0].upload("ward_notes.conll", big_target(), "text/plain")
        # this run would never return if the page waited on the lock
        at.button(key="add_uploads").click().run()
        no_problems(at)
        assert "ward_notes" in state(at).targets
        job = state(at).jobs[kind_of("ward_notes")]
        assert job.running and job.work_started is None, "it waits for the lock, the page did not"
    assert job.wait(240) and job.status == jobs.DONE, job.error
    corpus = state(at).targets["ward_notes"].corpus
    target = Workbench(ArtefactStore(cache)).target(corpus)
    pos = tuple(target.options.tvcc_pos)
    options = TokenizerOptions(**target.tokenized.meta.get("options", {}))
    assert tagged_stored(target.fingerprint, target.store, pos, options), (
        "tagged for TVcC, in the store"
    )
    at.run()  # the ended job is filed quietly: no message, no error
    no_problems(at)


def test_a_small_target_with_no_large_source_starts_no_job():
    at = go(fresh(), "pages/1_Corpora.py")
    example = SAMPLE_DATA / "upload_example" / "med_forum_posts_sample.txt"
    at.get("file_uploader")[0].upload(example.name, example.read_bytes(), "text/plain")
    at.button(key="add_uploads").click().run()
    no_problems(at)
    assert "med_forum_posts_sample" in state(at).targets
    assert not [kind for kind in state(at).jobs if kind.startswith("target ")]


def test_compute_after_the_work_done_at_add_time_builds_nothing(cache: Path, monkeypatch):
    """The job works for the Similarity form's default choices: a Compute of them afterwards finds
    every artefact stored (the store's build log, written by the job's processes, stays empty)."""
    at = fresh()
    at.button(key="load_sample").click().run()
    go(at, "pages/1_Corpora.py")
    at.get("file_uploader")[0].upload("clinic_notes.conll", big_target(4), "text/plain")
    at.button(key="add_uploads").click().run()
    no_problems(at)
    job = state(at).jobs[kind_of("clinic_notes")]
    assert job.wait(300) and job.status == jobs.DONE, job.error
    log = cache / "builds.log"
    monkeypatch.setenv("SIMCORE_BUILD_LOG", str(log))  # the matrix job's process inherits it
    go(at, "pages/2_Similarity.py")
    at.multiselect(key="f_targets").set_value(["clinic_notes"])
    at.button(key="compute").click().run()
    matrix = state(at).jobs["matrix"]
    assert matrix.wait(300) and matrix.status == jobs.DONE, matrix.error
    assert not log.exists() or log.read_text() == "", log.read_text()
    assert len(matrix.result) == len(state(at).sources) * len(matrix.params.measures)
    # the log is written from the job's process: a target nothing was done for builds its cells
    at.run()  # the finished matrix filed, as the sidebar's timer would
    at.multiselect(key="f_targets").set_value(["med_forum_posts"])
    at.multiselect(key="f_measures").set_value(["tvc"])
    at.button(key="compute").click().run()
    other = state(at).jobs["matrix"]
    assert other is not matrix and other.wait(300) and other.status == jobs.DONE, other.error
    assert "cell " in log.read_text()
