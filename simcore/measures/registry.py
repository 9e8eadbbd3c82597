"""What a measure is (:class:`Measure`: name, direction, options, prepare and score) and the registry
each measure module adds itself to on import."""

from __future__ import annotations

from typing import Protocol

from .prepared import PreparedSource, PreparedTarget, Score

HIGHER = 1
LOWER = -1
NOT_SIMILARITY = 0


class Measure(Protocol):
    name: str
    label: str
    direction: int
    option_names: tuple[str, ...]
    description: str
    # The measure in a few plain words for a reader (shown beside its label; see explained()); optional.
    gloss: str
    # Source size (tokens) below which the measure's rankings are not yet settled (bench/bench_recommendation.py).
    reliable_tokens: int
    # True when, below that size, the measure is noise and is left out of the recommendation.
    noise_when_small: bool
    # True when pairs of sources of different sizes should also be compared at larger common sizes
    # (simcore.ladder); optional, False when absent.
    size_ladder: bool

    def prepare(self, source: PreparedSource) -> None:
        """Build what this measure needs from the source (stored; cheap when present)."""

    def score(self, source: PreparedSource, target: PreparedTarget) -> Score:
        """Score the target against the prepared source sample."""


REGISTRY: dict[str, Measure] = {}


def register(measure: Measure) -> Measure:
    REGISTRY[measure.name] = measure
    return measure
