"""Contamination: which target sentences a source already holds (n-gram overlap).

A target sentence *overlaps* a source when one unit of the source (a line, a record, a document)
holds one of the sentence's n-grams of words (13 by default, as GPT-3's contamination report and
datatrove's decontamination filter count), or, for a sentence shorter than n words, the whole
sentence as a contiguous run of words (from 8 words on: shorter ones, "eastern conference", are in
any news corpus). Both sides go through the tokenizer's own normalisation
(the corpus's segmenter, lower-casing); then tokens without a letter or digit (punctuation) are
left out, so near-duplicates differing only in case, punctuation or spacing still match. For a
target cut into characters (Chinese, Japanese NER sets) the units are characters, n = 25.

Target side (small): every n-gram is hashed exactly (64-bit BLAKE2b of its words) into a Python
set, about 100 bytes a hash: a 1M-token target costs some tens of MB. Source side (any size): a
unit is first tested cheaply, in C and numpy, for a window of 32 letters and digits (:data:`ANCHOR_LENGTHS`)
that starts one of the target's n-grams (a necessary condition: tokenizing never adds or drops a
letter); only units that pass are tokenized and their n-grams hashed exactly. The 64-bit hashes
can collide: with T target n-grams and S source n-grams tested, about S*T/2^64 false matches are
expected (1e-4 for 10^9 source tokens against 10^6 target n-grams). Memory is that of the target
set and one batch of units, whatever the source's size.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import InvalidArgument

OVERLAP_NGRAM = 13       # words (GPT-3's report, datatrove)
OVERLAP_CHAR_NGRAM = 25  # characters, for a target cut into characters (DESIGN.md: 20-50)
MIN_WORDS = 8            # a sentence shorter than n words counts (held whole) only from this many words
MIN_CHARS_CUT = 8        # ... from this many characters for a target cut into characters (Han, kana)
ANCHOR_LENGTHS = (8, 16, 32)  # letters and digits of the cheap test's windows: few lengths, few passes
BATCH_UNITS = 4096       # units tested at once
OVERLAP_VERSION = 1
_P = np.uint64(0x9E3779B97F4A7C15)  # odd multiplier of the rolling hash
_RUN = re.compile(r"\w+")
_NOT_WORD = re.compile(r"[^\w\n]+")
_ASCII_NOT_WORD = bytes(b for b in range(128) if not (chr(b).isalnum() or chr(b) in "_\n"))
_OTHER_NOT_WORD = re.compile(r"[^\x00-\x7f\w]+")


def words_of(tokens: Sequence[str]) -> list[str]:
    """The words of the n-grams: each token's runs of letters and digits ("u.s." -> u, s; "40,000-35,000" ->
    40, 000, 35, 000), so punctuation, and where a tokenizer cut between letters and marks, do not count."""
    out: list[str] = []
    for t in tokens:
        out.extend(_RUN.findall(t))
    return out


def gram_hash(words: Sequence[str]) -> int:
    """Exact 64-bit hash of a run of words (the same in every process, unlike ``hash``)."""
    data = "\x1f".join(words).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")


def squeeze(text: str) -> str:
    """Letters and digits only (line breaks kept)."""
    return _NOT_WORD.sub("", text)


def squeezed_bytes(text: str) -> bytes:
    """UTF-8 of :func:`squeeze` (what the cheap test compares), fast: the rare non-ASCII marks by a
    regular expression, the ASCII ones deleted from the bytes in one C call."""
    if not text.isascii():
        text = _OTHER_NOT_WORD.sub("", text)
    return text.encode("utf-8", "surrogatepass").translate(None, _ASCII_NOT_WORD)


_PINV = np.uint64(pow(int(_P), -1, 1 << 64))
TABLE_BITS = 24  # the first test's tables of bits: at most 2^24 bits (2 MB) each
_powers: dict[str, np.ndarray] = {}


def _power_table(count: int) -> tuple[np.ndarray, np.ndarray]:
    """P^i and P^-i (mod 2^64) for i < count, grown on demand and kept."""
    if len(_powers.get("up", ())) < count:
        size = max(count, 2 * len(_powers.get("up", ())), 1 << 16)
        with np.errstate(over="ignore"):
            _powers["up"] = np.cumprod(np.concatenate([[np.uint64(1)], np.full(size - 1, _P)]), dtype=np.uint64)
            _powers["down"] = np.cumprod(np.concatenate([[np.uint64(1)], np.full(size - 1, _PINV)]),
                                         dtype=np.uint64)
    return _powers["up"][:count], _powers["down"][:count]


def _prefix(codes: np.ndarray) -> np.ndarray:
    """H[t] = sum of codes[u] * P^u for u < t (mod 2^64): any window's hash in three operations."""
    up, _ = _power_table(len(codes))
    with np.errstate(over="ignore"):
        return np.concatenate([[np.uint64(0)], np.cumsum(codes * up, dtype=np.uint64)])


def _windows(prefix: np.ndarray, length: int) -> np.ndarray:
    """The hash sum of codes[i + j] * P^j (j < length) of every window of ``length`` code points."""
    count = len(prefix) - length
    if count <= 0:
        return np.zeros(0, dtype=np.uint64)
    _, down = _power_table(count)
    with np.errstate(over="ignore"):
        return (prefix[length:] - prefix[:count]) * down


def anchor_hash(data: bytes) -> int:
    """The window hash of whole bytes (what :func:`_windows` gives for a window holding them)."""
    return int(_windows(_prefix(_codes(data)), len(data))[0])


def anchor_hashes(anchors: Sequence[bytes], length: int) -> np.ndarray:
    """:func:`anchor_hash` of many anchors of one ``length`` at once (the same numbers: the same sum
    of code * P^j, wrapping modulo 2^64 as numpy's uint64 does), sorted; a Scanner for a new target
    built them one call each, about 1 s of CPU per source for a 100k-token target."""
    if not anchors:
        return np.zeros(0, dtype=np.uint64)
    codes = np.frombuffer(b"".join(anchors), dtype=np.uint8).astype(np.uint64)
    codes = codes.reshape(len(anchors), length)
    up, _ = _power_table(length)
    with np.errstate(over="ignore"):
        return np.unique(np.sum(codes * up, axis=1, dtype=np.uint64))


_ASCII_KEEP = np.array([chr(b).isalnum() or chr(b) in "_\n" for b in range(128)] + [True] * 128)


def squeezed_array(text: str) -> np.ndarray:
    """:func:`squeezed_bytes` as an array of bytes, in numpy: ASCII marks dropped by a table, and the
    non-ASCII characters that are not letters or digits (’ “ — £ ...) found among the distinct ones."""
    data = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    keep = _ASCII_KEEP[data]
    high = np.flatnonzero(data >= 0x80)
    if len(high):
        starts = high[data[high] >= 0xC0]  # the first byte of each non-ASCII character
        # the character's bytes, read from its start (at most 4), as one number per character
        count = np.where(data[starts] >= 0xF0, 4, np.where(data[starts] >= 0xE0, 3, 2))
        padded = np.concatenate([data, np.zeros(4, dtype=np.uint8)]).astype(np.uint32)
        value = padded[starts]
        for k in (1, 2, 3):
            value = np.where(count > k, (value << 8) | padded[starts + k], value)
        distinct, which = np.unique(value, return_inverse=True)
        word = np.array([bytes(int(v).to_bytes(4, "big").lstrip(b"\0")).decode("utf-8", "replace")
                         .isalnum() for v in distinct], dtype=bool)
        dropped = ~word[which]
        if dropped.any():
            bad_starts, bad_counts = starts[dropped], count[dropped]
            for k in range(4):
                at = bad_starts[bad_counts > k] + k
                keep[at] = False
    return data[keep]


def _anchor(words: Sequence[str]) -> bytes:
    """What the cheap test looks for from a run of words: a piece of the UTF-8 bytes of its letters and
    digits, as long as the longest of ANCHOR_LENGTHS it has (an n-gram of 8 words has 8 at least). Any
    piece will do (a unit holding the run holds each of its pieces); a short one is taken from the
    middle, less often a common start ("thecompa")."""
    data = squeezed_bytes("".join(words).lower())
    fits = [n for n in ANCHOR_LENGTHS if n <= len(data)]
    if not fits:
        return data
    start = 0 if fits[-1] == ANCHOR_LENGTHS[-1] else (len(data) - fits[-1]) // 2
    return data[start:start + fits[-1]]


def _codes(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=np.uint8).astype(np.uint64)


@dataclass
class TargetIndex:
    """A target's sentences as hashes: each sentence's n-grams (or, when shorter, itself)."""

    name: str
    n: int
    min_words: int
    sentence_keys: list[tuple[int, ...]] = field(default_factory=list)
    is_test: list[bool] = field(default_factory=list)
    keys: set[int] = field(default_factory=set)
    short_lengths: set[int] = field(default_factory=set)  # word counts of sentences shorter than n
    anchors: set[bytes] = field(default_factory=set)  # their first letters and digits (see _anchor)

    @classmethod
    def build(cls, name: str, sentences: Iterable[tuple[Sequence[str], bool]], n: int = OVERLAP_NGRAM,
              min_words: int = MIN_WORDS) -> TargetIndex:
        """From (normalised tokens, is it a test sentence) pairs. A sentence of fewer than ``min_words``
        words is never counted ("eastern conference", "world cup standings" are in any news corpus)."""
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 200:
            raise InvalidArgument(f"the overlap n-gram must be a whole number from 1 to 200, not {n!r}"[:200])
        index = cls(name, n, min_words)
        for tokens, test in sentences:
            words = words_of(tokens)
            keys: list[int] = []
            if len(words) >= n:
                for i in range(len(words) - n + 1):
                    gram = words[i:i + n]
                    keys.append(gram_hash(gram))
                    index.anchors.add(_anchor(gram))
            elif len(words) >= min(min_words, n):
                keys.append(gram_hash(words))
                index.short_lengths.add(len(words))
                index.anchors.add(_anchor(words))
            unique = tuple(dict.fromkeys(keys))
            index.sentence_keys.append(unique)
            index.is_test.append(bool(test))
            index.keys.update(unique)
        return index

    @property
    def has_test(self) -> bool:
        return any(self.is_test)

    def shares(self, hits: set[int]) -> tuple[float, float, int, int]:
        """(overlap_test, overlap_all, test sentences held, sentences held) for the hashes a source holds;
        overlap_test is NaN when the target has no test split."""
        held = [any(k in hits for k in keys) for keys in self.sentence_keys]
        tests = [h for h, t in zip(held, self.is_test) if t]
        test_share = sum(tests) / len(tests) if tests else float("nan")
        all_share = sum(held) / len(held) if held else float("nan")
        return test_share, all_share, sum(tests), sum(held)

    def held(self, hits: set[int]) -> list[bool]:
        return [any(k in hits for k in keys) for keys in self.sentence_keys]


class Scanner:
    """Tests a source's units against several targets' indexes at once; ``hits`` collects the target
    hashes the source holds. Units are raw text (tokenized with ``tokens_of`` only when the cheap
    test passes) or token lists."""

    def __init__(self, indexes: Sequence[TargetIndex], tokens_of: Callable[[Any], list[str]]) -> None:
        self.indexes = list(indexes)
        self.tokens_of = tokens_of
        self.keys: set[int] = set().union(*(i.keys for i in self.indexes)) if self.indexes else set()
        self.ns = sorted({i.n for i in self.indexes})
        self.short = sorted(set().union(*(i.short_lengths for i in self.indexes))) if self.indexes else []
        anchors = set().union(*(i.anchors for i in self.indexes)) if self.indexes else set()
        # anchors of each length (see _anchor)
        by_length: dict[int, list[bytes]] = {}
        for a in anchors:
            if a:
                by_length.setdefault(len(a), []).append(a)
        self.anchor_hashes = {n: anchor_hashes(found, n) for n, found in sorted(by_length.items())}
        # per length, a table of bits indexed by a hash's top bits, about 32 bits an anchor (1 in 32 full),
        # small enough to stay in the processor's cache (2 MB for 500,000 anchors)
        self.tables: dict[int, tuple[np.ndarray, np.uint64]] = {}
        for length, hashes in self.anchor_hashes.items():
            bits = max(10, min(TABLE_BITS, int(np.ceil(np.log2(32 * len(hashes))))))
            table = np.zeros(1 << (bits - 3), dtype=np.uint8)
            slot = hashes >> np.uint64(64 - bits)
            np.bitwise_or.at(table, (slot >> np.uint64(3)).astype(np.int64),
                             (np.uint8(1) << (slot & np.uint64(7)).astype(np.uint8)))
            self.tables[length] = (table, np.uint64(64 - bits))
        self.hits: set[int] = set()
        self.units = 0
        self.tested = 0  # units that passed the cheap test and were tokenized
        self._batch: list[Any] = []

    def add(self, unit: Any) -> None:
        self._batch.append(unit)
        if len(self._batch) >= BATCH_UNITS:
            self.flush()

    def watch(self, units: Iterable[Any]) -> Iterator[Any]:
        """``units`` passed through unchanged, each one tested on the way (the pass's own read)."""
        batch = self._batch
        for unit in units:
            batch.append(unit)
            if len(batch) >= BATCH_UNITS:
                self.flush()
                batch = self._batch
            yield unit
        self.flush()

    def flush(self) -> None:
        batch, self._batch = self._batch, []
        if not batch or not self.keys:
            self.units += len(batch)
            return
        self.units += len(batch)
        for i in self.candidates(batch):
            self.tested += 1
            self.check(self.tokens_of(batch[i]))

    def candidates(self, batch: list[Any]) -> list[int]:
        """Positions in ``batch`` of the units holding a window that starts one of the targets' n-grams."""
        texts = [u if isinstance(u, str) else "".join(u) for u in batch]
        joined = "\n".join(texts)
        if joined.count("\n") != len(texts) - 1:  # a unit holding a line break (a JSONL text): made a space
            joined = "\n".join(t.replace("\n", " ") for t in texts)
        codes = squeezed_array(joined.lower()).astype(np.uint64)
        prefix = _prefix(codes)
        starts = []
        for length, wanted in self.anchor_hashes.items():
            h = _windows(prefix, length)
            table, shift = self.tables[length]
            slot = h >> shift
            maybe = np.flatnonzero(table[slot >> np.uint64(3)] & (np.uint8(1) << (slot & np.uint64(7)).astype(np.uint8)))
            if not len(maybe):
                continue
            at = np.searchsorted(wanted, h[maybe])
            at[at == len(wanted)] = 0
            starts.append(maybe[wanted[at] == h[maybe]])
        found = np.concatenate(starts) if starts else np.zeros(0, dtype=np.int64)
        if not len(found):
            return []
        breaks = np.flatnonzero(codes == 10)  # the line breaks between units
        return sorted(set(np.searchsorted(breaks, found).tolist()))

    def check(self, tokens: Sequence[str]) -> None:
        """Exact test of one unit's tokens: every n-gram and every run of a short sentence's length."""
        words = words_of(tokens)
        keys, hits = self.keys, self.hits
        for n in (*self.ns, *self.short):
            for i in range(len(words) - n + 1):
                h = gram_hash(words[i:i + n])
                if h in keys:
                    hits.add(h)

    def result(self) -> set[int]:
        self.flush()
        return self.hits


def target_sentences(corpus: Any, options: Any) -> list[tuple[list[str], bool]]:
    """A target's normalised sentences, each with whether it belongs to the test split: sentences
    of a file whose name (or folder) says ``test``."""
    from .corpora.corpus import part_corpus

    out: list[tuple[list[str], bool]] = []
    root = corpus.path
    for f in corpus.files:
        try:
            relative = str(f.relative_to(root)) if hasattr(f, "relative_to") and f != root else f.name
        except ValueError:
            relative = f.name
        test = is_test_name(relative)
        for tokens in part_corpus(corpus, f).token_units(options):
            out.append((tokens, test))
    return out


def is_test_name(relative: str) -> bool:
    """Whether a target file's path names the test split (test.conll, eng.testb, data/test/x.txt)."""
    parts = re.split(r"[\\/._\-]+", relative.lower())
    return any(p.startswith("test") for p in parts)


