"""The target (task-level) corpus as the scorers see it."""

from __future__ import annotations

import numpy as np

from ..corpus import Corpus, TokenizedCorpus, sample_corpus, tokenize_corpus
from ..store import ArtefactStore
from .options import Progress, SelectionOptions, quiet
from .pool import unit_text


class Target:
    """The target (task-level) corpus: tokenized, optionally sampled, with its sentence set."""

    def __init__(self, corpus: Corpus, store: ArtefactStore, options: SelectionOptions,
                 progress: Progress = quiet) -> None:
        self.corpus = corpus
        self.full: TokenizedCorpus = tokenize_corpus(corpus, store, options.tokenizer, progress)
        self.sample: TokenizedCorpus = (
            sample_corpus(self.full, options.target_tokens, 0, store, options.seed)
            if options.target_tokens else self.full)
        self._sentences: set[str] | None = None

    @property
    def name(self) -> str:
        return self.corpus.name

    @property
    def fingerprint(self) -> str:
        return self.sample.fingerprint

    def sentence_set(self) -> set[str]:
        """Every target sentence (of the whole target, not only the sample), normalised."""
        if self._sentences is None:
            with open(self.full.tokens_file, encoding="utf-8") as f:
                self._sentences = {line.rstrip("\n") for line in f}
        return self._sentences

    def raw_texts(self, limit: int) -> list[str]:
        """Up to ``limit`` target units as original (cased) text, spread over the target."""
        texts = [unit_text(u) for u in self.corpus.units()]
        if len(texts) > limit:
            keep = np.random.default_rng(13).choice(len(texts), limit, replace=False)
            texts = [texts[i] for i in sorted(keep)]
        return texts

