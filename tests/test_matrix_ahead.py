"""A target's work done ahead of its matrix (simcore.matrix.ahead, issue 37): what it stores is
exactly what the matrix then reads instead of building (the store's build log, not a clock), and
the matrix's values are the same with and without it."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from simcore.corpora.corpus import Corpus
from simcore.matrix.ahead import prepare_target
from simcore.matrix.plan import DEFAULT_MEASURES
from simcore.matrix.workbench import Workbench
from simcore.measures.lookup import get_measure
from simcore.measures.tvcc import BACKGROUND_MIN_TOKENS
from simcore.utils.store import ArtefactStore

from .conftest import SAMPLE_DATA

SOURCES = [SAMPLE_DATA / "sources" / "news.txt", SAMPLE_DATA / "sources" / "clinical_notes.txt"]


def builds(log: Path) -> list[tuple[str, str]]:
    """(kind, pid) of every artefact built since the log was last emptied; the log is emptied."""
    if not log.exists():
        return []
    found = [(line.split()[0], line.split()[2]) for line in log.read_text().splitlines()]
    log.unlink()
    return found


def big_target(tmp_path: Path, copies: int) -> Corpus:
    """The three sample targets, ``copies`` times over (a target large enough to be tagged in
    parts)."""
    text = "".join(
        (SAMPLE_DATA / "targets" / name).read_text()
        for name in ("news_ner.conll", "lab_protocol_ner.conll", "med_forum_posts.conll")
    )
    path = tmp_path / "big.conll"
    path.write_text("\n".join([text] * copies))
    return Corpus.from_path(path)


def test_the_matrix_after_the_work_done_ahead_builds_only_its_cells_and_gives_the_same_values(
    tmp_path, monkeypatch
):
    sources = [Corpus.from_path(p) for p in SOURCES]
    first = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "med_forum_posts.conll")
    # the sources prepared (samples, models, counts, skip-gram vectors) with another target, as in
    # a workspace; WVV is noise below 1M tokens: computed here all the same, so that its further
    # training is done ahead
    Workbench(ArtefactStore(tmp_path / "store")).matrix(sources, [first], compute_noise=True)
    log = tmp_path / "builds.log"
    monkeypatch.setenv("SIMCORE_BUILD_LOG", str(log))

    report = prepare_target(
        Workbench(ArtefactStore(tmp_path / "store")).cache, target, sources, compute_noise=True
    )
    ahead = Counter(kind for kind, _ in builds(log))
    assert report.tagged and report.vectors == sorted(s.name for s in sources) and not report.left
    assert ahead["wvv-vectors"] == len(sources) and ahead["overlap"] == len(sources)
    assert ahead["content-words"] == 1 and "cell" not in ahead

    table = Workbench(ArtefactStore(tmp_path / "store")).matrix(
        sources, [target], compute_noise=True
    )
    assert Counter(kind for kind, _ in builds(log)) == {
        "cell": len(sources) * len(DEFAULT_MEASURES)
    }, "nothing of the target's own work nor WVV's training is built again"
    fresh = Workbench(ArtefactStore(tmp_path / "fresh")).matrix(
        sources, [target], compute_noise=True
    )
    pd.testing.assert_frame_equal(table, fresh)
    assert table["value"].notna().all()


def test_a_source_without_stored_vectors_is_left_to_the_matrix(tmp_path):
    sources = [Corpus.from_path(p) for p in SOURCES]
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "med_forum_posts.conll")
    report = prepare_target(
        Workbench(ArtefactStore(tmp_path / "store")).cache, target, sources, compute_noise=True
    )
    assert report.vectors == [] and set(report.left) == {s.name for s in sources}
    assert "not trained yet" in report.left["news"]
    # without compute_noise WVV is not computed for sources this small: nothing to train or leave
    quiet = prepare_target(Workbench(ArtefactStore(tmp_path / "store")).cache, target, sources)
    assert quiet.vectors == [] and quiet.left == {} and quiet.tagged


def test_a_large_target_tagged_ahead_by_other_processes_is_not_tagged_again(tmp_path, monkeypatch):
    """In two processes, the tagging in parts; the matrix (in processes too) then starts no
    tagger."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: everything runs in this process")
    source = Corpus.from_path(SOURCES[0])
    target = big_target(tmp_path, 3)
    store = ArtefactStore(tmp_path / "store")
    Workbench(store).matrix(
        [source], [Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")], compute_noise=True
    )
    bench = Workbench(store)
    assert bench.tokenize(target).n_tokens >= BACKGROUND_MIN_TOKENS
    assert get_measure("tvcc").background_work(bench.target(target), 2), (
        "untagged: work for another process"
    )
    log = tmp_path / "builds.log"
    monkeypatch.setenv("SIMCORE_BUILD_LOG", str(log))

    prepare_target(bench.cache, target, [source], compute_noise=True, jobs=2)
    ahead = builds(log)
    parts = {pid for kind, pid in ahead if kind == "content-words-part"}
    assert parts and str(os.getpid()) not in parts, "the parts are tagged by the pool's processes"
    assert get_measure("tvcc").background_work(Workbench(store).target(target), 2) == [], (
        "tagged: no process is started to load the tagger"
    )

    table = Workbench(store).matrix([source], [target], compute_noise=True, jobs=2)
    assert {kind for kind, _ in builds(log)} == {"cell"}
    fresh = Workbench(ArtefactStore(tmp_path / "fresh")).matrix(
        [source], [target], compute_noise=True
    )
    pd.testing.assert_frame_equal(table, fresh)


def test_with_cells_the_matrix_afterwards_only_reads(tmp_path, monkeypatch):
    sources = [Corpus.from_path(p) for p in SOURCES]
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "lab_protocol_ner.conll")
    store = ArtefactStore(tmp_path / "store")
    Workbench(store).matrix(
        sources, [Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")], compute_noise=True
    )
    report = prepare_target(Workbench(store).cache, target, sources, compute_noise=True, cells=True)
    assert report.cells == len(sources) * len(DEFAULT_MEASURES)
    log = tmp_path / "builds.log"
    monkeypatch.setenv("SIMCORE_BUILD_LOG", str(log))
    # in processes, were anything left to compute
    monkeypatch.setattr("simcore.matrix.schedule.PARALLEL_MIN_TOKENS", 0)
    seen: list[str] = []
    table = Workbench(store).matrix(
        sources,
        [target],
        compute_noise=True,
        jobs=2,
        progress=lambda message, _fraction: seen.append(message),
    )
    assert builds(log) == [], "every artefact, cells included, was stored ahead"
    assert seen and not [m for m in seen if "processes" in m], (
        "stored parts are read here: no process"
    )
    fresh = Workbench(ArtefactStore(tmp_path / "fresh")).matrix(
        sources, [target], compute_noise=True
    )
    pd.testing.assert_frame_equal(table, fresh)


def test_a_target_cut_into_characters_is_prepared_as_the_matrix_cuts_it(tmp_path, monkeypatch):
    """KLUE-style rows (one Hangul character a row): the matrix cuts both sides into characters;
    the work done ahead is keyed the same, so the matrix afterwards builds nothing."""
    from .test_corpora_cuts import KO_SENTENCES, klue

    (tmp_path / "klue.tsv").write_text(klue(KO_SENTENCES, space_rows=False), encoding="utf-8")
    (tmp_path / "ko.txt").write_text("\n".join(KO_SENTENCES) + "\n", encoding="utf-8")
    target = Corpus.from_path(tmp_path / "klue.tsv", fmt="conll")
    source = Corpus.from_path(tmp_path / "ko.txt")
    store = ArtefactStore(tmp_path / "store")
    prepare_target(Workbench(store).cache, target, [source], ["tvc", "jsd"], cells=True)
    log = tmp_path / "builds.log"
    monkeypatch.setenv("SIMCORE_BUILD_LOG", str(log))
    table = Workbench(store).matrix([source], [target], ["tvc", "jsd"])
    assert builds(log) == [] and table["target_cut"].str.startswith("characters").all()
    fresh = Workbench(ArtefactStore(tmp_path / "fresh")).matrix([source], [target], ["tvc", "jsd"])
    pd.testing.assert_frame_equal(table, fresh)
