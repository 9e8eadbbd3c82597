"""Per-corpus statistics for the dashboard's Corpora page: size, vocabulary, sentence lengths, entities.

Statistics are computed from the tokenized corpus (the same tokens every measure sees): counted by
the pass that tokenizes it (:func:`.corpus.tokenize_corpus`), or else counted here and kept in the
artefact store per corpus fingerprint, so a corpus is counted once whatever asks for it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from itertools import islice
from typing import Any

from ..utils.store import ArtefactStore, digest
from .corpus import Corpus, TokenizedCorpus, tokenize_corpus
from .corpus_counts import COUNTS_VERSION, TOP_WORDS, corpus_counts
from .notes import ReadNotes
from .tokenize import TokenizerOptions


@dataclass
class CorpusStats:
    """What the Corpora page shows about one corpus."""

    name: str
    tokens: int
    types: int
    ttr: float
    sentences: int
    mean_length: float
    median_length: float
    max_length: int
    # Sentence-length histogram: counts of sentences whose length falls in [edges[i], edges[i+1]).
    length_edges: list[int] = field(default_factory=list)
    length_counts: list[int] = field(default_factory=list)
    top_words: list[tuple[str, int]] = field(default_factory=list)
    # Entity mentions per type, for CoNLL/BIO input (empty for raw text).
    entities: dict[str, int] = field(default_factory=dict)
    tagged_sentences: int = 0
    # Lines the reader skipped or repaired (real-data quirks), with the first few of them.
    read_notes: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> CorpusStats:
        values = dict(values)
        values["top_words"] = [tuple(w) for w in values.get("top_words", [])]
        return cls(**values)


def corpus_statistics(corpus: Corpus, store: ArtefactStore, options: TokenizerOptions = TokenizerOptions(),
                      top: int = TOP_WORDS) -> CorpusStats:
    """Statistics of a corpus: counted when it was tokenized, else counted once per corpus
    fingerprint and kept in the store."""
    tokenized = tokenize_corpus(corpus, store, options)
    record = counted_when_tokenized(tokenized) if top == TOP_WORDS else None
    if record is None:
        key = digest("stats", COUNTS_VERSION, corpus.raw_fingerprint(options), top)
        record = store.get_json("stats", key)
        if record is None:
            record = corpus_counts(tokenized.tokens_file, corpus.tagged_sentences, top)
            store.put_json("stats", key, record)
    record = dict(record)
    notes = with_tag_notes(tokenized.read_notes, ReadNotes.from_dict(record.pop("tag_notes", None)))
    return CorpusStats.from_dict({"name": corpus.name, **record, "read_notes": notes.as_dict()})


def counted_when_tokenized(tokenized: TokenizedCorpus) -> dict[str, Any] | None:
    """The counts the tokenizing pass kept with the tokens (:data:`TOP_WORDS` most frequent words), if
    it kept them and counted as this version counts."""
    counted = tokenized.meta.get("counts")
    if not isinstance(counted, dict) or counted.get("version") != COUNTS_VERSION:
        return None
    return {k: v for k, v in counted.items() if k != "version"}


def with_tag_notes(notes: ReadNotes, tags: ReadNotes) -> ReadNotes:
    """The tokenizer's notes plus what only reading the tags found (the tag scheme, null tags and rows),
    without counting twice a line both readers skipped."""
    for key, value in tags.facts.items():
        for part in value.split(", "):
            notes.fact(key, part)
    for reason, count in tags.reasons.items():
        if reason not in notes.reasons:
            kind = "repaired" if "rewritten" in reason or "read as O" in reason else "skipped"
            example = next((e for e in tags.examples if reason.split()[0] in e), f"tags: {reason}")
            notes.note(kind, example, reason, count)
    return notes


def preview(corpus: Corpus, n: int = 10, width: int = 300) -> list[str]:
    """The first ``n`` units of a corpus as text (tokens joined by spaces), each cut to ``width`` characters."""
    out = []
    for unit in islice(corpus.units(), n):
        text = unit.strip() if isinstance(unit, str) else " ".join(unit)
        out.append(text if len(text) <= width else text[: width - 1] + "…")
    return out
