"""Target vocabulary covered: the share of the target's word types found in the source."""

from __future__ import annotations

from typing import Any

from .counts import unigram_keys_for
from .prepared import PreparedSource, PreparedTarget, Score
from .registry import HIGHER, VECTORS, Measure, register
from .uncertainty import coverage_replicates


def coverage(source: PreparedSource, target_types: list[str], target: PreparedTarget) -> Score:
    """|V_S ∩ V_T| / |V_T| for the given target types, with its bootstrap replicates."""
    if not target_types:
        return Score(float("nan"), {"target_types": 0, "note": "the target has no such words"})
    covered = source.counts().contains(unigram_keys_for(target.hasher(target_types)))
    replicates = coverage_replicates(target, target_types, covered)
    return Score(float(covered.mean()), {"target_types": len(target_types), "covered": int(covered.sum())},
                 replicates.tolist())


def uncovered_words(source: PreparedSource, target: PreparedTarget, top: int = 50) -> list[tuple[str, int]]:
    """The most frequent target words the source lacks, with their target frequency."""
    from collections import Counter

    freq = Counter(t for s in target.sentences for t in s)
    types = list(freq)
    present = source.counts().contains(unigram_keys_for(target.hasher(types)))
    missing = [t for t, ok in zip(types, present) if not ok]
    return sorted(((t, freq[t]) for t in missing), key=lambda x: (-x[1], x[0]))[:top]


class TargetVocabularyCovered(Measure):
    name = "tvc"
    label = "TVC"
    direction = HIGHER
    option_names: tuple[str, ...] = ()
    description = "share of the target's word types that occur in the source"
    gloss = "share of the target's words found in the source"
    reliable_tokens = 100_000
    size_ladder = True  # pairs of sources also meet at larger common sizes (simcore.matrix.ladder)
    noise_when_small = False
    unit = "fraction of the target's vocabulary"
    percent = True
    value_range = (0.0, 100.0)
    default_rank = 1
    family, family_rank = VECTORS, 2
    cost = 1.0
    size_direction, size_why = -1, "a smaller vocabulary covers less"
    drill_title = "Frequent target words the source lacks"

    def prepare(self, source: PreparedSource) -> None:
        source.counts()

    def score(self, source: PreparedSource, target: PreparedTarget) -> Score:
        return coverage(source, target.types(), target)

    def drill(self, source: PreparedSource, target: PreparedTarget, top: int) -> Any:
        import pandas as pd

        return pd.DataFrame(uncovered_words(source, target, top), columns=["word", "target frequency"])


register(TargetVocabularyCovered())
