"""The transformer encoder scorer."""

from __future__ import annotations

import pytest

from simcore.corpus import Corpus
from simcore.errors import SimcoreError
from simcore.selection import score_pool

from .conftest import biology, options, write_lines


def test_encoder_without_sentence_transformers_explains(tmp_path, store, bio_target):
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("sentence-transformers is installed here")
    pool = write_lines(tmp_path / "pool.txt", biology(5, seed=20))
    with pytest.raises(SimcoreError, match="pip install sentence-transformers"):
        score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target),
                   options("cosine", encoder=str(tmp_path)), store)


# --------------------------------------------------------------------------- command line
