"""Counting a corpus's tokens and entity mentions: sizes, vocabulary, sentence lengths, the most frequent
words of a stored token file, and entity mentions per type of tagged sentences.

Below :mod:`.corpus`, so that the pass that tokenizes a corpus counts it too (the Corpora page then
only reads what was counted); :mod:`.stats` puts the counts together for the page.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .notes import ReadNotes

if TYPE_CHECKING:
    import pyarrow as pa

Tagged = Iterable[tuple[list[str], list[str]]]

_PUNCT = re.compile(r"^[^\w]+$")
TOP_WORDS = 20  # the most frequent words kept with a corpus's counts
COUNTS_VERSION = 3  # 3: the notes of reading the tags (scheme, null rows) kept


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


def sentence_stats(sentences: Iterable[list[str]], top: int = TOP_WORDS) -> dict[str, Any]:
    """Tokens, types, TTR, sentence lengths and the most frequent words of tokenized sentences."""
    freq: Counter[str] = Counter()
    lengths: list[int] = []
    for sentence in sentences:
        if sentence:
            freq.update(sentence)
            lengths.append(len(sentence))
    words = [(w, c) for w, c in sorted(freq.items(), key=lambda x: (-x[1], x[0])) if not _PUNCT.match(w)]
    return _summary(np.asarray(lengths, dtype=np.int64), len(freq), words[:top])


def _summary(lengths: np.ndarray, types: int, top_words: list[tuple[str, int]]) -> dict[str, Any]:
    """The statistics of sentences of these lengths (none empty), in this order."""
    tokens = int(lengths.sum())
    edges, counts = length_histogram(lengths, clip_quantile=0.99)
    some = lengths.size > 0
    return {
        "tokens": tokens,
        "types": types,
        "ttr": types / tokens if tokens else float("nan"),
        "sentences": int(lengths.size),
        "mean_length": float(lengths.mean()) if some else float("nan"),
        "median_length": float(np.median(lengths)) if some else float("nan"),
        "max_length": int(lengths.max()) if some else 0,
        "length_edges": edges,
        "length_counts": counts,
        "top_words": top_words,
    }


# Every character str.split() cuts at but the token file's own separators (space, newline): a block
# holding one is counted line by line as Python reads it, so that both ways give the same tokens.
ODD_SPACES = ("\t\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
              "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def _odd_bytes() -> tuple[np.ndarray, dict[int, tuple[int, np.ndarray]]]:
    """The one-byte odd spaces, and per lead byte of the others their width and what the bytes
    after the lead read as (a big-endian number)."""
    codes = [c.encode("utf-8") for c in ODD_SPACES]
    wide: dict[int, tuple[int, list[int]]] = {}
    for code in (c for c in codes if len(c) > 1):
        wide.setdefault(code[0], (len(code), []))[1].append(int.from_bytes(code[1:], "big"))
    return (np.array([c[0] for c in codes if len(c) == 1], dtype=np.intp),
            {lead: (width, np.array(after, dtype=np.int64))
             for lead, (width, after) in wide.items()})


_ODD_ASCII, _ODD_WIDE = _odd_bytes()
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # the lines of a file read as text (universal newlines)
BLOCK_BYTES = 1 << 23  # a token file is counted this much at a time (and up to its next line end)


def token_file_stats(path: Path, top: int = TOP_WORDS, block_bytes: int = BLOCK_BYTES) -> dict[str, Any]:
    """:func:`sentence_stats` of a stored token file (a unit a line, its tokens joined by spaces),
    the same values counted by numpy and pyarrow a block of lines at a time: no Python object
    is made per token, the most frequent words are sorted out of the few that can be among them."""
    words: list[pa.Table] = []
    lengths: list[np.ndarray] = []
    kept = 0
    for block in _line_blocks(path, block_bytes):
        table, block_lengths = _count_block(block)
        words.append(table)
        lengths.append(block_lengths)
        kept += table.num_rows
        if len(words) > 1 and kept > 4_000_000:  # many blocks' words: merged as they come
            words, kept = [_merge(words)], 0
    merged = _merge(words) if len(words) > 1 else words[0] if words else _count_lines("")[0]
    counts = merged.column("n").to_numpy() if merged.num_rows else np.zeros(0, dtype=np.int64)
    found = np.concatenate(lengths) if lengths else np.zeros(0, dtype=np.int64)
    top_words = _top_words(merged.column("w"), counts, top)
    return _summary(found.astype(np.int64), merged.num_rows, top_words)


def _line_blocks(path: Path, size: int) -> Iterator[bytes]:
    """The file's bytes in blocks of whole lines (each but the last ending with a newline); a line
    longer than ``size`` makes its block longer, read once."""
    with open(path, "rb") as f:
        pending: list[bytes] = []
        while data := f.read(size):
            cut = data.rfind(b"\n") + 1
            if not cut:
                pending.append(data)
                continue
            yield b"".join([*pending, data[:cut]])
            pending = [data[cut:]]
        rest = b"".join(pending)
        if rest:
            yield rest


def _has_odd_space(data: np.ndarray, newlines: int) -> bool:
    """Whether UTF-8 bytes (holding ``newlines`` newlines) hold a character of :data:`ODD_SPACES`:
    looked for only where a byte below a space other than a newline, or a lead byte of one of
    them, is."""
    if np.count_nonzero(data < 0x20) > newlines and np.isin(data[data < 0x20], _ODD_ASCII).any():
        return True
    leads = np.flatnonzero((data >= min(_ODD_WIDE)) & (data <= max(_ODD_WIDE)))
    if not leads.size:
        return False
    last = data.size - 1

    def byte_after(at: np.ndarray, step: int) -> np.ndarray:  # 0 past the end
        return np.where(at + step <= last, data[np.minimum(at + step, last)], 0).astype(np.int64)

    for lead, (width, follows) in _ODD_WIDE.items():  # a lead byte is never inside a character
        at = leads[data[leads] == lead]
        if at.size:
            after = byte_after(at, 1) if width == 2 else byte_after(at, 1) * 256 + byte_after(at, 2)
            if np.isin(after, follows).any():
                return True
    return False


def _count_block(block: bytes) -> tuple[pa.Table, np.ndarray]:
    """(each word of a block of lines and its count, the length of each non-empty line)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    data = np.frombuffer(block, dtype=np.uint8)
    is_end = data == 0x0A
    line_ends = np.flatnonzero(is_end)
    if _has_odd_space(data, line_ends.size):
        return _count_lines(block.decode("utf-8"))
    seps = np.flatnonzero(is_end | (data == 0x20))
    if seps.size and seps[0] > 0 and is_end[-1] and np.all(np.diff(seps) > 1):
        # As write_tokens writes: one separator after each word. Each word and its separator (a
        # newline made a space) is one value, in the block as it is; the space is dropped after.
        offsets = np.concatenate([np.zeros(1, dtype=np.int64), seps + 1])
        spaced = block.replace(b"\n", b" ")
        tokens = pa.LargeStringArray.from_buffers(seps.size, pa.py_buffer(offsets),
                                                  pa.py_buffer(spaced))
        counted = pc.value_counts(tokens)
        words = pc.utf8_slice_codeunits(counted.field("values"), 0, -1)
        per_line = np.diff(np.searchsorted(seps, line_ends), prepend=-1)
        return pa.table({"w": words, "n": counted.field("counts")}), per_line
    in_word = ~is_end & (data != 0x20)
    edges = np.diff(in_word.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    offsets = np.zeros(starts.size + 1, dtype=np.int64)
    np.cumsum(ends - starts, out=offsets[1:])
    letters = block.translate(None, b" \n")  # the words' bytes end to end
    tokens = pa.LargeStringArray.from_buffers(starts.size, pa.py_buffer(offsets),
                                              pa.py_buffer(letters))
    counted = pc.value_counts(tokens)
    before = np.searchsorted(starts, line_ends)  # words before each line end
    per_line = np.diff(before, prepend=0, append=starts.size)
    return (pa.table({"w": counted.field("values"), "n": counted.field("counts")}),
            per_line[per_line > 0])


def _count_lines(text: str) -> tuple[pa.Table, np.ndarray]:
    """:func:`_count_block` of a block with odd spaces, read line by line as Python reads text."""
    import pyarrow as pa

    freq: Counter[str] = Counter()
    lengths: list[int] = []
    for line in _LINE_BREAK.split(text):
        tokens = line.split()
        if tokens:
            freq.update(tokens)
            lengths.append(len(tokens))
    table = pa.table({"w": pa.array(list(freq), type=pa.large_string()),
                      "n": pa.array(list(freq.values()), type=pa.int64())})
    return table, np.asarray(lengths, dtype=np.int64)


def _merge(tables: list[pa.Table]) -> pa.Table:
    """One row per word of several blocks' counts, its counts summed."""
    import pyarrow as pa

    summed = pa.concat_tables(tables).group_by("w").aggregate([("n", "sum")])
    return pa.table({"w": summed.column("w"), "n": summed.column("n_sum")})


def _top_words(words: pa.ChunkedArray, counts: np.ndarray, top: int) -> list[tuple[str, int]]:
    """The ``top`` most frequent words that are not punctuation, the most frequent first (ties in
    alphabetical order), as :func:`sentence_stats` sorts them: sorted out of the words counted at
    least as often as the ``k`` most frequent, ``k`` growing until enough of them are words."""
    k = top if top > 0 else counts.size
    while True:
        if k >= counts.size:
            at = np.arange(counts.size)
        else:
            at = np.flatnonzero(counts >= np.partition(counts, counts.size - k)[counts.size - k])
        pairs = sorted(zip(words.take(at).to_pylist(), counts[at].tolist()),
                       key=lambda x: (-x[1], x[0]))
        found = [(w, c) for w, c in pairs if not _PUNCT.match(w)]
        if len(found) >= top or k >= counts.size:
            return found[:top]
        k *= 4


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


def corpus_counts(tokens_file: Path, tagged_sentences: Callable[[ReadNotes], Tagged],
                  top: int = TOP_WORDS) -> dict[str, Any]:
    """Everything counted of one corpus: :func:`token_file_stats` of its token file, and the entity
    mentions of its tagged sentences (``tagged_sentences(notes)``, none for raw text) with what
    reading the tags found (``tag_notes``)."""
    tag_notes = ReadNotes()
    entities, tagged = entity_counts(tagged_sentences(tag_notes))
    return {**token_file_stats(tokens_file, top), "entities": entities, "tagged_sentences": tagged,
            "tag_notes": tag_notes.as_dict()}
