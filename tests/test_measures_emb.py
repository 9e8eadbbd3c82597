"""Encoder centroid cosine against numpy on the model's embeddings of a few sentences,
and its one-line reason when the encoder is not installed."""

import numpy as np
import pytest

from simcore.corpora.corpus import Corpus
from simcore.matrix.workbench import Workbench
from simcore.measures.lookup import get_measure
from simcore.measures.options import MeasureOptions
from simcore.measures.uncertainty import sentence_weights
from simcore.models import sentence_encoder as encoder_model
from simcore.utils.errors import MeasureUnavailable

SOURCE = ["expression of tp53 was increased in hela cells .", "the protein binds dna in the nucleus .",
          "mice were treated with il-2 for three days ."]
TARGET = ["the gene is expressed in liver cells .", "rovers beat united two nil on saturday .",
          "antibodies against the receptor were added .", "cells were washed twice with buffer ."]


def corpus(tmp_path, name, lines):
    p = tmp_path / f"{name}.txt"
    p.write_text("\n".join(lines) + "\n")
    return Corpus.from_path(p)


def test_unavailable_without_the_encoder(tmp_path, store, monkeypatch):
    monkeypatch.setattr(encoder_model.importlib.util, "find_spec", lambda name: None)
    bench = Workbench(store)
    source = bench.source(corpus(tmp_path, "s", SOURCE), 10**9, 1)[0]
    with pytest.raises(MeasureUnavailable, match="install.sh --encoder") as caught:
        get_measure("emb").prepare(source)
    assert len(str(caught.value).splitlines()) == 1
    long = bench.matrix([corpus(tmp_path, "s", SOURCE)], [corpus(tmp_path, "t", TARGET)], ["tvc", "emb"])
    row = long[long["measure"] == "emb"].iloc[0]
    assert np.isnan(row["value"]) and "install.sh --encoder" in row["error"]
    assert long[long["measure"] == "tvc"]["error"].isna().all()


needs_encoder = pytest.mark.skipif(not encoder_model.encoder_installed(),
                                   reason="the encoder is not installed (scripts/install.sh --encoder)")


@needs_encoder
def test_centroid_cosine_against_numpy(tmp_path, store):
    bench = Workbench(store)
    src = bench.source(corpus(tmp_path, "s", SOURCE), 10**9, 1)[0]
    tgt = bench.target(corpus(tmp_path, "t", TARGET))
    measure = get_measure("emb")
    assert measure.direction > 0
    measure.prepare(src)
    result = measure.score(src, tgt)

    # the model's embeddings (tests/selection/test_encoder_model.py checks them against sentence-transformers)
    model = encoder_model.Encoder(encoder_model.bundled_encoder(store))
    s, t = model.embed(SOURCE).astype(np.float64), model.embed(TARGET).astype(np.float64)
    cs, ct = s.mean(axis=0), t.mean(axis=0)
    assert result.value == pytest.approx(cs @ ct / np.linalg.norm(cs) / np.linalg.norm(ct), abs=1e-5)
    # replicate r: the target centroid over replicate r's resampled sentences
    w = sentence_weights(tgt)[5].astype(np.float64)
    cr = (w @ t) / w.sum()
    assert result.replicates[5] == pytest.approx(cr @ cs / np.linalg.norm(cr) / np.linalg.norm(cs), abs=1e-5)
    # the football sentence is the one farthest from the biology centroid
    from simcore.measures.emb import farthest_sentences

    assert farthest_sentences(src, tgt, top=1)[0]["sentence"] == TARGET[1]


@needs_encoder
def test_at_most_emb_sentences_per_side_and_stored(tmp_path, store):
    bench = Workbench(store, options=MeasureOptions(emb_sentences=2))
    long = bench.matrix([corpus(tmp_path, "s", SOURCE)], [corpus(tmp_path, "t", TARGET)], ["emb"])
    assert long["error"].isna().all() and np.isfinite(long["value"]).all()
    src = bench.source(corpus(tmp_path, "s", SOURCE), 10**9, 1)[0]
    score = get_measure("emb").score(src, bench.target(corpus(tmp_path, "t", TARGET)))
    assert score.details["source_sentences"] == 2 and score.details["target_sentences"] == 2
    assert len(list((store.root / "emb-source").iterdir())) == 1


def test_the_estimate_before_emb_runs_uses_this_machines_pace_once_it_has_one(tmp_path, store):
    from simcore.measures.emb import DEFAULT_CPU_RATE, MODEL_LOAD_SECONDS, estimate

    before = estimate(store, corpora=9, sentences=2_000)
    assert (before.device, before.rate, before.measured) == ("cpu", DEFAULT_CPU_RATE, False)
    assert before.seconds_per_corpus == pytest.approx(2_000 / DEFAULT_CPU_RATE)
    assert before.seconds == pytest.approx(9 * 2_000 / DEFAULT_CPU_RATE + MODEL_LOAD_SECONDS)
    assert "2-core machine" in before.text()
    # two embedding runs stored by this machine: 300 sentences in 12 s and 100 in 4 s -> 25 a second
    for key, (n, s) in {"a": (300, 12.0), "b": (100, 4.0), "tiny": (3, 9.0)}.items():
        store.build("emb-source", key, lambda _out, n=n, s=s: {"sentences": n, "device": "cpu", "seconds": s})
    after = estimate(store, corpora=2, sentences=500)
    assert (after.rate, after.measured) == (25.0, True) and after.seconds_per_corpus == 20.0
    assert "this machine's pace" in after.text()


@needs_encoder
def test_an_embedding_run_records_its_pace(tmp_path, store):
    from simcore.measures.emb import recorded_rate

    lines = [f"{w} cells were washed {k} times with buffer ." for k in range(8) for w in
             ("hela", "liver", "kidney", "yeast", "mouse", "tumour", "stem", "blood")]
    bench = Workbench(store)
    src = bench.source(corpus(tmp_path, "s", lines), 10**9, 1)[0]
    get_measure("emb").prepare(src)
    (built,) = list((store.root / "emb-source").iterdir())
    meta = store.meta(built)
    assert meta["sentences"] == 64 and meta["seconds"] > 0
    assert recorded_rate(store) == (meta["device"], pytest.approx(64 / meta["seconds"]))
