"""What a measure is (:class:`Measure`: everything about it, declared in its own module) and the
registry each measure module adds itself to on import.

A measure module subclasses :class:`Measure`, overrides what differs from the defaults and calls
:func:`register`; every table that used to list the measures (costs, units, percentages, size bias,
value ranges, the answer's families, the defaults, the drill-down views) reads them from here.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from .prepared import PreparedSource, PreparedTarget, Score

HIGHER = 1
LOWER = -1
NOT_SIMILARITY = 0
LM = "lm"  # the measures that carry the answer for language models and BERT-style encoders
VECTORS = "vectors"  # ... and for word vectors


class Measure:
    """A similarity measure: its name, what its numbers mean, what it costs and when it can be trusted.

    Subclasses set ``name``, ``label``, ``description`` and ``direction`` and implement
    :meth:`prepare` and :meth:`score`; every other attribute has a default that suits a new measure.
    A measure with target-side work to start early (TVcC's tagging) also defines
    ``background_work(target, processes)`` (looked for with ``hasattr``, so it has no default here).
    """

    name: ClassVar[str]
    label: ClassVar[str]
    description: ClassVar[str] = ""
    # The measure in a few plain words for a reader (shown beside its label; see lookup.explained()).
    gloss: ClassVar[str] = ""
    direction: ClassVar[int] = HIGHER
    option_names: ClassVar[tuple[str, ...]] = ()

    # What a value is, as the matrix stores it ('' when it needs no saying), e.g. "perplexity per word".
    unit: ClassVar[str] = ""
    # True when the value is stored as a fraction and shown to a reader as a percentage (TVC, TVcC).
    percent: ClassVar[bool] = False
    # The values it can take (a value outside is a broken table; percent measures may come as 0..100).
    value_range: ClassVar[tuple[float, float]] = (-math.inf, math.inf)

    # Its place in the measures `simcore matrix` and the dashboard compute unless told otherwise
    # (1 first; 0: not computed by default).
    default_rank: ClassVar[int] = 0
    # The pretraining whose answer it carries (LM, VECTORS, or '' for shown beside it), and its place
    # among that family's measures in the answer's reason (lower first).
    family: ClassVar[str] = ""
    family_rank: ClassVar[int] = 0

    # Rough relative cost of one part (a source sample scored against its targets), for the order
    # parts run in and the progress bars; a coverage count is 1.
    cost: ClassVar[float] = 1.0
    # True when every cell trains a model (WVV): scored in the other processes, one target a part.
    heavy_scoring: ClassVar[bool] = False
    # True when preparing a source builds a model worth a Dask task (and a worker) of its own.
    own_task: ClassVar[bool] = False

    # Source size (tokens) below which the measure's rankings are not yet settled
    # (bench/bench_recommendation.py); 0: not measured, never flagged.
    reliable_tokens: ClassVar[int] = 0
    # True when, below that size, the measure is noise and is left out of the recommendation.
    noise_when_small: ClassVar[bool] = False
    # True when pairs of sources of different sizes should also be compared at larger common sizes
    # (simcore.matrix.ladder).
    size_ladder: ClassVar[bool] = False
    # Which way the value moves as a source sample shrinks, measured on ../shared/data
    # (bench/bench_recommendation.py --sizes): +1 = a smaller sample looks MORE similar, -1 = less,
    # 0 = not measured; and why, in a few words.
    size_direction: ClassVar[int] = 0
    size_why: ClassVar[str] = ""

    # The dashboard's drill-down for this measure (its tab's title; '' for none), see :meth:`drill`.
    drill_title: ClassVar[str] = ""

    def prepare(self, source: PreparedSource) -> None:
        """Build what this measure needs from the source (stored; cheap when present)."""
        raise NotImplementedError

    def prepare_target(self, target: PreparedTarget) -> None:
        """Build what this measure needs from the target alone, before the first score is timed (a
        slow step with its own recorded pace, such as tagging, is not the scoring's pace). Nothing
        by default."""

    def score(self, source: PreparedSource, target: PreparedTarget) -> Score:
        """Score the target against the prepared source sample."""
        raise NotImplementedError

    def drill(self, source: PreparedSource, target: PreparedTarget, top: int) -> Any:
        """The drill-down table (a pandas DataFrame) saying why this pair scores as it does."""
        raise NotImplementedError(f"no drill-down for {self.name}")

    @property
    def default(self) -> bool:
        """Whether it is computed unless told otherwise."""
        return self.default_rank > 0

    @property
    def shown_unit(self) -> str:
        """The unit as a reader sees it: a percentage measure's 'fraction of' becomes '% of'."""
        return self.unit.replace("fraction of", "% of") if self.percent else self.unit

    def size_bias(self) -> str:
        """The measured direction of the measure's size bias, in words."""
        if not self.size_direction:
            return f"{self.label} moves with size"
        way = "more" if self.size_direction > 0 else "less"
        return f"{self.label} makes a smaller source look {way} similar ({self.size_why})"


REGISTRY: dict[str, Measure] = {}


def register(measure: Measure) -> Measure:
    REGISTRY[measure.name] = measure
    return measure
