"""The entity-count scorer: the bundled pipeline, a user's pipeline, bad pipelines."""

from __future__ import annotations

import pytest

from simcore.corpora.corpus import Corpus
from simcore.selection.choosing import choose, kept_indices
from simcore.selection.driver import score_pool
from simcore.utils.errors import SimcoreError

from .conftest import DRUGS, GENES, biology, chat, football, mixed_pool, options, write_conll, write_lines


def test_entities_picks_entity_rich_register(tmp_path, store):
    """The bundled English NER finds people, teams and days in football reports, none in chat."""
    pool, is_sport = mixed_pool(tmp_path, football(40, seed=4), chat(40, seed=5))
    target = write_conll(tmp_path / "target.conll", football(60, seed=6))
    scores = score_pool(Corpus.from_path(pool), Corpus.from_path(target), options("entities"), store)
    kept = kept_indices(scores, choose(scores, top=30))
    assert is_sport[kept].mean() >= 0.9
    assert scores.meta["details"]["labels"], "the target's entity types are reported"


def test_user_pipeline_counts_its_entities(tmp_path, store, monkeypatch):
    """A pipeline directory with an entity ruler: each sentence's score is its number of matches."""
    import spacy

    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns([{"label": "GENE", "pattern": g} for g in GENES] + [{"label": "DRUG", "pattern": d} for d in DRUGS])
    nlp.to_disk(tmp_path / "pipeline")
    pool = write_lines(tmp_path / "pool.txt", [
        "BRCA1 and TP53 were both silenced by cisplatin .",   # 3
        "nothing to see here .",                             # 0
        "EGFR signalling .",                                 # 1
        "olaparib , rapamycin and MYC .",                    # 3
    ])
    target = write_lines(tmp_path / "target.txt", biology(20, seed=7))
    opts = options("entities", pipeline=str(tmp_path / "pipeline"), entity_labels="all")
    scores = score_pool(Corpus.from_path(pool), Corpus.from_path(target), opts, store)
    assert list(scores.scores()) == [3, 0, 1, 3]
    only_genes = score_pool(Corpus.from_path(pool), Corpus.from_path(target),
                            options("entities", pipeline=str(tmp_path / "pipeline"), entity_labels="GENE"), store)
    assert list(only_genes.scores()) == [2, 0, 1, 1]
    # Tagged in two processes, chunks of two units: the same counts, in pool order.
    from simcore.selection.methods import entities
    from simcore.utils.store import ArtefactStore

    monkeypatch.setattr(entities, "_CHUNK", 2)

    two = score_pool(Corpus.from_path(pool), Corpus.from_path(target),
                     options("entities", pipeline=str(tmp_path / "pipeline"), entity_labels="all", ner_processes=2),
                     ArtefactStore(tmp_path / "other-store"))
    assert list(two.scores()) == [3, 0, 1, 3]


def test_pipeline_without_ner_is_refused(tmp_path, store, bio_target):
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.to_disk(tmp_path / "no_ner")
    pool = write_lines(tmp_path / "pool.txt", biology(5, seed=19))
    with pytest.raises(SimcoreError, match="has no NER component"):
        score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target),
                   options("entities", pipeline=str(tmp_path / "no_ner")), store)



def tagged_biology(path, n: int, seed: int):
    """CoNLL with the target's own types: GENE and DRUG (two words for 'HeLa cells' is not a type)."""
    blocks = []
    for line in biology(n, seed):
        rows = []
        for token in line.split():
            tag = "B-GENE" if token in GENES else "B-DRUG" if token in DRUGS else "O"
            rows.append(f"{token}\t{tag}")
        blocks.append("\n".join(rows))
    path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    return path


def test_tagger_trained_on_the_target_labels_counts_its_types(tmp_path, store):
    import spacy

    pool, is_bio = mixed_pool(tmp_path, biology(30, seed=30), football(30, seed=31))
    target = Corpus.from_path(tagged_biology(tmp_path / "bio.conll", 150, seed=32))
    scores = score_pool(Corpus.from_path(pool), target, options("entities", tagger_steps=150), store)
    details = scores.meta["details"]
    assert details["tagger_kind"] == "target" and "trained on bio's labels (DRUG, GENE" in details["tagger"]
    assert details["labels"] == ["DRUG", "GENE"]
    # The stored tagger, loaded with spaCy directly, finds exactly the counted entities.
    (model,) = (store.root / "selection-entity-tagger").glob("*/model")
    nlp = spacy.load(model)
    expected = [len(doc.ents) for doc in nlp.pipe(pool.read_text().splitlines())]
    assert list(scores.scores()) == expected
    assert details["tagger_training"]["dev_f1"] > 0.8
    kept = kept_indices(scores, choose(scores, top=25))
    assert is_bio[kept].mean() >= 0.9


def test_target_without_labels_falls_back_to_the_generic_pipeline(tmp_path, store):
    pool, _ = mixed_pool(tmp_path, football(10, seed=33), chat(10, seed=34))
    target = write_conll(tmp_path / "target.conll", football(20, seed=35))   # every tag is O
    scores = score_pool(Corpus.from_path(pool), Corpus.from_path(target), options("entities"), store)
    assert scores.meta["details"]["tagger_kind"] == "generic"
    assert "no entity labels" in scores.meta["details"]["tagger"]



def test_a_line_longer_than_the_tagger_takes_is_tagged_in_pieces_and_counted():
    import spacy

    from simcore.selection.methods.entities import _count_entities, long_lines

    nlp = spacy.blank("en")
    nlp.add_pipe("entity_ruler").add_patterns([{"label": "GPE", "pattern": "Paris"}])
    nlp.max_length = 50  # spaCy refuses longer texts (E088): such a line must not end the run
    texts = ["Paris and Paris", "Paris " * 100, "x" * 120]
    counts = _count_entities(nlp, texts, ["GPE"])
    assert counts[:, 0].tolist() == [2, 100, 0]  # each of the 100 found once: pieces are cut at spaces
    assert long_lines(texts, nlp) == 2
