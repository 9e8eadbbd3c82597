"""Samples the scorers train on: the stored pool sample, tokenized, and the target's sentences."""

from __future__ import annotations

from ...corpora.corpus import Corpus
from ...utils.store import ArtefactStore
from ..options import Progress, SelectionOptions
from ..pool import pool_sample, pool_tokenizer, read_lines
from ..target import Target


def tokenized_sample(pool: Corpus, pool_fp: str, store: ArtefactStore, options: SelectionOptions,
                      progress: Progress) -> list[list[str]]:
    path = pool_sample(pool, pool_fp, store, options.pool_sample, options.seed, progress)
    tokens_of = pool_tokenizer(pool, options.tokenizer)  # as matrix cuts the pool, in its language
    return [t for t in (tokens_of(line) for line in read_lines(path)) if t]


def target_sentences(target: Target) -> list[list[str]]:
    return list(target.sample.sentences())
