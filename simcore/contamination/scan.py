"""Overlap of every source with every target, computed where the source is read, stored per fingerprint.

A source tokenized whole (a small one) is scanned in its stored tokens (what its one read wrote);
a large source is scanned inside its streaming pass (:func:`simcore.corpora.sampling.sample_source`
with the scanner watching every unit), so the source is read once. Only when that pass is already
remembered from an earlier run and a new target comes is the source read again, by the scanner
alone. Each (source, target) result is stored under both fingerprints, the n-gram and the
tokenizer options, like any other artefact: a second run reads it back.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..corpora.corpus import Corpus, unit_tokenizer
from ..corpora.sampling import remembered_pass, sample_source
from ..matrix.corpus_cache import STREAM_SIZES
from ..utils.errors import SimcoreError, StoreError
from ..utils.store import digest
from .ngrams import (
    MIN_CHARS_CUT,
    MIN_WORDS,
    OVERLAP_CHAR_NGRAM,
    OVERLAP_NGRAM,
    OVERLAP_VERSION,
    Scanner,
    TargetIndex,
    target_sentences,
)

Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class OverlapOptions:
    """The n-gram of the overlap: words, or characters for a target cut into characters."""

    ngram: int = OVERLAP_NGRAM
    char_ngram: int = OVERLAP_CHAR_NGRAM

    def n_for(self, chars: bool) -> tuple[int, int]:
        return (self.char_ngram, MIN_CHARS_CUT) if chars else (self.ngram, MIN_WORDS)


@dataclass(frozen=True)
class Overlap:
    """One (source, target) pair: the shares of target sentences the source holds."""

    overlap_test: float  # NaN when the target has no test split
    overlap_all: float
    test_held: int
    held: int
    test_sentences: int
    sentences: int
    n: int
    unit: str  # "words" or "characters"

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def target_index(cache: Any, target: Corpus, options: OverlapOptions) -> TargetIndex:
    """A target's n-gram hashes (kept in memory per target and options)."""
    chars = cache.tokenizer.chars
    n, min_words = options.n_for(chars)
    memo = cache.__dict__.setdefault("_overlap_indexes", {})
    key = (target.name, cache.raw_key(target), n, min_words, chars)
    if key not in memo:
        memo[key] = TargetIndex.build(target.name, target_sentences(target, cache.tokenizer), n, min_words)
    return memo[key]


def _key(source_fingerprint: str, target_fingerprint: str, index: TargetIndex, cache: Any) -> str:
    return digest("overlap", OVERLAP_VERSION, source_fingerprint, target_fingerprint, index.n, index.min_words,
                  cache.tokenizer.as_dict())


def _result(index: TargetIndex, hits: set[int], chars: bool) -> Overlap:
    test, share, test_held, held = index.shares(hits)
    return Overlap(test, share, test_held, held, sum(index.is_test), len(index.is_test), index.n,
                   "characters" if chars else "words")


def source_overlaps(cache: Any, source: Corpus, targets: Sequence[Corpus], options: OverlapOptions = OverlapOptions(),
                    progress: Progress = lambda m, f: None, samples: int = 1) -> dict[str, Overlap]:
    """Overlap of ``source`` with each readable target (by name); stored, read back when stored.
    ``samples``: the sample count of the matrix, so a large source's pass here is the one it remembers."""
    chars = cache.tokenizer.chars
    indexes: dict[str, TargetIndex] = {}
    target_prints: dict[str, str] = {}
    for t in targets:
        try:
            indexes[t.name] = target_index(cache, t, options)
            target_prints[t.name] = cache.tokenize(t).fingerprint
        except StoreError:
            raise
        except SimcoreError:
            continue  # the target's own cells say why
    if not indexes:
        return {}
    streams = cache.streams(source)
    if streams:
        remembered = remembered_pass(source, STREAM_SIZES, samples, cache.options.seed, cache.store, cache.tokenizer)
        fingerprint = remembered.fingerprint if remembered is not None else None
    else:
        fingerprint = cache.tokenize(source, progress).fingerprint
    out: dict[str, Overlap] = {}
    missing = []
    for name, index in indexes.items():
        record = (cache.store.get_json("overlap", _key(fingerprint, target_prints[name], index, cache))
                  if fingerprint else None)
        if record is not None:
            out[name] = Overlap(**{**record, "overlap_test": _num(record["overlap_test"]),
                                   "overlap_all": _num(record["overlap_all"])})
        else:
            missing.append(name)
    if not missing:
        return out
    scanner = Scanner([indexes[m] for m in missing],
                      unit_tokenizer(source.segmenter(), cache.tokenizer) if streams else str.split)
    progress(f"overlap of {source.name} with {', '.join(missing)}", 0.0)
    if streams and fingerprint is None:  # the pass that samples the source, with the scanner watching
        fingerprint = sample_source(source, STREAM_SIZES, samples, cache.options.seed, cache.store, cache.tokenizer,
                                    progress, watch=scanner.watch).fingerprint
    elif streams:  # the pass was remembered before these targets came: the scanner reads on its own
        for _unit in scanner.watch(source.units(progress)):
            pass
    else:
        with open(cache.tokenize(source).tokens_file, encoding="utf-8") as lines:
            for _ in scanner.watch(line.rstrip("\n") for line in lines):
                pass
    hits = scanner.result()
    for name in missing:
        result = _result(indexes[name], hits, chars)
        cache.store.put_json("overlap", _key(fingerprint, target_prints[name], indexes[name], cache),
                             {**result.as_dict(), "overlap_test": _json(result.overlap_test),
                              "overlap_all": _json(result.overlap_all)})
        out[name] = result
    return out


def _json(value: float) -> float | None:
    return None if math.isnan(value) else value


def _num(value: Any) -> float:
    return math.nan if value is None else float(value)
