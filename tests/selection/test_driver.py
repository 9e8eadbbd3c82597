"""Scoring, caching, duplicates and counts through the driver; bad input raises SimcoreError."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.corpus import Corpus
from simcore.errors import SimcoreError
from simcore.selection import SelectionOptions, choose, count_to_keep, kept_indices, score_pool

from .conftest import biology, football, mixed_pool, options, write_lines

# --------------------------------------------------------------------------- duplicates, counts, outputs

def test_duplicates_of_target_are_flagged_and_excluded(tmp_path, store, bio_target):
    target_lines = [line.replace("\t", " ") for line in bio_target.read_text().split("\n\n")]
    copies = [" ".join(t.split()[0] for t in block.splitlines()).upper() for block in target_lines[:5]]
    pool_lines = biology(20, seed=10) + copies + football(20, seed=11)
    pool = write_lines(tmp_path / "pool.txt", pool_lines)
    scores = score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target), options("ppl"), store)
    flagged = np.flatnonzero(scores.duplicates())
    assert flagged.tolist() == list(range(20, 25))
    # The copies are among the best-scored sentences, yet never kept by default ...
    kept = kept_indices(scores, choose(scores, top=10))
    assert not set(kept) & set(range(20, 25))
    # ... unless asked for.
    kept_all = kept_indices(scores, choose(scores, top=25, keep_duplicates=True), keep_duplicates=True)
    assert set(range(20, 25)) <= set(kept_all)


def test_top_and_fraction_counts(tmp_path, store, bio_target):
    pool, _ = mixed_pool(tmp_path, biology(50, seed=12), football(70, seed=13))
    scores = score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target), options("xent"), store)
    assert choose(scores, top=17).n_kept == 17
    assert choose(scores, fraction=0.25).n_kept == 30          # 25% of 120
    dups = int(scores.duplicates().sum())                      # templates can repeat a target sentence
    assert choose(scores, fraction=1.0).n_kept == 120 - dups
    assert choose(scores, fraction=1.0, keep_duplicates=True).n_kept == 120
    assert choose(scores, top=500).n_kept == 120 - dups        # more than the pool: all of it
    assert count_to_keep(120, fraction=0.001) == 1


def test_scores_are_cached_and_reused(tmp_path, store, bio_target, monkeypatch):
    pool, _ = mixed_pool(tmp_path, biology(10, seed=16), football(10, seed=17))
    first = score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target), options("ppl"), store)
    import simcore.selection.methods as methods

    monkeypatch.setattr(methods, "make_scorer", lambda *a, **k: pytest.fail("scored again"))
    second = score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target), options("ppl"), store)
    assert second.path == first.path
    assert np.array_equal(second.scores(), first.scores())


# --------------------------------------------------------------------------- bounded-memory cut-off
# --------------------------------------------------------------------------- bad input

def test_bad_inputs_raise_simcore_errors(tmp_path, store, bio_target):
    pool = write_lines(tmp_path / "pool.txt", biology(10, seed=18))
    target = Corpus.from_path(bio_target)
    with pytest.raises(SimcoreError, match="unknown selection method"):
        SelectionOptions(method="bm25")
    with pytest.raises(SimcoreError, match="at least 1"):
        SelectionOptions(method="ppl", order=0)
    with pytest.raises(SimcoreError, match="fraction"):
        count_to_keep(10, fraction=0)
    with pytest.raises(SimcoreError, match="give 0.1"):
        count_to_keep(10, fraction=10)
    with pytest.raises(SimcoreError, match="top K"):
        count_to_keep(10, top=0)
    with pytest.raises(SimcoreError, match="either"):
        count_to_keep(10, top=3, fraction=0.5)
    with pytest.raises(SimcoreError, match="does not exist"):
        Corpus.from_path(tmp_path / "missing.txt")
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(SimcoreError, match="empty"):
        Corpus.from_path(tmp_path / "empty.txt")
    with pytest.raises(SimcoreError, match="not a spaCy pipeline directory"):
        score_pool(Corpus.from_path(pool), target, options("entities", pipeline=str(tmp_path)), store)
    with pytest.raises(SimcoreError, match="no entity label NOPE"):
        score_pool(Corpus.from_path(pool), target, options("entities", entity_labels="NOPE"), store)


