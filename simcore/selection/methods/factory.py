"""The scorer for a selection's method (:func:`make_scorer`) and the model files it reads (:func:`input_identity`)."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

from ...corpora.corpus import Corpus
from ...models.sentence_encoder import BUNDLED_PACKAGE, local_encoder
from ...utils.store import ArtefactStore, digest
from ...utils.versions import package_versions
from ..options import Progress, SelectionOptions
from ..target import Target
from .cosine import CosineScorer
from .encoder import EncoderScorer
from .entities import EntityScorer
from .kenlm import CrossEntropyScorer, PerplexityScorer


def make_scorer(options: SelectionOptions, pool: Corpus, pool_fp: str, target: Target,
                store: ArtefactStore, progress: Progress) -> Any:
    if options.method == "encoder":
        return EncoderScorer(options, pool, pool_fp, target, store, progress)
    if options.method == "cosine":
        return CosineScorer(options, pool, pool_fp, target, store, progress)
    if options.method == "ppl":
        return PerplexityScorer(options, target, store, progress)
    if options.method == "xent":
        return CrossEntropyScorer(options, pool, pool_fp, target, store, progress)
    return EntityScorer(options, pool, pool_fp, target, store, progress)


def input_identity(options: SelectionOptions) -> str | None:
    """What the score file depends on besides the options: the model files a method reads.

    A user's encoder or pipeline directory enters as its files' names, sizes and times, the
    bundled encoder as its package version, so changed files are never scored from an old cache.
    """
    if options.method == "encoder":
        if options.encoder:
            return local_encoder(options.encoder).identity
        try:
            return f"{BUNDLED_PACKAGE}=={importlib.metadata.version(BUNDLED_PACKAGE)}"
        except importlib.metadata.PackageNotFoundError:
            return None   # the scorer explains how to install it
    if options.method == "entities" and options.pipeline:
        path = Path(options.pipeline).expanduser()
        if path.is_dir():
            return digest("user-pipeline", str(path.resolve()),
                          [(str(p.relative_to(path)), p.stat().st_size, p.stat().st_mtime_ns)
                           for p in sorted(path.rglob("*")) if p.is_file()], package_versions("spacy"))
    if options.method == "entities":  # the generic pipeline, or one trained with this spaCy
        from ...models.tagging import PIPELINE_PACKAGES

        return digest("spacy-pipeline", package_versions("spacy", *PIPELINE_PACKAGES))
    return None

