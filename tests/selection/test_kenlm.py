"""The KenLM scorers agree with KenLM's own query program and prefer the right source on real corpora."""

from __future__ import annotations

import gzip
import itertools
import random
import subprocess

import numpy as np
import pytest

from simcore.corpus import Corpus
from simcore.kenlm_tools import find_program
from simcore.selection import SelectionOptions, choose, kept_indices, score_pool
from simcore.tokenize import tokenize

from .conftest import biology, football, mixed_pool, options, write_lines


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
