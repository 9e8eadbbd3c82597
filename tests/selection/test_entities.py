"""The entity-count scorer: the bundled pipeline, a user's pipeline, bad pipelines."""

from __future__ import annotations

import pytest

from simcore.corpus import Corpus
from simcore.errors import SimcoreError
from simcore.selection import choose, kept_indices, score_pool

from .conftest import DRUGS, GENES, biology, chat, football, mixed_pool, options, write_conll, write_lines


def test_entities_picks_entity_rich_register(tmp_path, store):
    """The bundled English NER finds people, teams and days in football reports, none in chat."""
    pool, is_sport = mixed_pool(tmp_path, football(40, seed=4), chat(40, seed=5))
    target = write_conll(tmp_path / "target.conll", football(60, seed=6))
    scores = score_pool(Corpus.from_path(pool), Corpus.from_path(target), options("entities"), store)
    kept = kept_indices(scores, choose(scores, top=30))
    assert is_sport[kept].mean() >= 0.9
    assert scores.meta["details"]["labels"], "the target's entity types are reported"


def test_user_pipeline_counts_its_entities(tmp_path, store):
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

def test_pipeline_without_ner_is_refused(tmp_path, store, bio_target):
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.to_disk(tmp_path / "no_ner")
    pool = write_lines(tmp_path / "pool.txt", biology(5, seed=19))
    with pytest.raises(SimcoreError, match="has no NER component"):
        score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target),
                   options("entities", pipeline=str(tmp_path / "no_ner")), store)

