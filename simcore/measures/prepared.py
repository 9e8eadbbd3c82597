"""What a measure scores: a prepared source sample and a prepared target, and the :class:`Score` it gives.

What a measure needs from a source (n-gram counts, a KenLM model, word vectors) is built once per
source fingerprint and options by :class:`PreparedSource` and kept in the artefact store; the
target is small and held in memory by :class:`PreparedTarget`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..corpora.corpus import TokenizedCorpus
from ..utils.store import ArtefactStore
from .counts import NgramCounts, TokenHasher, count_sentences, prepare_counts
from .options import MeasureOptions


@dataclass
class Score:
    """One measure's value for one source sample and one target, with details."""

    value: float
    details: dict[str, Any] = field(default_factory=dict)
    # The value on each bootstrap replicate of the target (see simcore.measures.uncertainty); None when not resampled.
    replicates: list[float] | None = None


ProgressFn = Callable[[str, float], None]


class PreparedSource:
    """A source (sub-)corpus with lazily built, stored artefacts."""

    def __init__(self, sample: TokenizedCorpus, store: ArtefactStore, options: MeasureOptions,
                 progress: ProgressFn | None = None, language: str = "en") -> None:
        self.sample = sample
        self.store = store
        self.options = options
        self.language = language  # ISO code or "und" (simcore.corpora.lang): chooses how content words are found
        self.progress = progress
        self._counts: NgramCounts | None = None
        self._cache: dict[str, Any] = {}

    @property
    def name(self) -> str:
        return self.sample.name

    def counts(self) -> NgramCounts:
        if self._counts is None:
            self._counts = prepare_counts(self.sample, self.store, max(3, self.options.jsd_max_n), self.progress)
        return self._counts

    def cached(self, key: str, build: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]


class PreparedTarget:
    """A target corpus held in memory (targets are small), with derived data cached."""

    def __init__(self, tokenized: TokenizedCorpus, store: ArtefactStore, options: MeasureOptions,
                 raw: Any = None, language: str = "en") -> None:
        self.tokenized = tokenized
        self.store = store
        self.options = options
        self.raw = raw
        self.language = language  # ISO code or "und" (simcore.corpora.lang): chooses how content words are found
        self.sentences: list[list[str]] = list(tokenized.sentences())
        self.hasher = TokenHasher()
        self._counts: NgramCounts | None = None
        self._cache: dict[str, Any] = {}

    @property
    def name(self) -> str:
        return self.tokenized.name

    @property
    def fingerprint(self) -> str:
        return self.tokenized.fingerprint

    def counts(self) -> NgramCounts:
        if self._counts is None:
            self._counts = count_sentences(self.sentences, max(3, self.options.jsd_max_n), self.hasher)
        return self._counts

    def types(self) -> list[str]:
        return self.cached("types", lambda: sorted({t for s in self.sentences for t in s}))

    def cached(self, key: str, build: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]
