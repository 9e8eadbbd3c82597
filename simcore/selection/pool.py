"""Reading the pool: batches of units (original text and tokens), its fingerprint and a stored sample.

Memory is bounded by characters, whatever the pool's lines: a selection unit holds at most
:data:`MAX_UNIT_CHARS` characters (a longer line is cut at spaces into several units, counted, each
scored and written as its own line), a batch closes at :data:`BATCH_CHARS` characters, and the pool
sample holds at most :data:`SAMPLE_CHARS` characters. Every reader of the pool for a selection (the
scoring pass, the sample, the written selection, the page's examples) goes through :func:`pool_units`,
so a unit's index is the same in all of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..corpora.corpus import Corpus, unit_tokenizer
from ..corpora.notes import ReadNotes
from ..corpora.tokenize import TokenizerOptions, normalise, tokenize
from ..utils.store import ArtefactStore, digest
from .options import Progress, quiet

MAX_UNIT_CHARS = 100_000   # characters in one selection unit; a longer pool line is cut at spaces
BATCH_CHARS = 4_000_000    # a batch closes when its units hold this many characters (or at its unit count)
SAMPLE_CHARS = 30_000_000  # characters in the stored pool sample the pool-side models train on


@dataclass
class Batch:
    """Consecutive pool units: their first index, original texts and normalised tokens."""

    start: int
    texts: list[str]
    tokens: list[list[str]]


def unit_text(unit: str | list[str]) -> str:
    """A pool unit as one line of original text (line breaks inside it become spaces)."""
    if isinstance(unit, str):
        return " ".join(part.strip() for part in unit.splitlines() if part.strip())
    return " ".join(unit)


def unit_tokens(unit: str | list[str], options: TokenizerOptions) -> list[str]:
    """A unit's tokens as the English regex cuts them (see :func:`pool_tokenizer` for the pool's language)."""
    if isinstance(unit, str):
        return tokenize(unit, options)
    return [normalise(t, options) for t in unit]


def pool_tokenizer(pool: Corpus, options: TokenizerOptions) -> Callable[[str | list[str]], list[str]]:
    """The tokens of a pool unit cut as ``matrix`` cuts the pool: by its language's segmenter (ICU for
    Chinese, Japanese, Thai, ...; the English regex for English, where it is :func:`unit_tokens`)."""
    return unit_tokenizer(pool.segmenter(), options)


class PoolPosition:
    """The reading position of a pool, updated by Corpus.units' progress callback, and how many of the
    lines read so far were longer than :data:`MAX_UNIT_CHARS` (``long_lines``, cut into ``pieces`` units)."""

    def __init__(self) -> None:
        self.value = 0.0
        self.long_lines = 0
        self.pieces = 0
        self.unit_chars = MAX_UNIT_CHARS

    def __call__(self, message: str, fraction: float) -> None:
        self.value = fraction


def split_text(text: str, limit: int) -> Iterator[str]:
    """``text`` in pieces of at most ``limit`` characters, each cut after the last space before the
    limit when there is one (the space dropped; a word longer than ``limit`` is cut where it must)."""
    start = 0
    while start < len(text):
        end = min(len(text), start + limit)
        if end < len(text):
            space = text.rfind(" ", start + 1, end + 1)
            if space > start:
                yield text[start:space]
                start = space + 1
                continue
        yield text[start:end]
        start = end


def _split_tokens(tokens: list[str], limit: int) -> Iterator[list[str]]:
    """Pre-tokenized units (CoNLL sentences) in pieces whose joined text holds at most ``limit`` characters."""
    piece: list[str] = []
    size = 0
    for token in tokens:
        for part in (split_text(token, limit) if len(token) > limit else (token,)):
            if piece and size + 1 + len(part) > limit:
                yield piece
                piece, size = [], 0
            size += len(part) + (1 if piece else 0)
            piece.append(part)
    if piece:
        yield piece


def pool_units(pool: Corpus, where: PoolPosition | None = None,
               notes: ReadNotes | None = None) -> Iterator[str | list[str]]:
    """The pool's selection units in order: its units, each longer than :data:`MAX_UNIT_CHARS` characters
    cut into several (counted in ``where``). Every index of a selection is an index into this stream.
    Rows the reader skips (null Hub rows, blank tokens) are counted in ``notes``."""
    if where is not None:
        where.unit_chars = MAX_UNIT_CHARS
    for unit in pool.units(where or quiet, notes):
        if isinstance(unit, str):
            if len(unit) <= MAX_UNIT_CHARS or len(text := unit_text(unit)) <= MAX_UNIT_CHARS:
                yield unit  # as read (unit_text never lengthens it): tokenized exactly as before the cap
                continue
            pieces: Iterator[Any] = split_text(text, MAX_UNIT_CHARS)
        elif sum(map(len, unit)) + len(unit) - 1 <= MAX_UNIT_CHARS:
            yield unit
            continue
        else:
            pieces = _split_tokens(unit, MAX_UNIT_CHARS)
        if where is not None:
            where.long_lines += 1
        for piece in pieces:
            if where is not None:
                where.pieces += 1
            yield piece


def pool_batches(pool: Corpus, options: TokenizerOptions, size: int, where: PoolPosition | None = None,
                 with_tokens: bool = True, notes: ReadNotes | None = None) -> Iterator[Batch]:
    """The pool's selection units in batches of ``size`` units or :data:`BATCH_CHARS` characters, whichever
    comes first (``tokens`` left empty without ``with_tokens``)."""
    texts: list[str] = []
    tokens: list[list[str]] = []
    start = chars = 0
    tokens_of = pool_tokenizer(pool, options) if with_tokens else None
    for unit in pool_units(pool, where, notes):
        text = unit_text(unit)
        texts.append(text)
        chars += len(text)
        if tokens_of is not None:
            tokens.append(tokens_of(unit))
        if len(texts) >= size or chars >= BATCH_CHARS:
            yield Batch(start, texts, tokens)
            start += len(texts)
            texts, tokens, chars = [], [], 0
    if texts:
        yield Batch(start, texts, tokens)


def pool_fingerprint(pool: Corpus, options: TokenizerOptions) -> str:
    """The pool as a selection reads it: its content and the unit cap that cuts its lines."""
    return digest("selection-pool", pool.raw_fingerprint(options), MAX_UNIT_CHARS)


def pool_sample(pool: Corpus, fingerprint: str, store: ArtefactStore, n: int, seed: int,
                progress: Progress = quiet) -> Path:
    """A uniform random sample of ``n`` pool units (reservoir sampling, pool order kept), at most
    :data:`SAMPLE_CHARS` characters in all.

    The stored artefact holds ``text.txt`` (original text, one unit a line, for NER) and
    ``index.npy`` (each line's position in the pool); callers tokenize it as they need. Reading the
    pool for it does not tokenize anything. While the drawn units fit the budget their texts are kept
    as they are drawn (one pass); once they do not, only their positions and lengths are kept, a
    random subset that fits the budget is taken and a second pass reads its texts. The metadata says
    how many drawn units the budget left out.
    """
    key = digest("selection-pool-sample", fingerprint, n, seed, SAMPLE_CHARS)

    def build(out: Path) -> dict[str, Any]:
        rng = np.random.default_rng(seed)
        reservoir: list[tuple[int, int, str | None]] = []  # (position, characters, text while within the budget)
        where = PoolPosition()
        count = held = 0
        texts_kept = True

        def drawn(i: int, unit: str | list[str]) -> tuple[int, int, str | None]:
            nonlocal held, texts_kept
            text = unit_text(unit)
            if texts_kept and held + len(text) > SAMPLE_CHARS:
                texts_kept = False  # from here on positions only: the texts are read again in a second pass
                reservoir[:] = [(p, c, None) for p, c, _ in reservoir]
            held += len(text) if texts_kept else 0
            return i, len(text), text if texts_kept else None

        # Algorithm L (Li 1994): skip ahead geometrically once the reservoir is full.
        w = math.exp(math.log(rng.random()) / n)
        next_pick = n + int(math.log(rng.random()) / math.log(1 - w)) if w < 1 else n
        for i, unit in enumerate(pool_units(pool, where)):
            count = i + 1
            if i < n:
                reservoir.append(drawn(i, unit))
            elif i == next_pick:
                slot = int(rng.integers(n))
                held -= reservoir[slot][1] if texts_kept else 0
                reservoir[slot] = drawn(i, unit)
                w *= math.exp(math.log(rng.random()) / n)
                next_pick += 1 + (int(math.log(rng.random()) / math.log(1 - w)) if w < 1 else 0)
            if i % 50_000 == 0:
                progress(f"sampling the pool ({count:,} sentences read)", where.value)
        reservoir.sort()
        if not texts_kept:
            reservoir[:] = _within_budget(reservoir, np.random.default_rng([seed, 1]))
            reservoir[:] = _read_texts(pool, reservoir, progress)
        with open(out / "text.txt", "w", encoding="utf-8") as f:
            for _, _, text in reservoir:
                f.write(f"{text}\n")
        np.save(out / "index.npy", np.asarray([i for i, _, _ in reservoir], dtype=np.int64))
        return {"n": len(reservoir), "pool_units": count, "drawn": min(n, count),
                "left_out_for_characters": min(n, count) - len(reservoir), "characters": sum(c for _, c, _ in reservoir),
                "character_budget": SAMPLE_CHARS}

    return store.build("selection-pool-sample", key, build) / "text.txt"


def _within_budget(drawn: list[tuple[int, int, Any]], rng: np.random.Generator) -> list[tuple[int, int, Any]]:
    """A uniform random subset of the drawn units that fits :data:`SAMPLE_CHARS` (drawn in a random order
    until the next would not fit), in pool order; at least one unit."""
    kept, total = [], 0
    for r in rng.permutation(len(drawn)):
        if kept and total + drawn[r][1] > SAMPLE_CHARS:
            break
        kept.append(drawn[r])
        total += drawn[r][1]
    return sorted(kept)


def _read_texts(pool: Corpus, chosen: list[tuple[int, int, Any]], progress: Progress) -> list[tuple[int, int, str]]:
    """The texts of the units at the chosen positions (one more pass over the pool, stopping after the last)."""
    wanted = {i: c for i, c, _ in chosen}
    last = max(wanted) if wanted else -1
    found: list[tuple[int, int, str]] = []
    where = PoolPosition()
    for i, unit in enumerate(pool_units(pool, where)):
        if i in wanted:
            found.append((i, wanted[i], unit_text(unit)))
            if i >= last:
                break
        if i % 50_000 == 0:
            progress(f"reading the pool sample ({len(found):,} of {len(wanted):,} sentences)", where.value)
    return found


def read_lines(path: Path) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]

