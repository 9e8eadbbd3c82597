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
from simcore.analysis.tables import read_matrix, to_long
from simcore.corpora.corpus import Corpus, save_upload
from simcore.utils.errors import SimcoreError
from simcore.utils.store import ArtefactStore

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
    from simcore.selection.choosing import choose, kept_indices
    from simcore.selection.driver import score_pool
    from simcore.selection.options import SelectionOptions

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


def _two_matrices() -> AppState:
    state = AppState()
    for name, value in (("A", 0.1), ("B", 0.9)):
        table = pd.DataFrame({"source": [f"{name} source"], "target": ["t"], "tvc": [value]})
        state.add_matrix(NamedMatrix(name, to_long(table), name, {}))
    return state


def test_a_save_cut_short_leaves_the_mismatched_matrix_out_and_says_which(tmp_path: Path, monkeypatch):
    """Matrices A and B saved; A removed, so B's rows go to m0.csv; the save dies after that first table."""
    from dashboard.workspace import folders

    store = ArtefactStore(tmp_path / "store")
    spaces, ws_id = ws.Workspaces(tmp_path / "ws"), ws.new_id()
    state = _two_matrices()
    spaces.write(ws_id, ws.snapshot(state, "w", store.root, SAMPLE_DATA))
    state.remove_matrix("A")
    real_write, written = folders._atomic_write, []

    def killed_after_one(path: Path, data: bytes) -> None:
        if written:
            raise KeyboardInterrupt  # the process ends here: nothing after the first table reaches the disk
        written.append(path.name)
        real_write(path, data)

    monkeypatch.setattr(folders, "_atomic_write", killed_after_one)
    with pytest.raises(KeyboardInterrupt):
        spaces.write(ws_id, ws.snapshot(state, "w", store.root, SAMPLE_DATA))
    monkeypatch.undo()
    assert written == ["m0.csv"]
    files = spaces.read(ws_id)
    assert json.loads(files[ws.MANIFEST])["matrices"][0]["name"] == "A"  # the old manifest, the new m0.csv
    restored = AppState()
    notes = ws.restore(files, restored, locator(store))
    assert list(restored.matrices) == ["B"] and restored.matrices["B"].long["source"].tolist() == ["B source"]
    assert len(notes) == 1 and "A: its table m0.csv does not match" in notes[0]


def test_ids_and_member_names_match_whole_not_before_a_newline(tmp_path: Path):
    ws_id = ws.new_id()
    assert ws.valid_id(ws_id) and not ws.valid_id(ws_id + "\n") and not ws.valid_id("\n" + ws_id)
    with pytest.raises(SimcoreError, match="not a workspace id"):
        ws.Workspaces(tmp_path).folder(ws_id + "\n")
    store = ArtefactStore(tmp_path / "store")
    good = ws.snapshot(_two_matrices(), "w", store.root, SAMPLE_DATA)
    with pytest.raises(SimcoreError, match="never has"):
        ws.read_zip(_zip({**good, "m0.csv\n": good["m0.csv"]}))


def test_a_manifest_cannot_raise_the_servers_decompression_limit(tmp_path: Path):
    from dashboard.paths import UPLOAD_DECOMPRESSED_LIMIT

    store = ArtefactStore(tmp_path / "store")
    files = ws.snapshot(filled_state(store), "w", store.root, SAMPLE_DATA)
    manifest = json.loads(files[ws.MANIFEST])
    for d in manifest["corpora"]["source"] + manifest["corpora"]["target"]:
        d["max_decompressed_bytes"] = 10**18
    manifest["corpora"]["source"][1]["max_decompressed_bytes"] = 1000  # a lower limit is kept
    restored = AppState()
    assert ws.restore(files | {ws.MANIFEST: json.dumps(manifest).encode()}, restored, locator(store)) == []
    assert restored.sources["news"].corpus.max_decompressed_bytes == UPLOAD_DECOMPRESSED_LIMIT == 500_000_000
    assert restored.sources["reviews"].corpus.max_decompressed_bytes == 1000
    assert restored.targets["my forum"].corpus.max_decompressed_bytes == UPLOAD_DECOMPRESSED_LIMIT
    del manifest["corpora"]["target"][0]["max_decompressed_bytes"]  # an upload keeps the upload limit regardless
    again = AppState()
    ws.restore(files | {ws.MANIFEST: json.dumps(manifest).encode()}, again, locator(store))
    assert again.targets["my forum"].corpus.max_decompressed_bytes == UPLOAD_DECOMPRESSED_LIMIT


def _zip_entries(entries: list[tuple[str, bytes]]) -> bytes:
    import warnings

    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w") as z:
        warnings.simplefilter("ignore")  # zipfile warns about a duplicate name, and writes it
        for name, content in entries:
            z.writestr(name, content)
    return buffer.getvalue()


def test_duplicate_binary_and_unnamed_members_refuse_the_whole_file(tmp_path: Path):
    import pickle

    store = ArtefactStore(tmp_path / "store")
    good = ws.snapshot(_two_matrices(), "w", store.root, SAMPLE_DATA)
    assert len(ws.read_zip(_zip(good))) == 3
    other = ws.snapshot(_two_matrices(), "w", store.root, SAMPLE_DATA)["m1.csv"]
    with pytest.raises(SimcoreError, match="holds m0.csv twice"):
        ws.read_zip(_zip_entries([*good.items(), ("m0.csv", other)]))
    evil = pickle.dumps(pd.DataFrame({"a": [1]}))
    with pytest.raises(SimcoreError, match="m0.csv in the workspace file is not a text table"):
        ws.read_zip(_zip(good | {"m0.csv": evil}))
    with pytest.raises(SimcoreError, match="m0.csv in the workspace file is not a text table"):
        ws.read_zip(_zip(good | {"m0.csv": b"source,target\0"}))
    bare = json.dumps({"format": ws.FORMAT, "version": ws.VERSION}).encode()  # an empty workspace holding a pickle
    with pytest.raises(SimcoreError, match="holds m0.csv, which its workspace.json does not name"):
        ws.read_zip(_zip({ws.MANIFEST: bare, "m0.csv": pickle.dumps({"x": 1}, protocol=0)}))
    with pytest.raises(SimcoreError, match="damaged"):
        ws.read_zip(_zip(good | {"uploads/" + "0" * 64: b"not those bytes"}))


def test_deep_json_in_a_workspace_is_a_one_line_error(tmp_path: Path):
    deep = "[" * 100_000 + "]" * 100_000
    store = ArtefactStore(tmp_path / "store")
    good = ws.snapshot(_two_matrices(), "w", store.root, SAMPLE_DATA)
    with pytest.raises(SimcoreError, match="nested too deeply"):
        ws.read_zip(_zip(good | {ws.MANIFEST: deep.encode()}))
    manifest = json.loads(good[ws.MANIFEST])
    with pytest.raises(SimcoreError, match="nested too deeply"):
        ws.restore(good | {ws.MANIFEST: ('{"format": "simcore-workspace", "version": 1, "x": ' + deep + "}").encode()},
                   AppState(), locator(store))
    spaces, ws_id = ws.Workspaces(tmp_path / "ws"), ws.new_id()
    spaces.write(ws_id, good)
    (spaces.folder(ws_id) / ws.MANIFEST).write_text(deep)
    with pytest.raises(SimcoreError, match="nested too deeply"):
        spaces.manifest(ws_id)
    assert spaces.describe([ws_id]) == []
    # a deep value in a table's ladder column costs that matrix only, with a note
    table = b"source,target,measure,value,ladder\na,t,tvc,0.5,\"" + deep.encode() + b"\"\n"
    manifest["tables"]["m0.csv"] = __import__("hashlib").sha256(table).hexdigest()
    restored = AppState()
    notes = ws.restore(ws.read_zip(_zip(good | {"m0.csv": table, ws.MANIFEST: json.dumps(manifest).encode()})),
                       restored, locator(store))
    assert list(restored.matrices) == ["B"] and len(notes) == 1 and "nested too deeply" in notes[0]


@pytest.fixture
def memory_bucket():
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    if fs.exists("/wsbkt"):
        fs.rm("/wsbkt", recursive=True)
    yield fs
    if fs.exists("/wsbkt"):
        fs.rm("/wsbkt", recursive=True)


def test_a_corpus_at_a_url_saves_and_opens_again_within_the_servers_remote_roots(tmp_path: Path, memory_bucket,
                                                                                   monkeypatch):
    from dashboard.paths import resolve_server_url

    monkeypatch.delenv("SIMCORE_REMOTE_ROOTS", raising=False)
    memory_bucket.pipe("/wsbkt/news/a.txt", b"the market fell today .\n")
    memory_bucket.pipe("/wsbkt/news/b.txt", b"shares rose in tokyo .\n")
    store = ArtefactStore(tmp_path / "store")
    state = AppState()
    state.sources["news"] = LoadedCorpus(Corpus.from_path("memory://wsbkt/news", fmt="text"), "server URL")
    state.targets["one"] = LoadedCorpus(Corpus.from_path("memory://wsbkt/news/a.txt", name="one"), "server URL")
    files = ws.snapshot(state, "w", store.root, SAMPLE_DATA)
    described = json.loads(files[ws.MANIFEST])["corpora"]
    assert described["source"][0] | {"origin": None} == {
        "name": "news", "origin": None, "fmt": "text", "text_field": "text", "encoding": None,
        "max_decompressed_bytes": None, "kind": "remote", "path": "memory://wsbkt/news"}
    allowed = ws.Locator(store, SAMPLE_DATA, lambda t: resolve_server_path(t, [SAMPLE_DATA.resolve()]),
                         lambda t: resolve_server_url(t, ["memory://wsbkt/"]))
    restored = AppState()
    assert ws.restore(ws.read_zip(ws.to_zip(files, allowed)), restored, allowed) == []
    news = restored.sources["news"].corpus
    assert news == state.sources["news"].corpus and [f.name for f in news.files] == ["a.txt", "b.txt"]
    assert restored.targets["one"].corpus.path == state.targets["one"].corpus.path
    base = json.loads(ws.snapshot(AppState(), "w", store.root, SAMPLE_DATA)[ws.MANIFEST])
    assert ws.merge(base, files, restored, allowed) == []  # another tab's save of the same URLs: nothing to take
    # a server that allows no such location (by default: none configured) leaves them out, saying why
    elsewhere = AppState()
    notes = ws.restore(files, elsewhere, ws.Locator(store, SAMPLE_DATA, lambda t: resolve_server_path(t, [])))
    assert not elsewhere.sources and len(notes) == 2 and all("remote location" in n for n in notes), notes


# ---- job records (issue 29 item 1): what a running job asked for, kept with the workspace on disk ----------

def _splits(root: Path) -> Path:
    """A folder of probe splits inside a server data root."""
    folder = root / "data" / "my_target"
    folder.mkdir(parents=True, exist_ok=True)
    for split in ("train", "test"):
        (folder / f"{split}.conll").write_text("EU B-ORG\nrejects O\n\n")
    return folder


def _roots_locator(store: ArtefactStore, root: Path) -> ws.Locator:
    roots = [SAMPLE_DATA.resolve(), (root / "data").resolve()]
    return ws.Locator(store, SAMPLE_DATA, lambda text: resolve_server_path(text, roots))


def _record_of(kind: str, params: dict) -> bytes:
    from dashboard.workspace import records

    return json.dumps(records.record(kind, "A job", params, started=1.0e9, server="f" * 16, fraction=0.25,
                                     done=3, total=12)).encode()


def test_job_records_round_trip_into_the_objects_a_form_makes(tmp_path: Path):
    from dashboard.probe_job import LMProbeRequest, ProbeRequest
    from dashboard.workspace import records
    from simcore.probe.config import ProbeCaps
    from simcore.probe.data import TargetSplits
    from simcore.probe.lm_train import LMCaps
    from simcore.selection.options import SelectionOptions

    store = ArtefactStore(tmp_path / "store")
    job = Job(sources=["news"], targets=["my forum"], measures=["tvc", "ppl"], options={"seed": 3, "ppl_order": 4},
              tokenizer={"lowercase": False}, samples=2, sample_tokens=5000)
    back = records.parse(_record_of("matrix", records.matrix_params(job)), locator(store))
    assert back.params == {"job": job, "demo": False} and (back.done, back.total, back.fraction) == (3, 12, 0.25)

    pool = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")
    options = SelectionOptions(method="ppl", order=4, seed=5, target_tokens=900)
    params = records.selection_params(label="ppl · news", pool=pool, target="my forum", options=options, top=None,
                                      fraction=0.1, keep_duplicates=True, min_tokens=4, store_root=store.root,
                                      sample_root=SAMPLE_DATA)
    sel = records.parse(_record_of("selection", params), locator(store)).params
    assert sel["pool"].path == pool.path.resolve() and sel["options"] == options
    assert (sel["fraction"], sel["top"], sel["keep_duplicates"], sel["min_tokens"]) == (0.1, None, True, 4)

    # a probe on uploaded splits (kept in the store by their hash) and one on a folder of the sample
    train, test = (save_upload(UPLOAD * n, f"{n}.conll", store) for n in (2, 3))
    request = ProbeRequest(("news",), TargetSplits("mine", train, test), ProbeCaps(train_sentences=None, epochs=4),
                           seeds=2, source_tokens=7000)
    params = records.probe_params(request, store_root=store.root, sample_root=SAMPLE_DATA)
    got = records.parse(_record_of("probe", params), locator(store)).params
    assert ProbeRequest(got["sources"], got["target"], got["caps"], got["seeds"], got["source_tokens"]) == request
    lm = LMProbeRequest(("news",), TargetSplits.from_directory(_splits(tmp_path), name="t"),
                        LMCaps(lm_tokens=500, epochs=1), seeds=1, model=None, max_minutes=5.0)
    got = records.parse(_record_of("probe", records.probe_params(lm, store_root=store.root, sample_root=SAMPLE_DATA)),
                        _roots_locator(store, tmp_path)).params
    assert got["caps"] == lm.caps and got["target"].train == lm.target.train.resolve() and got["model"] is None


def test_a_hostile_job_record_is_refused_in_one_line(tmp_path: Path):
    import pickle

    from dashboard.workspace import records

    store = ArtefactStore(tmp_path / "store")
    good = records.matrix_params(Job(sources=["news"], targets=["t"], measures=["tvc"], options={},
                                     tokenizer={"lowercase": True}))
    probe = {"probe": "vectors", "sources": ["news"], "seeds": 1, "caps": {}, "source_tokens": None,
             "target": {"name": "t", "directory": {"kind": "server", "path": str(_splits(tmp_path))}}}
    hostile = [
        b"", b"\x80\x04not json", pickle.dumps({"kind": "matrix"}), b"[" * 100_000, b"x" * 300_000,
        json.dumps({"format": "simcore-job", "version": 1, "kind": "shell", "params": {}}).encode(),
        _record_of("matrix", {**good, "job": {**good["job"], "measures": ["__import__('os')"]}}),
        _record_of("matrix", {**good, "job": {**good["job"], "options": {"ppl_order": "rm -rf /"}}}),
        _record_of("matrix", {**good, "job": {**good["job"], "samples": 10**9}}),
        _record_of("matrix", {**good, "job": "not a job"}),
        _record_of("probe", {**probe, "target": {"name": "t", "directory": {"kind": "server", "path": "/etc"}}}),
        _record_of("probe", {**probe, "target": {"name": "t", "directory": {"kind": "sample", "path": "../../.."}}}),
        _record_of("probe", {**probe, "target": {"name": "t", "uploads": {"train": {"kind": "server", "path": "/"},
                                                                           "test": {"kind": "server", "path": "/"}}}}),
        _record_of("probe", {**probe, "caps": {"epochs": 1e300}}),
        _record_of("probe", {**probe, "caps": {"__class__": 1}}),
        _record_of("probe", {**probe, "probe": "lm", "caps": {}, "model": "/root/evil_pickle_model",
                             "max_minutes": 1.0, "force": False, "plan_only": False}),
        _record_of("selection", {"label": "x", "pool": {"kind": "server", "path": "/etc/passwd", "name": "p"},
                                 "target": "t", "options": {"method": "ppl"}, "top": 5, "fraction": None,
                                 "keep_duplicates": False, "min_tokens": 1}),
        _record_of("selection", {"label": "x", "pool": {"kind": "sample", "path": "sources/news.txt", "name": "p"},
                                 "target": "t", "options": {"method": "encoder", "encoder": "/tmp/evil"}, "top": 5,
                                 "fraction": None, "keep_duplicates": False, "min_tokens": 1}),
    ]
    for data in hostile:
        with pytest.raises(records.RecordError) as refused:
            records.parse(data, _roots_locator(store, tmp_path))
        assert "\n" not in str(refused.value) and len(str(refused.value)) < 400, str(refused.value)
    control = records.parse(_record_of("probe", probe), _roots_locator(store, tmp_path))
    assert control.params["target"].name == "t"  # the same record with nothing hostile in it is taken


def test_job_records_live_beside_the_workspace_files_and_go(tmp_path: Path):
    from dashboard.workspace import records

    spaces = ws.Workspaces(tmp_path / "workspaces")
    ws_id = ws.new_id()
    data = json.loads(_record_of("matrix", records.matrix_params(
        Job(sources=["a"], targets=["b"], measures=["tvc"], options={}, tokenizer={"lowercase": True}))))
    records.write(spaces, ws_id, data)
    assert list(records.read_all(spaces, ws_id)) == ["matrix.json"]
    spaces.write(ws_id, {ws.MANIFEST: b"{}"})  # saving the workspace leaves the record alone
    assert list(records.read_all(spaces, ws_id)) == ["matrix.json"]
    records.remove(spaces, ws_id, "matrix")
    assert records.read_all(spaces, ws_id) == {}
    with pytest.raises(SimcoreError):
        records.write(spaces, ws_id, {**data, "kind": "../escape"})


def test_a_job_record_with_values_the_form_never_writes_is_refused(tmp_path: Path):
    """A title or progress message that is not text or is overlong, 0 epochs or a 0 batch: refused as a
    RecordError (which the opening removes), never a WorkspaceError that stops the workspace opening."""
    from dashboard.workspace import records

    store = ArtefactStore(tmp_path / "store")
    good = records.matrix_params(Job(sources=["news"], targets=["t"], measures=["tvc"], options={},
                                     tokenizer={"lowercase": True}))
    probe = {"probe": "vectors", "sources": ["news"], "seeds": 1, "caps": {}, "source_tokens": None,
             "target": {"name": "t", "directory": {"kind": "server", "path": str(_splits(tmp_path))}}}
    lm = {**probe, "probe": "lm", "caps": {}, "model": None, "max_minutes": 5.0, "force": False, "plan_only": False}
    base = json.loads(_record_of("matrix", good))
    hostile = [json.dumps({**base, "title": ["a list"]}).encode(), json.dumps({**base, "title": "t" * 10_001}).encode(),
               json.dumps({**base, "message": {"a": 1}}).encode(), json.dumps({**base, "message": "m" * 10_001}).encode(),
               _record_of("probe", {**probe, "caps": {"epochs": 0}}), _record_of("probe", {**lm, "caps": {"lm_batch": 0}}),
               _record_of("probe", {**lm, "caps": {"epochs": 0}}), _record_of("probe", {**lm, "caps": {"block": 0}})]
    for data in hostile:
        with pytest.raises(records.RecordError):
            records.parse(data, _roots_locator(store, tmp_path))
    for data in (_record_of("probe", {**probe, "caps": {"epochs": 2, "train_sentences": 0}}),
                 _record_of("probe", {**lm, "caps": {"lm_batch": 4, "lm_seed": 0}})):
        assert records.parse(data, _roots_locator(store, tmp_path)).kind == "probe"  # what the form writes
