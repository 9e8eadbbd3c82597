"""Per-corpus statistics for the dashboard's Corpora page: size, vocabulary, sentence lengths, entities.

Statistics are computed from the tokenized corpus (the same tokens every measure sees) and kept in
the artefact store per corpus fingerprint, so a corpus is counted once whatever asks for it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from itertools import islice
from typing import Any

import numpy as np

from ..utils.store import ArtefactStore, digest
from .corpus import Corpus, tokenize_corpus
from .notes import ReadNotes
from .tokenize import TokenizerOptions

STATS_VERSION = 3  # 3: the notes of reading the tags (scheme, null rows) kept
_PUNCT = re.compile(r"^[^\w]+$")


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


def length_histogram(lengths: np.ndarray, max_bins: int = 30,
                     clip_quantile: float | None = None) -> tuple[list[int], list[int]]:
    """Integer bin edges (width ≥ 1) and counts covering 1..max(lengths).

    With ``clip_quantile`` (e.g. 0.99) the equal-width bins stop at that quantile and one last, wider
    bin holds the long tail up to the maximum, so that a few very long lines do not squash the rest.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.size == 0:
        return [], []
    longest = int(lengths.max())
    top = longest
    if clip_quantile is not None:
        top = min(longest, max(1, int(np.ceil(np.quantile(lengths, clip_quantile)))))
    width = max(1, int(np.ceil(top / max_bins)))
    edges = list(range(1, top + width + 1, width))
    if edges[-1] <= longest:
        edges.append(longest + 1)
    counts, _ = np.histogram(lengths, bins=edges)
    return edges, [int(c) for c in counts]


def sentence_stats(sentences: Iterable[list[str]], top: int = 20) -> dict[str, Any]:
    """Tokens, types, TTR, sentence lengths and the most frequent words of tokenized sentences."""
    freq: Counter[str] = Counter()
    lengths: list[int] = []
    for sentence in sentences:
        if sentence:
            freq.update(sentence)
            lengths.append(len(sentence))
    array = np.asarray(lengths, dtype=np.int64)
    tokens = int(array.sum())
    edges, counts = length_histogram(array, clip_quantile=0.99)
    words = [(w, c) for w, c in sorted(freq.items(), key=lambda x: (-x[1], x[0])) if not _PUNCT.match(w)]
    return {
        "tokens": tokens,
        "types": len(freq),
        "ttr": len(freq) / tokens if tokens else float("nan"),
        "sentences": len(lengths),
        "mean_length": float(array.mean()) if lengths else float("nan"),
        "median_length": float(np.median(array)) if lengths else float("nan"),
        "max_length": int(array.max()) if lengths else 0,
        "length_edges": edges,
        "length_counts": counts,
        "top_words": words[:top],
    }


def entity_spans(tags: list[str]) -> Iterator[str]:
    """The type of each entity mention in one sentence's tags (BIO, IOB1, BIOES/BILOU)."""
    previous = "O"
    for tag in tags:
        if tag == "O" or not tag:
            previous = "O"
            continue
        prefix, _, kind = tag.partition("-")
        if not kind:  # a bare "B"/"I" tag without a type
            prefix, kind = tag, "ENTITY"
        prefix = prefix.upper()
        prev_kind = previous.partition("-")[2] or ("ENTITY" if previous != "O" else "")
        prev_prefix = previous.partition("-")[0].upper()
        starts = prefix in ("B", "S", "U") or prev_kind != kind or prev_prefix in ("E", "L", "S", "U")
        if starts:
            yield kind
        previous = tag


def entity_counts(tagged: Iterable[tuple[list[str], list[str]]]) -> tuple[dict[str, int], int]:
    """(mentions per entity type, most frequent first; number of tagged sentences)."""
    counts: Counter[str] = Counter()
    n = 0
    for _, tags in tagged:
        n += 1
        counts.update(entity_spans(tags))
    return dict(sorted(counts.items(), key=lambda x: (-x[1], x[0]))), n


def corpus_statistics(corpus: Corpus, store: ArtefactStore, options: TokenizerOptions = TokenizerOptions(),
                      top: int = 20) -> CorpusStats:
    """Statistics of a corpus, computed once per corpus fingerprint and kept in the store."""
    tokenized = tokenize_corpus(corpus, store, options)
    key = digest("stats", STATS_VERSION, corpus.raw_fingerprint(options), top)
    record = store.get_json("stats", key)
    if record is None:
        values = sentence_stats(tokenized.sentences(), top)
        tag_notes = ReadNotes()
        entities, tagged = entity_counts(corpus.tagged_sentences(tag_notes))
        record = {**values, "entities": entities, "tagged_sentences": tagged, "tag_notes": tag_notes.as_dict()}
        store.put_json("stats", key, record)
    record = dict(record)
    notes = with_tag_notes(tokenized.read_notes, ReadNotes.from_dict(record.pop("tag_notes", None)))
    return CorpusStats.from_dict({"name": corpus.name, **record, "read_notes": notes.as_dict()})


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
