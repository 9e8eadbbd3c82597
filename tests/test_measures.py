"""Each measure against a value computed another way: by hand, by scipy, by KenLM's query."""

import json
import math
import re
import subprocess
from collections import Counter

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon

from simcore.corpora.corpus import Corpus
from simcore.matrix.workbench import Workbench
from simcore.measures.jsd import divergent_ngrams
from simcore.measures.lookup import get_measure
from simcore.measures.options import MeasureOptions
from simcore.measures.ppl import least_likely_sentences
from simcore.measures.tvc import uncovered_words
from simcore.measures.wvv import moved_words
from simcore.models.kenlm_tools import find_program
from simcore.utils.errors import SimcoreError

from .conftest import SAMPLE_DATA


def corpus(tmp_path, name, text, suffix=".txt"):
    p = tmp_path / f"{name}{suffix}"
    p.write_text(text)
    return Corpus.from_path(p)


def score(bench, source, target, name):
    src = bench.source(source, 10**9, 1)[0]
    tgt = bench.target(target)
    measure = get_measure(name)
    measure.prepare(src)
    return measure.score(src, tgt), src, tgt


def test_tvc_by_hand(tmp_path, store):
    bench = Workbench(store)
    source = corpus(tmp_path, "s", "a b c a\n")
    target = corpus(tmp_path, "t", "A d .\nb\n")
    result, src, tgt = score(bench, source, target, "tvc")
    assert result.value == pytest.approx(2 / 4)  # {a, b} of {a, d, ., b}
    assert uncovered_words(src, tgt) == [(".", 1), ("d", 1)]


def test_ttr_by_hand(tmp_path, store):
    result, _, _ = score(Workbench(store), corpus(tmp_path, "s", "a b a c\n"), corpus(tmp_path, "t", "x\n"), "ttr")
    assert result.value == pytest.approx(3 / 4)


def test_tvcc_by_hand(tmp_path, store):
    source = corpus(tmp_path, "s", "the doctor gave me medicine\n")
    target = corpus(tmp_path, "t", "The\tO\ndoctor\tO\nprescribed\tO\nstrong\tO\nmedicine\tB-DRUG\n.\tO\n", ".conll")
    result, _, _ = score(Workbench(store), source, target, "tvcc")
    # content words: doctor (NOUN), prescribed (VERB), strong (ADJ), medicine (NOUN); covered: doctor, medicine
    assert result.details["target_types"] == 4
    assert result.value == pytest.approx(2 / 4)


def test_jsd_by_hand(tmp_path, store):
    result, _, _ = score(Workbench(store), corpus(tmp_path, "s", "a b\n"), corpus(tmp_path, "t", "a c\n"), "jsd")
    # P = {a, b, "a b"} each 1/3; Q = {a, c, "a c"} each 1/3; KL(P||M) = KL(Q||M) = 2/3
    assert result.value == pytest.approx(2 / 3)
    same, _, _ = score(Workbench(store), corpus(tmp_path, "s2", "x y z\n"), corpus(tmp_path, "t2", "x y z\n"), "jsd")
    assert same.value == pytest.approx(0.0, abs=1e-12)
    disjoint, _, _ = score(Workbench(store), corpus(tmp_path, "s3", "x y\n"), corpus(tmp_path, "t3", "p q\n"), "jsd")
    assert disjoint.value == pytest.approx(1.0)


def _ngrams(sentences, max_n=3):
    counts = Counter()
    for s in sentences:
        for n in range(1, max_n + 1):
            for i in range(len(s) - n + 1):
                counts[tuple(s[i:i + n])] += 1
    return counts


def test_jsd_equals_scipy_on_real_text(store):
    bench = Workbench(store)
    source = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    result, src, tgt = score(bench, source, target, "jsd")
    p, q = _ngrams(src.sample.sentences()), _ngrams(tgt.sentences)
    keys = sorted(set(p) | set(q))
    expected = jensenshannon([p[k] for k in keys], [q[k] for k in keys], base=2) ** 2
    assert result.value == pytest.approx(expected, rel=1e-9)
    p1, q1 = _ngrams(src.sample.sentences(), 1), _ngrams(tgt.sentences, 1)
    k1 = sorted(set(p1) | set(q1))
    assert result.details["jsd_1"] == pytest.approx(jensenshannon([p1[k] for k in k1], [q1[k] for k in k1], base=2) ** 2)
    top = divergent_ngrams(src, tgt, top=5)
    assert len(top) == 5 and all(r["ngram"] != "?" for r in top)


def test_perplexity_equals_kenlm_query(store):
    bench = Workbench(store)
    source = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    result, src, tgt = score(bench, source, target, "ppl")
    model = next(store.root.glob("kenlm/*/model.bin"))
    out = subprocess.run([str(find_program("query")), "-v", "summary", str(model)],
                         input=tgt.tokenized.tokens_file.read_text(), capture_output=True, text=True, check=True)
    expected = float(re.search(r"Perplexity including OOVs:\s*([\d.]+)", out.stdout).group(1))
    oovs = int(re.search(r"^OOVs:\s*(\d+)", out.stdout, re.MULTILINE).group(1))
    assert result.value == pytest.approx(expected, rel=1e-5)
    assert result.details["oov"] == oovs
    worst = least_likely_sentences(src, tgt, top=3)
    assert worst[0]["perplexity"] >= worst[1]["perplexity"] >= worst[2]["perplexity"] > 1


def test_ppl_with_nothing_in_common_reports_full_oov(tmp_path, store):
    source = corpus(tmp_path, "s", "the cat sat on the mat\n" * 20)
    target = corpus(tmp_path, "t", "zzz qqq\n")
    result, _, _ = score(Workbench(store), source, target, "ppl")
    assert result.details["oov_rate"] == 1.0 and "100%" in result.details["note"]
    assert math.isfinite(result.value)


def test_wvv_equals_numpy_on_the_saved_vectors(store):
    options = MeasureOptions(wvv_workers=1)
    bench = Workbench(store, options=options)
    source = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    result, src, tgt = score(bench, source, target, "wvv")
    pair = next(store.root.glob("wvv-vectors/*"))
    before, after = np.load(pair / "source.npy"), np.load(pair / "target.npy")
    assert result.value == pytest.approx(float(((before - after) ** 2).sum() / before.size), rel=1e-6)
    words = json.loads((pair / "words.json").read_text())
    model_dir = next(store.root.glob("word2vec/*"))
    source_words = json.loads((model_dir / "words.json").read_text())
    assert words == [w for w in source_words if w in set(tgt.types())]
    source_vectors = np.load(model_dir / "vectors.npy")
    index = {w: i for i, w in enumerate(source_words)}
    assert np.array_equal(before, source_vectors[[index[w] for w in words]]), "W_S is the source model's vectors"
    assert result.value > 0
    assert moved_words(src, tgt, top=3)[0][1] >= moved_words(src, tgt, top=3)[2][1]


def test_wvv_source_too_small_is_explained(tmp_path, store):
    with pytest.raises(SimcoreError, match="no word occurs 5 times"):
        score(Workbench(store), corpus(tmp_path, "s", "a b c\n"), corpus(tmp_path, "t", "a\n"), "wvv")


def test_tvcc_with_the_source_tagged_by_hand(tmp_path, store):
    # "like" is a verb in the target but a preposition in the source: covered by the source's
    # vocabulary, not by its content words
    source = corpus(tmp_path, "s", "it looks like rain .\n")
    target = corpus(tmp_path, "t", "I\tO\nlike\tO\ndogs\tO\n.\tO\n", ".conll")
    plain, _, _ = score(Workbench(store), source, target, "tvcc")
    assert plain.value == pytest.approx(1 / 2)  # {like, dogs}: like is in the source
    tagged, _, _ = score(Workbench(store, options=MeasureOptions(tvcc_tag_source=True)), source, target, "tvcc")
    assert tagged.value == pytest.approx(0 / 2)
