"""The sentence scorers, one module each, and :func:`make_scorer` which picks one.

Each scorer is made once per run (its models come from the artefact store, built on first use)
and then scores the pool batch by batch: ``score(batch) -> array`` with one value per unit, and
``details() -> dict`` says what it used.
"""

from __future__ import annotations

from typing import Any

from ...corpus import Corpus
from ...store import ArtefactStore
from ..options import Progress, SelectionOptions
from ..target import Target
from .cosine import CosineScorer
from .encoder import EncoderScorer
from .entities import EntityScorer
from .kenlm import CrossEntropyScorer, PerplexityScorer


def make_scorer(options: SelectionOptions, pool: Corpus, pool_fp: str, target: Target,
                store: ArtefactStore, progress: Progress) -> Any:
    if options.method == "cosine":
        if options.encoder:
            return EncoderScorer(options, target)
        return CosineScorer(options, pool, pool_fp, target, store, progress)
    if options.method == "ppl":
        return PerplexityScorer(options, target, store, progress)
    if options.method == "xent":
        return CrossEntropyScorer(options, pool, pool_fp, target, store, progress)
    return EntityScorer(options, pool, pool_fp, target, store, progress)
