"""Reading the pool: batches of units (original text and tokens), its fingerprint and a stored sample."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..corpus import Corpus
from ..store import ArtefactStore, digest
from ..tokenize import TokenizerOptions, normalise, tokenize
from .options import Progress, quiet


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
    if isinstance(unit, str):
        return tokenize(unit, options)
    return [normalise(t, options) for t in unit]


class PoolPosition:
    """The reading position of a pool, updated by Corpus.units' progress callback."""

    def __init__(self) -> None:
        self.value = 0.0

    def __call__(self, message: str, fraction: float) -> None:
        self.value = fraction


def pool_batches(pool: Corpus, options: TokenizerOptions, size: int, where: PoolPosition | None = None,
                 with_tokens: bool = True) -> Iterator[Batch]:
    """The pool in batches of ``size`` units (``tokens`` left empty without ``with_tokens``)."""
    texts: list[str] = []
    tokens: list[list[str]] = []
    start = 0
    for unit in pool.units(where or quiet):
        texts.append(unit_text(unit))
        if with_tokens:
            tokens.append(unit_tokens(unit, options))
        if len(texts) >= size:
            yield Batch(start, texts, tokens)
            start += len(texts)
            texts, tokens = [], []
    if texts:
        yield Batch(start, texts, tokens)


def pool_fingerprint(pool: Corpus, options: TokenizerOptions) -> str:
    return digest("selection-pool", pool.raw_fingerprint(options))


def pool_sample(pool: Corpus, fingerprint: str, store: ArtefactStore, n: int, seed: int,
                progress: Progress = quiet) -> Path:
    """A uniform random sample of ``n`` pool units (reservoir sampling, pool order kept).

    The stored artefact holds ``text.txt`` (original text, one unit a line, for NER) and
    ``index.npy`` (each line's position in the pool); callers tokenize it as they need. Reading the pool for it does not tokenize anything.
    """
    key = digest("selection-pool-sample", fingerprint, n, seed)

    def build(out: Path) -> dict[str, Any]:
        rng = np.random.default_rng(seed)
        reservoir: list[tuple[int, str]] = []
        where = PoolPosition()
        count = 0
        # Algorithm L (Li 1994): skip ahead geometrically once the reservoir is full.
        w = math.exp(math.log(rng.random()) / n)
        next_pick = n + int(math.log(rng.random()) / math.log(1 - w)) if w < 1 else n
        for i, unit in enumerate(pool.units(where)):
            count = i + 1
            if i < n:
                reservoir.append((i, unit_text(unit)))
            elif i == next_pick:
                reservoir[int(rng.integers(n))] = (i, unit_text(unit))
                w *= math.exp(math.log(rng.random()) / n)
                next_pick += 1 + (int(math.log(rng.random()) / math.log(1 - w)) if w < 1 else 0)
            if i % 50_000 == 0:
                progress(f"sampling the pool ({count:,} sentences read)", where.value)
        reservoir.sort()
        with open(out / "text.txt", "w", encoding="utf-8") as f:
            for _, text in reservoir:
                f.write(text + "\n")
        np.save(out / "index.npy", np.asarray([i for i, _ in reservoir], dtype=np.int64))
        return {"n": len(reservoir), "pool_units": count}

    return store.build("selection-pool-sample", key, build) / "text.txt"


def read_lines(path: Path) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]

