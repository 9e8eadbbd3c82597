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


def big_target() -> bytes:
    """The three sample targets three times over: about 30k tokens, enough to be tagged ahead."""
    text = "".join(
        (SAMPLE_DATA / "targets" / name).read_text()
        for name in ("news_ner.conll", "lab_protocol_ner.conll", "med_forum_posts.conll")
    )
    return "\n".join([text] * 3).encode()


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
        assert job.running and "waiting for another computation" in job.message
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
