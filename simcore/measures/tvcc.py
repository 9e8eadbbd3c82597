"""Target vocabulary covered, content words only (nouns, verbs, adjectives by default).

An English target is tagged with the spaCy English pipeline on its original-case tokens. A target in
another language never is: its content words are its tokens that are not in spaCy's stop-word list for
that language (nor punctuation or numbers), and where the language has neither a tagger nor a list the
cell is left empty with the reason (:mod:`simcore.corpora.lang.content`). The source side
is the source's whole vocabulary by default; with ``tvcc_tag_source`` it is the source's own content
words, from tagging the (normalised) source sample once, which is slow (about 17k tokens/s) but
stored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..corpora.corpus import Corpus
from ..corpora.tokenize import TokenizerOptions, split_text
from ..models.tagging import (
    content_words,
    content_words_parts,
    import_spacy_without_torch,
    method_for,
    parts_of,
    stop_word_content_words,
    tagged_stored,
)
from ..utils.errors import MeasureUnavailable, SimcoreError
from ..utils.store import ArtefactStore
from .prepared import PreparedSource, PreparedTarget, Score
from .registry import HIGHER, VECTORS, Measure, register
from .tvc import coverage
from .uncertainty import coverage_replicates


def _cased_sentences(raw: Corpus):
    for unit in raw.units():
        tokens = split_text(unit) if isinstance(unit, str) else unit
        if tokens:
            yield tokens


def _content_words(raw: Corpus, fingerprint: str, store: ArtefactStore, pos: tuple[str, ...],
                   options: dict[str, Any]) -> set[str]:
    return content_words(lambda: _cased_sentences(raw), fingerprint, store, pos, TokenizerOptions(**options))


def tag_in_background(raw: Corpus, fingerprint: str, store_root: str, pos: tuple[str, ...],
                      options: dict[str, Any], parts: range | None = None) -> int:
    """Tag a target (or some of its parts) in another process; the result lands in the store, where
    scoring finds it."""
    import_spacy_without_torch()  # this process only tags
    store = ArtefactStore(store_root)
    if parts is None:
        return len(_content_words(raw, fingerprint, store, pos, options))
    return len(content_words_parts(lambda: _cased_sentences(raw), fingerprint, store, pos, parts,
                                   TokenizerOptions(**options)))


def _raw(target: PreparedTarget) -> Corpus:
    if not isinstance(target.raw, Corpus):
        raise SimcoreError(f"{target.name}: TVcC needs the target's original text for tagging")
    return target.raw


def _method(language: str):
    try:
        return method_for(language)
    except MeasureUnavailable as exc:
        raise MeasureUnavailable(f"TVcC not computed: {exc}") from None


def target_content_words(target: PreparedTarget) -> list[str]:
    method = _method(target.language)
    if method.kind == "stop-words":  # the target's own tokens, as segmented and normalised for every measure
        return target.cached(f"content_{method.name}", lambda: sorted(stop_word_content_words(
            target.sentences, method, TokenizerOptions(**target.tokenized.meta.get("options", {})))))
    pos = tuple(target.options.tvcc_pos)
    options = target.tokenized.meta.get("options", {})
    return target.cached(
        f"content_{pos}",
        lambda: sorted(_content_words(_raw(target), target.fingerprint, target.store, pos, options)),
    )


def source_content_words(source: PreparedSource) -> set[str]:
    """The source sample's content words (tagged once, stored)."""
    method = _method(source.language)
    pos = tuple(source.options.tvcc_pos)
    options = TokenizerOptions(**source.sample.meta.get("options", {}))
    return source.cached(f"content_{pos}_{method.name}", lambda: content_words(
        source.sample.sentences, source.sample.fingerprint, source.store, pos, options, source.language))


BACKGROUND_MIN_TOKENS = 20_000  # below this, starting a process costs more than tagging


class TargetContentVocabularyCovered(Measure):
    name = "tvcc"
    label = "TVcC"
    direction = HIGHER
    option_names = ("tvcc_pos", "tvcc_tag_source")
    description = "share of the target's content words (spaCy NOUN/VERB/ADJ) found in the source"
    gloss = "share of the target's content words found in the source"
    reliable_tokens = 100_000
    size_ladder = True  # pairs of sources also meet at larger common sizes (simcore.matrix.ladder)
    noise_when_small = False
    unit = "fraction of the target's content words"
    percent = True
    value_range = (0.0, 100.0)
    default_rank = 2
    family, family_rank = VECTORS, 1
    cost = 4.0
    size_direction, size_why = -1, "a smaller vocabulary covers fewer content words"

    def prepare(self, source: PreparedSource) -> None:
        source.counts()
        if source.options.tvcc_tag_source:
            source_content_words(source)

    def prepare_target(self, target: PreparedTarget) -> None:
        """The target's content words (its tagging, with the tagger's load: their own paces)."""
        target_content_words(target)

    def background_work(self, target: PreparedTarget, processes: int = 1) -> list[tuple[Callable[..., Any],
                                                                                      tuple[Any, ...]]]:
        """Tagging the target (the slow part) as jobs other processes can run while other cells are scored:
        its parts (:func:`simcore.models.tagging.content_words_parts`) in up to ``processes`` jobs, so that several
        processes can tag one large target at once (each loads the pipeline: one job where there is no
        spare process); none for a small target."""
        if (not isinstance(target.raw, Corpus) or target.tokenized.n_tokens < BACKGROUND_MIN_TOKENS
                or target.language != "en"):  # only English is tagged; stop words cost one pass over the target
            return []
        options = target.tokenized.meta.get("options", {})
        if tagged_stored(target.fingerprint, target.store, tuple(target.options.tvcc_pos),
                         TokenizerOptions(**options)):
            return []  # tagged already (when it was added): a process would only load spaCy
        args = (target.raw, target.fingerprint, str(target.store.root),
                tuple(target.options.tvcc_pos), options)
        parts = parts_of(target.tokenized.n_units)
        jobs = max(1, min(processes, parts))
        bounds = [round(k * parts / jobs) for k in range(jobs + 1)]
        return [(tag_in_background, (*args, range(low, high))) for low, high in zip(bounds, bounds[1:])]

    def score(self, source: PreparedSource, target: PreparedTarget) -> Score:
        words = target_content_words(target)
        score = self._score(source, target, words)
        method = _method(target.language)
        if method.fingerprint():  # said for every language but English, whose details stay as they were
            score.details["content_words"] = method.name
        return score

    def _score(self, source: PreparedSource, target: PreparedTarget, words: list[str]) -> Score:
        if not target.options.tvcc_tag_source:
            return coverage(source, words, target)
        if not words:
            return Score(float("nan"), {"target_types": 0, "note": "the target has no such words"})
        source_words = source_content_words(source)
        covered = np.array([w in source_words for w in words])
        replicates = coverage_replicates(target, words, covered)
        return Score(float(covered.mean()), {"target_types": len(words), "covered": int(covered.sum())},
                     replicates.tolist())


register(TargetContentVocabularyCovered())
