"""simcore.matrix.estimates: a probe's estimate counts the vectors still to train and every run."""

from __future__ import annotations

import pytest

from simcore.corpora.corpus import Corpus
from simcore.matrix.estimates import probe_seconds
from simcore.matrix.workbench import Workbench
from simcore.measures.lookup import get_measure
from simcore.utils import pace

from .conftest import SAMPLE_DATA


def test_vectors_already_trained_take_no_time_and_every_run_counts(store):
    bench = Workbench(store)
    news, protocols = (Corpus.from_path(SAMPLE_DATA / "sources" / f) for f in ("news.txt", "lab_protocols.txt"))
    n = 5000
    get_measure("wvv").prepare(bench.source(news, n, 1)[0])  # news's vectors at the probe's size: stored
    pace.record(store, "skipgram", 50_000, 1.0)  # fix the pace, whatever that training took
    pace.record(store, "skipgram", 10**12, 0.0)
    pace.record(store, "probe-epoch", 100, 1.0)
    skipgram, _ = pace.rate(store, "skipgram")
    est = probe_seconds(bench, [news, protocols], seeds=2, epochs=2, seconds_cap=100, train_sentences=300,
                        source_tokens=n, contention=1.0)  # as alone: worked by hand below
    assert est.sources == 1  # lab_protocols only
    protocols_sample = bench.source(protocols, n, 1)[0].sample.n_tokens
    assert est.vectors == pytest.approx(protocols_sample * bench.options.wvv_epochs / skipgram)
    assert est.count == 3 * 2
    per_run = min(100, 300 * 2 / pace.rate(store, "probe-epoch")[0]) + pace.RUN_OVERHEAD
    assert est.runs == pytest.approx(6 * per_run)


def test_a_matrix_estimate_counts_each_slow_step_once_and_nothing_stored(tmp_path):
    """Issue 29 item 3: the matrix's estimate from this machine's paces; what is stored takes no time."""
    from simcore.matrix.estimates import BYTES_PER_TOKEN, matrix_seconds
    from simcore.utils.store import ArtefactStore

    store = ArtefactStore(tmp_path / "store")
    bench = Workbench(store)
    news, protocols = (Corpus.from_path(SAMPLE_DATA / "sources" / f) for f in ("news.txt", "lab_protocols.txt"))
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    for step, units in (("tokenize", 1000.0), ("kenlm", 500.0), ("tagging", 10.0), ("score-ppl", 4.0),
                        ("score-tvcc", 2.0)):
        pace.record(store, step, units, 1.0)  # fixed paces: the estimate is worked out by hand below
    cold = matrix_seconds(bench, [news, protocols], [target], ["ppl", "tvcc"])
    tokens = [int(c.size_bytes / BYTES_PER_TOKEN) for c in (news, protocols)]  # not read yet: guessed from bytes
    from simcore.matrix.plan import comparison_size

    n = comparison_size(tokens, "ppl")
    sentences = len(bench.target(target).sentences)
    assert cold.steps["tokenize"] == pytest.approx((news.size_bytes + protocols.size_bytes) / 1000)
    assert cold.steps["kenlm"] == pytest.approx(sum(min(n, t) for t in tokens) / 500)
    assert cold.steps["tagging"] == pytest.approx(sentences / 10)
    assert cold.steps["scoring"] == pytest.approx(2 / 4 + 2 / 2) and cold.cells == 4 and cold.measured
    bench.matrix([news, protocols], [target], ["ppl", "tvcc"])
    warm = matrix_seconds(bench, [news, protocols], [target], ["ppl", "tvcc"])
    assert warm.cells == 0 and warm.seconds == 0 and "stored already" in warm.text()
    # a new measure on the stored corpora: no tokenizing, no KenLM, no tagging; only its values
    jsd = matrix_seconds(bench, [news, protocols], [target], ["ppl", "jsd"])
    assert jsd.cells == 2 and jsd.steps["tokenize"] == jsd.steps["kenlm"] == jsd.steps["tagging"] == 0


def test_a_matrix_estimate_shares_its_steps_over_the_processes_but_not_its_start_up():
    from simcore.utils.pace import MatrixEstimate

    steps = {"start-up": 5.0, "tokenize": 4.0, "kenlm": 6.0, "skipgram": 0.0, "tagging": 2.0, "scoring": 8.0}
    assert MatrixEstimate(steps, 10, True).seconds == 25.0  # 5 + 20, one process
    assert MatrixEstimate(steps, 10, True, processes=2).seconds == 15.0  # 5 + 20 / 2


def _conll(path, sentences: int) -> None:
    path.write_text("".join(f"Mix{i} O\nbuffer B-Reagent\n\n" for i in range(sentences)))


def test_a_probe_estimate_counts_the_targets_splits_as_the_probe_reads_them(store, tmp_path):
    """Issue 37 item 3: the dev sentences each run evaluates (capped), the test sentences it tags, and the
    split bytes to read: all three splits before their docs are stored, then the test split alone."""
    from simcore.matrix.estimates import probe_splits
    from simcore.probe.config import ProbeCaps
    from simcore.probe.data import TargetSplits, stored_split
    from simcore.probe.run import SAMPLE_SEED

    folder = tmp_path / "lab"
    folder.mkdir()
    for split, n in (("train", 6), ("dev", 4), ("test", 5)):
        _conll(folder / f"{split}.conll", n)
    target = TargetSplits.from_directory(folder)
    caps = ProbeCaps(train_sentences=3, dev_sentences=2, test_sentences=None)
    every = sum((folder / f"{s}.conll").stat().st_size for s in ("train", "dev", "test"))
    assert probe_splits(store, [target], caps) == pace.ProbeSplits(2, 5, every)
    stored_split(target, "train", 3, SAMPLE_SEED, store)
    stored_split(target, "dev", 2, SAMPLE_SEED, store)
    test_bytes = (folder / "test.conll").stat().st_size
    assert probe_splits(store, [target], caps) == pace.ProbeSplits(2, 5, test_bytes)
    # a test cap counts; without a dev split the probe evaluates on its train docs (3 here, capped)
    (folder / "dev.conll").unlink()
    assert probe_splits(store, [TargetSplits.from_directory(folder)], ProbeCaps(
        train_sentences=3, test_sentences=4)) == pace.ProbeSplits(3, 4, test_bytes)


def test_a_tvcc_cell_times_its_scoring_after_the_targets_tagging(tmp_path, monkeypatch):
    """The first TVcC cell of a target tagged it (spaCy's load included: 10.2 s on the sample)
    inside the scoring's clock, so the recorded scoring pace counted the tagging twice (it has its
    own pace and start-up): the target's content words are now made before the clock starts."""
    from simcore.matrix import corpus_cache
    from simcore.measures import tvcc
    from simcore.utils.store import ArtefactStore

    events: list[str] = []
    real_words, real_clock = tvcc.target_content_words, corpus_cache.time.perf_counter

    class Clock:
        @staticmethod
        def perf_counter() -> float:
            events.append("clock")
            return real_clock()

    def words(target):
        events.append("tagged")
        return real_words(target)

    monkeypatch.setattr(tvcc, "target_content_words", words)
    monkeypatch.setattr(corpus_cache, "time", Clock)
    bench = Workbench(ArtefactStore(tmp_path / "store"))
    source = bench.source(Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt"), 5000, 1)
    target = bench.target(Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll"))
    bench.cache.cell(source, target, "tvcc")
    assert events and events[0] == "tagged"  # before the scoring's clock started
    assert (tmp_path / "store" / "pace" / "score-tvcc.jsonl").is_file()
