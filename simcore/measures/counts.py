"""Hashed n-gram counts, streamed: the basis of TVC, TVcC, TTR and JSD.

Each token type is hashed to 64 bits (BLAKE2b, stable across processes); an n-gram's key mixes
its tokens' hashes and carries the order n in its top two bits. A source's counts are a sorted
array of unique keys and an array of counts, built chunk by chunk, so memory grows with the number
of distinct n-grams, not with the corpus, and scoring a target is a binary search per target
n-gram: time in proportion to the target, not the source.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..corpora.corpus import TokenizedCorpus
from ..utils.store import ArtefactStore, digest

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_K = np.uint64(0x9E3779B97F4A7C15)
_ORDER_SHIFT = np.uint64(62)
_LOW_BITS = np.uint64((1 << 62) - 1)
_MERGE_AT = 20_000_000
NAMED_TOP = 2000


def token_hash(token: str) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")


class TokenHasher:
    """Hashes token strings to uint64, remembering the types it has seen."""

    def __init__(self) -> None:
        self._cache: dict[str, int] = {}

    def __call__(self, tokens: list[str]) -> np.ndarray:
        cache = self._cache
        for t in set(tokens).difference(cache):
            cache[t] = token_hash(t)
        return np.fromiter(map(cache.__getitem__, tokens), dtype=np.uint64, count=len(tokens))


def _mix(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * _M1
        x = (x ^ (x >> np.uint64(27))) * _M2
        return x ^ (x >> np.uint64(31))


def _combine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return _mix(a * _K + b)


def _tag(keys: np.ndarray, n: int) -> np.ndarray:
    return (keys & _LOW_BITS) | (np.uint64(n) << _ORDER_SHIFT)


def order_of(keys: np.ndarray) -> np.ndarray:
    return (keys >> _ORDER_SHIFT).astype(np.int8)


def ngram_keys(hashes: np.ndarray, lengths: np.ndarray, max_n: int) -> np.ndarray:
    """Keys of every 1..max_n-gram inside the sentences of a flat hash array."""
    return ngram_keys_by_sentence(hashes, lengths, max_n)[0]


def ngram_keys_by_sentence(hashes: np.ndarray, lengths: np.ndarray, max_n: int) -> tuple[np.ndarray, np.ndarray]:
    """Keys of every 1..max_n-gram inside the sentences, and the index of the sentence of each."""
    sentence = np.repeat(np.arange(len(lengths)), lengths)
    parts, owners = [_tag(hashes, 1)], [sentence]
    if max_n >= 2 and len(hashes) > 1:
        same = sentence[:-1] == sentence[1:]
        running = hashes.copy()
        valid = np.ones(len(hashes), dtype=bool)
        for n in range(2, max_n + 1):
            running = _combine(running[:-1], hashes[n - 1 :])
            valid = valid[:-1] & same[n - 2 :]
            parts.append(_tag(running[valid], n))
            owners.append(sentence[: len(valid)][valid])
            if len(running) <= 1:
                break
    return np.concatenate(parts), np.concatenate(owners)


def _ngram_strings(tokens: list[str], lengths: Iterable[int], max_n: int) -> Iterator[str]:
    """The n-grams in the same order as :func:`ngram_keys` produces their keys."""
    for n in range(1, max_n + 1):
        start = 0
        for length in lengths:
            for i in range(start, start + length - n + 1):
                yield " ".join(tokens[i : i + n])
            start += length


def _merge(keys: list[np.ndarray], counts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    all_keys = np.concatenate(keys)
    unique, inverse = np.unique(all_keys, return_inverse=True)
    return unique, np.bincount(inverse, weights=np.concatenate(counts), minlength=len(unique)).astype(np.int64)


@dataclass(frozen=True)
class NgramCounts:
    """Sorted unique n-gram keys with their counts, and per-order totals."""

    keys: np.ndarray
    counts: np.ndarray
    totals: dict[int, int]
    names: dict[int, str]

    @property
    def total(self) -> int:
        return sum(self.totals.values())

    def unigram_keys(self) -> np.ndarray:
        return self.keys[order_of(self.keys) == 1]

    def contains(self, keys: np.ndarray) -> np.ndarray:
        """Which of ``keys`` occur here (a binary search each)."""
        if len(self.keys) == 0:
            return np.zeros(len(keys), dtype=bool)
        pos = np.searchsorted(self.keys, keys)
        pos[pos >= len(self.keys)] = 0
        return self.keys[pos] == keys

    def lookup(self, keys: np.ndarray) -> np.ndarray:
        """Counts of ``keys`` (0 where absent)."""
        found = self.contains(keys)
        out = np.zeros(len(keys), dtype=np.int64)
        pos = np.searchsorted(self.keys, keys[found])
        out[found] = self.counts[pos]
        return out


def count_sentences(sentences: Iterable[list[str]], max_n: int, hasher: TokenHasher | None = None,
                    progress: Callable[[int], None] | None = None,
                    chunk_tokens: int = 1_000_000) -> NgramCounts:
    """Count 1..max_n-grams of token lists, in chunks (works for any size)."""
    hasher = hasher or TokenHasher()
    keys_acc: list[np.ndarray] = []
    counts_acc: list[np.ndarray] = []
    pending = 0
    totals = dict.fromkeys(range(1, max_n + 1), 0)
    first_chunk: tuple[list[str], list[int]] | None = None
    tokens: list[str] = []
    lengths: list[int] = []
    seen = 0

    def flush() -> None:
        nonlocal pending, keys_acc, counts_acc, first_chunk
        if not tokens:
            return
        if first_chunk is None:
            first_chunk = (list(tokens), list(lengths))
        keys = ngram_keys(hasher(tokens), np.asarray(lengths), max_n)
        orders, order_counts = np.unique(order_of(keys), return_counts=True)
        for o, c in zip(orders.tolist(), order_counts.tolist()):
            totals[o] += c
        unique, counts = np.unique(keys, return_counts=True)
        keys_acc.append(unique)
        counts_acc.append(counts)
        pending += len(unique)
        if pending > _MERGE_AT and len(keys_acc) > 1:
            merged = _merge(keys_acc, counts_acc)
            keys_acc, counts_acc = [merged[0]], [merged[1]]
            pending = len(merged[0])
        tokens.clear()
        lengths.clear()

    for sentence in sentences:
        tokens.extend(sentence)
        lengths.append(len(sentence))
        if len(tokens) >= chunk_tokens:
            seen += len(tokens)
            flush()
            if progress:
                progress(seen)
    flush()
    if not keys_acc:
        return NgramCounts(np.zeros(0, np.uint64), np.zeros(0, np.int64), totals, {})
    keys, counts = _merge(keys_acc, counts_acc) if len(keys_acc) > 1 else (keys_acc[0], counts_acc[0].astype(np.int64))
    names = _name_frequent(keys, counts, first_chunk, max_n, hasher)
    return NgramCounts(keys, counts, totals, names)


def _name_frequent(keys: np.ndarray, counts: np.ndarray, first_chunk: tuple[list[str], list[int]] | None,
                   max_n: int, hasher: TokenHasher) -> dict[int, str]:
    """Strings for the most frequent keys, found in the first chunk (for drill-downs)."""
    if first_chunk is None or len(keys) == 0:
        return {}
    top = set(keys[np.argsort(counts)[::-1][:NAMED_TOP]].tolist())
    tokens, lengths = first_chunk
    chunk_keys = ngram_keys(hasher(tokens), np.asarray(lengths), max_n)
    names: dict[int, str] = {}
    for key, text in zip(chunk_keys.tolist(), _ngram_strings(tokens, lengths, max_n)):
        if key in top and key not in names:
            names[key] = text
    return names


def ngram_names(sentences: list[list[str]], max_n: int) -> dict[int, str]:
    """Key → n-gram string for every n-gram of (small) token lists."""
    hasher = TokenHasher()
    flat = [t for s in sentences for t in s]
    lengths = [len(s) for s in sentences]
    keys = ngram_keys(hasher(flat), np.asarray(lengths, dtype=np.int64), max_n)
    return dict(zip(keys.tolist(), _ngram_strings(flat, lengths, max_n)))


def prepare_counts(sample: TokenizedCorpus, store: ArtefactStore, max_n: int,
                   progress: Callable[[str, float], None] | None = None) -> NgramCounts:
    """The stored n-gram counts of a (sub-)corpus, built on first use."""
    key = digest("counts", sample.fingerprint, max_n)

    def build(out: Path) -> dict[str, Any]:
        report = (lambda seen: progress(f"counting n-grams of {sample.name}", seen / sample.n_tokens)) if progress else None
        counts = count_sentences(sample.sentences(), max_n, progress=report)
        np.save(out / "keys.npy", counts.keys)
        np.save(out / "counts.npy", counts.counts)
        return {"totals": {str(k): v for k, v in counts.totals.items()},
                "names": {str(k): v for k, v in counts.names.items()}}

    path = store.build("counts", key, build)
    meta = store.meta(path)
    return NgramCounts(
        keys=np.load(path / "keys.npy", mmap_mode="r"),
        counts=np.load(path / "counts.npy", mmap_mode="r"),
        totals={int(k): v for k, v in meta["totals"].items()},
        names={int(k): v for k, v in meta["names"].items()},
    )


def unigram_keys_for(hashes: np.ndarray) -> np.ndarray:
    """The count keys of single tokens with these hashes."""
    return _tag(hashes, 1)
