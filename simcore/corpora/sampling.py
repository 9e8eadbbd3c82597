"""Every sample of a source in one streaming pass: bottom-k by a seeded hash of each unit.

Each unit (a line, a record, a cell, a sentence) gets, for sample ``i``, a 64-bit key from a
keyed BLAKE2b hash of its content and the seed. Sample ``i`` of ``n`` tokens is made of the units
with the smallest keys: it depends only on the content, never on the order of the shards or on
how many workers read them (the kept units of several shards merge by taking the smallest keys
again; see DESIGN.md, "Sizes and fairness"). While reading, a unit costs a hash, and only the units
that may be kept are measured, by whitespace words (never more than simcore's tokens of the same
text); nothing is tokenized or stored but the kept units. Then the kept units are tokenized in
key order and cut at exactly ``n`` of simcore's tokens, for every size of the ladder at once: the
sample of a smaller size is the start of the larger one (nested samples).

The same pass gives the source's content fingerprint (the SHA-256 of every file's bytes, and the
options that shape the units) and its size in whitespace words.
"""

from __future__ import annotations

import gzip
import hashlib
import heapq
import json
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np

from ..utils.errors import CorpusError, InvalidArgument
from ..utils.store import ArtefactStore, digest, file_sha256
from .corpus import Corpus, TokenizedCorpus, from_artefact, part_corpus, unit_tokenizer, write_tokens
from .notes import ReadNotes
from .readahead import batches_read_ahead, reads_ahead
from .remote import RemoteFile, content_sha256, file_identity
from .text import line_starts, range_text
from .tokenize import TokenizerOptions

Progress = Callable[[str, float], None]
Unit = str | tuple[str, ...]
MAX_SAMPLES = 64
_KEYS_PER_HASH = 8  # BLAKE2b gives up to 64 bytes: eight 64-bit keys per call
_NO_BOUND = 1 << 64  # above every 64-bit key


def _quiet(message: str, fraction: float) -> None:
    pass


def _unit_bytes(unit: Unit) -> bytes:
    if isinstance(unit, str):
        return unit.encode("utf-8", "surrogatepass")
    return b"\x1f".join(t.encode("utf-8", "surrogatepass") for t in unit) + b"\x1e"  # never equal to a line


DENSE_CHARS_PER_TOKEN = 8  # scripts without spaces: no segmenter's words average longer than this


def _words(unit: Unit, dense: bool = False) -> int:
    """The size proxy: whitespace words (simcore's tokenizer never makes fewer tokens of the same text);
    for text of a script written without spaces (``dense``), at least its characters over
    DENSE_CHARS_PER_TOKEN, since a clause without spaces is one whitespace word but many tokens."""
    if not isinstance(unit, str):
        return len(unit)
    words = len(unit.split())
    return max(words, (len(unit) - unit.count(" ")) // DENSE_CHARS_PER_TOKEN) if dense else words


SETTLE_EVERY = 1 << 16  # units put aside before a sample's first settle (later: as many as kept)


class _Kept:
    """One sample's units while :meth:`Candidates.offer` reads: those kept at the last settle
    (sorted by key, in arrays) and those put aside since, each under the bound of that settle.

    A settle sorts both by key and keeps the shortest prefix whose words reach the target: the set
    a heap keeps when every unit is pushed and the largest keys popped while the rest still reach
    the target, and the bound (the largest key kept) is that heap's. Equal keys keep their order of
    arrival (the heap's order among them differs only for two texts of one 64-bit key)."""

    def __init__(self, heap: list[tuple[int, int, Unit]], target: int, ceiling: int | None) -> None:
        self.target = target
        self.ceiling = _NO_BOUND if ceiling is None else ceiling
        ordered = sorted(heap, reverse=True)  # smallest key first
        self.sorted_keys = np.array([-k for k, _, _ in ordered], dtype=np.uint64)
        self.sorted_words = np.array([w for _, w, _ in ordered], dtype=np.int64)
        self.sorted_units: list[Unit] = [u for _, _, u in ordered]
        self.keys: list[int] = []
        self.words: list[int] = []
        self.units: list[Unit] = []
        full = int(self.sorted_words.sum()) >= target
        self.bound = min(int(self.sorted_keys[-1]), self.ceiling) if full else self.ceiling
        self.settle_at = max(SETTLE_EVERY, len(self.sorted_units))

    def settle(self) -> None:
        """The kept and put-aside units cut to the smallest keys reaching the target; the bound."""
        keys = np.concatenate([self.sorted_keys, np.array(self.keys, dtype=np.uint64)])
        words = np.concatenate([self.sorted_words, np.array(self.words, dtype=np.int64)])
        units = self.sorted_units + self.units
        order = np.argsort(keys, kind="stable")
        # the first prefix reaching the target
        reach = int(np.searchsorted(np.cumsum(words[order]), self.target))
        full = reach < len(order)
        if full:
            order = order[:reach + 1]
        self.sorted_keys, self.sorted_words = keys[order], words[order]
        self.sorted_units = [units[j] for j in order.tolist()]
        self.keys, self.words, self.units = [], [], []
        self.bound = min(int(self.sorted_keys[-1]), self.ceiling) if full else self.ceiling
        self.settle_at = max(SETTLE_EVERY, len(self.sorted_units))

    def heap(self) -> tuple[list[tuple[int, int, Unit]], int]:
        """(the max-heap of (-key, words, unit) :class:`Candidates` holds, its words), settled."""
        if self.keys:
            self.settle()
        heap = [(-k, w, u) for k, w, u in zip(self.sorted_keys.tolist(), self.sorted_words.tolist(),
                                              self.sorted_units)]
        heap.reverse()  # largest key first: already a heap, unless two units share a key
        heapq.heapify(heap)
        return heap, int(self.sorted_words.sum())


@dataclass
class Candidates:
    """What one shard (or several, merged) keeps for each sample: the units with the smallest keys
    whose words reach ``target``, plus the shard's size, fingerprint and reading notes."""

    target: int
    samples: int
    seed: int
    heaps: list[list[tuple[int, int, Unit]]] = field(default_factory=list)  # max-heaps of (-key, words, unit)
    totals: list[int] = field(default_factory=list)
    words: int = 0
    units: int = 0
    file_hashes: list[str] = field(default_factory=list)
    notes: ReadNotes = field(default_factory=ReadNotes)
    dense: bool = False  # units in a script written without spaces: sized by characters too (see _words)
    # Keys at or above ceilings[i] are never kept for sample i: the bound of candidates already merged
    # elsewhere, which only falls as more merge, so a merge would refuse those units anyway (see ceilings()).
    ceilings: list[int] | None = None

    def __post_init__(self) -> None:
        if not self.heaps:
            self.heaps = [[] for _ in range(self.samples)]
            self.totals = [0] * self.samples

    def _keys(self, unit: Unit) -> list[int]:
        data = _unit_bytes(unit)
        keys: list[int] = []
        block = 0
        while len(keys) < self.samples:
            n = min(_KEYS_PER_HASH, self.samples - len(keys))
            raw = hashlib.blake2b(data, digest_size=8 * n, key=self.seed.to_bytes(8, "big", signed=True),
                                  person=block.to_bytes(4, "big")).digest()
            keys.extend(int.from_bytes(raw[8 * j: 8 * j + 8], "big") for j in range(n))
            block += 1
        return keys

    def add(self, unit: Unit, words: int | None = None, keys: Sequence[int] | None = None) -> None:
        """Offer one unit to every sample (its words counted here when not given).

        A line is keyed without its surrounding whitespace (its line break), so the same text gives the
        same keys whether it came as a line, a JSON record or a Parquet cell.
        """
        if words is None:
            if isinstance(unit, str):
                unit = unit.strip()
            words = _words(unit, self.dense)
            self.words += words
            self.units += 1
        if words == 0:
            return
        totals, heaps, target, ceilings = self.totals, self.heaps, self.target, self.ceilings
        for i, key in enumerate(keys or self._keys(unit)):
            if totals[i] >= target and key >= -heaps[i][0][0]:
                continue  # inlined from _add_one: the common case once a sample is full
            if ceilings is not None and key >= ceilings[i]:
                continue
            self._add_one(i, key, words, unit)

    def offer(self, units: Iterable[str | list[str]]) -> None:
        """:meth:`add` for a stream of units, with the per-unit work inlined (the pass's hot loop).

        A unit under a sample's bound is put aside, not pushed on a heap: every
        :data:`SETTLE_EVERY` units or so, the kept and the put-aside are sorted by key together
        (:class:`_Kept`) and cut at the shortest prefix reaching the target, which is the set the
        heap keeps (the smallest keys), at a fraction of the cost of a heap of 600k units (one push
        and one pop a unit)."""
        if self.samples > _KEYS_PER_HASH or self.dense:
            for unit in units:
                self.add(unit if isinstance(unit, str) else tuple(unit))
            return
        hasher = hashlib.blake2b(digest_size=8 * self.samples, key=self.seed.to_bytes(8, "big", signed=True),
                                 person=(0).to_bytes(4, "big"))
        kept = [_Kept(heap, self.target, None if self.ceilings is None else self.ceilings[i])
                for i, heap in enumerate(self.heaps)]
        words_seen = units_seen = 0
        from_bytes = int.from_bytes
        if self.samples == 1:
            one = kept[0]
            bound, keys, sizes, held = one.bound, one.keys, one.words, one.units
            for unit in units:
                if isinstance(unit, str):
                    unit = unit.strip()
                    words = len(unit.split())
                    data = unit.encode("utf-8", "surrogatepass")
                else:
                    unit = tuple(unit)
                    words = len(unit)
                    data = _unit_bytes(unit)
                words_seen += words
                units_seen += 1
                if not words:
                    continue
                h = hasher.copy()
                h.update(data)
                key = from_bytes(h.digest(), "big")
                if key < bound:
                    keys.append(key)
                    sizes.append(words)
                    held.append(unit)
                    if len(keys) >= one.settle_at:
                        one.settle()
                        bound, keys, sizes, held = one.bound, one.keys, one.words, one.units
        else:
            positions = list(enumerate(range(0, 8 * self.samples, 8)))
            bounds = [k.bound for k in kept]
            for unit in units:
                if isinstance(unit, str):
                    unit = unit.strip()
                    words = len(unit.split())
                    data = unit.encode("utf-8", "surrogatepass")
                else:
                    unit = tuple(unit)
                    words = len(unit)
                    data = _unit_bytes(unit)
                words_seen += words
                units_seen += 1
                if not words:
                    continue
                h = hasher.copy()
                h.update(data)
                raw = h.digest()
                for i, at in positions:
                    key = from_bytes(raw[at:at + 8], "big")
                    if key < bounds[i]:
                        one = kept[i]
                        one.keys.append(key)
                        one.words.append(words)
                        one.units.append(unit)
                        if len(one.keys) >= one.settle_at:
                            one.settle()
                            bounds[i] = one.bound
        for i, one in enumerate(kept):
            self.heaps[i], self.totals[i] = one.heap()
        self.words += words_seen
        self.units += units_seen

    def keys_of(self, units: list[Any]) -> tuple[bytes, bytes]:
        """(each unit's words, int64; its keys for every sample, 64-bit big-endian) as :meth:`offer`
        finds them: the per-unit work, done where the units are read (:mod:`.readahead`)."""
        hasher = hashlib.blake2b(digest_size=8 * self.samples,
                                 key=self.seed.to_bytes(8, "big", signed=True),
                                 person=(0).to_bytes(4, "big"))
        words: list[int] = []
        digests: list[bytes] = []
        for unit in units:
            if isinstance(unit, str):
                unit = unit.strip()
                words.append(len(unit.split()))
                data = unit.encode("utf-8", "surrogatepass")
            else:
                unit = tuple(unit)
                words.append(len(unit))
                data = _unit_bytes(unit)
            h = hasher.copy()
            h.update(data)
            digests.append(h.digest())
        return np.array(words, dtype=np.int64).tobytes(), b"".join(digests)

    def offer_keyed(self, batches: Iterable[tuple[list[Any], tuple[bytes, bytes] | None]]) -> None:
        """:meth:`offer` for batches of units with their words and keys (:meth:`keys_of`) found
        already (or None: found here): each batch's units under a sample's bound are put aside at
        once; the same kept units."""
        kept = [_Kept(heap, self.target, None if self.ceilings is None else self.ceilings[i])
                for i, heap in enumerate(self.heaps)]
        for units, made in batches:
            words_bytes, key_bytes = made if made is not None else self.keys_of(units)
            words = np.frombuffer(words_bytes, dtype=np.int64)
            keys = np.frombuffer(key_bytes, dtype=">u8").reshape(len(units), self.samples)
            self.words += int(words.sum())
            self.units += len(units)
            some = words > 0
            for i, one in enumerate(kept):
                column = keys[:, i]
                under = some if one.bound >= _NO_BOUND else some & (column < np.uint64(one.bound))
                chosen = np.flatnonzero(under)
                if not len(chosen):
                    continue
                one.keys.extend(column[chosen].tolist())
                one.words.extend(words[chosen].tolist())
                one.units.extend(unit.strip() if isinstance(unit, str) else tuple(unit)
                                 for unit in (units[j] for j in chosen.tolist()))
                if len(one.keys) >= one.settle_at:
                    one.settle()
        for i, one in enumerate(kept):
            self.heaps[i], self.totals[i] = one.heap()

    def merge(self, other: Candidates) -> None:
        """Add another shard's candidates: the smallest keys of both, exactly as if one had read both."""
        if (other.target, other.samples, other.seed) != (self.target, self.samples, self.seed):
            raise InvalidArgument("candidates of different sizes, sample counts or seeds cannot be merged")
        if not any(self.heaps):
            # nothing kept here yet: other's kept units, each set already the smallest keys
            # reaching the target, so that pushing them one by one would pop none
            self.heaps = [list(heap) for heap in other.heaps]
            self.totals = list(other.totals)
        else:
            for i, heap in enumerate(other.heaps):
                for neg_key, words, unit in heap:
                    self._add_one(i, -neg_key, words, unit)
        self.words += other.words
        self.units += other.units
        self.file_hashes.extend(other.file_hashes)
        examples = sorted(self.notes.examples + other.notes.examples)[:5]  # the same whatever the shard order
        self.notes.merge(other.notes)
        self.notes.examples = examples

    def bounds(self) -> list[int] | None:
        """Each sample's bound when every sample is full (``ceilings`` for pieces read after this merge), else None.

        A piece read with them returns only units under them: the merge of its candidates is the same,
        since merging refuses a unit at or above a full sample's bound, and the bound only falls.
        """
        if any(total < self.target for total in self.totals):
            return None
        return [-heap[0][0] for heap in self.heaps]

    def _add_one(self, i: int, key: int, words: int, unit: Unit) -> None:
        heap = self.heaps[i]
        if self.totals[i] >= self.target and key >= -heap[0][0]:
            return  # the common case once a sample is full: one comparison
        heapq.heappush(heap, (-key, words, unit))
        self.totals[i] += words
        while self.totals[i] - heap[0][1] >= self.target:
            self.totals[i] -= heapq.heappop(heap)[1]

    def ordered(self, i: int) -> list[Unit]:
        """Sample ``i``'s kept units, smallest key first."""
        return [unit for _, _, unit in sorted(self.heaps[i], reverse=True)]


def _check(sizes: Sequence[int], samples: int, seed: int) -> list[int]:
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Iterable):
        raise InvalidArgument("sizes must be a list of token counts")
    sizes = list(sizes)
    if not sizes or any(isinstance(s, bool) or not isinstance(s, int) or s < 1 for s in sizes):
        raise InvalidArgument("sizes must be positive whole numbers of tokens")
    if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= MAX_SAMPLES:
        raise InvalidArgument(f"the sample count must be a whole number from 1 to {MAX_SAMPLES}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not -(2 ** 63) <= seed < 2 ** 63:
        raise InvalidArgument("the seed must be a whole number that fits in 64 bits")
    return sorted(set(sizes))


# One batch in this many is keyed by the child reading a compressed file (:mod:`.readahead`), the
# others here: so both processes stay busy (measured on a 30M-word .gz, the overlap scan on).
CHILD_KEYS_EVERY = 2
RANGE_BYTES = 1 << 30  # an uncompressed text or JSONL file larger than this is read as ranges of about this size

# A piece of work: a file, or the byte range [start, end) of one (both at line starts); end -1: the whole file.
Piece = tuple[Path, int, int]


def pieces(corpus: Corpus) -> list[Piece]:
    """The files of ``corpus``, a large uncompressed UTF-8 text or JSONL file cut into line-aligned ranges.

    The cut depends on the file and :data:`RANGE_BYTES` only, never on the number of workers, so one
    process and a cluster read the same pieces and keep the same notes.
    """
    from .formats import split_suffixes

    out: list[Piece] = []
    for f in corpus.files:
        size = f.stat().st_size
        plain = (isinstance(f, Path) and split_suffixes(f.name)[1] is None  # a remote object: one sequential read
                 and corpus.encoding in (None, "utf-8", "utf8", "utf-8-sig"))
        if size > RANGE_BYTES and plain and corpus.file_format(f) in ("text", "jsonl") and not _utf16(f):
            bounds = line_starts(f, -(-size // RANGE_BYTES))
            out.extend((f, a, b) for a, b in zip(bounds[:-1], bounds[1:]))
        else:
            out.append((f, 0, -1))
    return out


def _utf16(path: Path) -> bool:
    with open(path, "rb") as f:
        head = f.read(4)
    return head.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\0" in head


def _range_units(corpus: Corpus, file: Path, start: int, end: int, notes: ReadNotes) -> Iterator[str]:
    from .jsonl import jsonl_units
    from .text import guard, text_units

    name = f"{file.name} (bytes {start:,} on)"
    with range_text(file, start, end, corpus) as text:
        read = text_units if corpus.file_format(file) == "text" else jsonl_units
        yield from guard(read(text, name, corpus, notes), corpus, file)


def _range_sha256(path: Path, start: int, end: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        f.seek(start)
        left = end - start
        while left > 0:
            block = f.read(min(1 << 20, left))
            if not block:
                break
            h.update(block)
            left -= len(block)
    return h.hexdigest()


def _watched(batches: Iterable[tuple[list[Any], Any]],
             watch: Callable[[Iterable[Any]], Iterable[Any]]) -> Iterator[tuple[list[Any], Any]]:
    """``batches``, every unit passed through ``watch`` on the way, regrouped as they came."""
    side: deque[tuple[int, Any]] = deque()  # each batch's size and what came with it, once reached

    def units() -> Iterator[Any]:
        for batch, made in batches:
            side.append((len(batch), made))
            yield from batch

    seen = iter(watch(units()))
    for first in seen:
        while not side[0][0]:  # an empty batch (the last one may be)
            side.popleft()
        count, made = side.popleft()
        batch = [first, *islice(seen, count - 1)]
        if len(batch) != count:
            raise RuntimeError(f"the watch of a pass handed on {len(batch)} units of a batch of "
                               f"{count}")
        yield batch, made


def shard_candidates(corpus: Corpus, file: Path, target: int, samples: int, seed: int,
                     progress: Progress = _quiet, span: tuple[int, int] = (0, -1),
                     ceilings: list[int] | None = None,
                     watch: Callable[[Iterable[Any]], Iterable[Any]] | None = None) -> Candidates:
    """Read one file of ``corpus`` (or the byte range ``span`` of it) once and keep, for every sample,
    what it may need: a task of its own. ``ceilings``: the bounds of the candidates merged so far
    (:meth:`Candidates.bounds`), when known: only units under them are kept, so less is returned.
    ``watch``: sees every unit on the way (the overlap scanner of :mod:`simcore.contamination.scan`)."""
    from .columnar import MissingColumn

    found = Candidates(target, samples, seed, dense=corpus.segmenter().kind == "icu", ceilings=ceilings)
    start, end = span
    try:
        keyed = found.samples <= _KEYS_PER_HASH and not found.dense
        if end < 0 and keyed and reads_ahead(corpus, file):
            # read, and partly keyed, in a child process: this one scans and keeps (two cores)
            batches = batches_read_ahead(corpus, file, progress, found.notes, found.keys_of,
                                         CHILD_KEYS_EVERY)
            found.offer_keyed(batches if watch is None else _watched(batches, watch))
        else:
            units = (_range_units(corpus, file, start, end, found.notes) if end >= 0
                     else part_corpus(corpus, file).units(progress, found.notes))
            found.offer(watch(units) if watch is not None else units)
    except MissingColumn as exc:  # one shard of many without the column: said and counted, as Corpus.units does
        if len(corpus.files) == 1:
            raise
        found.notes.note("skipped", str(exc).removeprefix(f"{corpus.name}: "), "shard without the text column")
    try:
        digest_of = (file_identity(file) or content_sha256(file, corpus.name) if isinstance(file, RemoteFile)
                     else file_sha256(file) if end < 0 else f"{_range_sha256(file, start, end)}@{start}")
        found.file_hashes.append(f"{digest_of}:{corpus.file_format(file)}")
    except OSError as exc:
        raise CorpusError(f"{corpus.name}: cannot read {file.name} ({exc.strerror or exc})") from exc
    return found


def read_candidates(corpus: Corpus, target: int, samples: int, seed: int, progress: Progress = _quiet,
                    watch: Callable[[Iterable[Any]], Iterable[Any]] | None = None) -> Candidates:
    """Every piece of ``corpus`` read once, in this process: what the pieces' tasks and a merge make."""
    merged = Candidates(target, samples, seed)
    work = pieces(corpus)
    for number, (f, start, end) in enumerate(work):
        merged.merge(shard_candidates(corpus, f, target, samples, seed,
                                      lambda m, x, n=number: progress(m, (n + x) / len(work)), (start, end),
                                      ceilings=merged.bounds(), watch=watch))
    return merged


@dataclass(frozen=True)
class StreamSamples:
    """A source's samples for every size (``samples[size][i]``), its fingerprint, size and reading notes.

    A size at or above the source's own is the whole source (``whole`` lists those sizes), as
    :func:`simcore.corpora.corpus.sample_corpus` returns the corpus itself there.
    """

    name: str
    fingerprint: str
    words: int
    units: int
    samples: Mapping[int, list[TokenizedCorpus]]
    whole: tuple[int, ...]
    notes: ReadNotes


def content_fingerprint(corpus: Corpus, file_hashes: Sequence[str], options: TokenizerOptions) -> str:
    """The source's content: every file's bytes (in any order of the files) and the options that shape units."""
    hub = ([] if (corpus.labels, corpus.tokens_field, corpus.tags_field) == (None, "tokens", "ner_tags")
           else [corpus.labels, corpus.tokens_field, corpus.tags_field])
    return digest("stream-source", sorted(file_hashes), corpus.text_field, corpus.encoding, options.as_dict(), *hub,
                  *corpus.segmentation_key())


def _tokens_in_order(units: Iterable[Unit], tokens_of: Callable[[Unit], list[str]]) -> Iterator[list[str]]:
    for unit in units:
        tokens = tokens_of(unit)
        if tokens:
            yield tokens


def _cut(lines: Iterable[list[str]], n_tokens: int) -> Iterator[list[str]]:
    """Units until exactly ``n_tokens`` tokens: the last one cut."""
    left = n_tokens
    for tokens in lines:
        if left <= 0:
            return
        yield tokens[:left]
        left -= len(tokens)


def draw_samples(corpus: Corpus, found: Candidates, sizes: Sequence[int], store: ArtefactStore,
                 options: TokenizerOptions = TokenizerOptions()) -> StreamSamples:
    """Each sample's kept units, in key order, tokenized for the sizes asked for.

    A source larger than the largest size: its kept units are stored as they are (compressed) and a
    size is tokenized when it is first asked for (:class:`LazySamples`), so a pass for the whole ladder
    does not tokenize 10M tokens when only a small size is used. A smaller source: its samples are
    tokenized at once, for the largest size (it may be the whole source); the smaller sizes are the
    start of that one (read back from its file, not tokenized again). Either way a size's sample is
    the same bytes: the kept units in key order, tokenized and cut at exactly that many tokens."""

    sizes = _check(sizes, found.samples, found.seed)
    if found.words == 0:
        raise CorpusError(f"{corpus.name}: no words found in {corpus.path.name}")
    fingerprint = content_fingerprint(corpus, found.file_hashes, options)
    kept_everything = found.words <= found.target  # then sample 0's largest may be the whole source
    if not kept_everything:
        for i in range(found.samples):
            store.build("stream-units", _units_key(fingerprint, sizes[-1], i, found.seed),
                        lambda path, i=i: _write_units(found.ordered(i), path))
        lazy = LazySamples(corpus, store, options, fingerprint, found.notes, found.seed, found.samples, sizes[-1],
                           tuple(sizes))
        return StreamSamples(corpus.name, fingerprint, found.words, found.units, lazy, (), found.notes)
    out: dict[int, list[TokenizedCorpus]] = {size: [] for size in sizes}
    whole: TokenizedCorpus | None = None

    def record(key: str, count: int, units: int, size: int, i: int) -> dict[str, Any]:
        return _sample_meta(key, count, units, fingerprint, options, found.notes, size, i, found.seed)

    for i in range(found.samples):
        top_size = sizes[-1]
        top_key = digest("stream-sample", fingerprint, top_size, i, found.seed)

        def build_top(path: Path, i: int = i, size: int = top_size, key: str = top_key) -> dict[str, Any]:
            tokens_of = unit_tokenizer(corpus.segmenter(), options)
            _, count, units = write_tokens(_cut(_tokens_in_order(found.ordered(i), tokens_of), size), path)
            return record(key, count, units, size, i)

        top = from_artefact(corpus.name, store.build("sample", top_key, build_top), store)
        if i == 0 and top.n_tokens < top_size:
            whole = top  # the source is smaller than the largest size: used whole there, the same for every sample
        for size in sizes:
            if whole is not None and whole.n_tokens < size:
                out[size].append(whole)
                continue
            if size == top_size:
                out[size].append(top)
                continue
            out[size].append(_prefix_sample(corpus, top, size, i, found.seed, fingerprint, options, found.notes,
                                            store))
    whole_sizes = tuple(size for size in sizes if whole is not None and whole.n_tokens < size)
    return StreamSamples(corpus.name, fingerprint, found.words, found.units, out, whole_sizes, found.notes)


def _units_key(fingerprint: str, top: int, index: int, seed: int) -> str:
    return digest("stream-units", fingerprint, top, index, seed)


_UNITS_FILE = "units.jsonl.gz"


def _write_units(units: Iterable[Unit], path: Path) -> dict[str, Any]:
    """A sample's kept units in key order: a JSON list of up to 4,096 units a line (a token tuple as a list)."""
    count = 0
    with gzip.open(path / _UNITS_FILE, "wt", encoding="utf-8", compresslevel=1) as f:
        batch: list[Unit] = []
        for unit in units:
            batch.append(unit)
            if len(batch) >= 4096:
                f.write(json.dumps(batch) + "\n")
                count += len(batch)
                batch = []
        if batch:
            f.write(json.dumps(batch) + "\n")
            count += len(batch)
    return {"n_units": count}


def _read_units(path: Path) -> Iterator[Unit]:
    with gzip.open(path / _UNITS_FILE, "rt", encoding="utf-8") as f:
        for line in f:
            for unit in json.loads(line):
                yield unit if isinstance(unit, str) else tuple(unit)


class LazySamples(Mapping[int, list[TokenizedCorpus]]):
    """A pass's samples by size, each tokenized (and stored) when first asked for, from the kept units
    the pass stored (or, for a pass stored before those were, from its largest sample). Picklable: a
    Dask task may return it."""

    def __init__(self, corpus: Corpus, store: ArtefactStore, options: TokenizerOptions, fingerprint: str,
                 notes: ReadNotes, seed: int, samples: int, top: int, sizes: tuple[int, ...]) -> None:
        self.corpus, self.store, self.options, self.fingerprint = corpus, store, options, fingerprint
        self.notes, self.seed, self.count, self.top, self.sizes = notes, seed, samples, top, sizes
        self.drawn: dict[int, list[TokenizedCorpus]] = {}

    def __getitem__(self, size: int) -> list[TokenizedCorpus]:
        if size not in self.sizes:
            raise KeyError(size)
        if size not in self.drawn:
            self.drawn[size] = [self.one(size, i) for i in range(self.count)]
        return self.drawn[size]

    def __iter__(self) -> Iterator[int]:
        return iter(self.sizes)

    def __len__(self) -> int:
        return len(self.sizes)

    def one(self, size: int, i: int) -> TokenizedCorpus:
        """Sample ``i`` at ``size``: stored already, the start of its stored largest size, or tokenized
        from the kept units until ``size`` tokens."""
        store, name = self.store, self.corpus.name
        key = digest("stream-sample", self.fingerprint, size, i, self.seed)
        found = store.get("sample", key)
        if found is not None:
            return from_artefact(name, found, store)
        top = store.get("sample", digest("stream-sample", self.fingerprint, self.top, i, self.seed))
        if top is not None:
            return _prefix_sample(self.corpus, from_artefact(name, top, store), size, i, self.seed,
                                  self.fingerprint, self.options, self.notes, store)
        units = store.get("stream-units", _units_key(self.fingerprint, self.top, i, self.seed))
        if units is None:
            raise CorpusError(f"{name}: the stored sample of its pass is gone; sample it again")

        def build(path: Path) -> dict[str, Any]:
            tokens_of = unit_tokenizer(self.corpus.segmenter(), self.options)
            _, count, n_units = write_tokens(_cut(_tokens_in_order(_read_units(units), tokens_of), size), path)
            return _sample_meta(key, count, n_units, self.fingerprint, self.options, self.notes, size, i, self.seed)

        return from_artefact(name, store.build("sample", key, build), store)


def _sample_meta(key: str, count: int, units: int, fingerprint: str, options: TokenizerOptions, notes: ReadNotes,
                 size: int, index: int, seed: int) -> dict[str, Any]:
    """The manifest record of one sample of the pass (the same wherever and whenever it is written)."""
    return {"fingerprint": key, "n_tokens": count, "n_units": units, "parent": fingerprint,
            "options": options.as_dict(), "read_notes": notes.as_dict(),
            "sample": {"n_tokens": size, "index": index, "seed": seed}}


def _prefix_sample(corpus: Corpus, top: TokenizedCorpus, size: int, index: int, seed: int, fingerprint: str,
                   options: TokenizerOptions, notes: ReadNotes, store: ArtefactStore) -> TokenizedCorpus:
    """Sample ``index`` at ``size``: the start of the same sample at a larger size, read back, not tokenized."""

    key = digest("stream-sample", fingerprint, size, index, seed)

    def build(path: Path) -> dict[str, Any]:
        _, count, units = write_tokens(_cut(top.sentences(), size), path)
        return _sample_meta(key, count, units, fingerprint, options, notes, size, index, seed)

    return from_artefact(corpus.name, store.build("sample", key, build), store)


# Sizes at which a pass is looked for before reading again: a pass kept for a larger size serves every smaller one.
_REMEMBERED_TOPS = (10_000, 30_000, 100_000, 300_000, 1_000_000, 3_000_000, 10_000_000, 30_000_000, 100_000_000)


def sample_source(corpus: Corpus, sizes: Sequence[int], samples: int, seed: int, store: ArtefactStore,
                  options: TokenizerOptions = TokenizerOptions(), progress: Progress = _quiet,
                  watch: Callable[[Iterable[Any]], Iterable[Any]] | None = None) -> StreamSamples:
    """Every sample of ``corpus`` for every size in ``sizes`` (tokens), ``samples`` of each, in one pass.

    Nothing but the kept units is held or stored; the result is the same bytes whatever the order
    of the corpus's files and however many workers read them (:mod:`simcore.distributed.shards`).
    A pass is remembered in the store (for files of unchanged path, size and modification time):
    a later call for sizes up to that pass's largest reads nothing (a smaller sample is the start
    of the larger one, read back from the store); only a larger size reads the source again.
    """

    if not isinstance(corpus, Corpus):
        raise InvalidArgument(f"sample_source needs a Corpus, not {type(corpus).__name__}")
    if not isinstance(store, ArtefactStore):
        raise InvalidArgument(f"sample_source needs an ArtefactStore, not {type(store).__name__}")
    if not isinstance(options, TokenizerOptions):
        raise InvalidArgument(f"options must be TokenizerOptions, not {type(options).__name__}")
    corpus.check_readable()
    ordered = _check(sizes, samples, seed)
    remembered = remembered_pass(corpus, ordered, samples, seed, store, options)
    if remembered is not None:
        return remembered
    found = read_candidates(corpus, ordered[-1], samples, seed, progress, watch)
    result = draw_samples(corpus, found, ordered, store, options)
    remember_pass(corpus, result, samples, seed, store, options)
    return result


def remembered_pass(corpus: Corpus, sizes: Sequence[int], samples: int, seed: int, store: ArtefactStore,
                    options: TokenizerOptions = TokenizerOptions()) -> StreamSamples | None:
    """``sizes`` from an earlier pass over the same files (for the largest of them or more), or None."""
    ordered = _check(sizes, samples, seed)
    for top in (ordered[-1], *(t for t in _REMEMBERED_TOPS if t > ordered[-1])):
        remembered = _remembered(corpus, store, top, ordered, samples, seed, options)
        if remembered is not None:
            return remembered
    return None


def remember_pass(corpus: Corpus, result: StreamSamples, samples: int, seed: int, store: ArtefactStore,
                  options: TokenizerOptions) -> None:
    """Record the largest samples a pass over these files made (also after a pass on a cluster), for later calls."""
    top = max(result.samples)
    pass_key = _pass_key(corpus, top, samples, seed, options)
    if pass_key and store.get("stream-pass", pass_key) is None:
        whole = result.samples[top][0] if top in result.whole else None
        store.put_json("stream-pass", pass_key, {
            "fingerprint": result.fingerprint, "words": result.words, "units": result.units,
            "notes": result.notes.as_dict(), "whole": None if whole is None else whole.n_tokens})


def _pass_key(corpus: Corpus, top: int, samples: int, seed: int, options: TokenizerOptions) -> str | None:
    """A key for a pass over unchanged files (path, size, modification time) up to ``top`` tokens."""
    try:
        files = [(str(f.resolve()), f.stat().st_size, f.stat().st_mtime_ns) for f in corpus.files]
    except OSError:
        return None
    return digest("stream-pass", files, corpus.fmt, corpus.text_field, corpus.encoding, corpus.labels,
                  corpus.tokens_field, corpus.tags_field, top, samples, seed, options.as_dict(), RANGE_BYTES)


def _remembered(corpus: Corpus, store: ArtefactStore, top: int, sizes: list[int], samples: int, seed: int,
                options: TokenizerOptions) -> StreamSamples | None:
    """``sizes`` from an earlier pass up to ``top`` over the same files, when its samples are still stored."""

    pass_key = _pass_key(corpus, top, samples, seed, options)
    record = store.get_json("stream-pass", pass_key) if pass_key else None
    if record is None:
        return None
    notes = ReadNotes.from_dict(record["notes"])
    if record["whole"] is None:  # the source is larger than top: every size is drawn when asked for
        fingerprint = record["fingerprint"]
        if any(store.get("sample", digest("stream-sample", fingerprint, top, i, seed)) is None
               and store.get("stream-units", _units_key(fingerprint, top, i, seed)) is None for i in range(samples)):
            return None
        lazy = LazySamples(corpus, store, options, fingerprint, notes, seed, samples, top, tuple(sizes))
        return StreamSamples(corpus.name, fingerprint, record["words"], record["units"], lazy, (), notes)
    # each sample's largest size, stored under the key draw_samples gives it (the whole source is sample 0's)
    paths = [store.get("sample", digest("stream-sample", record["fingerprint"], top, i, seed)) for i in range(samples)]
    if any(p is None for p in paths):
        return None
    tops = [from_artefact(corpus.name, p, store) for p in paths if p is not None]
    whole = tops[0]
    out: dict[int, list[TokenizedCorpus]] = {}
    for size in sizes:
        if whole.n_tokens < size:
            out[size] = [whole] * samples
        elif size == top:
            out[size] = tops
        else:
            out[size] = [_prefix_sample(corpus, t, size, i, seed, record["fingerprint"], options, notes, store)
                         for i, t in enumerate(tops)]
    whole_sizes = tuple(size for size in sizes if whole.n_tokens < size)
    return StreamSamples(corpus.name, record["fingerprint"], record["words"], record["units"], out, whole_sizes,
                         notes)
