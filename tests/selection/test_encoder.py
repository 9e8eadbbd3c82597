"""The transformer encoder scorer: the bundled all-MiniLM-L6-v2, a local directory, adaptation."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.cli.main import main
from simcore.corpora.corpus import Corpus
from simcore.models import sentence_encoder as encoder_model
from simcore.models.sentence_encoder import Encoder, bundled_encoder
from simcore.selection.choosing import choose, kept_indices
from simcore.selection.driver import score_pool
from simcore.selection.options import SelectionOptions
from simcore.utils.errors import SimcoreError

from .conftest import biology, football, mixed_pool, write_conll, write_lines

torch = pytest.importorskip("torch", reason="the encoder is not installed (scripts/install.sh --encoder)")
if encoder_model.importlib.util.find_spec(encoder_model.BUNDLED_MODULE) is None:
    pytest.skip("the bundled encoder package is not installed", allow_module_level=True)


def encoder_options(**extra) -> SelectionOptions:
    return SelectionOptions(method="encoder", workers=1, batch=50, **extra)


def test_encoder_picks_the_target_register_and_stores_pool_embeddings(tmp_path, store, monkeypatch):
    pool, is_bio = mixed_pool(tmp_path, biology(40, seed=2), football(40, seed=3))
    target = Corpus.from_path(write_conll(tmp_path / "bio.conll", biology(30, seed=1)))
    scores = score_pool(Corpus.from_path(pool), target, encoder_options(), store)
    kept = kept_indices(scores, choose(scores, top=30))
    assert is_bio[kept].mean() >= 0.9
    details = scores.meta["details"]
    assert details["encoder"] == "all-MiniLM-L6-v2" and not details["adapted"] and details["device"] == "cpu"
    # Each score is the cosine of the sentence's embedding with the mean target embedding.
    encoder = Encoder(bundled_encoder(store))
    texts = pool.read_text().splitlines()
    centre = encoder.embed(biology(30, seed=1)).mean(axis=0)
    expected = encoder.embed(texts[:5]) @ (centre / np.linalg.norm(centre))
    np.testing.assert_allclose(scores.scores()[:5], expected, atol=1e-5)

    # Another target: only the target is embedded, the pool's embeddings are read back.
    embedded: list[int] = []
    original = Encoder.embed
    monkeypatch.setattr(Encoder, "embed", lambda self, t: embedded.append(len(t)) or original(self, t))
    sport = Corpus.from_path(write_conll(tmp_path / "sport.conll", football(30, seed=4)))
    again = score_pool(Corpus.from_path(pool), sport, encoder_options(), store)
    assert embedded == [30]
    assert (~is_bio[kept_indices(again, choose(again, top=30))]).mean() >= 0.9


@pytest.mark.parametrize("argv, message", [
    (["--encoder", "NOTADIR"], "is not a directory"),
    (["--encoder", "EMPTYDIR"], "has no config.json"),
    (["--encoder", "JUNKDIR"], "cannot load the encoder"),
])
def test_bad_encoder_directory_is_one_line(tmp_path, capsys, argv, message):
    (tmp_path / "EMPTYDIR").mkdir()
    (tmp_path / "JUNKDIR").mkdir()
    (tmp_path / "JUNKDIR" / "config.json").write_text("{not json")
    pool = write_lines(tmp_path / "pool.txt", biology(5, seed=13))
    target = write_conll(tmp_path / "t.conll", biology(5, seed=14))
    code = main(["select", "--pool", str(pool), "--target", str(target), "--method", "encoder", "--top", "2",
                 "--out", str(tmp_path / "o.txt.gz"), "--cache", str(tmp_path / "c"), "--quiet",
                 argv[0], str(tmp_path / argv[1])])
    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and len(err.splitlines()) == 1, err


def test_encoder_flags_need_the_encoder_method(tmp_path, capsys):
    pool = write_lines(tmp_path / "pool.txt", biology(5, seed=15))
    code = main(["select", "--pool", str(pool), "--target", str(pool), "--method", "ppl", "--top", "2",
                 "--out", str(tmp_path / "o.txt.gz"), "--adapt"])
    assert code == 2 and "only used by --method encoder" in capsys.readouterr().err
    with pytest.raises(SimcoreError, match="adapt steps"):
        SelectionOptions(method="encoder", adapt=True, adapt_steps=0)

