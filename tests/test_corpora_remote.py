"""Corpora at URLs (simcore.corpora.remote): memory:// for the units, a real S3 API (moto's server on
127.0.0.1, read through s3fs) and a local HTTP server for the checks and the faults."""

from __future__ import annotations

import gzip
import http.server
import json
import logging
import pickle
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from simcore.cli.main import main
from simcore.corpora import remote
from simcore.corpora.corpus import Corpus, tokenize_corpus
from simcore.corpora.remote import RemoteFile, StorageOptions, display_url, scrub
from simcore.corpora.sampling import sample_source
from simcore.corpora.tokenize import TokenizerOptions
from simcore.matrix.corpus_cache import corpora_in
from simcore.utils.errors import CorpusError

from .conftest import SAMPLE_DATA

fsspec = pytest.importorskip("fsspec")

KEY, SECRET = "AKIAREMOTETESTKEY0042", "remote-test-secret-9f8e7d6c5b4a"


@pytest.fixture(scope="module", autouse=True)
def _stop_fsspec_io_thread() -> Iterator[None]:
    """fsspec's async file systems (s3fs, http) run an event loop on a thread of their own for the rest of
    the process; later modules fork worker processes only while the process has a single thread, so the
    loop (and its executor's threads) is stopped once this module is done."""
    yield
    import asyncio

    import fsspec.asyn

    loop, thread = fsspec.asyn.loop[0], fsspec.asyn.iothread[0]
    if loop is None or thread is None:
        return
    asyncio.run_coroutine_threadsafe(loop.shutdown_default_executor(), loop).result(timeout=30)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=30)
    fsspec.asyn.loop[0] = fsspec.asyn.iothread[0] = None

# Unit tests on memory:// (fsspec's in-process file system)


@pytest.fixture
def memory() -> Iterator[object]:
    fs = fsspec.filesystem("memory")
    if fs.exists("/bkt"):
        fs.rm("/bkt", recursive=True)
    yield fs
    if fs.exists("/bkt"):
        fs.rm("/bkt", recursive=True)


def test_a_folder_url_is_listed_once_read_like_the_local_folder(memory, tmp_path):
    lines = b"the cat sat on the mat\nthe dog barked at the cat\n"
    files = {"news/a.txt": lines, "news/b.txt.gz": gzip.compress(b"hello again world\n"), "news/.hidden": b"x y\n"}
    for name, data in files.items():
        memory.pipe(f"/bkt/src/{name}", data)
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(data)
    remote_corpus = Corpus.from_path("memory://bkt/src/news")
    local = Corpus.from_path(tmp_path / "news")
    assert [f.name for f in remote_corpus.files] == ["a.txt", "b.txt.gz"]  # the hidden object is left out, as locally
    assert remote_corpus.name == "news" and remote_corpus.size_bytes == local.size_bytes
    assert list(remote_corpus.units()) == list(local.units())
    glob = Corpus.from_path("memory://bkt/src/*/*.gz")
    assert [f.url for f in glob.files] == ["memory://bkt/src/news/b.txt.gz"]


def test_the_fingerprint_is_url_size_and_version_and_changes_with_the_object(memory, store):
    memory.pipe("/bkt/one.txt", b"alpha beta gamma\n")
    first = Corpus.from_path("memory://bkt/one.txt")
    f = first.files[0]
    assert f.size == 17 and f.version.startswith("created=")
    options = TokenizerOptions()
    key = first.raw_fingerprint(options)
    assert Corpus.from_path("memory://bkt/one.txt").raw_fingerprint(options) == key  # nothing changed: same key
    memory.pipe("/bkt/one.txt", b"gamma beta alpha\n")  # the same size, another object
    again = Corpus.from_path("memory://bkt/one.txt")
    assert again.files[0].size == 17 and again.raw_fingerprint(options) != key
    assert tokenize_corpus(again, store).n_tokens == 3
    assert next(iter(again.units())) == "gamma beta alpha\n"


def test_remote_file_behaves_like_the_path_the_readers_use():
    f = RemoteFile("s3://bkt/data/train-00000-of-00001.parquet", 10, "ETag=abc")
    assert f.name == "train-00000-of-00001.parquet" and f.suffix == ".parquet"
    assert f.parent.url == "s3://bkt/data" and f.parent.parent.url == "s3://bkt" and f.parent.parent.parent.url == "s3://bkt"
    assert (f.parent / "README.md").url == "s3://bkt/data/README.md"
    assert f.stat().st_size == 10 and f.stat().st_mtime_ns != RemoteFile(f.url, 10, "ETag=abd").stat().st_mtime_ns
    web = RemoteFile("https://example.org/a/b.txt?X-Amz-Signature=deadbeef&part=2")
    assert web.name == "b.txt" and str(web) == "https://example.org/a/b.txt?X-Amz-Signature=***&part=2"
    with pytest.raises(CorpusError, match="not in the URL") as caught:
        RemoteFile("https://user:hunter22@example.org/x.txt")
    assert "hunter22" not in str(caught.value)
    assert display_url("https://user:pw@example.org/x") == "https://example.org/x"


def test_storage_options_are_hidden_but_travel_to_a_worker():
    options = StorageOptions({"key": KEY, "secret": SECRET, "endpoint_url": "http://127.0.0.1:9"})
    f = RemoteFile("s3://bkt/x.txt", 3, "ETag=1", options)
    corpus = Corpus(name="x", path=f, files=(f,))
    for shown in (repr(f), str(f), repr(corpus), repr(options)):
        assert SECRET not in shown and KEY not in shown
    copy = pickle.loads(pickle.dumps(corpus))  # what a Dask worker or a --jobs process gets
    assert copy.files[0].options.get()["secret"] == SECRET and copy == corpus
    assert scrub(f"boto says {SECRET} and {KEY}") == "boto says *** and ***"


def test_storage_options_json_is_never_echoed(capsys):
    code = main(["matrix", "--sources", "s3://b/s", "--targets", "s3://b/t", "--out", "x.csv",
                 "--storage-options", '{"secret": "' + SECRET + '"'])  # not valid JSON
    assert code == 2
    err = capsys.readouterr().err
    assert "--storage-options" in err and SECRET not in err


def test_a_missing_back_end_or_object_is_one_line(memory):
    with pytest.raises(CorpusError, match="does not exist"):
        Corpus.from_path("memory://bkt/nothing-here.txt")
    with pytest.raises(CorpusError, match=r"^memory://bkt/ does not exist$"):
        corpora_in("memory://bkt/")
    memory.pipe("/bkt/src/empty.txt", b"")
    memory.pipe("/bkt/src/fine.txt", b"some words here\n")
    listed = corpora_in("memory://bkt/src/")  # one listing; the empty object costs only itself
    assert [c.name for c in listed] == ["empty", "fine"]
    assert listed[0].problem == "empty: empty.txt is empty" and listed[1].problem is None
    with pytest.raises(CorpusError, match="gcsfs"):
        Corpus.from_path("gs://bkt/x.txt")


# A real S3 API: moto's server, s3fs against it


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    pytest.importorskip("s3fs")
    server_module = pytest.importorskip("moto.server")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3(s3_endpoint, monkeypatch) -> Iterator[tuple[object, dict]]:
    """An empty bucket ``bkt``; the credentials only in the storage options (the environment has none)."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    options = {"key": KEY, "secret": SECRET, "endpoint_url": s3_endpoint}
    fs = fsspec.filesystem("s3", skip_instance_cache=True, **options)
    if fs.exists("bkt"):
        fs.rm("bkt", recursive=True)
    fs.mkdir("bkt")
    yield fs, options
    fs.rm("bkt", recursive=True)


def _cut_sources(shared: Path, lines: int = 2000) -> dict[str, list[str]]:
    out = {}
    for path in sorted((shared / "sources").glob("*.txt.gz"))[:3]:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            out[path.name.removesuffix(".txt.gz")] = [next(f) for _ in range(lines)]
    return out


def _write_shards(folder: Path, texts: dict[str, list[str]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    import zstandard

    for kind in ("jsonl", "parquet"):
        (folder / kind).mkdir(parents=True)
    for name, lines in texts.items():
        records = "".join(json.dumps({"text": line.rstrip("\n"), "id": i}) + "\n" for i, line in enumerate(lines))
        (folder / "jsonl" / f"{name}.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(records.encode()))
        table = pa.table({"text": [line.rstrip("\n") for line in lines]})
        pq.write_table(table, folder / "parquet" / f"{name}.parquet", row_group_size=500)


def _targets(shared: Path, folder: Path) -> Path:
    folder.mkdir()
    for name in ("conll2003", "jnlpba"):
        lines = (shared / "targets" / name / "test.conll").read_text(encoding="utf-8").splitlines(keepends=True)
        (folder / f"{name}.conll").write_text("".join(lines[:1500]), encoding="utf-8")
    return folder


def _matrix(args: list[str], out: Path) -> object:
    import pandas as pd

    assert main(["matrix", *args, "--out", str(out), "--measures", "tvc,jsd,ttr,kl", "--samples", "2",
                 "--bootstrap", "20", "--sample-tokens", "8000", "--jobs", "2", "--quiet"]) == 0
    table = pd.read_csv(out)
    return table.sort_values(["target", "source", "measure", "size"]
                             if "size" in table else ["target", "source", "measure"]).reset_index(drop=True)


def test_sources_in_an_s3_bucket_give_the_local_matrix_and_no_credential_is_written(
        s3, shared_data, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("simcore.matrix.corpus_cache.STREAM_MIN_BYTES", 1)  # every source through the streaming pass
    fs, options = s3
    local = tmp_path / "local"
    _write_shards(local, _cut_sources(shared_data))
    targets = _targets(shared_data, tmp_path / "targets")
    for path in sorted(local.rglob("*.*")):
        fs.put_file(str(path), f"bkt/corpora/{path.relative_to(local).as_posix()}")
    storage = json.dumps(options)
    tables = {}
    for kind in ("jsonl", "parquet"):
        tables[f"local {kind}"] = _matrix(["--sources", str(local / kind), "--targets", str(targets),
                                          "--cache", str(tmp_path / f"cache-local-{kind}")], tmp_path / f"l-{kind}.csv")
        tables[f"s3 {kind}"] = _matrix(["--sources", f"s3://bkt/corpora/{kind}/", "--targets", str(targets),
                                       "--storage-options", storage, "--cache", str(tmp_path / f"cache-s3-{kind}")],
                                      tmp_path / f"s-{kind}.csv")
    reference = tables["local jsonl"]
    assert set(reference["source"]) == set(_cut_sources(shared_data)) and reference["value"].notna().all()
    assert reference["error"].isna().all()
    assert reference["replicates"].notna().any() and (reference["n_samples"] == 2).all()
    for label, table in tables.items():
        assert table.equals(reference), label  # every value, interval, replicate and size
    captured = capsys.readouterr()
    for text in (captured.out, captured.err):
        assert SECRET not in text and KEY not in text
    for path in tmp_path.rglob("*"):  # matrices, the stores' manifests, tokens, samples, logs
        if path.is_file():
            data = path.read_bytes()
            assert SECRET.encode() not in data and KEY.encode() not in data, path


def test_a_changed_s3_object_is_read_again(s3, store):
    fs, options = s3
    fs.pipe("bkt/t/one.txt", b"alpha beta gamma\n")
    first = Corpus.from_path("s3://bkt/t/one.txt", storage_options=options)
    assert first.files[0].version.startswith("ETag=")
    before = tokenize_corpus(first, store)
    fs.pipe("bkt/t/one.txt", b"gamma beta alpha\n")  # overwritten: same size, a new ETag
    second = Corpus.from_path("s3://bkt/t/one.txt", storage_options=options)
    assert second.files[0].version != first.files[0].version
    assert second.raw_fingerprint(TokenizerOptions()) != first.raw_fingerprint(TokenizerOptions())
    after = tokenize_corpus(second, store)
    assert after.fingerprint != before.fingerprint
    assert after.tokens_file.read_text() == "gamma beta alpha\n"


def test_the_streaming_pass_reads_each_object_once(s3, store, monkeypatch):
    fs, options = s3
    lines = [f"line {i} of the source with words {i % 7} and {i % 11}\n" for i in range(3000)]
    fs.pipe("bkt/big/part-0.txt.gz", gzip.compress("".join(lines[:1500]).encode()))
    fs.pipe("bkt/big/part-1.txt", "".join(lines[1500:]).encode())
    opened: list[str] = []
    real_open = RemoteFile.open

    def counting(self, *args, **kwargs):
        opened.append(self.name)
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(RemoteFile, "open", counting)
    corpus = Corpus.from_path("s3://bkt/big/", storage_options=options)
    result = sample_source(corpus, [2000], 2, 13, store)
    # one pass over each object, nothing read for the fingerprint; the corpus's language is told from the
    # start of its first object (a bounded read: detect_language takes at most 20,000 characters)
    assert sorted(opened) == ["part-0.txt.gz", "part-0.txt.gz", "part-1.txt"]
    assert result.words == sum(len(line.split()) for line in lines)
    assert all(s.n_tokens == 2000 for s in result.samples[2000])


def test_a_hub_snapshot_in_a_bucket_reads_as_one_target_with_its_tag_names(s3, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    fs, options = s3
    names = ["O", "B-PER", "I-PER", "B-LOC"]
    card = ("---\ndataset_info:\n  features:\n  - name: tokens\n    sequence: string\n  - name: ner_tags\n"
            "    sequence:\n      class_label:\n        names:\n" + "".join(f"          '{i}': {n}\n" for i, n in
                                                                          enumerate(names)) + "---\n# A card\n")
    rows = {"train": ([["Ann", "lives", "in", "Rome"]], [[1, 0, 0, 3]]),
            "validation": ([["Bo", "Li", "left"]], [[1, 2, 0]]), "test": ([["Paris"]], [[3]])}
    snapshot = tmp_path / "snap"
    (snapshot / "data").mkdir(parents=True)
    (snapshot / "README.md").write_text(card)
    for split, (tokens, tags) in rows.items():
        pq.write_table(pa.table({"tokens": tokens, "ner_tags": tags}),
                       snapshot / "data" / f"{split}-00000-of-00001.parquet")
    for path in snapshot.rglob("*"):
        if path.is_file():
            fs.put_file(str(path), f"bkt/hub/snap/{path.relative_to(snapshot).as_posix()}")
    there = Corpus.from_path("s3://bkt/hub/snap", storage_options=options)
    here = Corpus.from_path(snapshot)
    assert [f.name for f in there.files] == [f.name for f in here.files]  # README.md is metadata, not text
    assert list(there.tagged_sentences()) == list(here.tagged_sentences())
    assert (["Paris"], ["B-LOC"]) in list(there.tagged_sentences())
    assert (["Ann", "lives", "in", "Rome"], ["B-PER", "O", "O", "B-LOC"]) in list(there.tagged_sentences())


# HTTP, with the faults a server can give


class _Handler(http.server.BaseHTTPRequestHandler):
    files: dict[str, bytes] = {}
    gets: dict[str, int] = {}

    def log_message(self, *args: object) -> None:
        pass

    def _head(self, status: int, length: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(length))
        self.send_header("ETag", '"v1"')
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()

    def do_HEAD(self) -> None:  # noqa: N802
        name = self.path.lstrip("/")
        if name.startswith("forbidden"):
            self._head(403, 0)
        elif name in self.files:
            self._head(200, len(self.files[name]))
        else:
            self._head(404, 0)

    def do_GET(self) -> None:  # noqa: N802
        name = self.path.lstrip("/")
        count = self.gets[name] = self.gets.get(name, 0) + 1
        data = self.files.get(name)
        if name.startswith("forbidden"):
            self._head(403, 0)
            return
        if data is None or (name.startswith("vanishing") and count > 1):
            self._head(404, 0)
            return
        start, end = 0, len(data) - 1
        ranged = self.headers.get("Range")
        if ranged:
            first, _, last = ranged.removeprefix("bytes=").partition("-")
            start, end = int(first), min(end, int(last) if last else end)
        body = data[start:end + 1]
        self.send_response(206 if ranged else 200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        self.end_headers()
        if name.startswith("cut"):
            self.wfile.write(body[: len(body) // 3])  # the connection closes before the promised length
            self.close_connection = True
            return
        if name.startswith("stalled"):
            self.wfile.write(body[: len(body) // 3])  # then nothing, the connection left open
            self.wfile.flush()
            time.sleep(20)
            self.close_connection = True
            return
        self.wfile.write(body)


@pytest.fixture(scope="module")
def web() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_http_sources_and_their_faults_cost_only_their_own_cells(web, tmp_path, monkeypatch):
    from simcore.matrix.workbench import Workbench
    from simcore.utils.store import ArtefactStore

    monkeypatch.setattr(remote, "BLOCK_BYTES", 4096)  # several requests per object, as a large one makes
    text = "".join(f"the clinic saw patient {i} with a cough and fever today\n" for i in range(2000)).encode()
    _Handler.files = {"good.txt": text, "vanishing.txt": text, "cut.txt": text, "forbidden.txt": text}
    _Handler.gets = {}
    target = tmp_path / "clinic.conll"
    target.write_text("the\tO\npatient\tO\nhas\tO\nfever\tB-SYM\n\n")
    sources = []
    for name in ("good", "vanishing", "cut", "forbidden"):
        try:
            sources.append(Corpus.from_path(f"{web}/{name}.txt"))
        except CorpusError as exc:
            sources.append(Corpus.unreadable(name, f"{web}/{name}.txt", str(exc)))
    table = Workbench(ArtefactStore(tmp_path / "cache")).matrix(sources, [Corpus.from_path(target)], "tvc,ttr")
    errors = table.groupby("source")["error"].first()
    assert table[table["source"] == "good"]["value"].notna().all()
    assert errors["vanishing"] == f"vanishing: vanishing.txt vanished while it was read ({web}/vanishing.txt)"
    assert errors["cut"].startswith("cut: cut.txt: the response was cut short (truncated;")
    assert errors["forbidden"] == f"forbidden: {web}/forbidden.txt: access denied (403); check the credentials"
    for name in ("vanishing", "cut", "forbidden"):
        assert "\n" not in errors[name] and table[table["source"] == name]["value"].isna().all()
    # 118 kB in blocks of 4 kB and the reader's 64 kB: each byte fetched once by the pass, plus one request
    # for the start of the object that tells its language
    assert _Handler.gets["good.txt"] == 3


@pytest.fixture
def client(s3):
    """A Dask LocalCluster of 1 worker process, started after the credentials left the environment."""
    import concurrent.futures

    import distributed.utils

    from simcore.distributed import cluster

    with cluster.open_client(local_workers=1) as c:
        yield c
    distributed.utils._offload_executor.shutdown(wait=True)  # as tests/test_distributed.py leaves the process
    distributed.utils._offload_executor = concurrent.futures.ThreadPoolExecutor(
        max_workers=1, thread_name_prefix="Dask-Offload")


def test_dask_workers_open_the_objects_themselves_with_the_same_options(s3, tmp_path, client):
    """The worker processes have no credentials in their environment: the options travel with the corpus."""
    from simcore.distributed.shards import Settings, corpus_from_glob, sample_source_on_cluster
    from simcore.utils.store import ArtefactStore

    fs, options = s3
    lines = [f"document {i} says {i % 13} things about {i % 5} topics\n" for i in range(2400)]
    for part in range(3):
        fs.pipe(f"bkt/crawl/part-{part}.txt.gz", gzip.compress("".join(lines[part::3]).encode()))
    corpus = corpus_from_glob("s3://bkt/crawl/part-*.txt.gz", name="crawl", storage_options=options)
    assert [f.name for f in corpus.files] == ["part-0.txt.gz", "part-1.txt.gz", "part-2.txt.gz"]
    assert corpus.path.url == "s3://bkt/crawl"
    settings = Settings(str(ArtefactStore(tmp_path / "cluster").root.resolve()))
    here = sample_source(corpus, [3000], 2, settings.options.seed, ArtefactStore(tmp_path / "here"))
    there = sample_source_on_cluster(client, settings, corpus, [3000], 2)
    assert (there.fingerprint, there.words, there.units) == (here.fingerprint, here.words, here.units)
    for mine, theirs in zip(here.samples[3000], there.samples[3000]):
        assert mine.tokens_file.read_bytes() == theirs.tokens_file.read_bytes()


def test_the_dashboard_adds_urls_only_inside_the_remote_locations(memory, app_environment, monkeypatch):
    from dashboard.loading import add_server_path
    from dashboard.state import AppState
    from simcore.utils.errors import SimcoreError

    memory.pipe("/bkt/corpora/clinic/a.txt", b"the patient has a fever\n")
    memory.pipe("/bkt/corpora/clinic/b.txt", b"the patient has a cough\n")
    memory.pipe("/bkt/private/x.txt", b"not for visitors\n")
    state = AppState()
    monkeypatch.delenv("SIMCORE_REMOTE_ROOTS", raising=False)
    with pytest.raises(SimcoreError, match="SIMCORE_REMOTE_ROOTS"):
        add_server_path(state, "source", "memory://bkt/corpora/clinic")
    monkeypatch.setenv("SIMCORE_REMOTE_ROOTS", "memory://bkt/corpora/")
    for outside in ("memory://bkt/private/x.txt", "memory://bkt/corpora/../private/x.txt", "s3://bkt/corpora/a"):
        with pytest.raises(SimcoreError, match="outside|plain URL"):
            add_server_path(state, "source", outside)
    assert add_server_path(state, "source", "memory://bkt/corpora/clinic") == ["clinic"]
    assert add_server_path(state, "target", "memory://bkt/corpora/clinic", per_file=True) == ["a", "b"]
    assert [f.name for f in state.sources["clinic"].corpus.files] == ["a.txt", "b.txt"]
    assert state.targets["b"].origin == "server URL: memory://bkt/corpora/clinic/b.txt"


def test_a_stalled_http_read_times_out_in_one_line(web, monkeypatch):
    """A server that sends part of the body and then nothing: the read gives up after
    SIMCORE_READ_TIMEOUT seconds with one line (it used to wait for the server to close)."""
    monkeypatch.setenv("SIMCORE_READ_TIMEOUT", "2")
    _Handler.files["stalled.txt"] = b"the quick brown fox jumps over the lazy dog\n" * 50_000
    with pytest.raises(CorpusError, match="the server stalled") as stalled:
        list(Corpus.from_path(f"{web}/stalled.txt").units())
    assert "\n" not in str(stalled.value) and "2 s" in str(stalled.value)


@pytest.fixture
def listing_server(tmp_path) -> Iterator[tuple[str, Path]]:
    """Python's own web server: a folder's URL answers with an HTML listing of its files."""
    import functools

    folder = tmp_path / "served"
    (folder / "corpora").mkdir(parents=True)
    (folder / "empty").mkdir()
    (folder / "empty" / "index.html").write_text("<html><body>no links here</body></html>")
    for name in ("news.txt", "tweets.jsonl"):
        (folder / "corpora" / name).write_bytes((SAMPLE_DATA / "sources" / name).read_bytes())

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", folder
    server.shutdown()


def test_an_http_directory_listing_is_read_as_a_folder(listing_server, store):
    """A web server's page of links for a folder: each linked file is one corpus, read as the local folder."""
    url, folder = listing_server
    there = corpora_in(f"{url}/corpora/")
    here = corpora_in(folder / "corpora")
    assert [c.name for c in there] == [c.name for c in here] == ["news", "tweets"]
    for a, b in zip(there, here):
        assert list(a.units()) == list(b.units())
    with pytest.raises(CorpusError, match="a web page without links to files under it"):
        corpora_in(f"{url}/empty/")
