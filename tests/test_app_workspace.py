"""AppTest flows for workspaces (issue 19): a reload finds the work, a stranger does not, exports reopen."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import workspace as ws
from simcore.analysis.ranking import rank_sources
from simcore.analysis.tables import to_long
from simcore.reporting.export import ranking_csv

from .app_helpers import go, no_problems, state
from .conftest import ROOT, SAMPLE_DATA

TABLE3 = SAMPLE_DATA / "results" / "dai2019_table3.csv"


@pytest.fixture(scope="module", autouse=True)
def cache(app_environment: Path) -> Path:
    return app_environment


def opened(ws_id: str | None = None, page: str = "app.py") -> AppTest:
    """A new browser session (a reload, a new tab), on the address ``?ws=ws_id``."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    if ws_id is not None:
        at.query_params["ws"] = ws_id
    at.run()
    if page != "app.py":
        go(at, page)
    return at


def test_a_reload_restores_the_work_and_a_stranger_sees_none_of_it(cache: Path):
    at = opened()
    at.button(key="load_sample").click().run()
    go(at, "pages/6_Open_results.py")
    at.button(key="open_table3").click().run()  # a matrix and NER results
    no_problems(at)
    mine = state(at)
    ws_id = mine.workspace
    assert ws.valid_id(ws_id) and at.query_params["ws"] in (ws_id, [ws_id])  # the address names it
    assert (cache / "workspaces" / ws_id / "workspace.json").is_file()

    again = opened(ws_id, "pages/5_Ranking_and_export.py")  # F5
    no_problems(again)
    back = state(again)
    assert back.workspace == ws_id and sorted(back.sources) == sorted(mine.sources)
    assert list(back.matrices) == list(mine.matrices) and back.results_label == mine.results_label
    pd.testing.assert_frame_equal(back.results, mine.results, check_dtype=False)

    stranger = opened()
    assert state(stranger).workspace != ws_id and not state(stranger).sources and not state(stranger).matrices

    unsaved = ws.new_id()  # a tab opened (or reloaded) before anything was saved keeps its address
    guessed = opened(unsaved)
    assert state(guessed).workspace == unsaved and not state(guessed).matrices
    assert any("Nothing is saved at this address yet" in i.value for i in guessed.info)
    truncated = opened("abc")
    assert ws.valid_id(state(truncated).workspace) and state(truncated).workspace != "abc"
    assert any("does not name a workspace" in w.value for w in truncated.warning)


def test_renaming_listing_a_new_workspace_and_going_back(cache: Path):
    at = opened(page="pages/6_Open_results.py")
    at.button(key="open_table3").click().run()
    first = state(at).workspace
    at.text_input(key="ws_name").set_value("Paper check")
    at.button(key="ws_rename").click().run()
    no_problems(at)
    assert state(at).workspace_name == "Paper check"
    at.button(key="ws_new").click().run()
    no_problems(at)
    second = state(at)
    assert second.workspace != first and not second.matrices and first in second.workspace_related
    assert any("Paper check" in m.value for m in at.markdown)  # listed, with an Open button
    at.button(key=f"ws_open_{first}").click().run()
    no_problems(at)
    assert state(at).workspace == first and state(at).workspace_name == "Paper check" and state(at).matrices
    reopened = opened(first)
    assert state(reopened).workspace_name == "Paper check"
    # issue 37: its zip opened beside it took the same name (two identical rows in the list)
    data = ws.to_zip(ws.snapshot(state(at), "Paper check", cache, SAMPLE_DATA))
    at.get("file_uploader")[-1].upload("paper-check.zip", data, "application/zip")
    at.run()
    no_problems(at)
    assert state(at).workspace != first and state(at).workspace_name == "Paper check (2)" and state(at).matrices


def test_the_apps_own_ranking_csv_reopens_without_breaking_the_ranking_page():
    long = to_long(pd.read_csv(TABLE3))
    csv = ranking_csv(rank_sources(long, ["ppl", "wvv", "tvc", "tvcc"], "lm")).encode()
    at = opened(page="pages/6_Open_results.py")
    at.get("file_uploader")[0].upload("simcore-ranking.csv", csv, "text/csv")
    at.run()
    no_problems(at)
    assert any("left out recommended" in i.value for i in at.info)
    assert set(state(at).matrix["measure"]) == {"ppl", "wvv", "tvc", "tvcc"}
    go(at, "pages/5_Ranking_and_export.py")
    no_problems(at)
    # the matrix downloads as the CSV that Open results reads back
    data = ws.matrix_csv(state(at).matrix)
    assert set(ws.read_matrix_csv(data, "m")["measure"]) == {"ppl", "wvv", "tvc", "tvcc"}


def test_two_tabs_of_one_workspace_keep_both_tabs_work(cache: Path):
    """Tab A and tab B on one address: what each adds reaches the other at its next click, nothing is overwritten."""
    a = opened()
    a.button(key="load_sample").click().run()
    ws_id = state(a).workspace
    b = opened(ws_id, "pages/6_Open_results.py")
    assert sorted(state(b).sources) == sorted(state(a).sources)
    go(a, "pages/6_Open_results.py")
    a.button(key="open_table3").click().run()  # A: a matrix and NER results
    b.text_input(key="ws_name").set_value("Shared by two tabs")
    b.button(key="ws_rename").click().run()  # B (which has not seen A's matrix): a new name
    no_problems(b)
    assert list(state(b).matrices) == list(state(a).matrices) and state(b).results_label == state(a).results_label
    go(a, "app.py")  # A's next click takes in B's name
    no_problems(a)
    assert state(a).workspace_name == "Shared by two tabs"
    assert any("Another tab of this workspace changed it: renamed Shared by two tabs" in i.value for i in a.info)
    reload = opened(ws_id)
    assert state(reload).workspace_name == "Shared by two tabs" and list(state(reload).matrices) == list(state(a).matrices)


def test_a_workspace_zip_holding_a_pickle_is_refused_not_opened_empty(cache: Path):
    """A zip whose m0.csv is a pickle (named in the manifest or not) is refused with a message; the open
    workspace stays as it was (it used to open as a new, empty workspace)."""
    import io
    import json
    import pickle
    import zipfile

    at = opened(page="pages/6_Open_results.py")
    at.button(key="open_table3").click().run()
    before = state(at).workspace
    from dashboard.state import AppState

    manifest = json.loads(ws.snapshot(AppState(), "evil", cache, SAMPLE_DATA, 0.0, [])[ws.MANIFEST])
    for listed in (False, True):
        if listed:
            manifest["matrices"] = [{"name": "evil", "file": "m0.csv", "raw": None, "origin": "zip"}]
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr(ws.MANIFEST, json.dumps(manifest))
            z.writestr("m0.csv", pickle.dumps(pd.DataFrame({"source": ["a"], "value": [1.0]})))
        at.get("file_uploader")[-1].upload(f"evil{int(listed)}.zip", buf.getvalue(), "application/zip")
        at.run()
        assert not at.exception
        # refused by the zip's reader (a member the manifest does not name, a binary table) or by the page
        # (nothing in it could be opened): either way a one-line message
        assert any(w in e.value for e in at.error for w in ("holds nothing that can be opened", "does not name",
                                                            "not a text table")), [e.value for e in at.error]
        assert state(at).workspace == before and state(at).matrices


def test_a_running_job_belongs_to_its_workspace_reload_and_second_tab_see_it(cache: Path):
    """Issue 29: F5 during a computation lost the job. A reload (a new session on the same address) and a
    second tab find the running job, either can cancel it, and its result reaches every tab."""
    from dashboard import jobs

    a = opened()
    a.button(key="load_sample").click().run()
    ws_id = state(a).workspace
    go(a, "pages/2_Similarity.py")
    a.button(key="compute").click().run()
    job = jobs.running(state(a), "matrix")
    assert job is not None
    reload = opened(ws_id, "pages/2_Similarity.py")  # F5 on the same address: a new session
    second = opened(ws_id)  # another tab
    assert jobs.running(state(reload), "matrix") is job and jobs.running(state(second), "matrix") is job
    assert reload.get("progress"), "its progress is drawn in the new session"
    assert not [b for b in reload.button if b.key == "compute" and not b.disabled]  # no second start
    second.sidebar.button(key="cancel_matrix").click().run()  # Cancel from another tab
    assert job.wait(120) and job.status == jobs.CANCELLED

    go(reload, "pages/2_Similarity.py")
    reload.button(key="compute").click().run()
    job = jobs.running(state(reload), "matrix")
    assert job is not None and jobs.running(state(second), "matrix") is job
    assert job.wait(300) and job.status == jobs.DONE
    second.run()  # the first tab to run after the end files the result, once, and saves it
    assert [m for m in state(second).matrices if m.startswith("run ")] and job.collected and job.saved
    reload.run()  # the other merges it from the workspace
    no_problems(reload)
    assert list(state(reload).matrices) == list(state(second).matrices)
    assert len([m for m in state(reload).matrices if m.startswith("run ")]) == 1  # filed once


def _dead_pid() -> int:
    """The id of a process that has exited (the killed server's)."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_job_whose_server_stopped_is_shown_interrupted_and_resume_finishes_it(cache: Path):
    """Issue 29: a job whose server stopped was lost. Its record stays in the workspace on disk as the killed
    server left it; opening the workspace shows it interrupted, Resume starts it again reusing every stored
    cell, its result is filed and the record goes."""
    import json

    from dashboard import jobs

    from .app_helpers import finish_jobs

    a = opened()
    a.button(key="load_sample").click().run()
    ws_id = state(a).workspace
    go(a, "pages/2_Similarity.py")
    measures = list(a.multiselect(key="f_measures").value)
    a.multiselect(key="f_measures").set_value(["tvc", "jsd"])  # part of the work done and stored first...
    a.button(key="compute").click().run()
    finish_jobs(a)
    # what is stored before the whole matrix starts (how far the stopped job gets depends on the machine's load)
    cells = {p.name: p.stat().st_mtime_ns for p in (cache / "cell").iterdir()}
    assert cells, "values were stored before it stopped"
    go(a, "pages/2_Similarity.py")
    a.multiselect(key="f_measures").set_value(measures)  # ... then the whole matrix, stopped at once
    a.button(key="compute").click().run()
    job = jobs.running(state(a), "matrix")
    record_file = cache / "workspaces" / ws_id / "jobs" / "matrix.json"
    left = json.loads(record_file.read_text())  # written as the job starts
    assert left["kind"] == "matrix" and left["server"] == jobs.SERVER and left["total"] == job.total
    assert left["params"]["job"]["sources"] == sorted(state(a).sources) and left["params"]["job"]["measures"] == measures
    job.cancel()  # the job stops here (its record goes) ...
    assert job.wait(120)
    a.run()
    assert not record_file.exists()
    # ... and the record is put back as a server killed mid-job leaves it: another server, its process gone
    record_file.parent.mkdir(exist_ok=True)
    record_file.write_text(json.dumps({**left, "server": "0" * 16, "pid": _dead_pid()}))

    b = opened(ws_id, "pages/2_Similarity.py")  # the workspace opened again, on the new server
    no_problems(b)
    assert [w for w in b.sidebar.warning if "was interrupted" in w.value and f"{left['done']} of" in w.value]
    assert jobs.running(state(b), "matrix") is None
    b.sidebar.button(key="resume_matrix").click().run()
    resumed = jobs.running(state(b), "matrix")
    assert resumed is not None and resumed is not job
    assert json.loads(record_file.read_text())["server"] == jobs.SERVER  # recorded again, by this server
    assert resumed.wait(300) and resumed.status == jobs.DONE
    b.run()  # filed, saved, its record gone
    no_problems(b)
    assert [m for m in state(b).matrices if m.startswith("run ")]
    assert not record_file.exists() and not [w for w in b.sidebar.warning if "was interrupted" in w.value]
    after = {p.name: p.stat().st_mtime_ns for p in (cache / "cell").iterdir()}
    assert all(after.get(k) == t for k, t in cells.items()), "the stored values were read back, not computed again"
    # the rest computed by the resumed job (this module's store may hold them already from an earlier test),
    # and the matrix filed whole: every source x target x measure asked for
    assert len(after) >= len(cells)
    [run] = [m for name, m in state(b).matrices.items() if name.startswith("run ") and set(m.long["measure"]) == set(measures)]
    assert len(run.long) == len(state(b).sources) * len(state(b).targets) * len(measures)
    print(f"resume reused {len(cells)} of {len(after)} stored cells")
    c2 = opened(ws_id)  # and the workspace opens with no interrupted job any more
    assert not [w for w in c2.sidebar.warning if "was interrupted" in w.value]


def test_a_hostile_job_record_is_refused_when_the_workspace_opens(cache: Path):
    import pickle

    a = opened()
    a.button(key="load_sample").click().run()
    ws_id = state(a).workspace
    folder = cache / "workspaces" / ws_id / "jobs"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "matrix.json").write_bytes(pickle.dumps({"kind": "matrix"}))
    (folder / "probe.json").write_text('{"format": "simcore-job", "version": 1, "kind": "probe", "title": "x", '
                                       '"params": {"probe": "vectors", "sources": ["news"], "seeds": 1, "caps": {}, '
                                       '"target": {"name": "t", "directory": {"kind": "server", "path": "/etc"}}}}')
    b = opened(ws_id)
    assert not b.exception
    refused = [w.value for w in b.warning if "job record" in w.value]
    assert len(refused) == 2 and all("\n" not in w for w in refused), refused
    assert not list(folder.iterdir()) and not [x for x in b.sidebar.button if x.key.startswith("resume_")]


def test_a_workspace_zip_with_damaged_compressed_data_gets_one_line(cache: Path):
    """A deflated member whose bytes were damaged (zlib's 'invalid stored block lengths', a bad CRC) is
    one line on the Open results page; the open workspace stays as it was."""
    import io
    import zipfile

    from dashboard.state import AppState

    at = opened(page="pages/6_Open_results.py")
    at.button(key="open_table3").click().run()
    before = state(at).workspace
    files = ws.snapshot(AppState(), "damaged", cache, SAMPLE_DATA, 0.0, [])
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, content in files.items():
            z.writestr(name, content * 20)
    data = bytearray(buf.getvalue())
    start = 30 + len(next(iter(files)))  # the first member's compressed data, after its local header
    data[start:start + 8] = b"\xff" * 8
    at.get("file_uploader")[-1].upload("damaged.zip", bytes(data), "application/zip")
    at.run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "\n" not in errors[0] and "damaged" in errors[0], errors
    assert state(at).workspace == before and state(at).matrices
