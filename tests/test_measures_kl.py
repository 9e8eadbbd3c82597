"""KL of hashed 1-2-grams against DSIR's definition, re-implemented here with re, hashlib and numpy,
and against scipy's KL divergence."""

import hashlib
import re

import numpy as np
import pytest
from scipy import stats

from simcore.corpora.corpus import Corpus
from simcore.matrix.workbench import Workbench
from simcore.measures.kl import Featurizer, contributing_buckets, kl_reduction, source_counts
from simcore.measures.lookup import get_measure
from simcore.measures.options import MeasureOptions
from simcore.measures.uncertainty import sentence_weights


def dsir_counts(lines: list[str], buckets: int = 10_000) -> np.ndarray:
    """DSIR's get_ngram_counts(line, n=2, tokenizer=WordPunctTokenizer().tokenize), summed over lines."""
    counts = np.zeros(buckets, dtype=np.int64)
    for line in lines:
        words = re.findall(r"\w+|[^\w\s]+", line.lower())
        for gram in words + [" ".join(pair) for pair in zip(words, words[1:])]:
            counts[int(hashlib.sha256(gram.encode("utf-8")).hexdigest(), 16) % buckets] += 1
    return counts


def dsir_kl(t: np.ndarray, s: np.ndarray) -> float:
    p_t, p_s = t / t.sum(), s / s.sum()
    return float(np.sum(p_t * (np.log(p_t + 1e-10) - np.log(p_s + 1e-10))))


def corpus(tmp_path, name, text, suffix=".txt"):
    p = tmp_path / f"{name}{suffix}"
    p.write_text(text)
    return Corpus.from_path(p)


SOURCE = "The mice were treated with IL-2 .\nCells were washed twice .\nThe cells grew .\n"
TARGET = "Mice\tO\nwere\tO\nwashed\tO\n.\tO\n\nIL-2\tB-P\nwas\tO\nadded\tO\n.\tO\n\nNew\tO\nwords\tO\n"


def test_featurizer_by_hand():
    f = Featurizer(10_000)
    # simcore's tokens joined by spaces, then WordPunct: "il-2" splits into il, -, 2
    assert f.ngrams(["il-2", "was", "added"]) == ["il", "-", "2", "was", "added", "il -", "- 2", "2 was",
                                                  "was added"]
    expected = int(hashlib.sha256(b"il -").hexdigest(), 16) % 10_000
    assert f.unit(["il-2"])[3] == expected


def test_featurizer_matches_dsir_on_tokenized_text():
    """On text split as the corpus is (CoNLL, or raw text without clitics), simcore's joined tokens
    featurize exactly as DSIR's raw lines."""
    lines = ["Mice were treated with IL-2 ( 10 ng / ml ) for 3.5 h .", "U.S. cells , e.g. HeLa ..."]
    ours = Featurizer(10_000).counts([line.split() for line in lines])
    assert np.array_equal(ours, dsir_counts(lines))


def test_nltk_wordpunct_is_the_pattern():
    nltk = pytest.importorskip("nltk.tokenize")
    text = "the dog's bone (e.g.)... costs $3.50 -- naïve café"
    assert nltk.WordPunctTokenizer().tokenize(text) == Featurizer(10).words(text.split())


def test_kl_against_a_direct_computation(tmp_path, store):
    bench = Workbench(store)
    src = bench.source(corpus(tmp_path, "s", SOURCE), 10**9, 1)[0]
    tgt = bench.target(corpus(tmp_path, "t", TARGET, ".conll"))
    measure = get_measure("kl")
    assert measure.direction < 0
    measure.prepare(src)
    result = measure.score(src, tgt)
    s = dsir_counts([line.lower() for line in SOURCE.splitlines()])
    t = dsir_counts(["mice were washed .", "il-2 was added .", "new words"])
    assert np.array_equal(source_counts(src), s)
    assert result.value == pytest.approx(dsir_kl(t, s), rel=1e-12)
    assert result.details["target_ngrams"] == t.sum() == 4 + 3 + 6 + 5 + 2 + 1
    # the contributions of all buckets add up to the value; the top one is named by target n-grams
    rows = contributing_buckets(src, tgt, top=10_000)
    assert sum(r["contribution"] for r in rows) == pytest.approx(result.value)
    assert rows[0]["ngrams"] and rows[0]["source_share"] == 0.0
    # replicate r is the KL of the target resampled with replicate r's sentence counts
    w = sentence_weights(tgt)
    lines = [["mice were washed ."], ["il-2 was added ."], ["new words"]]
    for r in (0, 7):
        resampled = sum(dsir_counts(lines[i]) * int(w[r, i]) for i in range(3))
        assert result.replicates[r] == pytest.approx(dsir_kl(resampled, s), rel=1e-9)


def test_kl_is_scipys_kl_when_the_source_covers_the_target():
    rng = np.random.default_rng(3)
    s = rng.integers(1, 50, 10_000)
    t = rng.integers(0, 50, 10_000)
    from simcore.measures.kl import divergence

    p_t, p_s = t / t.sum(), s / s.sum()
    # the 1e-10 smoothing moves each log by less than 1e-10 / p, so the sum by less than this
    bound = 1e-10 * (np.sum(p_t / p_s) + np.count_nonzero(p_t))
    assert abs(float(divergence(p_t, p_s)) - stats.entropy(p_t, p_s)) < bound
    assert float(divergence(p_t, p_t)) == pytest.approx(0.0, abs=1e-7)


def test_kl_reduction_uses_the_union_of_the_sources(tmp_path, store):
    bench = Workbench(store)
    a = bench.source(corpus(tmp_path, "a", SOURCE), 10**9, 1)[0]
    b = bench.source(corpus(tmp_path, "b", "Good food , friendly staff .\nThe pizza was great .\n"), 10**9, 1)[0]
    tgt = bench.target(corpus(tmp_path, "t", TARGET, ".conll"))
    reduction = kl_reduction([a, b], tgt)
    t = dsir_counts(["mice were washed .", "il-2 was added .", "new words"])
    union = source_counts(a) + source_counts(b)
    for prepared in (a, b):
        assert reduction[prepared.name] == pytest.approx(dsir_kl(t, union) - dsir_kl(t, source_counts(prepared)))
    assert reduction["a"] > reduction["b"]  # the same order as KL: one reference per target


def test_kl_in_the_matrix_and_stored_once(tmp_path, store):
    bench = Workbench(store, options=MeasureOptions(kl_buckets=1000))
    sources = [corpus(tmp_path, "bio", SOURCE), corpus(tmp_path, "food", "Good food , friendly staff .\n")]
    target = corpus(tmp_path, "t", TARGET, ".conll")
    long = bench.matrix(sources, [target], ["kl"])
    values = dict(zip(long["source"], long["value"]))
    assert values["bio"] < values["food"]
    assert np.isfinite(long["ci_low"]).all() and np.isfinite(long["ci_high"]).all()
    assert len(list((store.root / "kl-buckets").iterdir())) == 2
