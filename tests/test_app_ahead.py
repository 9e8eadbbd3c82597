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


def _dead_pid() -> int:
    """The id of a process that has exited (a killed server's)."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _stored(cache: Path) -> dict[str, int]:
    """Every artefact in the store, with when it was written."""
    return {f"{p.parent.name}/{p.name}": p.stat().st_mtime_ns for p in cache.glob("*/*")
            if p.is_dir() and p.parent.name not in ("tmp", "locks", "workspaces")}


def test_a_target_job_whose_server_stopped_is_interrupted_and_resume_finishes_it(cache: Path):
    """Issue 37: the add-time job was the one job a server stop lost. Its record is written with
    the workspace as it starts; put back as a killed server leaves it, opening the workspace shows
    it interrupted, and Resume finishes it reading back what the first run stored."""
    import json

    from streamlit.testing.v1 import AppTest

    from dashboard.workspace.records import file_name

    from .conftest import ROOT

    at = fresh()
    at.button(key="load_sample").click().run()
    ws_id = state(at).workspace
    go(at, "pages/1_Corpora.py")
    at.get("file_uploader")[0].upload("ward_rounds.conll", big_target(5), "text/plain")
    at.button(key="add_uploads").click().run()
    no_problems(at)
    kind = kind_of("ward_rounds")
    job = state(at).jobs[kind]
    record_file = cache / "workspaces" / ws_id / "jobs" / file_name(kind)
    left = json.loads(record_file.read_text())  # written as the job starts
    assert left["kind"] == kind and left["title"] == "Preparing ward_rounds for Compute"
    assert left["params"] == {"target": "ward_rounds", "sources": sorted(state(at).sources)}
    while job.running and job.fraction < 0.3:  # stopped part-way, once some of its work is stored
        job.wait(0.2)
    job.cancel()
    assert job.wait(120)
    at.run()
    assert not record_file.exists(), "a cancelled job's record goes"
    before = _stored(cache)
    record_file.write_text(json.dumps({**left, "server": "0" * 16, "pid": _dead_pid()}))

    b = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    b.query_params["ws"] = ws_id  # the workspace opened again, on a new server
    b.run()
    no_problems(b)
    # the sidebar escapes the name's "_" for Markdown
    assert [w for w in b.sidebar.warning if "Preparing ward\\_rounds for Compute" in w.value
            and "was interrupted" in w.value]
    assert jobs.running(state(b), kind) is None
    b.sidebar.button(key=f"resume_{kind}").click().run()
    resumed = jobs.running(state(b), kind)
    assert resumed is not None and resumed is not job
    assert json.loads(record_file.read_text())["server"] == jobs.SERVER  # recorded again, here
    assert resumed.wait(300) and resumed.status == jobs.DONE, resumed.error
    b.run()
    no_problems(b)
    assert not record_file.exists()
    assert not [w for w in b.sidebar.warning if "was interrupted" in w.value]
    after = _stored(cache)
    assert all(after.get(k) == t for k, t in before.items()), "the first run's work was read back"
    corpus = state(b).targets["ward_rounds"].corpus
    target = Workbench(ArtefactStore(cache)).target(corpus)
    options = TokenizerOptions(**target.tokenized.meta.get("options", {}))
    assert tagged_stored(target.fingerprint, target.store, tuple(target.options.tvcc_pos), options)
    print(f"resume reused {len(before)} stored artefacts and added {len(after) - len(before)}")


def test_a_target_work_record_is_checked_like_every_other():
    """A record names its target in its kind and its parameters, and its file by a hash of the
    name (a corpus name may hold any character): a record that does not agree with itself is
    refused, in one line."""
    import hashlib
    import json

    from dashboard.workspace.records import RecordError, file_name, parse, record

    kind = kind_of("notes/../x y")
    assert file_name(kind) == f"target-{hashlib.sha256(kind.encode()).hexdigest()[:16]}.json"
    assert file_name("matrix") == "matrix.json"
    good = record(kind, "Preparing it", {"target": "notes/../x y", "sources": ["news"]},
                  started=1.0, server="s")
    parsed = parse(json.dumps(good).encode(), locator=None)
    assert parsed.kind == kind and parsed.params == {"target": "notes/../x y", "sources": ("news",)}
    for bad, why in ((good | {"params": {"target": "other", "sources": []}}, "not the one its"),
                     (good | {"params": {"target": "notes/../x y", "sources": "news"}}, "list"),
                     (good | {"kind": "target "}, "no known kind")):
        with pytest.raises(RecordError, match=why) as caught:
            parse(json.dumps(bad).encode(), locator=None)
        assert "\n" not in str(caught.value)
