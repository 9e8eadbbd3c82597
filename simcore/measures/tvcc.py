"""Target vocabulary covered, content words only (nouns, verbs, adjectives by default).

The target is tagged with the spaCy English pipeline on its original-case tokens; the source
side is the source's whole vocabulary.
"""

from __future__ import annotations

from ..corpus import Corpus
from ..errors import SimcoreError
from ..tagging import content_words
from ..tokenize import TokenizerOptions, split_text
from . import HIGHER, PreparedSource, PreparedTarget, Score, register
from .tvc import coverage


def _cased_sentences(target: PreparedTarget):
    raw = target.raw
    if not isinstance(raw, Corpus):
        raise SimcoreError(f"{target.name}: TVcC needs the target's original text for tagging")
    for unit in raw.units():
        tokens = split_text(unit) if isinstance(unit, str) else unit
        if tokens:
            yield tokens


def target_content_words(target: PreparedTarget) -> list[str]:
    pos = tuple(target.options.tvcc_pos)
    options = TokenizerOptions(**target.tokenized.meta.get("options", {}))
    return target.cached(
        f"content_{pos}",
        lambda: sorted(content_words(_cased_sentences(target), target.fingerprint, target.store, pos, options)),
    )


class TargetContentVocabularyCovered:
    name = "tvcc"
    label = "TVcC"
    direction = HIGHER
    option_names = ("tvcc_pos",)
    description = "share of the target's content words (spaCy NOUN/VERB/ADJ) found in the source"

    def prepare(self, source: PreparedSource) -> None:
        source.counts()

    def score(self, source: PreparedSource, target: PreparedTarget) -> Score:
        return coverage(source, target_content_words(target), target)


register(TargetContentVocabularyCovered())
