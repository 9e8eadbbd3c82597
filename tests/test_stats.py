"""simcore.corpora.stats: corpus statistics checked against counts made by hand or by another route."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from simcore.corpora.corpus import Corpus, tokenize_corpus
from simcore.corpora.corpus_counts import entity_spans, length_histogram, sentence_stats
from simcore.corpora.notes import ReadNotes
from simcore.corpora.stats import corpus_statistics, preview
from simcore.corpora.tokenize import tokenize

from .conftest import SAMPLE_DATA


def test_sentence_stats_by_hand():
    sentences = [["a", "b", "a"], ["c"], [], ["a", ",", "d", "e", "f"]]
    s = sentence_stats(sentences)
    assert s["tokens"] == 9
    assert s["types"] == 7  # a b c , d e f
    assert s["ttr"] == 7 / 9
    assert s["sentences"] == 3  # the empty one is not a sentence
    assert s["mean_length"] == 3.0
    assert s["median_length"] == 3.0
    assert s["max_length"] == 5
    assert s["top_words"][0] == ("a", 3)
    assert "," not in [w for w, _ in s["top_words"]]
    assert sum(s["length_counts"]) == 3


def test_length_histogram_covers_every_length():
    lengths = np.array([1, 1, 2, 7, 100, 55])
    edges, counts = length_histogram(lengths, max_bins=10)
    assert sum(counts) == len(lengths)
    assert edges[0] == 1 and edges[-1] > 100
    # each length falls in the bin whose edges bracket it
    for value in lengths:
        i = max(j for j, e in enumerate(edges[:-1]) if e <= value)
        assert counts[i] >= 1
    assert length_histogram(np.array([], dtype=int)) == ([], [])


def test_entity_spans_in_every_scheme():
    assert list(entity_spans(["B-PER", "I-PER", "O", "B-LOC", "B-LOC"])) == ["PER", "LOC", "LOC"]
    assert list(entity_spans(["I-PER", "I-PER", "I-ORG", "O", "I-PER"])) == ["PER", "ORG", "PER"]  # IOB1
    assert list(entity_spans(["S-PER", "B-ORG", "E-ORG", "I-ORG", "U-LOC"])) == ["PER", "ORG", "ORG", "LOC"]
    assert list(entity_spans(["B", "I", "O", "B"])) == ["ENTITY", "ENTITY"]
    assert list(entity_spans(["O", "O"])) == []


def test_corpus_statistics_conll(tmp_path: Path, store):
    f = tmp_path / "t.conll"
    f.write_text("-DOCSTART- O\n\nJohn\tB-PER\nSmith\tI-PER\nvisited\tO\nParis\tB-LOC\n.\tO\n\n"
                 "He\tO\nlikes\tO\naspirin\tB-DRUG\n\n")
    stats = corpus_statistics(Corpus.from_path(f), store)
    assert (stats.tokens, stats.sentences, stats.tagged_sentences) == (8, 2, 2)
    assert stats.entities == {"DRUG": 1, "LOC": 1, "PER": 1}
    assert stats.types == 8
    assert stats.name == "t"
    # counted when the corpus was tokenized, kept with its tokens: a second call reads the same record
    assert tokenize_corpus(Corpus.from_path(f), store).meta["counts"]["entities"] == stats.entities
    assert not (store.root / "stats").exists()
    assert corpus_statistics(Corpus.from_path(f), store) == stats


def test_a_corpus_tokenized_without_its_counts_is_counted_once_and_the_same(tmp_path, monkeypatch):
    """A store written before tokenizing counted (its tokens without counts): the statistics are counted
    on first asking, kept under "stats", and equal those counted when tokenizing."""
    from simcore.corpora import corpus as corpus_module
    from simcore.utils.store import ArtefactStore

    counted = ArtefactStore(tmp_path / "counted")
    older = ArtefactStore(tmp_path / "older")
    paths = [SAMPLE_DATA / "targets" / "med_forum_posts.conll",
             SAMPLE_DATA / "upload_example" / "med_forum_posts_sample.txt"]
    expected = [corpus_statistics(Corpus.from_path(p), counted) for p in paths]
    monkeypatch.setattr(corpus_module, "_counted", lambda corpus, out: {})
    for path, stats in zip(paths, expected):
        assert "counts" not in tokenize_corpus(Corpus.from_path(path), older).meta
        assert corpus_statistics(Corpus.from_path(path), older) == stats
    assert len(list((older.root / "stats").iterdir())) == 2
    # another number of top words than the tokenizing pass kept: counted here, the first 20 the same
    fewer = corpus_statistics(Corpus.from_path(paths[0]), counted, top=5)
    assert fewer.top_words == expected[0].top_words[:5]


def test_sample_target_entities_match_a_plain_count(store):
    path = SAMPLE_DATA / "targets" / "med_forum_posts.conll"
    starts: Counter[str] = Counter()
    previous = "O"
    for line in path.read_text(encoding="utf-8").splitlines():
        cols = line.split()
        tag = cols[-1] if cols and cols[0] != "-DOCSTART-" else "O"
        if tag.startswith("B-") or (tag.startswith("I-") and previous[2:] != tag[2:]):
            starts[tag[2:]] += 1
        previous = tag
    stats = corpus_statistics(Corpus.from_path(path), store)
    assert stats.entities == dict(starts)
    assert stats.tokens == tokenize_corpus(Corpus.from_path(path), store).n_tokens


def test_raw_text_statistics_match_the_tokenizer(store):
    path = SAMPLE_DATA / "upload_example" / "med_forum_posts_sample.txt"
    lines = [tokenize(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    stats = corpus_statistics(Corpus.from_path(path), store)
    assert stats.tokens == sum(len(t) for t in lines)
    assert stats.sentences == len(lines)
    assert stats.types == len({w for t in lines for w in t})
    assert stats.entities == {} and stats.tagged_sentences == 0


def test_preview_cuts_long_lines(tmp_path: Path):
    f = tmp_path / "long.txt"
    f.write_text("x" * 500 + "\nshort line\n")
    lines = preview(Corpus.from_path(f), n=5, width=50)
    assert len(lines) == 2 and len(lines[0]) == 50 and lines[0].endswith("…")
    assert lines[1] == "short line"


def test_the_corpus_page_says_the_tag_scheme_and_what_reading_the_tags_dropped(tmp_path, store):
    # IOB1 tags (entities opened by I-, B- between two persons) and a CoNLL line with a blank token, which
    # both readers skip: counted once.
    p = tmp_path / "iob1.conll"
    p.write_text("Peter\tI-PER\nAnna\tB-PER\n \tO\nin\tO\nParis\tI-LOC\n\n")
    notes = ReadNotes.from_dict(corpus_statistics(Corpus.from_path(p), store).read_notes)
    assert notes.facts == {"tag scheme": "IOB1 (read as IOB2)"}
    assert notes.reasons == {"the token is blank or invisible": 1, "IOB1 tags rewritten as IOB2": 1}
    assert (notes.skipped, notes.repaired) == (1, 1)


def test_tags_that_cannot_be_read_again_keep_the_tokens_and_are_counted_on_asking(tmp_path, monkeypatch):
    """Reading the tags a second time for the counts fails (a remote file gone meanwhile): the corpus is
    still tokenized, without counts; the statistics are counted when asked for, once the file reads."""
    from simcore.utils.store import ArtefactStore

    store = ArtefactStore(tmp_path / "store")
    path = SAMPLE_DATA / "targets" / "med_forum_posts.conll"

    def gone(self, notes=None):
        raise OSError(2, "No such file or directory", str(self.path))

    with monkeypatch.context() as patched:
        patched.setattr(Corpus, "tagged_sentences", gone)
        tokenized = tokenize_corpus(Corpus.from_path(path), store)
    assert tokenized.n_tokens > 0 and "counts" not in tokenized.meta
    stats = corpus_statistics(Corpus.from_path(path), store)
    assert stats.tagged_sentences > 0 and stats.tokens == tokenized.n_tokens
    assert len(list((store.root / "stats").iterdir())) == 1
