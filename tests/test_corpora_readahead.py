"""A big compressed text file read (and keyed) in a child process (simcore.corpora.readahead): the
same units, notes, errors and kept sample as reading it in this process, and a child that ends with
its parent. Real gzip sources of ../shared/data (skipped without them); the size threshold is
lowered so that they are read ahead. The process tests wait (with a generous deadline) for the
child to go."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

import simcore.corpora.readahead as readahead
import simcore.corpora.sampling as sampling
from simcore.corpora.corpus import Corpus
from simcore.corpora.notes import ReadNotes
from simcore.corpora.sampling import read_candidates, sample_source
from simcore.utils.errors import CorpusError
from simcore.utils.store import ArtefactStore

ROOT = Path(__file__).resolve().parent.parent
DEADLINE = 90.0


@pytest.fixture
def ahead(monkeypatch):
    """Every compressed text file read ahead, in batches of 1,000 units (so a file makes many)."""
    monkeypatch.setattr(readahead, "READ_AHEAD_MIN_BYTES", 0)
    monkeypatch.setattr(readahead, "BATCH_UNITS", 1000)


def _news(shared_data: Path) -> Corpus:
    return Corpus("news", shared_data / "sources" / "news_1bwb.txt.gz")


def _children(before: frozenset[int]) -> list[psutil.Process]:
    """This process's live children, but ``before`` (started by earlier tests in the same test
    process: a pool kept for the next run)."""
    return [p for p in psutil.Process().children()
            if p.status() != psutil.STATUS_ZOMBIE and p.pid not in before]


def _pids() -> frozenset[int]:
    return frozenset(p.pid for p in psutil.Process().children())


def test_units_read_ahead_are_the_units_read_here(shared_data, ahead):
    before = _pids()
    corpus = _news(shared_data)
    file = corpus.files[0]
    assert readahead.reads_ahead(corpus, file)
    here_notes, ahead_notes, seen = ReadNotes(), ReadNotes(), []
    here = list(corpus.units(notes=here_notes))
    got = list(readahead.units_read_ahead(corpus, file, lambda m, x: seen.append(x), ahead_notes))
    assert got == here and len(got) > 10_000
    assert ahead_notes.as_dict() == here_notes.as_dict()
    assert seen == sorted(seen) and 0 < seen[-1] <= 1  # the child's progress, handed on
    assert _children(before) == []


def test_the_pass_read_ahead_keeps_the_sample_kept_here(shared_data, ahead, monkeypatch):
    """The pass with the file read and keyed in a child, against the same pass read here; a watch
    (as the overlap scan) sees every unit, in order, either way."""
    corpus = _news(shared_data)
    results, children = {}, []
    real = sampling.batches_read_ahead

    def counted(*args, **kwargs):
        children.append(args[1])
        yield from real(*args, **kwargs)

    monkeypatch.setattr(sampling, "batches_read_ahead", counted)
    for label, threshold in (("ahead", 0), ("here", 1 << 60)):
        monkeypatch.setattr(readahead, "READ_AHEAD_MIN_BYTES", threshold)
        for samples in (1, 3):
            watched: list[str] = []

            def watch(units, watched=watched):
                for unit in units:
                    watched.append(unit)
                    yield unit

            found = sampling.Candidates(40_000, samples, 9)
            for f, start, end in sampling.pieces(corpus):
                found.merge(sampling.shard_candidates(corpus, f, 40_000, samples, 9,
                                                      span=(start, end), watch=watch))
            results[label, samples] = ([found.ordered(i) for i in range(samples)], found.words,
                                       found.units, found.totals, found.file_hashes, watched)
    assert len(children) == 2  # the pass read ahead twice (1 and 3 samples), and here twice
    for samples in (1, 3):
        assert results["ahead", samples] == results["here", samples]
    assert results["here", 1][5] == list(corpus.units())


def test_a_sample_drawn_through_the_child_is_the_same_bytes(shared_data, ahead, tmp_path,
                                                           monkeypatch):
    corpus = _news(shared_data)
    drawn = {}
    for label, threshold in (("ahead", 0), ("here", 1 << 60)):
        monkeypatch.setattr(readahead, "READ_AHEAD_MIN_BYTES", threshold)
        result = sample_source(corpus, [20_000], 1, 13, ArtefactStore(tmp_path / label))
        drawn[label] = (result.fingerprint, result.words, result.units,
                        result.samples[20_000][0].tokens_file.read_bytes())
    assert drawn["ahead"] == drawn["here"]


def test_a_truncated_file_fails_as_it_does_here(shared_data, ahead, tmp_path, monkeypatch):
    before = _pids()
    data = (shared_data / "sources" / "news_1bwb.txt.gz").read_bytes()
    cut = tmp_path / "cut.txt.gz"
    cut.write_bytes(data[: len(data) // 2])
    corpus = Corpus("cut", cut)
    errors = []
    for threshold in (0, 1 << 60):
        monkeypatch.setattr(readahead, "READ_AHEAD_MIN_BYTES", threshold)
        with pytest.raises(CorpusError) as caught:
            read_candidates(corpus, 1000, 1, 1)
        errors.append(str(caught.value))
    assert errors[0] == errors[1] and "truncated or corrupt" in errors[0]
    assert gzip.decompress(data)  # the whole file is fine: only its cut is refused
    assert _children(before) == []


def test_the_child_ends_when_the_units_are_no_longer_wanted(shared_data, ahead):
    before = _pids()
    corpus = _news(shared_data)
    units = readahead.units_read_ahead(corpus, corpus.files[0], lambda m, x: None, None)
    next(units)
    assert len(_children(before)) == 1
    units.close()
    assert _children(before) == []


def test_the_child_ends_with_its_parent(shared_data, tmp_path):
    """A process reading ahead is killed (SIGKILL) while its child waits to hand on more units: the
    child is gone too."""
    code = textwrap.dedent("""
        import os, sys, time
        sys.path.insert(0, sys.argv[1])
        import simcore.corpora.readahead as readahead
        from simcore.corpora.corpus import Corpus
        readahead.READ_AHEAD_MIN_BYTES = 0
        corpus = Corpus("news", sys.argv[2])
        units = readahead.units_read_ahead(corpus, corpus.files[0], lambda m, x: None, None)
        next(units)
        open(sys.argv[3], "w").write("reading")
        time.sleep(600)
    """)
    ready = tmp_path / "ready"
    news = shared_data / "sources" / "news_1bwb.txt.gz"
    parent = subprocess.Popen([sys.executable, "-c", code, str(ROOT), str(news), str(ready)],
                              cwd=ROOT)
    children: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            assert parent.poll() is None and time.monotonic() < deadline, "the reader never started"
            time.sleep(0.1)
        children = psutil.Process(parent.pid).children()
        assert len(children) == 1
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + DEADLINE
        while children[0].is_running() and children[0].status() != psutil.STATUS_ZOMBIE:
            assert time.monotonic() < deadline, "the reading child outlived its parent"
            time.sleep(0.2)
    finally:
        for p in children:
            try:
                p.kill()
            except psutil.Error:
                pass
        parent.kill()


def test_small_files_and_other_formats_are_read_here(tmp_path):
    small = tmp_path / "small.txt.gz"
    small.write_bytes(gzip.compress(b"a few words\n" * 100))
    plain = tmp_path / "plain.txt"
    plain.write_text("a few words\n" * 100)
    for path in (small, plain):
        corpus = Corpus(path.stem, path)
        assert not readahead.reads_ahead(corpus, corpus.files[0])


def test_a_matrix_on_a_gzip_source_read_ahead_is_the_same_table(shared_data, ahead, tmp_path,
                                                                monkeypatch):
    """The matrix (TVC, with the overlap scan riding on the pass) on a real .gz source, streamed: in
    two processes with the file read ahead (its pass read and drawn in one task), in one process,
    and with no read-ahead: the same table, every value and replicate."""
    import pandas as pd

    from simcore.matrix import schedule
    from simcore.matrix.workbench import Workbench

    monkeypatch.setattr("simcore.matrix.corpus_cache.STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(schedule, "PARALLEL_MIN_BYTES", 0)
    source = Corpus.from_path(shared_data / "sources" / "news_1bwb.txt.gz")
    target = Corpus.from_path(shared_data / "targets" / "conll2003" / "test.conll")
    real = sampling.batches_read_ahead

    def logged(*args, **kwargs):  # forked workers inherit it: they log each read-ahead to a file
        with open(tmp_path / "ahead.log", "a", encoding="utf-8") as log:
            log.write(f"{os.getpid()}\n")
        yield from real(*args, **kwargs)

    monkeypatch.setattr(sampling, "batches_read_ahead", logged)
    tables, pids = {}, {}
    for label, jobs, threshold in (("two", 2, 0), ("one", 1, 0), ("plain", 2, 1 << 60)):
        (tmp_path / "ahead.log").write_text("", encoding="utf-8")
        monkeypatch.setattr(readahead, "READ_AHEAD_MIN_BYTES", threshold)
        tables[label] = Workbench(ArtefactStore(tmp_path / label)).matrix(
            [source], [target], ["tvc"], sample_tokens=20_000, jobs=jobs)
        pids[label] = (tmp_path / "ahead.log").read_text(encoding="utf-8").split()
    assert len(pids["two"]) == 1 and pids["two"] != [str(os.getpid())]  # read ahead in a worker
    assert pids["one"] == [str(os.getpid())] and pids["plain"] == []
    pd.testing.assert_frame_equal(tables["two"], tables["one"])
    pd.testing.assert_frame_equal(tables["two"], tables["plain"])
    assert tables["two"]["error"].isna().all() and tables["two"]["overlap_test"].notna().all()
