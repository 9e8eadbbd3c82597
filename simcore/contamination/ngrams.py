"""Contamination: which target sentences a source already holds (n-gram overlap).

A target sentence *overlaps* a source when one unit of the source (a line, a record, a document)
holds one of the sentence's n-grams of words (13 by default, as GPT-3's contamination report and
datatrove's decontamination filter count), or, for a sentence shorter than n words, the whole
sentence as a contiguous run of words (from 8 words on: shorter ones, "eastern conference", are in
any news corpus). Both sides go through the tokenizer's own normalisation (the corpus's segmenter,
lower-casing); the n-gram's words are the runs of letters and digits inside the tokens, so
near-duplicates differing only in case, punctuation or spacing still match. For a target cut into
characters (Chinese, Japanese NER sets) the units are characters, n = 25.

Exact test: a run of words is keyed by 64 bits, the sum of each word's 64-bit BLAKE2b (computed once
per distinct word) times a constant of its place, plus a constant of the run's length
(:func:`gram_hash`); a source unit's runs are keyed in numpy, all at once. Two different runs share
a key with chance about 2^-64, so with T target n-grams and S source n-grams tested about S*T/2^64
false matches are expected (1e-4 for 10^9 source tokens against 10^6 target n-grams).

Cheap test, first, on every unit: its letters and digits, lower-cased, as UTF-8 bytes (:func:`fold`),
read 8 bytes at a time at the multiples of 8 (aligned 64-bit words, a few numpy operations per 8
bytes). Wherever a target n-gram's letters sit in a unit, one of those reads starts in its first 8
bytes, so every window of its letters that starts in its first 8 bytes, as long as the n-gram allows
(up to 48 bytes), is an anchor; a unit is tokenized and keyed exactly only when one of its 8-byte
aligned windows hashes like an anchor (two tables of bits, then the sorted anchors), and, for a run
of 15 to 22 bytes whose anchor is 8 bytes, only when the whole run is around it. An n-gram of
7 to 14 bytes of letters (tables of scores) is found by 4-byte reads at the multiples of 4, then its
first 7 bytes; one of fewer than 7 bytes (an n-gram of 1 to 6 short words) sends every unit to the
exact test. The cheap test is a necessary condition (tokenizing never adds or drops a letter), so it
never loses an overlap. Memory: the target's keys and anchors and one batch of units, whatever the
source's size.

The cheap test runs compiled where the C extension :mod:`simcore.contamination.kernel` (kernel.c,
built by ``pip install -e .``) imports: one loop over a batch folds each unit's ASCII characters a
byte at a time (runs of other characters through :func:`fold_run`, token lists through
:func:`fold_unit`), makes the same reads against the same tables (their flags packed 8 to a byte,
2 MB a table, so they stay in the processor's cache) and returns the same units as the numpy path,
which runs where the extension is missing (:func:`scan_path` says which). When watching a pass, the
units that pass are keyed :data:`CHECK_UNITS` at a time.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..utils.errors import InvalidArgument

try:  # the cheap test compiled (kernel.c, built by `pip install -e .`); else the same test in numpy
    from . import kernel as compiled
except ImportError:  # pragma: no cover - a machine where the extension was not built
    compiled = None

OVERLAP_NGRAM = 13       # words (GPT-3's report, datatrove)
OVERLAP_CHAR_NGRAM = 25  # characters, for a target cut into characters (DESIGN.md: 20-50)
MIN_WORDS = 8            # a sentence shorter than n words counts (held whole) only from this many words
MIN_CHARS_CUT = 8        # ... from this many characters for a target cut into characters (Han, kana)
MAX_NGRAM = 200
BATCH_UNITS = 4096       # units tested at once
CHECK_UNITS = 1024       # units that passed the cheap test keyed exactly at once (when watching)
OVERLAP_VERSION = 1
GRID = 8                 # the cheap test reads a unit's letters 8 bytes at a time, at multiples of 8
ANCHOR_MAX = 48          # bytes of the longest window it compares
SHORT_MIN = 7            # bytes of letters from which an n-gram has an anchor (else every unit is keyed)
TABLE_BITS = 24          # each table of flags has at most 2^24 entries (16 MB)
_MASK = (1 << 64) - 1
_RUN = re.compile(r"\w+")
_OTHER_NOT_WORD = re.compile(r"[^\x00-\x7f\w]+")
_NOT_WORD = re.compile(r"\W+")
_DROP = bytes(b for b in range(128) if not (chr(b).isalnum() or chr(b) in "_\n"))
_LOWER = bytes.maketrans(bytes(range(65, 91)), bytes(range(97, 123)))
_MIX32 = np.uint32(0x9E3779B1)
_SEVEN = np.uint64((1 << 56) - 1)  # the first 7 bytes of a little-endian 8-byte read
_MIX64 = np.uint64(0xD6E8FEB86659FD93)


def _constants(label: bytes, count: int) -> np.ndarray:
    """``count`` fixed odd 64-bit constants (the same in every process and version of Python)."""
    return np.array([int.from_bytes(hashlib.blake2b(label + i.to_bytes(4, "big"), digest_size=8).digest(),
                                    "big") | 1 for i in range(count)], dtype=np.uint64)


_PLACE = _constants(b"simcore-overlap-place", MAX_NGRAM)  # a word's constant by its place in the run
_LENGTH = _constants(b"simcore-overlap-length", MAX_NGRAM + 1)  # a run's constant by its length
_GRID_WORD = _constants(b"simcore-overlap-grid", ANCHOR_MAX // GRID)  # an 8-byte read's by its place


def words_of(tokens: Sequence[str]) -> list[str]:
    """The words of the n-grams: each token's runs of letters and digits ("u.s." -> u, s; "40,000-35,000" ->
    40, 000, 35, 000), so punctuation, and where a tokenizer cut between letters and marks, do not count."""
    return _RUN.findall("\0".join(tokens))  # a NUL is no letter: no run crosses two tokens


def word_key(word: str) -> int:
    """A word's 64-bit BLAKE2b (the same in every process, unlike ``hash``)."""
    return int.from_bytes(hashlib.blake2b(word.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


def gram_hash(words: Sequence[str]) -> int:
    """The 64-bit key of a run of words, one word at a time in Python (what :class:`Scanner` computes
    for every run at once in numpy): the sum of each word's key times its place's constant, plus the
    run length's constant, modulo 2^64."""
    if not 1 <= len(words) <= MAX_NGRAM:
        raise InvalidArgument(f"a run of 1 to {MAX_NGRAM} words, not {len(words)}")
    total = int(_LENGTH[len(words)])
    for place, word in enumerate(words):
        total += word_key(word) * int(_PLACE[place])
    return total & _MASK


def fold(text: str) -> bytes:
    """What the cheap test compares: the letters and digits of ``text`` (line breaks kept), lower-cased
    (final sigma as sigma), as UTF-8. The ASCII bytes in one C call; each run of other characters
    (rare in most sources) by ``str.lower`` and a regular expression."""
    if text.isascii():
        return text.encode("ascii").translate(_LOWER, _DROP)
    data = text.encode("utf-8", "surrogatepass")
    high = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) >= 0x80)
    cut = np.flatnonzero(np.diff(high) != 1)
    starts = np.concatenate([high[:1], high[cut + 1]]).tolist()
    ends = (np.concatenate([high[cut], high[-1:]]) + 1).tolist()
    out = []
    before = 0
    for start, end in zip(starts, ends):
        out.append(data[before:start].translate(_LOWER, _DROP))
        out.append(fold_run(data[start:end].decode("utf-8", "surrogatepass")))
        before = end
    out.append(data[before:].translate(_LOWER, _DROP))
    return b"".join(out)


def fold_run(text: str) -> bytes:
    """A run of non-ASCII characters folded (lower-cased, its letters and digits kept, final sigma
    as sigma), as UTF-8; lower-casing may give ASCII letters (the Kelvin sign), kept as :func:`fold`
    keeps them."""
    kept = _OTHER_NOT_WORD.sub("", text.lower()).replace("ς", "σ")
    return kept.encode("utf-8", "surrogatepass").translate(_LOWER, _DROP)


class KeyCache:
    """Each distinct word's key, computed once (cleared when it holds ``limit`` words, so its memory is
    bounded on a source of any size)."""

    def __init__(self, limit: int = 1 << 20) -> None:
        self.keys: dict[str, int] = {}
        self.limit = limit

    def array(self, words: Sequence[str]) -> np.ndarray:
        keys = self.keys
        if len(keys) > self.limit:
            keys.clear()
        out = list(map(keys.get, words))
        if None in out:
            for i, w in enumerate(words):
                if out[i] is None:
                    k = keys.get(w)
                    out[i] = keys[w] = word_key(w) if k is None else k
        return np.array(out, dtype=np.uint64)


def run_keys(keys: np.ndarray, room: np.ndarray, lengths: Iterable[int]) -> Iterator[tuple[int, np.ndarray,
                                                                                         np.ndarray]]:
    """For each length n of ``lengths``: (n, the positions p where a run of n words starts with
    ``room[p] >= n`` (the words left in its unit from p on), the runs' keys), as :func:`gram_hash`."""
    wanted = set(lengths)
    if not wanted or not len(keys):
        return
    acc = np.zeros(len(keys), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k in range(max(wanted)):
            count = len(keys) - k
            if count <= 0:
                return
            acc = acc[:count] + keys[k:] * _PLACE[k]  # acc[p]: the words p .. p + k
            if k + 1 in wanted:
                at = np.flatnonzero(room[:count] >= k + 1)
                yield k + 1, at, acc[at] + _LENGTH[k + 1]


def scan_path() -> str:
    """Which cheap test runs here: "compiled" (kernel.c) or "numpy" (the extension is missing)."""
    return "numpy" if compiled is None else "compiled"


def fold_unit(unit: Any) -> bytes:
    """One unit folded as :func:`fold` folds it in a batch (a token list's tokens joined; its line
    breaks, spaces in the batch, dropped): what the compiled test asks for a token list.
    Lower-casing the whole unit at once is lower-casing each run of it: the only letter whose lower
    case depends on its neighbours is the final sigma, made sigma."""
    text = unit if isinstance(unit, str) else "".join(unit)
    return _NOT_WORD.sub("", text.lower()).replace("ς", "σ").encode("utf-8", "surrogatepass")


def _reads(data: bytes, step: int, dtype: str) -> np.ndarray:
    """Little-endian words read from ``data`` at every ``step`` bytes (step 1: every byte), as many as
    start inside it, then zeros (room for the longest window read from the last one)."""
    size = np.dtype(dtype).itemsize
    padded = data + bytes(ANCHOR_MAX + size)
    count = -(-len(data) // step) + ANCHOR_MAX // step
    return np.ndarray((count,), dtype=dtype, buffer=padded, strides=(step,))


@dataclass
class Flags:
    """A :class:`Tables`'s two tables of flags (2^``bits`` each), packed 8 to a byte."""

    bits: int
    first: np.ndarray
    second: np.ndarray


class Tables:
    """Which of many 64-bit hashes are among ``wanted``: two tables of flags indexed by top bits (of
    the hash, and of a second mix of it), at most 2^24 each, about 1 in 8 set; then the sorted hashes
    (:meth:`find`), or not (:meth:`maybe`: a necessary condition only)."""

    def __init__(self, wanted: np.ndarray, flags: Flags | None = None) -> None:
        """The tables of ``wanted``, or those ``flags`` packed (then :meth:`maybe` only)."""
        self.wanted = _unique(wanted)
        if flags is not None:
            self.shift = np.uint64(64 - flags.bits)
            self.first, self.second = (np.unpackbits(f, bitorder="little").view(np.bool_)
                                       for f in (flags.first, flags.second))
            return
        bits = max(10, min(TABLE_BITS, int(np.ceil(np.log2(max(1, 8 * len(self.wanted)))))))
        self.shift = np.uint64(64 - bits)
        self.first = np.zeros(1 << bits, dtype=np.bool_)
        self.second = np.zeros(1 << bits, dtype=np.bool_)
        self.first[(self.wanted >> self.shift).astype(np.intp)] = True
        with np.errstate(over="ignore"):
            self.second[((self.wanted * _MIX64) >> self.shift).astype(np.intp)] = True

    def packed(self) -> Flags:
        """The tables of flags, 8 to a byte."""
        return Flags(64 - int(self.shift), np.packbits(self.first, bitorder="little"),
                     np.packbits(self.second, bitorder="little"))

    def maybe(self, hashes: np.ndarray) -> np.ndarray:
        """Positions in ``hashes`` that may be among ``wanted`` (all that are, and about 1 in 64 others)."""
        at = np.flatnonzero(self.first[(hashes >> self.shift).astype(np.intp)])
        with np.errstate(over="ignore"):
            return at[self.second[((hashes[at] * _MIX64) >> self.shift).astype(np.intp)]]

    def find(self, hashes: np.ndarray) -> np.ndarray:
        """Positions in ``hashes`` of those among ``wanted``."""
        at = self.maybe(hashes)
        return at[_member(hashes[at], self.wanted)]


def _member(values: np.ndarray, sorted_wanted: np.ndarray) -> np.ndarray:
    if not len(sorted_wanted) or not len(values):
        return np.zeros(len(values), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_wanted, values), len(sorted_wanted) - 1)
    return sorted_wanted[at] == values


def _window_hashes(reads: np.ndarray, at: np.ndarray, words: int, first: np.ndarray | None = None,
                   apart: int = 1) -> np.ndarray:
    """The hash of ``words`` 8-byte reads, ``apart`` places of ``reads`` from one to the next, from
    each of ``at`` (``first``: the hash of the first two, when known)."""
    with np.errstate(over="ignore"):
        out = reads[at] * _GRID_WORD[0] if first is None else first.copy()
        for m in range(1 if first is None else 2, words):
            out += reads[at + apart * m] * _GRID_WORD[m]
    return out


def breaks_as_spaces(batch: list[Any]) -> str:
    """The units joined by line breaks, each unit's own line breaks made spaces (a text line ends with
    one): in C when no unit holds a NUL, else one unit at a time; the same string either way."""
    try:
        texts, joined = batch, "\0".join(batch)
    except TypeError:  # token lists among the units
        texts = [u if isinstance(u, str) else "".join(u) for u in batch]
        joined = "\0".join(texts)
    if joined.count("\0") == len(texts) - 1:
        return joined.replace("\n", " ").replace("\0", "\n")
    return "\n".join(u.replace("\n", " ") for u in texts)


def _unique(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted (by sorting: numpy's hashing ``unique`` is slower here)."""
    ordered = np.sort(values)
    return ordered[np.concatenate([[True], ordered[1:] != ordered[:-1]])] if len(ordered) else ordered


def _frequency(values: np.ndarray) -> np.ndarray:
    """How often each value occurs among ``values``, at each one's place."""
    order = np.argsort(values)
    ordered = values[order]
    starts = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]]))
    counts = np.diff(np.concatenate([starts, [len(values)]]))
    out = np.empty(len(values), dtype=np.int64)
    out[order] = np.repeat(counts, counts)
    return out


def _rarest(frequency: np.ndarray, hashes: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
            width: int, step: int, piece: int) -> np.ndarray:
    """For each run (byte ``starts``, ``lengths``) and each of its first ``step`` bytes j: the start of
    the window of ``width`` bytes at j + step * t inside the run whose pieces of ``piece`` bytes are
    least frequent (``frequency``: each byte's piece's), the smallest of ``hashes`` among equals (so
    overlapping runs often choose the same window): a test reading at multiples of ``step`` meets one
    of them."""
    last = len(frequency) - 1

    def score(place: np.ndarray) -> np.ndarray:
        total = sum(frequency[np.minimum(place + k, last)] for k in range(0, width, piece))
        return (total.astype(np.uint64) << np.uint64(32)) | (hashes[np.minimum(place, last)] >> np.uint64(32))

    out = []
    for j in range(step):
        best = starts + j
        lowest = score(best)
        place = best + step
        fits = place + width <= starts + lengths
        while fits.any():
            f = np.where(fits, score(place), lowest)
            better = f < lowest
            best, lowest = np.where(better, place, best), np.where(better, f, lowest)
            place = place + step
            fits = place + width <= starts + lengths
        out.append(best)
    return np.concatenate(out)


def _short_hashes(reads: np.ndarray, at: np.ndarray, length: int) -> np.ndarray:
    """The hash of the ``length`` bytes (at most 24) from each of ``at`` (``reads``: every byte's 8):
    each 8 bytes' read, those past ``length`` masked, times its place's constant."""
    out = np.zeros(len(at), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for m in range(-(-length // 8)):
            mask = np.uint64((1 << (8 * min(length - 8 * m, 8))) - 1)
            out += (reads[at + 8 * m] & mask) * _GRID_WORD[m]
    return out


@dataclass
class Anchors:
    """What the cheap test looks for in a run's folded letters (:func:`fold`), by its length L in bytes.

    - L >= 15: read at multiples of 8 (:data:`GRID`): for each of its first 8 bytes, a window of 8, 16
      or 32 bytes (the longest of those that fits L - 7) starting there or 8, 16, ... bytes on, the one
      least frequent in the target (``grid``, by width); the first 16 bytes of those of 16 and 32
      (``first16``, tested first: a third of a text's 8-byte reads are the first 8 bytes of some
      anchor, one in a hundred its first 16); a run of 15 to 22 bytes, whose window is 8 bytes (few
      runs, but common in any text), is then looked for whole around it (``confirm``: by L, the
      hashes of its bytes);
    - 7 <= L <= 14: read at multiples of 4: for each of its first 4 bytes, the 4 bytes there or 4, 8
      bytes on least frequent in the target (``four``); then its first 7 bytes (``seven``), then the
      whole run (``whole``: by L, the hashes of its bytes, :func:`_short_hashes`);
    - L < 7 (an n-gram of a few one-letter words): every unit is keyed (``every_unit``).
    """

    grid: dict[int, np.ndarray] = field(default_factory=dict)
    first16: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint64))
    four: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint32))
    seven: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.uint64))
    whole: dict[int, np.ndarray] = field(default_factory=dict)
    confirm: dict[int, np.ndarray] = field(default_factory=dict)
    every_unit: bool = False

    @classmethod
    def of(cls, text: bytes, starts: np.ndarray, lengths: np.ndarray) -> Anchors:
        """The anchors of the runs of ``text`` (folded letters) at byte ``starts`` of byte ``lengths``:
        of the windows that would do for a place, the one whose pieces are least frequent in ``text``
        (the target's own common phrases, "there was no significant difference", are common in
        sources too)."""
        out = cls(every_unit=bool((lengths < SHORT_MIN).any()))
        reads = _reads(text, 1, "<u8")
        places = np.arange(len(text))
        first = _window_hashes(reads, places, 2, apart=GRID)  # the 16 bytes from every byte
        frequency = _frequency(first)
        width = np.where(lengths >= 39, 32, np.where(lengths >= 23, 16, 8))
        grid = lengths >= 15
        firsts = [np.zeros(0, dtype=np.uint64)]
        for w in (8, 16, 32):
            chosen = grid & (width == w)
            if not chosen.any():
                continue
            if w == 8:
                with np.errstate(over="ignore"):
                    hashes = reads[:len(text)] * _GRID_WORD[0]
                at = _rarest(_frequency(hashes), hashes, starts[chosen], lengths[chosen], w, GRID, GRID)
            else:
                hashes = first if w == 16 else _window_hashes(reads, places, w // GRID, first, GRID)
                at = _rarest(frequency, first, starts[chosen], lengths[chosen], w, GRID, 16)
                firsts.append(first[at])
            out.grid[w] = _unique(hashes[at])
            if w == 8:
                for length in _unique(lengths[chosen]).tolist():
                    out.confirm[length] = _unique(_short_hashes(
                        reads, starts[chosen & (lengths == length)], length))
        out.first16 = _unique(np.concatenate(firsts))
        four = (lengths >= SHORT_MIN) & ~grid
        if four.any():
            fours = _reads(text, 1, "<u4")[:len(text)].astype(np.uint64)
            at = _rarest(_frequency(fours), fours, starts[four], lengths[four], 4, 4, 4)
            out.four = _unique(fours[at]).astype(np.uint32)
            out.seven = _unique(reads[starts[four]] & _SEVEN)
        for length in _unique(lengths[four]).tolist():
            out.whole[length] = _unique(_short_hashes(reads, starts[four & (lengths == length)], length))
        return out

    @classmethod
    def union(cls, many: Sequence[Anchors]) -> Anchors:
        out = cls(every_unit=any(a.every_unit for a in many))
        for width in sorted({w for a in many for w in a.grid}):
            out.grid[width] = _unique(np.concatenate([a.grid[width] for a in many if width in a.grid]))
        for name in ("whole", "confirm"):
            mine = getattr(out, name)
            for length in sorted({k for a in many for k in getattr(a, name)}):
                mine[length] = _unique(np.concatenate([getattr(a, name)[length] for a in many
                                                       if length in getattr(a, name)]))
        for name in ("first16", "four", "seven"):
            parts = [getattr(a, name) for a in many]
            if parts:
                setattr(out, name, _unique(np.concatenate(parts)))
        return out


@dataclass
class TargetIndex:
    """A target's sentences as keys: each sentence's n-grams (or, when shorter, itself)."""

    name: str
    n: int
    min_words: int
    sentence_keys: list[tuple[int, ...]] = field(default_factory=list)
    is_test: list[bool] = field(default_factory=list)
    keys: set[int] = field(default_factory=set)
    short_lengths: set[int] = field(default_factory=set)  # word counts of sentences shorter than n
    anchors: Anchors = field(default_factory=Anchors)

    @classmethod
    def build(cls, name: str, sentences: Iterable[tuple[Sequence[str], bool]], n: int = OVERLAP_NGRAM,
              min_words: int = MIN_WORDS) -> TargetIndex:
        """From (normalised tokens, is it a test sentence) pairs. A sentence of fewer than ``min_words``
        words is never counted ("eastern conference", "world cup standings" are in any news corpus)."""
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_NGRAM:
            raise InvalidArgument(f"the overlap n-gram must be a whole number from 1 to {MAX_NGRAM}, "
                                  f"not {n!r}"[:200])
        index = cls(name, n, min_words)
        shortest = min(min_words, n)
        every: list[str] = []
        counts: list[int] = []
        for tokens, test in sentences:
            words = words_of(tokens)
            counts.append(len(words) if len(words) >= shortest else 0)
            every.extend(words[:counts[-1]])
            index.is_test.append(bool(test))
        sizes = np.array(counts, dtype=np.int64)
        begins = np.concatenate([[0], np.cumsum(sizes)])
        # the words left in its sentence from each word on
        room = np.repeat(begins[1:], sizes) - np.arange(len(every))
        cache = KeyCache(limit=1 << 62)
        keys = cache.array(every)
        folded = fold("\n".join(every)).split(b"\n") if every else []
        offsets = np.concatenate([[0], np.cumsum([len(f) for f in folded])]).astype(np.int64)
        text = b"".join(folded)
        index.short_lengths = {int(s) for s in _unique(sizes[(sizes > 0) & (sizes < n)])}
        starts_all, keys_all, widths_all = [], [], []
        first_word = np.repeat(begins[:-1], sizes)  # each word's sentence's first word
        for length, at, run in run_keys(keys, room, {n, *index.short_lengths}):
            # n-grams of long sentences; whole sentences of ``length`` words
            if length != n:
                keep = (at == first_word[at]) & (room[at] == length)
                at, run = at[keep], run[keep]
            starts_all.append(at)
            keys_all.append(run)
            widths_all.append(np.full(len(at), length))
        if starts_all:
            at = np.concatenate(starts_all)
            run = np.concatenate(keys_all)
            width = np.concatenate(widths_all)
            index.anchors = Anchors.of(text, offsets[at], offsets[at + width] - offsets[at])
            order = np.argsort(at, kind="stable")
            at, run = at[order], run[order]
            sentence = np.searchsorted(begins, at, side="right") - 1
            cut = np.searchsorted(sentence, np.arange(len(sizes) + 1))
            listed = run.tolist()
            for i in range(len(sizes)):
                unique = tuple(dict.fromkeys(listed[cut[i]:cut[i + 1]]))
                index.sentence_keys.append(unique)
                index.keys.update(unique)
        else:
            index.sentence_keys = [()] * len(sizes)
        return index

    @property
    def has_test(self) -> bool:
        return any(self.is_test)

    def shares(self, hits: set[int]) -> tuple[float, float, int, int]:
        """(overlap_test, overlap_all, test sentences held, sentences held) for the keys a source holds;
        overlap_test is NaN when the target has no test split."""
        held = self.held(hits)
        tests = [h for h, t in zip(held, self.is_test) if t]
        test_share = sum(tests) / len(tests) if tests else float("nan")
        all_share = sum(held) / len(held) if held else float("nan")
        return test_share, all_share, sum(tests), sum(held)

    def held(self, hits: set[int]) -> list[bool]:
        return [any(k in hits for k in keys) for keys in self.sentence_keys]


@dataclass
class ScanTargets:
    """What a :class:`Scanner` needs of its targets, and no more (what a piece's task is sent):
    keys, sorted; the lengths of the runs to key; the anchors of all of them, those only tested for
    (``first16``) as tables of flags."""

    keys: np.ndarray
    lengths: tuple[int, ...]
    grid: dict[int, np.ndarray]
    first16: Flags | None
    four: np.ndarray
    seven: np.ndarray
    whole: dict[int, np.ndarray]
    confirm: dict[int, np.ndarray]
    every_unit: bool

    @classmethod
    def of(cls, indexes: Sequence[TargetIndex]) -> ScanTargets:
        keys: set[int] = set().union(*(i.keys for i in indexes)) if indexes else set()
        anchors = Anchors.union([i.anchors for i in indexes])
        return cls(np.array(sorted(keys), dtype=np.uint64),
                   tuple(sorted({i.n for i in indexes}.union(*(i.short_lengths for i in indexes)))),
                   anchors.grid, Tables(anchors.first16).packed() if len(anchors.first16) else None,
                   anchors.four, anchors.seven, anchors.whole, anchors.confirm, anchors.every_unit)


class Scanner:
    """Tests a source's units against several targets' indexes at once; ``hits`` collects the target
    keys the source holds. Units are raw text (tokenized with ``tokens_of`` only when the cheap test
    passes) or token lists."""

    def __init__(self, targets: Sequence[TargetIndex] | ScanTargets,
                 tokens_of: Callable[[Any], list[str]]) -> None:
        """``targets``: the targets' indexes, or what the scan needs of them (ScanTargets)."""
        self.indexes = [] if isinstance(targets, ScanTargets) else list(targets)
        scan = targets if isinstance(targets, ScanTargets) else ScanTargets.of(self.indexes)
        self.tokens_of = tokens_of
        self.keys = Tables(scan.keys)
        self.lengths = list(scan.lengths)
        self.every_unit = scan.every_unit
        self.grid = {width // GRID: Tables(h) for width, h in scan.grid.items()}
        empty = np.zeros(0, dtype=np.uint64)
        self.first16 = Tables(empty, scan.first16) if scan.first16 is not None else None
        self.four = scan.four
        self.seven = scan.seven
        self.whole = scan.whole
        self.confirm = scan.confirm
        self.four_table = np.zeros(1 << 16, dtype=np.bool_)
        with np.errstate(over="ignore"):
            self.four_table[(self.four * _MIX32) >> np.uint32(16)] = True
        self.compiled_tables = self._compiled_tables()
        self.word_keys = KeyCache()
        self.hits: set[int] = set()
        self.units = 0
        self.tested = 0  # units that passed the cheap test and were keyed exactly
        self._batch: list[Any] = []
        self._pending: list[Any] = []  # units that passed the cheap test, not keyed yet

    def add(self, unit: Any) -> None:
        self._batch.append(unit)
        if len(self._batch) >= BATCH_UNITS:
            self.flush()

    def watch(self, units: Iterable[Any]) -> Iterator[Any]:
        """``units`` passed through unchanged, tested a batch at a time on the way (the pass's own
        read; the units themselves go on from C, :func:`itertools.chain`). The units that pass the
        cheap test wait to be keyed exactly together, :data:`CHECK_UNITS` at a time: a few per batch
        pass, and numpy's cost per call would be paid for each batch."""
        return itertools.chain.from_iterable(self._watched(iter(units)))

    def _watched(self, units: Iterator[Any]) -> Iterator[list[Any]]:
        while batch := list(itertools.islice(units, BATCH_UNITS)):
            self.units += len(batch)
            if len(self.keys.wanted):
                self._pending.extend(batch[p] for p in self.candidates(batch))
                if len(self._pending) >= CHECK_UNITS:
                    self._check_pending()
            yield batch
        self.flush()

    def _check_pending(self) -> None:
        pending, self._pending = self._pending, []
        self.check(pending, list(range(len(pending))))

    def flush(self) -> None:
        """Test the units added and not tested yet, and key those waiting (:meth:`watch`)."""
        batch, self._batch = self._batch, []
        self.scan(batch)
        self._check_pending()

    def scan(self, batch: list[Any]) -> dict[int, int]:
        """Test ``batch`` (its keys held go to ``hits``): the positions of the units that hold a target's
        n-gram, each with its token count."""
        self.units += len(batch)
        if not batch or not len(self.keys.wanted):
            return {}
        return self.check(batch, self.candidates(batch))

    def candidates(self, batch: list[Any]) -> list[int]:
        """Positions in ``batch`` of the units that pass the cheap test."""
        if self.every_unit:
            return list(range(len(batch)))
        if not batch:
            return []
        if compiled is not None and isinstance(batch, list):
            return compiled.candidates(batch, fold_unit, fold_run, self.compiled_tables)
        try:
            joined = "\n".join(batch)
        except TypeError:  # token lists among the units
            joined = "\n".join(u if isinstance(u, str) else "".join(u) for u in batch)
        if joined.count("\n") != len(batch) - 1:  # a unit holding a line break (a text line's own): a space
            joined = breaks_as_spaces(batch)
        data = fold(joined)
        at = _unique(np.concatenate([self._grid(data), self._fours(data)]))
        # the unit of each position: the line breaks before it
        units: list[int] = []
        unit = before = 0
        for position in at.tolist():
            unit += data.count(b"\n", before, position)
            before = position
            if not units or units[-1] != unit:
                units.append(unit)
        return units

    def _compiled_tables(self) -> tuple[Any, ...]:
        """The tables as kernel.c reads them: the places' constants, each table of flags as (shift,
        flags, flags, sorted hashes) or None (its flags 8 to a byte: 2 MB, in the processor's
        cache), the 4-byte test's, the whole runs' by length, and the runs to confirm's."""

        def table(t: Tables | None) -> tuple[int, np.ndarray, np.ndarray, np.ndarray] | None:
            if t is None:
                return None
            flags = t.packed()
            wanted = np.ascontiguousarray(t.wanted, dtype=np.uint64)
            return int(t.shift), flags.first, flags.second, wanted

        return (_GRID_WORD, table(self.grid.get(1)), table(self.first16),
                table(self.grid.get(2)), table(self.grid.get(4)), self.four_table,
                np.ascontiguousarray(self.four, dtype=np.uint32),
                np.ascontiguousarray(self.seven, dtype=np.uint64),
                tuple((length, np.ascontiguousarray(h, dtype=np.uint64))
                      for length, h in self.whole.items()),
                tuple((length, np.ascontiguousarray(h, dtype=np.uint64))
                      for length, h in self.confirm.items()))

    def _grid(self, data: bytes) -> np.ndarray:
        """Starts of the windows of 8 to 32 bytes read at multiples of 8 that are anchors."""
        if not self.grid:
            return np.zeros(0, dtype=np.intp)
        reads = _reads(data, GRID, "<u8")
        count = -(-len(data) // GRID)
        with np.errstate(over="ignore"):
            eight = reads[:count] * _GRID_WORD[0]
        found = [np.zeros(0, dtype=np.intp)]
        if 1 in self.grid:
            found.append(self._confirmed(data, self.grid[1].find(eight) * GRID) // GRID)
        if self.first16 is not None:
            with np.errstate(over="ignore"):
                first = eight + reads[1:count + 1] * _GRID_WORD[1]
            at = self.first16.maybe(first)
            first = first[at]
            for words, tables in self.grid.items():
                if words > 1:
                    hashes = first if words == 2 else _window_hashes(reads, at, words, first)
                    found.append(at[tables.find(hashes)])
        return np.concatenate(found) * GRID

    def _confirmed(self, data: bytes, at: np.ndarray) -> np.ndarray:
        """Those of the 8-byte windows at ``at`` that lie in a run of 15 to 22 bytes held whole
        (:attr:`Anchors.confirm`): it starts at most L - 8 bytes before its window."""
        if not len(at):
            return at
        every = _reads(data, 1, "<u8")
        kept = np.zeros(len(at), dtype=bool)
        for length, wanted in self.confirm.items():
            for back in range(length - 7):
                starts = at - back
                fits = (starts >= 0) & ~kept
                kept[fits] = _member(_short_hashes(every, starts[fits], length), wanted)
        return at[kept]

    def _fours(self, data: bytes) -> np.ndarray:
        """Starts of the shortest runs, found by 4-byte reads at multiples of 4, then whole."""
        if not len(self.four):
            return np.zeros(0, dtype=np.intp)
        reads = _reads(data, 4, "<u4")
        with np.errstate(over="ignore"):
            at = np.flatnonzero(self.four_table[(reads * _MIX32) >> np.uint32(16)])
        at = at[_member(reads[at], self.four)] * 4
        # the run starts up to 10 bytes before the 4 bytes found (14 - 4)
        starts = _unique((at[:, None] - np.arange(11)[None, :]).ravel())
        starts = starts[starts >= 0]
        every = _reads(data, 1, "<u8")
        starts = starts[_member(every[starts] & _SEVEN, self.seven)]
        found = [np.zeros(0, dtype=np.intp)]
        for length, wanted in self.whole.items():
            found.append(starts[_member(_short_hashes(every, starts, length), wanted)])
        return np.concatenate(found)

    def check(self, batch: list[Any], positions: list[int]) -> dict[int, int]:
        """Exact test of the units of ``batch`` at ``positions``: every run of each length keyed, those
        among the targets' keys added to ``hits``; the positions of the units holding one, with their
        token counts."""
        if not positions:
            return {}
        self.tested += len(positions)
        words: list[str] = []
        sizes, tokens = [], []
        for p in positions:
            unit_tokens = self.tokens_of(batch[p])
            w = words_of(unit_tokens)
            words.extend(w)
            sizes.append(len(w))
            tokens.append(len(unit_tokens))
        counts = np.array(sizes, dtype=np.int64)
        ends = np.cumsum(counts)
        room = np.repeat(ends, counts) - np.arange(len(words))
        keys = self.word_keys.array(words)
        held: dict[int, int] = {}
        for _, at, run in run_keys(keys, room, self.lengths):
            found = self.keys.find(run)
            if len(found):
                self.hits.update(run[found].tolist())
                for u in _unique(np.searchsorted(ends, at[found], side="right")).tolist():
                    held[positions[u]] = tokens[u]
        return held

    def result(self) -> set[int]:
        self.flush()
        return self.hits


def target_sentences(corpus: Any, options: Any) -> list[tuple[list[str], bool]]:
    """A target's normalised sentences, each with whether it belongs to the test split: sentences
    of a file whose name (or folder) says ``test``."""
    from ..corpora.corpus import part_corpus

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


