"""simcore.estimates: a probe's estimate counts the vectors still to train and every run."""

from __future__ import annotations

import pytest

from simcore import pace
from simcore.corpus import Corpus
from simcore.estimates import probe_seconds
from simcore.matrix import Workbench
from simcore.measures import get_measure

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
                        source_tokens=n)
    assert est.sources == 1  # lab_protocols only
    protocols_sample = bench.source(protocols, n, 1)[0].sample.n_tokens
    assert est.vectors == pytest.approx(protocols_sample * bench.options.wvv_epochs / skipgram)
    assert est.count == 3 * 2
    per_run = min(100, 300 * 2 / pace.rate(store, "probe-epoch")[0]) + pace.RUN_OVERHEAD
    assert est.runs == pytest.approx(6 * per_run)
