"""simcore.models.tagging: a target tagged in parts (by several processes) gives what tagging it whole gives."""

from __future__ import annotations

import pytest

from simcore.corpora.corpus import Corpus
from simcore.corpora.tokenize import TokenizerOptions, normalise
from simcore.measures.tvcc import _cased_sentences, tag_in_background
from simcore.models import tagging

from .conftest import SAMPLE_DATA

POS = ("NOUN", "VERB", "ADJ")


@pytest.fixture
def small_parts(monkeypatch):
    monkeypatch.setattr(tagging, "BATCH", 32)
    monkeypatch.setattr(tagging, "PART_SENTENCES", 64)


def _whole(raw: Corpus) -> set[str]:
    """spaCy run once over every sentence, in one pipe."""
    from spacy.tokens import Doc

    nlp = tagging.load_pipeline()
    sentences = list(_cased_sentences(raw))
    words = set()
    for doc in nlp.pipe(Doc(nlp.vocab, words=s) for s in sentences):
        words.update(normalise(t.text, TokenizerOptions()) for t in doc if t.pos_ in POS)
    return words


def test_content_words_from_parts_equal_one_run_over_the_whole_target(store, small_parts, monkeypatch):
    raw = Corpus.from_path(SAMPLE_DATA / "targets" / "med_forum_posts.conll")
    n_sentences = sum(1 for _ in _cased_sentences(raw))
    assert tagging.parts_of(n_sentences) == -(-n_sentences // 64) > 3
    calls = []
    real = tagging.pos_tags
    monkeypatch.setattr(tagging, "pos_tags", lambda sentences: calls.append(len(sentences)) or real(sentences))
    # two parts tagged "elsewhere" first, out of order, as processes of a parallel matrix do
    for part in (3, 0):
        tag_in_background(raw, "fp", str(store.root), POS, TokenizerOptions().as_dict(), range(part, part + 1))
    words = tagging.content_words(lambda: _cased_sentences(raw), "fp", store, POS)
    assert words == _whole(raw) and words
    assert sum(calls) == n_sentences and len(calls) == tagging.parts_of(n_sentences)  # each part tagged once
    assert max(calls) == 64


def test_a_targets_parts_are_shared_out_to_the_processes_without_gaps_or_overlaps(store, small_parts, monkeypatch):
    monkeypatch.setattr("simcore.measures.tvcc.BACKGROUND_MIN_TOKENS", 0)
    from simcore.matrix.workbench import Workbench
    from simcore.measures.lookup import get_measure

    target = Workbench(store).target(Corpus.from_path(SAMPLE_DATA / "targets" / "med_forum_posts.conll"))
    parts = tagging.parts_of(target.tokenized.n_units)
    measure = get_measure("tvcc")
    for processes in (1, 2, 3, parts, parts + 5):
        jobs = measure.background_work(target, processes)
        ranges = [args[-1] for _, args in jobs]
        assert len(jobs) == min(processes, parts)
        assert [p for r in ranges for p in r] == list(range(parts))


def _old_tags(sentences: list[list[str]]) -> list[list[str]]:
    """The tags as before: the three components (tok2vec, tagger, attribute ruler) run on every sentence."""
    from spacy.tokens import Doc

    nlp = tagging.load_pipeline()
    return [[t.pos_ for t in doc] for doc in nlp.pipe((Doc(nlp.vocab, words=s) for s in sentences),
                                                       batch_size=tagging.BATCH)]


def test_the_ruler_once_per_word_and_tag_gives_every_tag_the_full_pipeline_gives(shared_data):
    """pos_tags maps each distinct (word, tag) pair through the attribute ruler once; every token's POS is the
    one the pipeline gives when the ruler runs on each sentence (real targets: news, biomedical, lab)."""
    nlp = tagging.load_pipeline()
    assert tagging.ruler_is_per_token(nlp)
    for name in ("conll2003", "jnlpba", "wetlab_wlp"):
        raw = Corpus.from_path(shared_data / "targets" / name / "test.conll")
        sentences = list(_cased_sentences(raw))[:1500]
        new = list(tagging.pos_tags(sentences))
        assert new == _old_tags(sentences), name
        assert {"NOUN", "VERB", "ADJ", "PROPN"} <= {t for s in new for t in s}


def test_the_shortcut_is_refused_where_a_rule_of_several_tokens_sets_pos():
    """A rule whose pattern spans two tokens and sets POS (without asking for a parse) makes POS depend on the
    neighbour: pos_tags then runs the ruler on every sentence; one that needs a dependency label does not."""
    assert tagging._per_token('[{"patterns": [[{"DEP": "expl"}, {"LOWER": "is"}]], "attrs": {"POS": "VERB"}}]')
    assert not tagging._per_token('[{"patterns": [[{"LOWER": "there"}, {"LOWER": "is"}]], "attrs": {"POS": "VERB"}}]')
    assert tagging._per_token('[{"patterns": [[{"LOWER": "gon"}, {"LOWER": "na"}]], "attrs": {"LEMMA": "go"}}]')


def test_sample_tags_unchanged(tmp_path):
    """The bundled sample's content words are those of the full pipeline run on every sentence."""
    for path in sorted((SAMPLE_DATA / "targets").iterdir())[:2]:
        raw = Corpus.from_path(path)
        sentences = list(_cased_sentences(raw))
        assert list(tagging.pos_tags(sentences)) == _old_tags(sentences)


def _sentences(path) -> list[list[str]]:
    return list(_cased_sentences(Corpus.from_path(path)))


def test_a_sentence_gets_the_same_tags_alone_in_another_batch_and_order(shared_data):
    """What tagging each distinct sentence once rests on: a sentence's tags do not depend on the
    sentences batched with it. Real targets with repeated sentences, tagged in their order in
    batches of BATCH, then each distinct sentence once, in reverse order, in batches of 1,000 and
    one at a time."""
    for name in ("conll2003", "wetlab_wlp"):
        sentences = _sentences(shared_data / "targets" / name / "train.conll")[:3000]
        batched = list(tagging.pos_tags(sentences))
        distinct = list(dict.fromkeys(tuple(s) for s in sentences))[::-1]
        assert len(distinct) < 0.95 * len(sentences), name  # the data does repeat sentences
        other = dict(zip(distinct, tagging.pos_tags([list(s) for s in distinct], batch_size=1000)))
        assert [other[tuple(s)] for s in sentences] == batched, name
        alone = {s: next(iter(tagging.pos_tags([list(s)], batch_size=1))) for s in distinct[:300]}
        assert all(alone[s] == other[s] for s in alone), name


def test_content_words_tagged_once_per_distinct_sentence_equal_every_sentence_tagged(shared_data,
                                                                                    tmp_path):
    """A real target whose sentences repeat across parts: the stored content words (each sentence
    tagged where it first occurs, the parts tagged by two processes' worth of calls) are those of
    the pipeline run on every sentence."""
    from simcore.utils.store import ArtefactStore

    raw = Corpus.from_path(shared_data / "targets" / "wetlab_wlp" / "dev.conll")
    sentences = list(_cased_sentences(raw))
    parts = tagging.parts_of(len(sentences))
    assert parts >= 2 and len({tuple(s) for s in sentences}) < 0.9 * len(sentences)
    store = ArtefactStore(tmp_path / "store")
    half = parts // 2
    for low, high in ((half, parts), (0, half)):  # the later parts first, as another process may
        tag_in_background(raw, "wetlab-dev", str(store.root), POS, {}, range(low, high))
    words = tagging.content_words(lambda: _cased_sentences(raw), "wetlab-dev", store, POS)
    assert words == _whole(raw)


TORCH_FREE = """
import json, sys
from simcore.models import tagging
tagging.import_spacy_without_torch()
sentences = json.load(sys.stdin)
print(json.dumps({"torch": "torch" in sys.modules, "tags": list(tagging.pos_tags(sentences))}))
"""


def test_a_tagging_process_without_torch_gives_the_same_tags(shared_data):
    """The background taggers import spaCy without PyTorch (thinc then never imports it): the tags
    are those of this process's spaCy, on real sentences."""
    import json
    import subprocess
    import sys

    from .conftest import ROOT

    sentences = _sentences(shared_data / "targets" / "jnlpba" / "test.conll")[:800]
    result = subprocess.run([sys.executable, "-c", TORCH_FREE], input=json.dumps(sentences),
                            text=True, capture_output=True, cwd=ROOT, check=True)
    out = json.loads(result.stdout)
    assert out["torch"] is False
    assert out["tags"] == list(tagging.pos_tags(sentences))
