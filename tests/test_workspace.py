"""dashboard.workspace: a state written as plain files and read back, the folders, the zip and what it refuses."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from dashboard import workspace as ws
from dashboard.paths import resolve_server_path
from dashboard.state import AppState, Job, LoadedCorpus, NamedMatrix
from simcore.analysis import read_matrix, to_long
from simcore.corpus import Corpus, save_upload
from simcore.errors import SimcoreError
from simcore.store import ArtefactStore

from .conftest import SAMPLE_DATA

TABLE3 = SAMPLE_DATA / "results" / "dai2019_table3.csv"
UPLOAD = b"the patient felt dizzy after the dose .\nno side effects so far .\n"


def locator(store: ArtefactStore) -> ws.Locator:
    return ws.Locator(store, SAMPLE_DATA, lambda text: resolve_server_path(text, [SAMPLE_DATA.resolve()]))


def filled_state(store: ArtefactStore) -> AppState:
    state = AppState()
    state.sources["news"] = LoadedCorpus(Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt"), "sample")
    state.sources["reviews"] = LoadedCorpus(Corpus.from_path(SAMPLE_DATA / "sources" / "product_reviews.csv",
                                                             name="reviews"), "server path: x")
    path = save_upload(UPLOAD, "forum.txt", store)
    state.targets["my forum"] = LoadedCorpus(Corpus.from_path(path, name="my forum"), "upload: forum")
    table = pd.read_csv(TABLE3)
    state.add_matrix(NamedMatrix("Table 3", to_long(table), "published values", {"note": "x"}, raw=table))
    job = Job(sources=["news"], targets=["my forum"], measures=["tvc"], options={"seed": 3}, tokenizer={"lowercase": True})
    long = to_long(pd.DataFrame({"source": ["news", "=cmd"], "target": ["my forum"] * 2, "tvc": [0.5, 0.25]}))
    state.add_matrix(NamedMatrix("run 1", long, "computed here", {"measures": ["tvc"]}, job=job))
    state.results = pd.DataFrame({"target": ["forum"], "source": ["news"], "f1": [71.5], "baseline": [70.0]})
    state.results_label, state.results_columns = "upload: f1.csv", {"f1": "f1", "baseline": "baseline", "improvement": None}
    state.extra["name_map"] = {"target": {"forum": "my forum"}, "source": {}}
    state.extra["forms"] = {"similarity": {"f_sources": ["news"], "f_seed": 3, "f_lower": True}}
    state.extra[ws.PROBE_RESULTS] = pd.DataFrame({"target": ["t"], "source": ["news"], "f1": [0.5]})
    state.extra[ws.PROBE_LABEL] = "NER probe: t"
    return state


def check_restored(state: AppState, original: AppState) -> None:
    assert sorted(state.sources) == ["news", "reviews"] and list(state.targets) == ["my forum"]
    assert state.targets["my forum"].corpus.path.read_bytes() == UPLOAD
    assert state.sources["reviews"].corpus.path == original.sources["reviews"].corpus.path.resolve()
    assert list(state.matrices) == ["Table 3", "run 1"] and state.active == "run 1"
    pd.testing.assert_frame_equal(state.matrices["Table 3"].long[["source", "target", "measure", "value"]],
                                  original.matrices["Table 3"].long[["source", "target", "measure", "value"]],
                                  check_dtype=False)
    assert list(state.matrices["run 1"].long["source"]) == ["news", "=cmd"]  # escaped in the CSV, read back as typed
    assert state.matrices["run 1"].job == original.matrices["run 1"].job
    assert state.matrices["Table 3"].job is None and "wv_f1" in state.matrices["Table 3"].raw
    pd.testing.assert_frame_equal(state.results, original.results)
    assert state.results_columns == original.results_columns and state.results_label == "upload: f1.csv"
    assert state.extra["name_map"]["target"] == {"forum": "my forum"}
    assert state.extra["forms"] == original.extra["forms"]
    assert state.extra[ws.PROBE_LABEL] == "NER probe: t" and len(state.extra[ws.PROBE_RESULTS]) == 1


def test_a_state_round_trips_through_a_workspace_folder(tmp_path: Path):
    store = ArtefactStore(tmp_path / "store")
    original = filled_state(store)
    spaces = ws.Workspaces(tmp_path / "store" / "workspaces")
    ws_id = ws.new_id()
    assert ws.valid_id(ws_id) and ws_id != ws.new_id()
    files = ws.snapshot(original, "my work", store.root, SAMPLE_DATA, created=1.0)
    assert spaces.write(ws_id, files) == len(files)
    assert spaces.write(ws_id, ws.snapshot(original, "my work", store.root, SAMPLE_DATA, created=1.0)) == 0  # nothing changed
    on_disk = sorted(p.name for p in spaces.folder(ws_id).iterdir())
    assert on_disk == sorted(files) and all(n.endswith((".json", ".csv")) for n in on_disk)
    restored = AppState()
    assert ws.restore(spaces.read(ws_id), restored, locator(store)) == []
    check_restored(restored, original)
    # a matrix removed from the state is removed from the folder
    original.remove_matrix("run 1")
    spaces.write(ws_id, ws.snapshot(original, "my work", store.root, SAMPLE_DATA, created=1.0))
    assert not (spaces.folder(ws_id) / "m1.csv").exists()


def test_workspace_folders_are_listed_renamed_and_deleted_by_id_only(tmp_path: Path):
    store = ArtefactStore(tmp_path / "store")
    spaces = ws.Workspaces(tmp_path / "ws")
    a, b = ws.new_id(), ws.new_id()
    state = filled_state(store)
    spaces.write(a, ws.snapshot(state, "first", store.root, SAMPLE_DATA))
    spaces.write(b, ws.snapshot(AppState(), "second", store.root, SAMPLE_DATA))
    assert spaces.rename(a, "  renamed   one ") == "renamed one"
    rows = {r["id"]: r for r in spaces.describe([a, b, ws.new_id()])}
    assert set(rows) == {a, b} and rows[a]["name"] == "renamed one" and rows[a]["matrices"] == 2
    assert rows[a]["sources"] == 2 and rows[a]["changed"] > 0
    spaces.delete(b)
    assert not spaces.exists(b) and spaces.exists(a)
    for bad in ("../etc", "a/b", "short", "", "x" * 100):
        assert not spaces.exists(bad)
        with pytest.raises(SimcoreError):
            spaces.folder(bad)
    with pytest.raises(SimcoreError, match="empty"):
        spaces.rename(a, "   ")


def test_the_zip_opens_on_another_server_with_the_uploaded_corpus(tmp_path: Path):
    store = ArtefactStore(tmp_path / "store")
    original = filled_state(store)
    data = ws.to_zip(ws.snapshot(original, "mine", store.root, SAMPLE_DATA), locator(store))
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert "workspace.json" in names and any(n.startswith("uploads/") for n in names)
    assert all(n.endswith((".json", ".csv")) or n.startswith("uploads/") for n in names)
    other = ArtefactStore(tmp_path / "other")  # a server that never saw the upload
    restored = AppState()
    assert ws.restore(ws.read_zip(data), restored, locator(other)) == []
    check_restored(restored, original)
    assert restored.targets["my forum"].corpus.path.is_relative_to(other.root)


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for name, content in members.items():
            z.writestr(name, content)
    return buffer.getvalue()


def test_a_workspace_file_is_data_checked_on_the_way_in(tmp_path: Path):
    store = ArtefactStore(tmp_path / "store")
    good = ws.snapshot(filled_state(store), "mine", store.root, SAMPLE_DATA)
    with pytest.raises(SimcoreError, match="not a zip"):
        ws.read_zip(b"\x80\x04pickle")
    for evil in ("../escape.csv", "/etc/passwd", "state.pkl", "m0.csv/../../x", "uploads/../../x"):
        with pytest.raises(SimcoreError, match="never has"):
            ws.read_zip(_zip({**good, evil: b"x"}))
    with pytest.raises(SimcoreError, match="no workspace.json"):
        ws.read_zip(_zip({"m0.csv": good["m0.csv"]}))
    with pytest.raises(SimcoreError, match="not a simcore workspace"):
        ws.read_zip(_zip({"workspace.json": b'{"format": "other"}'}))
    # corpora that point outside the sample, the data roots or the store are left out, with a reason
    manifest = json.loads(good["workspace.json"])
    manifest["corpora"]["source"] = [
        {"name": "passwd", "kind": "server", "path": "/etc/passwd"},
        {"name": "up", "kind": "sample", "path": "../../etc/passwd"},
        {"name": "forged", "kind": "upload", "key": "0" * 64, "suffix": ".txt"},
        {"name": "odd", "kind": "upload", "key": "../x", "suffix": "/../../x"},
    ]
    manifest["forms"] = {"similarity": {"f_seed": {"__reduce__": "os.system"}, "f_lower": True}}
    restored = AppState()
    notes = ws.restore(ws.read_zip(_zip({**good, "workspace.json": json.dumps(manifest).encode()})),
                       restored, locator(store))
    assert not restored.sources and len(notes) == 4, notes
    assert restored.extra["forms"] == {"similarity": {"f_lower": True}}
    assert len(restored.matrices) == 2  # the rest of the workspace still opens


def test_a_matrix_download_is_the_csv_the_cli_reads(tmp_path: Path):
    long = to_long(pd.read_csv(TABLE3))
    path = tmp_path / "m.csv"
    path.write_bytes(ws.matrix_csv(long))
    back = read_matrix(path)
    pd.testing.assert_frame_equal(back[["source", "target", "measure", "value", "direction"]],
                                  long[["source", "target", "measure", "value", "direction"]], check_dtype=False)


def test_a_sentence_selection_comes_back_from_the_store(tmp_path: Path):
    from simcore.selection import SelectionOptions, choose, kept_indices, score_pool

    store = ArtefactStore(tmp_path / "store")
    pool = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")
    scores = score_pool(pool, Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll"),
                        SelectionOptions(method="cosine"), store)
    cutoff = choose(scores, top=10, min_tokens=12)
    assert cutoff.n_short > 0 and cutoff != choose(scores, top=10)
    state = AppState()
    state.extra["selection_runs"] = {"cosine · news → news_ner · top 10": {
        "pool": pool, "scores": scores, "cutoff": cutoff, "keep_duplicates": False, "method": "cosine",
        "target": "news_ner", "examples": pd.DataFrame()}}  # what the page adds later is not kept
    restored = AppState()
    files = ws.snapshot(state, "s", store.root, SAMPLE_DATA)
    assert ws.restore(files, restored, locator(store)) == []
    run = restored.extra["selection_runs"]["cosine · news → news_ner · top 10"]
    assert run["cutoff"] == cutoff and run["scores"].n == scores.n and run["pool"].path == pool.path.resolve()
    assert (run["cutoff"].min_tokens, run["cutoff"].n_short) == (12, cutoff.n_short)
    assert list(kept_indices(run["scores"], run["cutoff"])) == list(kept_indices(scores, cutoff))

    # a workspace saved before the minimum length (no min_tokens, no n_short) loads with no minimum
    manifest = json.loads(files[ws.MANIFEST])
    no_minimum = choose(scores, top=10)
    manifest["selections"][0]["cutoff"] = {k: v for k, v in manifest["selections"][0]["cutoff"].items()
                                           if k not in ("min_tokens", "n_short")} | {
        "key": no_minimum.key, "index": no_minimum.index, "n_eligible": no_minimum.n_eligible}
    older = AppState()
    assert ws.restore(files | {ws.MANIFEST: json.dumps(manifest).encode()}, older, locator(store)) == []
    assert older.extra["selection_runs"]["cosine · news → news_ner · top 10"]["cutoff"] == no_minimum
    # and a minimum this app never writes is refused with a note, not a traceback
    manifest["selections"][0]["cutoff"]["min_tokens"] = 0
    notes = ws.restore(files | {ws.MANIFEST: json.dumps(manifest).encode()}, AppState(), locator(store))
    assert len(notes) == 1 and "selection not restored" in notes[0] and "minimum sentence length" in notes[0]


def test_two_sessions_of_one_workspace_merge_instead_of_overwriting(tmp_path: Path):
    """Tab A and tab B start from one save; each changes something else; A's save takes in B's changes."""
    store = ArtefactStore(tmp_path / "store")
    spaces = ws.Workspaces(tmp_path / "store" / "workspaces")
    ws_id = ws.new_id()
    a = filled_state(store)
    base_files = ws.snapshot(a, "shared", store.root, SAMPLE_DATA, created=1.0)
    spaces.write(ws_id, base_files)
    base = json.loads(base_files[ws.MANIFEST])
    b = AppState()
    ws.restore(spaces.read(ws_id), b, locator(store))
    # B: adds a target and a matrix, removes a source, replaces the NER results, renames the workspace
    b.targets["news too"] = LoadedCorpus(Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt", name="news too"), "x")
    b.add_matrix(NamedMatrix("run 2", b.matrices["run 1"].long.copy(), "computed in B", {}))
    del b.sources["reviews"]
    b.results = pd.DataFrame({"target": ["forum"], "source": ["news"], "f1": [80.0], "baseline": [70.0]})
    b_saved = ws.snapshot(b, "renamed in B", store.root, SAMPLE_DATA, created=1.0)
    spaces.write(ws_id, b_saved)
    # A meanwhile: its own probe table and a matrix of its own under the name B also took
    a.extra[ws.PROBE_RESULTS] = pd.DataFrame({"target": ["t"], "source": ["news"], "f1": [0.9]})
    a.add_matrix(NamedMatrix("run 2", to_long(pd.DataFrame({"source": ["x"], "target": ["y"], "tvc": [0.1]})), "A", {}))
    a.workspace_name = "shared"
    a.targets["news too"] = LoadedCorpus(Corpus.from_path(SAMPLE_DATA / "sources" / "tweets.jsonl", name="news too"), "y")

    changes = ws.merge(base, spaces.read(ws_id), a, locator(store))

    assert sorted(a.targets) == ["my forum", "news too"] and sorted(a.sources) == ["news"]
    assert a.targets["news too"].origin == "y"  # the same name taken in both tabs: this tab's corpus stays...
    assert a.matrices["run 2"].origin == "A" and a.matrices["run 2 (2)"].origin == "computed in B"  # both kept
    assert a.results["f1"].tolist() == [80.0]  # B changed it, A did not
    assert a.extra[ws.PROBE_RESULTS]["f1"].tolist() == [0.9]  # A changed it, B did not
    assert a.workspace_name == "renamed in B"
    assert "target news too of the other tab not taken: this tab has another corpus by that name" in changes  # ...said
    assert "source reviews removed" in changes
    assert "NER results replaced" in changes and not any("probe" in c for c in changes)
    # what A then saves holds both sessions' work, and merging the same save again changes nothing
    saved = ws.snapshot(a, a.workspace_name, store.root, SAMPLE_DATA, created=1.0)
    spaces.write(ws_id, saved)
    again = AppState()
    ws.restore(spaces.read(ws_id), again, locator(store))
    assert sorted(again.targets) == ["my forum", "news too"] and again.extra[ws.PROBE_RESULTS]["f1"].tolist() == [0.9]
    assert list(again.matrices) == ["Table 3", "run 1", "run 2", "run 2 (2)"]
    # B's next save takes in A's: both tabs then hold the same four matrices under the same names
    ws.merge(json.loads(b_saved[ws.MANIFEST]), spaces.read(ws_id), b, locator(store))
    assert {n: m.origin for n, m in b.matrices.items()} == {n: m.origin for n, m in a.matrices.items()}
    assert ws.merge(json.loads(saved[ws.MANIFEST]), spaces.read(ws_id), a, locator(store)) == []
