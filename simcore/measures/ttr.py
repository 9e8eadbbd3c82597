"""Type-token ratio of the source sample: its lexical diversity (not a similarity)."""

from __future__ import annotations

from .prepared import PreparedSource, PreparedTarget, Score
from .registry import NOT_SIMILARITY, Measure, register


class TypeTokenRatio(Measure):
    name = "ttr"
    label = "TTR"
    direction = NOT_SIMILARITY
    option_names: tuple[str, ...] = ()
    description = "types / tokens of the source sample (diversity; compare at equal size)"
    gloss = "word diversity of the source sample, not a similarity"
    reliable_tokens = 0
    noise_when_small = False
    unit = "ratio, 0 to 1"
    value_range = (0.0, 1.0)
    default_rank = 6
    cost = 0.5

    def size_bias(self) -> str:
        return "TTR falls with size"

    def prepare(self, source: PreparedSource) -> None:
        source.counts()

    def score(self, source: PreparedSource, target: PreparedTarget) -> Score:
        counts = source.counts()
        types = int(len(counts.unigram_keys()))
        tokens = counts.totals[1]
        return Score(types / tokens if tokens else float("nan"), {"types": types, "tokens": tokens})


register(TypeTokenRatio())
