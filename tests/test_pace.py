"""simcore.utils.pace: paces recorded by the slow steps, read back as rates, and the probe's estimate from them."""

from __future__ import annotations

import json

import pytest

from simcore.corpora.corpus import Corpus
from simcore.matrix.workbench import Workbench
from simcore.measures.lookup import get_measure
from simcore.measures.options import MeasureOptions
from simcore.utils import pace

from .conftest import SAMPLE_DATA


def test_a_rate_is_the_latest_records_units_over_their_seconds(store):
    assert pace.recorded(store, "skipgram") is None
    assert pace.rate(store, "skipgram") == (pace.DEFAULTS["skipgram"], False)  # before any record
    pace.record(store, "skipgram", 1000, 2.0)
    pace.record(store, "skipgram", 3000, 2.0)
    pace.record(store, "skipgram", 5, 0.0)  # no time: nothing to go by, not kept
    assert pace.rate(store, "skipgram") == (pytest.approx(4000 / 4.0), True)
    for i in range(pace.KEEP + 5):  # kept short; the rate follows the latest
        pace.record(store, "skipgram", 100.0 * (i + 1), 1.0)
    lines = (store.root / "pace" / "skipgram.jsonl").read_text().splitlines()
    assert len(lines) == pace.KEEP
    latest = [json.loads(line) for line in lines[-pace.LATEST:]]
    assert pace.recorded(store, "skipgram") == pytest.approx(sum(r["units"] for r in latest) / pace.LATEST)
    with open(store.root / "pace" / "skipgram.jsonl", "a") as f:
        f.write("not json\n{\"units\": \"x\"}\n")  # a torn line is skipped, not an error
    assert pace.recorded(store, "skipgram") > 0


def test_training_skip_gram_vectors_records_its_pace(store):
    bench = Workbench(store, options=MeasureOptions(wvv_workers=1))
    source = bench.source(Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt"), 10**9, 1)[0]
    get_measure("wvv").prepare(source)
    lines = (store.root / "pace" / "skipgram.jsonl").read_text().splitlines()
    assert len(lines) == 1
    record = json.loads(lines[0])
    # the units are the training's words times its epochs, as gensim counted them (tokens in vocabulary or not)
    assert record["units"] == source.sample.n_tokens * MeasureOptions().wvv_epochs
    assert record["seconds"] > 0


def test_the_probe_estimate_counts_vector_training_and_every_run(store):
    pace.record(store, "skipgram", 100_000, 1.0)  # 100,000 tokens × epochs a second
    pace.record(store, "probe-epoch", 50, 1.0)  # 50 sentences × epochs a second
    est = pace.probe_estimate(store, [200_000, 100_000], seeds=2, epochs=3, seconds_cap=60,
                              train_sentences=500, wvv_epochs=5)
    assert est.vectors == pytest.approx((200_000 + 100_000) * 5 / 100_000)  # 15 s
    assert est.count == 3 * 2
    assert est.runs == pytest.approx(6 * (500 * 3 / 50 + pace.RUN_OVERHEAD))  # 30 s each, under the 60 s cap
    assert est.seconds == pytest.approx(est.vectors + est.runs) and est.measured
    capped = pace.probe_estimate(store, [200_000], seeds=1, epochs=100, seconds_cap=5, train_sentences=500)
    assert capped.runs == pytest.approx(2 * (5 + pace.RUN_OVERHEAD))  # the time cap bounds each run
    assert "skip-gram vectors for 1 source" in capped.text()


def test_the_probe_estimate_counts_the_splits_tagging_reading_and_spacys_start_up(store):
    """Issue 37 item 3, worked by hand: 2 runs (a baseline and one source, one seed), each its start-up,
    its training and its 400 test sentences tagged at 100 a second; a run the time cap stops also
    evaluates its 200 dev sentences once more; 3,000 split bytes read at 1,000 a second."""
    for step, units in (("skipgram", 100_000), ("probe-epoch", 50), ("probe-tagging", 100),
                        ("probe-splits", 1000)):
        pace.record(store, step, units, 1.0)
    splits = pace.ProbeSplits(dev_sentences=200, test_sentences=400, split_bytes=3000)
    est = pace.probe_estimate(store, [100_000], seeds=1, epochs=3, seconds_cap=60, train_sentences=500,
                              wvv_epochs=5, splits=splits, startup=True)
    assert est.vectors == pytest.approx(5.0)  # 100,000 × 5 / 100,000
    assert est.runs == pytest.approx(2 * (pace.RUN_OVERHEAD + 30 + 4))  # 1,500 / 50 = 30 s under the cap
    assert est.setup == pytest.approx(pace.PROBE_STARTUP + 3)
    assert est.seconds == pytest.approx(est.setup + 5 + est.runs)
    capped = pace.probe_estimate(store, [100_000], seeds=1, epochs=3, seconds_cap=10, train_sentences=500,
                                 splits=splits)
    assert capped.runs == pytest.approx(2 * (pace.RUN_OVERHEAD + 10 + 2 + 4))  # cap, one dev pass, test
    assert capped.setup == pytest.approx(3)  # spaCy already imported: only the splits
    assert "spaCy and the target's splits loaded" in capped.text()


def test_contention_is_measured_and_a_pace_under_contention_is_read_alone(store, monkeypatch):
    """Issue 37 item 3: the sample's cold matrix (10.4 CPU s) took 29.7 s wall on a busy 2-core
    machine and the estimate said 10.8 s. Contention is the wall time over the CPU time a spinning
    thread gets (here a thread given half the wall time in CPU: 2), kept for a while, never under 1;
    a step recorded at contention 2 did its units in half its seconds alone; an estimate made at
    contention 4 is 4 times its steps' time."""
    import time

    wall = time.perf_counter
    monkeypatch.setattr(pace.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(pace.os, "getloadavg", lambda: (8.0, 3.0, 1.0))  # 4 runnable per core
    monkeypatch.setattr(pace, "_CONTENTION", [float("-inf"), 1.0])
    monkeypatch.setattr(pace.time, "thread_time", lambda: wall() / 2)
    assert pace.contention() == pytest.approx(2.0, rel=0.01)
    monkeypatch.setattr(pace.time, "thread_time", lambda: wall() * 2)  # kept: not measured again
    assert pace.contention() == pytest.approx(2.0, rel=0.01)
    monkeypatch.setattr(pace, "_CONTENTION", [float("-inf"), 1.0])
    assert pace.contention() == 1.0  # more CPU than wall time (other threads): as fast as alone
    monkeypatch.setattr(pace, "_CONTENTION", [float("-inf"), 1.0])
    monkeypatch.setattr(pace.time, "thread_time", lambda: wall() / 10)
    monkeypatch.setattr(pace.os, "getloadavg", lambda: (3.0, 3.0, 1.0))
    assert pace.contention() == 1.5  # a spin slowed 10 times, but only 1.5 runnable per core: 1.5
    pace.record(store, "kenlm", 1000, 4.0, contention=2.0)
    pace.record(store, "kenlm", 1000, 2.0)  # alone
    assert pace.recorded(store, "kenlm") == pytest.approx(2000 / (4.0 / 2 + 2.0))
    steps = {"start-up": 3.0, "tokenize": 1.0, "kenlm": 2.0, "skipgram": 0.0, "tagging": 1.0,
             "scoring": 2.0}
    loaded = pace.MatrixEstimate(steps, 10, False, processes=2, contention=4.0)
    assert loaded.seconds == pytest.approx((3.0 + 6.0 / 2) * 4.0)
    assert "4.0 times slower" in loaded.text()
    # a probe at contention 3 (default paces: 60 train sentences x epochs a second): each of its 2
    # runs takes 3 times its start-up and its 1 s of training, unless the time cap (wall clock)
    # stops it
    caps = {"seeds": 1, "epochs": 1, "train_sentences": 60, "wvv_epochs": 5}
    alone = pace.probe_estimate(store, [100_000], seconds_cap=60, startup=True, **caps)
    est = pace.probe_estimate(store, [100_000], seconds_cap=60, startup=True, contention=3.0,
                              **caps)
    assert est.runs == pytest.approx(2 * (pace.RUN_OVERHEAD + 1.0) * 3)
    assert est.vectors == pytest.approx(alone.vectors * 3)
    assert est.setup == pytest.approx(alone.setup * 3)
    cut = pace.probe_estimate(store, [100_000], seconds_cap=2, contention=3.0, **caps)
    assert cut.runs == pytest.approx(2 * (pace.RUN_OVERHEAD * 3 + 2))  # stopped by the cap at 2 s
    assert "3.0 times slower" in est.text()


def test_a_short_step_records_the_contention_already_measured_and_never_spins(monkeypatch):
    """A cell's scoring takes milliseconds: it must not pay a 0.2 s spin. A step of 2 s or more
    measures the contention; a shorter one takes the one measured in the last 30 s, else 1."""
    spins: list[int] = []
    monkeypatch.setattr(pace, "_CONTENTION", [float("-inf"), 1.0])
    real = pace.contention
    monkeypatch.setattr(pace, "contention", lambda: spins.append(1) or real())
    assert pace.step_contention(0.01) == 1.0 and not spins  # nothing measured yet: as alone
    measured = pace.step_contention(5.0)
    assert spins == [1] and measured >= 1.0
    assert pace.step_contention(0.01) == measured and spins == [1]  # kept: no second spin
