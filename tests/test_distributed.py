"""simcore on a real Dask LocalCluster (2 worker processes): the same artefacts and the same matrix
as one process, sharded sources, and a worker killed mid-run survived."""

from __future__ import annotations

import gzip
import math
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from simcore.cli.main import main
from simcore.corpora import sampling as sampling_module
from simcore.corpora.corpus import (
    Corpus,
    join_parts,
    join_sample,
    sample_corpus,
    sample_part,
    sample_units,
    tokenize_corpus,
    tokenize_part,
)
from simcore.corpora.sampling import sample_source
from simcore.distributed import cluster as cluster_module
from simcore.distributed.prepare import cluster_matrix
from simcore.distributed.shards import Settings, corpus_from_glob, sample_source_on_cluster
from simcore.matrix.corpus_cache import corpora_in
from simcore.matrix.workbench import Workbench
from simcore.utils.errors import CorpusError
from simcore.utils.store import ArtefactStore, digest

from .conftest import SAMPLE_DATA


def _shard(source_dir: Path, out: Path, pieces: int = 3) -> Path:
    """The bundled text sources cut into shards (plain and gzip, mixed formats kept), as one corpus."""
    out.mkdir(parents=True)
    for f in sorted(source_dir.iterdir()):
        lines = f.read_text(encoding="utf-8").splitlines(keepends=True)
        if f.suffix == ".csv":  # a CSV shard keeps its header
            (out / f.name).write_text("".join(lines), encoding="utf-8")
            continue
        step = math.ceil(len(lines) / pieces)
        for i in range(pieces):
            chunk = "".join(lines[i * step:(i + 1) * step]).encode("utf-8")
            name = f"{f.stem}-{i:02d}{f.suffix}"
            if i % 2:
                (out / (name + ".gz")).write_bytes(gzip.compress(chunk, mtime=0))
            else:
                (out / name).write_bytes(chunk)
    return out


@pytest.fixture(scope="module")
def client():
    with cluster_module.open_client(local_workers=2) as c:
        yield c
    # distributed keeps one thread for the rest of the process; later tests (test_matrix) start a
    # process by fork only while there is a single thread, so it is replaced by an idle executor.
    import concurrent.futures

    import distributed.utils

    distributed.utils._offload_executor.shutdown(wait=True)
    distributed.utils._offload_executor = concurrent.futures.ThreadPoolExecutor(
        max_workers=1, thread_name_prefix="Dask-Offload")
    # A Client whose connection failed (the CLI test's bad address) leaves its event loop running.
    for _count, runner in list(distributed.utils.LoopRunner._all_loops.values()):
        if runner is not None:
            runner._real_stop(10)
    for thread in threading.enumerate():
        if thread is not threading.main_thread():
            thread.join(timeout=10)
    assert threading.active_count() == 1, [t.name for t in threading.enumerate()]


def _assert_same_artefact(a, b) -> None:
    assert a.fingerprint == b.fingerprint
    assert a.path.name == b.path.name, "stored under the same key"
    assert a.tokens_file.read_bytes() == b.tokens_file.read_bytes()
    assert np.array_equal(a.lengths(), b.lengths()) and a.lengths().dtype == b.lengths().dtype
    assert a.meta == b.meta


def test_parts_join_into_exactly_what_one_process_makes(tmp_path):
    corpus = Corpus.from_path(_shard(SAMPLE_DATA / "sources", tmp_path / "mixed"))
    one, other = ArtefactStore(tmp_path / "one"), ArtefactStore(tmp_path / "other")
    whole = tokenize_corpus(corpus, one)
    parts = [tokenize_part(corpus, f, other) for f in reversed(corpus.files)][::-1]  # any order of work
    joined = join_parts(corpus, parts, other)
    _assert_same_artefact(whole, joined)
    assert sum(p.n_tokens for p in parts) == whole.n_tokens and len(parts) == len(corpus.files) > 10

    for index in range(2):
        expected = sample_corpus(whole, 5000, index, one)
        keep = sample_units(whole.lengths(), 5000, index, 13)
        bounds = np.cumsum([0] + [p.n_units for p in parts])
        key = digest("sample", whole.fingerprint, 5000, index, 13)
        pieces = [sample_part(p, i, np.flatnonzero(keep[bounds[i]:bounds[i + 1]]), key, other)
                  for i, p in enumerate(parts)]
        _assert_same_artefact(expected, join_sample(joined, pieces, 5000, index, other))
        assert 5000 <= expected.n_tokens < 5200


def test_a_corpus_with_no_words_in_any_shard_is_refused(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.jsonl").write_text('{"text": ""}\n')
    corpus = Corpus.from_path(tmp_path / "c")
    store = ArtefactStore(tmp_path / "s")
    with pytest.raises(CorpusError, match="no words"):
        join_parts(corpus, [tokenize_part(corpus, corpus.files[0], store)], store)


def test_a_glob_is_one_corpus(tmp_path):
    _shard(SAMPLE_DATA / "sources", tmp_path / "shards")
    corpus = corpus_from_glob(str(tmp_path / "shards" / "news-*"), name="news")
    assert [f.name for f in corpus.files] == ["news-00.txt", "news-01.txt.gz", "news-02.txt"]
    store = ArtefactStore(tmp_path / "s")
    plain = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")
    assert tokenize_corpus(corpus, store).fingerprint == tokenize_corpus(plain, store).fingerprint
    with pytest.raises(CorpusError, match="no files match"):
        corpus_from_glob(str(tmp_path / "nothing-*"))


def test_sharded_source_on_the_cluster_gives_the_same_samples(client, tmp_path):
    """Tokenized and sampled shard by shard on 2 workers: byte for byte the one-process artefacts."""
    source = Corpus.from_path(_shard(SAMPLE_DATA / "sources", tmp_path / "mixed"), name="mixed")
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    single, distributed = Workbench(ArtefactStore(tmp_path / "a")), Workbench(ArtefactStore(tmp_path / "b"))
    expected = single.matrix([source], [target], ["tvc", "jsd"], samples=2, sample_tokens=8000)
    got = cluster_matrix(client, distributed, [source], [target], ["tvc", "jsd"], samples=2, sample_tokens=8000)
    pd.testing.assert_frame_equal(expected, got)
    for a, b in zip(single.source(source, 8000, 2), distributed.source(source, 8000, 2)):
        _assert_same_artefact(a.sample, b.sample)
    shard_parts = list((tmp_path / "b" / "sample-part").iterdir())
    assert len(shard_parts) == 2 * len(source.files), "each sample drawn shard by shard"
    assert not (tmp_path / "a" / "sample-part").exists()


def test_a_large_plain_file_is_read_in_byte_ranges_on_the_cluster(client, tmp_path, monkeypatch):
    """One file cut into line-aligned byte ranges, a task each: the one-process samples, byte for byte."""
    big = tmp_path / "big.txt"
    big.write_text("".join(f.read_text(encoding="utf-8") for f in sorted((SAMPLE_DATA / "sources").glob("*.txt"))))
    monkeypatch.setattr(sampling_module, "RANGE_BYTES", 60_000)
    corpus = Corpus.from_path(big)
    assert len(sampling_module.pieces(corpus)) >= 3
    settings = Settings(str(ArtefactStore(tmp_path / "b").root.resolve()))
    one = sample_source(corpus, [3000], 1, settings.options.seed, ArtefactStore(tmp_path / "a"))
    got = sample_source_on_cluster(client, settings, corpus, [3000], 1)
    assert (got.fingerprint, got.words, got.units) == (one.fingerprint, one.words, one.units)
    _assert_same_artefact(one.samples[3000][0], got.samples[3000][0])


def test_one_pass_sample_on_the_cluster_is_byte_for_byte_one_process(client, tmp_path):
    """Each shard read once by a task, candidates merged in a tree: the one-process samples, byte for byte,
    whatever the order of the shards."""
    source = Corpus.from_path(_shard(SAMPLE_DATA / "sources", tmp_path / "mixed"), name="mixed")
    settings = Settings(str(ArtefactStore(tmp_path / "b").root.resolve()))
    one = sample_source(source, [8000, 2000], 2, settings.options.seed, ArtefactStore(tmp_path / "a"))
    shuffled = Corpus(name="mixed", path=source.path, files=tuple(reversed(source.files)))
    for corpus in (source, shuffled):
        got = sample_source_on_cluster(client, settings, corpus, [2000, 8000], 2)
        assert (got.fingerprint, got.words, got.units, got.whole) == (one.fingerprint, one.words, one.units, one.whole)
        assert got.notes.as_dict()["reasons"] == one.notes.as_dict()["reasons"]
        for size in (2000, 8000):
            for a, b in zip(one.samples[size], got.samples[size]):
                _assert_same_artefact(a, b)
    assert one.whole == () and [s.n_tokens for s in one.samples[8000]] == [8000, 8000]
    # the cluster's pass is remembered: the same call in this process reads nothing and finds the same samples
    assert sample_source(source, [2000, 8000], 2, settings.options.seed, settings.store) == got


def _compare(expected: pd.DataFrame, got: pd.DataFrame) -> None:
    """Every column equal, values exactly (WVV included: it trains with one thread, so it is reproducible)."""
    assert expected["error"].isna().all()
    pd.testing.assert_frame_equal(expected, got, check_exact=True)


def test_the_cluster_gives_the_same_matrix_on_the_sample(client, tmp_path):
    sources = corpora_in(SAMPLE_DATA / "sources")[:3]
    targets = corpora_in(SAMPLE_DATA / "targets")[:2]
    expected = Workbench(ArtefactStore(tmp_path / "a")).matrix(sources, targets)
    messages = []
    got = cluster_matrix(client, Workbench(ArtefactStore(tmp_path / "b")), sources, targets,
                         progress=lambda m, f: messages.append((m, f)))
    _compare(expected, got)
    assert set(got["measure"]) == {"tvc", "tvcc", "ppl", "wvv", "jsd", "ttr"}
    fractions = [f for _, f in messages]
    assert fractions[-1] == 1.0 and max(fractions[:-1]) < 1.0
    assert any(m.startswith("tokenized ") for m, _ in messages) and any("→" in m for m, _ in messages)


def test_a_large_source_is_sampled_by_the_workers_never_tokenized_whole(client, tmp_path, monkeypatch):
    """Issue 17 left this: on a cluster, a source of 50 MB or more was tokenized whole by the workers and
    then sampled again by the process assembling the table. Now its shards are read once, on the cluster."""
    monkeypatch.setattr("simcore.matrix.corpus_cache.STREAM_MIN_BYTES", 0)  # every source counts as large (decided here)
    sources = [Corpus.from_path(_shard(SAMPLE_DATA / "sources", tmp_path / "mixed"), name="mixed"),
               Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")]
    targets = corpora_in(SAMPLE_DATA / "targets")[:1]
    expected = Workbench(ArtefactStore(tmp_path / "a")).matrix(sources, targets, ["tvc", "ppl", "jsd"])
    messages: list[str] = []
    store = ArtefactStore(tmp_path / "b")

    def read_here(*args, **kwargs):
        raise AssertionError("the process assembling the table read a large source")

    monkeypatch.setattr(sampling_module, "read_candidates", read_here)  # here only: the workers read
    got = cluster_matrix(client, Workbench(store), sources, targets, ["tvc", "ppl", "jsd"],
                         progress=lambda m, f: messages.append(m))
    _compare(expected, got)
    assert len([p for p in (store.root / "tokens").iterdir() if p.is_dir()]) == 1  # the target alone
    assert {m for m in messages if m.startswith("drew the samples of")} == {
        "drew the samples of mixed", "drew the samples of news"}
    assert not any(m.startswith("tokenized mixed") or m.startswith("tokenized news") for m in messages)


@pytest.mark.shared_data
def test_the_cluster_gives_the_same_matrix_on_shared_data(client, shared_data, tmp_path):
    """A slice of two real sources, each cut into 4 gzip shards, against a real target."""
    sources = []
    for name in ("news_1bwb", "biomed_ohsumed_medline"):
        with gzip.open(shared_data / "sources" / f"{name}.txt.gz", "rt", encoding="utf-8") as f:
            lines = [next(f) for _ in range(2000)]
        folder = tmp_path / "sources" / name
        folder.mkdir(parents=True)
        for i in range(4):
            (folder / f"part-{i}.txt.gz").write_bytes(gzip.compress("".join(lines[i::4]).encode(), mtime=0))
        sources.append(Corpus.from_path(folder))
    target = Corpus.from_path(shared_data / "targets" / "conll2003" / "dev.conll", name="conll2003")
    measures = ["tvc", "ppl", "jsd"]
    expected = Workbench(ArtefactStore(tmp_path / "a")).matrix(sources, [target], measures, sample_tokens=20_000)
    got = cluster_matrix(client, Workbench(ArtefactStore(tmp_path / "b")), sources, [target], measures,
                         sample_tokens=20_000)
    _compare(expected, got)
    assert (got["sample_tokens"] == 20_000).all()


def test_a_worker_killed_mid_run_loses_only_its_task(client, tmp_path, monkeypatch):
    """The worker estimating a KenLM model is killed; Dask runs the task again elsewhere; same PPL."""
    text = "".join((SAMPLE_DATA / "sources" / n).read_text() for n in ("news.txt", "clinical_notes.txt"))
    folder = tmp_path / "big"
    folder.mkdir()
    for i in range(4):
        (folder / f"part-{i}.txt").write_text(text * 4)
    source, target = Corpus.from_path(folder), Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    log = tmp_path / "builds.log"
    monkeypatch.setenv("SIMCORE_BUILD_LOG", str(log))
    client.run(lambda: os.environ.update(SIMCORE_BUILD_LOG=str(log)))
    worker_pids = set(client.run(os.getpid).values())
    result: dict[str, object] = {}

    def work() -> None:
        try:
            result["table"] = cluster_matrix(client, Workbench(ArtefactStore(tmp_path / "b")), [source], [target],
                                             ["ppl", "tvc"])
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            result["error"] = exc

    run = threading.Thread(target=work)
    run.start()
    killed = None
    deadline = time.monotonic() + 120
    while killed is None and time.monotonic() < deadline and run.is_alive():
        lines = log.read_text().splitlines() if log.exists() else []
        started = [line.split() for line in lines if line.startswith("kenlm ")]
        if started and int(started[0][2]) in worker_pids:
            killed = started[0]
            os.kill(int(killed[2]), signal.SIGKILL)
        time.sleep(0.005)
    run.join(timeout=180)
    assert "error" not in result, result.get("error")
    assert killed is not None, "a worker started the KenLM model"
    builds = [line.split() for line in log.read_text().splitlines() if line.startswith("kenlm ")]
    assert len(builds) == 2 and builds[1][1] == killed[1] and builds[1][2] != killed[2], "the task ran again"
    expected = Workbench(ArtefactStore(tmp_path / "a")).matrix([source], [target], ["ppl", "tvc"])
    pd.testing.assert_frame_equal(expected, result["table"])
    assert len(client.scheduler_info()["workers"]) >= 1


def test_cli_runs_on_a_scheduler_and_says_when_it_cannot(client, tmp_path, monkeypatch, capsys):
    sources, targets = tmp_path / "s", tmp_path / "t"
    sources.mkdir(), targets.mkdir()
    (sources / "news.txt").symlink_to(SAMPLE_DATA / "sources" / "news.txt")
    (targets / "news_ner.conll").symlink_to(SAMPLE_DATA / "targets" / "news_ner.conll")
    base = ["matrix", "--sources", str(sources), "--targets", str(targets), "--measures", "tvc,jsd", "--quiet"]
    assert main([*base, "--out", str(tmp_path / "one.csv"), "--cache", str(tmp_path / "c1")]) == 0
    monkeypatch.setenv("SIMCORE_SCHEDULER", client.scheduler.address)
    assert main([*base, "--out", str(tmp_path / "two.csv"), "--cache", str(tmp_path / "c2")]) == 0
    assert (tmp_path / "c2" / "tokens-part").is_dir(), "ran on the cluster"
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "one.csv"), pd.read_csv(tmp_path / "two.csv"))

    monkeypatch.setattr(cluster_module, "CONNECT_TIMEOUT_S", 1)
    capsys.readouterr()
    code = main([*base, "--out", str(tmp_path / "x.csv"), "--scheduler", "tcp://127.0.0.1:9", "--cache",
                 str(tmp_path / "c3")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err[0]
    assert main([*base, "--out", "x.csv", "--scheduler", "tcp://a:1", "--local-cluster", "2"]) == 2  # one or the other
    assert "not allowed with argument" in capsys.readouterr().err


def test_workers_that_cannot_reach_the_store_are_named(client, tmp_path):
    from simcore.utils.errors import SimcoreError

    with pytest.raises(SimcoreError, match="2 of 2 Dask workers cannot run simcore.*artefact store"):
        cluster_module.check_workers(client, tmp_path / "not-a-store")


def test_dashboard_computes_on_the_cluster_when_one_is_set(client, app_environment, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from .conftest import ROOT

    monkeypatch.setenv("SIMCORE_SCHEDULER", client.scheduler.address)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.button(key="load_sample").click().run()
    at.switch_page(str(ROOT / "pages/2_Similarity.py")).run()
    at.multiselect(key="f_sources").set_value(["news", "tweets"])
    at.multiselect(key="f_targets").set_value(["news_ner"])
    at.multiselect(key="f_measures").set_value(["tvc", "ppl"])
    at.button(key="compute").click().run()
    session = at.session_state["simcore_state"]
    jobs = list(session.jobs.values())
    assert jobs and all(job.wait(180) for job in jobs)
    at.run()
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    assert jobs[0].error is None and jobs[0].message == "done"
    long = session.matrix
    assert (app_environment / "tokens-part").is_dir(), "tokenized on the cluster"
    sources = [Corpus.from_path(SAMPLE_DATA / "sources" / n) for n in ("news.txt", "tweets.jsonl")]
    expected = Workbench(ArtefactStore(tmp_path / "a")).matrix(
        sources, [Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")], ["tvc", "ppl"])
    pd.testing.assert_frame_equal(expected.reset_index(drop=True), long.reset_index(drop=True))


def test_cli_source_glob_adds_a_sharded_source(tmp_path, capsys):
    _shard(SAMPLE_DATA / "sources", tmp_path / "shards")
    sources, targets = tmp_path / "s", tmp_path / "t"
    sources.mkdir(), targets.mkdir()
    (sources / "tweets.jsonl").symlink_to(SAMPLE_DATA / "sources" / "tweets.jsonl")
    (targets / "news_ner.conll").symlink_to(SAMPLE_DATA / "targets" / "news_ner.conll")
    base = ["matrix", "--sources", str(sources), "--targets", str(targets), "--measures", "tvc", "--quiet",
            "--cache", str(tmp_path / "c"), "--out", str(tmp_path / "m.csv")]
    assert main([*base, "--source-glob", f"newsparts={tmp_path / 'shards' / 'news-*'}"]) == 0
    table = pd.read_csv(tmp_path / "m.csv").set_index("source")
    direct = Workbench(ArtefactStore(tmp_path / "d")).matrix(
        [Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt"), Corpus.from_path(sources / "tweets.jsonl")],
        corpora_in(targets), ["tvc"]).set_index("source")  # the same two sources: the same sample size
    assert table.loc["newsparts", "value"] == direct.loc["news", "value"]
    capsys.readouterr()
    assert main([*base, "--source-glob", "tweets=" + str(tmp_path / "shards" / "tweets-*")]) == 2
    assert "several sources share the name tweets" in capsys.readouterr().err


def test_an_unreadable_source_is_reported_as_without_a_cluster(client, tmp_path):
    """Whatever the one-process path does with a corpus it cannot read, the cluster path does too."""
    from simcore.utils.errors import SimcoreError

    folder = tmp_path / "sources"
    folder.mkdir()
    (folder / "news.txt").symlink_to(SAMPLE_DATA / "sources" / "news.txt")
    (folder / "broken.txt.gz").write_bytes(b"\x1f\x8b not really gzip")
    sources, target = corpora_in(folder), Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")

    def outcome(run):
        try:
            return run()
        except SimcoreError as exc:
            return str(exc)

    expected = outcome(lambda: Workbench(ArtefactStore(tmp_path / "a")).matrix(sources, [target], ["tvc"]))
    got = outcome(lambda: cluster_matrix(client, Workbench(ArtefactStore(tmp_path / "b")), sources, [target], ["tvc"]))
    if isinstance(expected, str):
        assert got == expected and "broken" in got
    else:
        pd.testing.assert_frame_equal(expected, got)


def test_a_large_source_s_overlap_is_scanned_by_the_workers_in_their_pass(client, tmp_path, monkeypatch):
    """The overlap of a large source with the targets is scanned in the workers' one pass over its
    shards and stored there: the process assembling the table reads none of it again (whole reads of
    its files are counted here), and the values are one process's."""
    monkeypatch.setattr("simcore.matrix.corpus_cache.STREAM_MIN_BYTES", 0)
    held = tmp_path / "held"
    held.mkdir()
    lines = (SAMPLE_DATA / "sources" / "news.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    rows = (SAMPLE_DATA / "targets" / "news_ner.conll").read_text(encoding="utf-8").split("\n\n")
    sentences = [" ".join(r.split()[0] for r in block.splitlines() if r.strip()) for block in rows[::5]]
    (held / "part-0.txt").write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
    (held / "part-1.txt").write_text("".join(lines[len(lines) // 2:]) + "\n".join(sentences) + "\n",
                                     encoding="utf-8")
    sources = [Corpus.from_path(held)]
    targets = [Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")]
    columns = ["source", "overlap_test", "overlap_all", "overlap_ngram"]
    expected = Workbench(ArtefactStore(tmp_path / "a")).matrix(sources, targets, ["jsd"])
    assert expected["overlap_all"].iloc[0] > 0  # the injected sentences are found
    original = Corpus.units
    reads: list[str] = []

    def counted(self, *args, **kwargs):
        yield from original(self, *args, **kwargs)  # counted when read to its end (a whole read)
        if self.name == "held":
            reads.extend(f.name for f in self.files)

    monkeypatch.setattr(Corpus, "units", counted)  # here only: the workers are processes of their own
    got = cluster_matrix(client, Workbench(ArtefactStore(tmp_path / "b")), sources, targets, ["jsd"])
    assert reads == []
    pd.testing.assert_frame_equal(expected[columns], got[columns])
