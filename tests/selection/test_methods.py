"""Each scoring method finds the target's register in a mixed pool."""

from __future__ import annotations

import pytest

from simcore.corpora.corpus import Corpus
from simcore.selection.choosing import choose, kept_indices
from simcore.selection.driver import score_pool

from .conftest import biology, football, mixed_pool, options

# --------------------------------------------------------------------------- methods pick the register

@pytest.mark.parametrize("method", ["cosine", "ppl", "xent"])
def test_method_picks_the_target_register(tmp_path, store, bio_target, method):
    pool, is_bio = mixed_pool(tmp_path, biology(60, seed=2), football(60, seed=3))
    scores = score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target), options(method), store)
    kept = kept_indices(scores, choose(scores, top=40))
    assert len(kept) == 40
    assert is_bio[kept].mean() >= 0.9, f"{method} kept {is_bio[kept].mean():.0%} biology"
