"""The bundled encoder and local encoder directories: loading, embeddings, install hints."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from simcore.cli.main import main
from simcore.corpora.corpus import Corpus
from simcore.models import sentence_encoder as encoder_model
from simcore.models.sentence_encoder import Encoder, bundled_encoder, local_encoder
from simcore.selection.driver import score_pool
from simcore.selection.options import SelectionOptions
from simcore.utils.errors import MeasureUnavailable

from .conftest import biology, football, write_conll, write_lines

torch = pytest.importorskip("torch", reason="the encoder is not installed (scripts/install.sh --encoder)")
if encoder_model.importlib.util.find_spec(encoder_model.BUNDLED_MODULE) is None:
    pytest.skip("the bundled encoder package is not installed", allow_module_level=True)

SENTENCES = ["Expression of TP53 was increased in HeLa cells .", "Okafor scored twice as Rovers beat United .",
             "", "A much longer sentence about " + "proteins and genes " * 40]


def encoder_options(**extra) -> SelectionOptions:
    return SelectionOptions(method="encoder", workers=1, batch=50, **extra)


def test_embeddings_match_sentence_transformers(store):
    """Mean pooling over word pieces, L2-normalised: what sentence-transformers gives for this model."""
    from sentence_transformers import SentenceTransformer

    source = bundled_encoder(store)
    ours = Encoder(source).embed(SENTENCES[:2] + SENTENCES[3:])
    reference = SentenceTransformer(str(source.path), device="cpu", local_files_only=True)
    reference.max_seq_length = encoder_model.MAX_LENGTH
    theirs = reference.encode(SENTENCES[:2] + SENTENCES[3:], normalize_embeddings=True)
    assert ours.shape == (3, 384)
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


def test_local_sentence_transformers_directory(tmp_path, store):
    """A sentence-transformers layout whose transformer lives in a sub-folder named by modules.json."""
    bundled = bundled_encoder(store)
    model = tmp_path / "my-encoder"
    shutil.copytree(bundled.path, model / "0_Transformer", ignore=shutil.ignore_patterns("manifest*", "1_Pooling"))
    (model / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "0_Transformer", "type": "sentence_transformers.models.Transformer"}]))
    source = local_encoder(str(model))
    assert source.name == "my-encoder"
    np.testing.assert_allclose(Encoder(source).embed(SENTENCES[:2]), Encoder(bundled).embed(SENTENCES[:2]), atol=1e-6)
    pool = write_lines(tmp_path / "pool.txt", biology(5, seed=5) + football(5, seed=6))
    target = Corpus.from_path(write_conll(tmp_path / "t.conll", biology(10, seed=7)))
    by_dir = score_pool(Corpus.from_path(pool), target, encoder_options(encoder=str(model)), store)
    by_bundle = score_pool(Corpus.from_path(pool), target, encoder_options(), store)
    np.testing.assert_allclose(by_dir.scores(), by_bundle.scores(), atol=1e-5)
    assert by_dir.meta["details"]["encoder"] == "my-encoder"


def test_missing_encoder_explains_how_to_install(tmp_path, store, monkeypatch, capsys):
    monkeypatch.setattr(encoder_model.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(MeasureUnavailable, match="install.sh --encoder"):
        bundled_encoder(store)
    pool = write_lines(tmp_path / "pool.txt", biology(5, seed=11))
    target = write_conll(tmp_path / "t.conll", biology(5, seed=12))
    code = main(["select", "--pool", str(pool), "--target", str(target), "--method", "encoder", "--top", "2",
                 "--out", str(tmp_path / "o.txt.gz"), "--cache", str(tmp_path / "c"), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "install.sh --encoder" in err and len(err.splitlines()) == 1


