"""The bootstrap over target sentences: each replicate equals the measure computed another way on the
resampled target (KenLM's own scores, set arithmetic, scipy's Jensen-Shannon distance)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon

from simcore.corpora.corpus import Corpus
from simcore.matrix.workbench import Workbench
from simcore.measures.lookup import get_measure
from simcore.measures.uncertainty import centred, interval, pool_samples, sentence_weights

from .conftest import ROOT, SAMPLE_DATA
from .test_measures import _ngrams

SOURCE = SAMPLE_DATA / "sources" / "news.txt"
TARGET = SAMPLE_DATA / "targets" / "news_ner.conll"


def _score(store, name):
    bench = Workbench(store)
    source = bench.source(Corpus.from_path(SOURCE), 10**9, 1)[0]
    target = bench.target(Corpus.from_path(TARGET))
    measure = get_measure(name)
    measure.prepare(source)
    return measure.score(source, target), source, target


def _resampled(target, replicate):
    counts = sentence_weights(target)[replicate].astype(int)
    return [s for s, c in zip(target.sentences, counts) for _ in range(c)]


def test_weights_resample_every_sentence_count_and_are_the_same_for_every_source(store):
    _, _, target = _score(store, "tvc")
    weights = sentence_weights(target)
    assert weights.shape == (200, len(target.sentences))
    assert (weights.sum(axis=1) == len(target.sentences)).all()
    np.testing.assert_array_equal(weights, sentence_weights(target))  # fixed by the target's fingerprint


def test_ppl_replicates_equal_kenlm_on_the_resampled_target(store):
    import kenlm

    result, source, target = _score(store, "ppl")
    model = kenlm.Model(str(next(store.root.glob("kenlm/*/model.bin"))))
    for r in (0, 7, 199):
        sentences = _resampled(target, r)
        log10 = sum(model.score(" ".join(s), bos=True, eos=True) for s in sentences)
        words = sum(len(s) + 1 for s in sentences)
        assert result.replicates[r] == pytest.approx(10 ** (-log10 / words), rel=1e-6)
    low, high = interval(centred(result.replicates, result.value))
    assert low < result.value < high


def test_tvc_replicates_equal_set_arithmetic_on_the_resampled_target(store):
    result, source, _ = _score(store, "tvc")
    vocabulary = set(source.sample.tokens_file.read_text(encoding="utf-8").split())
    _, _, target = _score(store, "tvc")
    for r in (0, 11):
        types = {t for s in _resampled(target, r) for t in s}
        assert result.replicates[r] == pytest.approx(len(types & vocabulary) / len(types))


def test_jsd_replicates_equal_scipy_on_the_resampled_target(store):
    result, source, target = _score(store, "jsd")
    p = _ngrams(source.sample.sentences())
    for r in (0, 5):
        q = _ngrams(_resampled(target, r))
        keys = sorted(set(p) | set(q))
        expected = jensenshannon([p[k] for k in keys], [q[k] for k in keys], base=2) ** 2
        assert result.replicates[r] == pytest.approx(expected, rel=1e-6)


def test_centring_keeps_the_spread_and_pooling_alternates_samples():
    shifted = centred([1.0, 2.0, 3.0], 10.0)
    assert shifted == [9.0, 10.0, 11.0]
    assert pool_samples([[1, 2, 3, 4], [5, 6, 7, 8]]) == [1, 6, 3, 8]
    assert pool_samples([None, None]) is None


WVV_RUN = """
import sys
from simcore.corpora.corpus import Corpus
from simcore.matrix.workbench import Workbench
from simcore.utils.store import ArtefactStore
table = Workbench(ArtefactStore(sys.argv[1])).matrix([Corpus.from_path(sys.argv[2])], [Corpus.from_path(sys.argv[3])],
                                                    ["wvv"], compute_noise=True)
print(repr(float(table["value"].iloc[0])))
"""


def test_wvv_is_the_same_in_two_fresh_processes(tmp_path):
    values = []
    for run, hash_seed in enumerate(("1", "2")):
        out = subprocess.run([sys.executable, "-c", WVV_RUN, str(tmp_path / f"store{run}"), str(SOURCE), str(TARGET)],
                             capture_output=True, text=True, cwd=ROOT, env={"PYTHONHASHSEED": hash_seed,
                                                                          "PATH": "/usr/bin:/bin"}, check=True)
        values.append(float(out.stdout.strip()))
    assert values[0] == values[1]
