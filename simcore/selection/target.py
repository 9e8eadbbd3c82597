"""The target (task-level) corpus as the scorers see it."""

from __future__ import annotations

import hashlib
import json

import numpy as np

from ..corpora.corpus import Corpus, TokenizedCorpus, sample_corpus, tokenize_corpus
from ..utils.store import ArtefactStore
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
        self.options = options
        self._sentences: set[str] | None = None
        self._labels_key: str | None = None

    @property
    def name(self) -> str:
        return self.corpus.name

    @property
    def fingerprint(self) -> str:
        return self.sample.fingerprint

    def labels_fingerprint(self) -> str:
        """A hash of the target's raw bytes (cased text, format, language) and of every tagged
        sentence's tokens and tag names as read (whatever file named the tags): what a tagger trained
        on the target, and the entity scores it gives, depend on besides the tokens."""
        if self._labels_key is None:
            h = hashlib.sha256(self.corpus.raw_fingerprint(self.options.tokenizer).encode())
            for tokens, tags in self.corpus.tagged_sentences():
                h.update(json.dumps([tokens, tags], ensure_ascii=False).encode("utf-8", "surrogatepass"))
                h.update(b"\n")
            self._labels_key = h.hexdigest()
        return self._labels_key

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

