"""The KenLM scorers agree with KenLM's own query program and prefer the right source on real corpora."""

from __future__ import annotations

import gzip
import itertools
import random
import subprocess
from collections import Counter

import numpy as np
import pytest

from simcore.corpora.corpus import Corpus
from simcore.corpora.tokenize import tokenize
from simcore.models.kenlm_tools import find_program
from simcore.selection.choosing import choose, kept_indices
from simcore.selection.driver import score_pool
from simcore.selection.methods.kenlm import CrossEntropyScorer
from simcore.selection.options import SelectionOptions
from simcore.selection.pool import pool_fingerprint
from simcore.selection.target import Target

from .conftest import biology, chat, football, mixed_pool, options, write_lines


def query_per_word(model_path: str, sentences: list[list[str]]) -> np.ndarray:
    """−log10 p(s) / (words + 1) per sentence, from the Total: lines of KenLM's own query program."""
    result = subprocess.run([str(find_program("query")), "-v", "sentence", model_path],
                            input="".join(" ".join(s) + "\n" for s in sentences),
                            capture_output=True, text=True, check=True)
    totals = [float(line.split()[1]) for line in result.stdout.splitlines() if line.startswith("Total:")]
    assert len(totals) == len(sentences)
    return np.asarray([-t / (len(s) + 1) for t, s in zip(totals, sentences)])


def test_ppl_matches_kenlm_query_program(tmp_path, store, bio_target):
    pool, _ = mixed_pool(tmp_path, biology(5, seed=8), football(5, seed=9))
    scores = score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target), options("ppl"), store)
    models = list((store.root / "selection-kenlm").glob("*/model.bin"))
    assert len(models) == 1
    sentence = pool.read_text().splitlines()[1]   # a football sentence: OOV words included
    tokens = tokenize(sentence)
    result = subprocess.run([str(find_program("query")), "-v", "sentence", str(models[0])],
                            input=" ".join(tokens) + "\n", capture_output=True, text=True, check=True)
    total = float(next(line for line in result.stdout.splitlines() if line.startswith("Total:")).split()[1])
    assert scores.scores()[1] == pytest.approx(10 ** (-total / (len(tokens) + 1)), rel=1e-5)


def test_xent_matches_a_hand_computation_with_kenlm_query(tmp_path, store, bio_target):
    """H_target(s) − H_pool(s) per word, each from query, with the vocabulary worked out here."""
    bio, talk = biology(30, seed=8), chat(30, seed=9)
    pool, _ = mixed_pool(tmp_path, bio, talk)
    opts = options("xent", pool_sample=60)
    scores = np.asarray(score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target), opts, store).scores())

    target_tokens = [tokenize(line) for line in biology(80, seed=1)]
    counts = Counter(t for s in target_tokens for t in s)
    vocabulary = {w for w, c in counts.items() if c >= 2}
    mapped = [[t if t in vocabulary else "[oov]" for t in tokenize(line)] for line in pool.read_text().splitlines()]
    # the models simcore built (taken from the store, not rebuilt): the target's and the two pool halves
    corpus = Corpus.from_path(pool)
    scorer = CrossEntropyScorer(opts, corpus, pool_fingerprint(corpus, opts.tokenizer),
                                Target(Corpus.from_path(bio_target), store, opts), store, lambda *a: None)
    assert scorer.vocab == vocabulary
    h_target = query_per_word(scorer.target_model.path, mapped)
    h_a = query_per_word(scorer.models[0].path, mapped)
    h_b = query_per_word(scorer.models[1].path, mapped)
    in_a = np.isin(np.arange(len(mapped)), scorer.in_a)
    assert 0 < in_a.sum() < len(mapped)
    h_pool = np.where(in_a, h_b, h_a)   # cross-fitting: a sentence of half A is scored by half B's model
    assert scores == pytest.approx(h_target - h_pool, abs=1e-4)
    # the talk sentences (whose words the target never saw) are the ones xent drops
    assert scores[1::2].mean() > scores[0::2].mean()


# --------------------------------------------------------------------------- duplicates, counts, outputs
# --------------------------------------------------------------------------- real corpora

@pytest.mark.shared_data
def test_xent_on_real_corpora_prefers_medline_for_craft(tmp_path, store, shared_data):
    rng = random.Random(5)
    found = {}
    for name in ("biomed_ohsumed_medline", "news_1bwb", "reviews_yelp"):
        with gzip.open(shared_data / "sources" / f"{name}.txt.gz", "rt", encoding="utf-8") as f:
            lines = [line.strip() for line in itertools.islice(f, 20_000) if len(line.split()) >= 5]
        found[name] = rng.sample(lines, 300)
    pool_lines = found["biomed_ohsumed_medline"] + found["news_1bwb"] + found["reviews_yelp"]
    order = list(range(len(pool_lines)))
    rng.shuffle(order)
    pool = write_lines(tmp_path / "pool.txt", [pool_lines[i] for i in order])
    is_medline = np.asarray([i < 300 for i in order])
    target = Corpus.from_path(shared_data / "targets" / "craft" / "dev.conll")
    scores = score_pool(Corpus.from_path(pool), target, SelectionOptions(method="xent", target_tokens=30_000), store)
    kept = kept_indices(scores, choose(scores, fraction=0.2))
    assert is_medline[kept].mean() >= 0.6   # base rate 1/3
