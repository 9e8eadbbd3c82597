"""Continued masked-LM training of the encoder on the target."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.corpora.corpus import Corpus
from simcore.models import sentence_encoder as encoder_model
from simcore.selection.driver import score_pool
from simcore.selection.options import SelectionOptions

from .conftest import biology, football, write_conll, write_lines

torch = pytest.importorskip("torch", reason="the encoder is not installed (scripts/install.sh --encoder)")
if encoder_model.importlib.util.find_spec(encoder_model.BUNDLED_MODULE) is None:
    pytest.skip("the bundled encoder package is not installed", allow_module_level=True)


def encoder_options(**extra) -> SelectionOptions:
    return SelectionOptions(method="encoder", workers=1, batch=50, **extra)


def test_adapt_trains_on_the_target_and_is_stored(tmp_path, store):
    pool = write_lines(tmp_path / "pool.txt", biology(10, seed=8) + football(10, seed=9))
    target = Corpus.from_path(write_conll(tmp_path / "t.conll", biology(200, seed=10)))
    options = encoder_options(adapt=True, adapt_steps=12)
    scores = score_pool(Corpus.from_path(pool), target, options, store)
    record = scores.meta["details"]["adaptation"]
    assert record["steps"] == 12
    assert record["held_out_loss_after"] < record["held_out_loss_before"], record
    adapted = list((store.root / "selection-encoder-adapted").glob("*/encoder/model.safetensors"))
    assert len(adapted) == 1
    plain = score_pool(Corpus.from_path(pool), target, encoder_options(), store)
    assert not np.allclose(scores.scores(), plain.scores()), "the adapted encoder embeds differently"


