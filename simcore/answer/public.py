"""The answer in the public library: which source to pretrain on, per target, and the pairs behind it.

:func:`recommend`, :func:`recommendation_table` and :func:`pairwise_table` are those of
:mod:`simcore.answer.recommendation` with their arguments checked first, so that a wrong kind of value gets
an InvalidArgument naming it (what tests/test_public_api.py fuzzes), never a pandas traceback.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from ..contamination.verdict import OVERLAP_THRESHOLD, check_threshold
from ..utils.errors import InvalidArgument
from . import recommendation
from .recommendation import PRETRAINING, Recommendation

_NEEDED = {"source", "target", "measure", "value"}


def _check(long: Any, pretraining: Any) -> None:
    if not isinstance(long, pd.DataFrame) or not _NEEDED <= set(map(str, long.columns)):
        raise InvalidArgument("give the long similarity table (Workbench.matrix, simcore.analysis.read_matrix): "
                              "columns source, target, measure and value")
    if not isinstance(pretraining, str) or pretraining not in PRETRAINING:
        raise InvalidArgument(f"pretraining must be one of {', '.join(map(repr, PRETRAINING))}, not {pretraining!r}"
                              [:200])


def recommend(long: pd.DataFrame, pretraining: str = "lm",
              overlap_threshold: float = OVERLAP_THRESHOLD) -> list[Recommendation]:
    """The recommendation for every target of a long similarity table, for ``pretraining`` "lm" (language
    models and BERT-style encoders: PPL, JSD) or "vectors" (word vectors: TVcC, TVC, WVV). A source that
    holds ``overlap_threshold`` or more of the target's test sentences is named first in the reason
    (and a "high" level capped at "moderate"; see simcore.contamination.verdict)."""
    _check(long, pretraining)
    return recommendation.recommend(long, pretraining, check_threshold(overlap_threshold))


def recommendation_table(recommendations: Sequence[Recommendation]) -> pd.DataFrame:
    """One row per target (target, recommended, confidence, level, measures, pretraining, reason)."""
    if isinstance(recommendations, (str, bytes)) or not isinstance(recommendations, Sequence) \
            or not all(isinstance(r, Recommendation) for r in recommendations):
        raise InvalidArgument("give the list of recommendations that simcore.recommend returns")
    return recommendation.recommendation_table(list(recommendations))


def pairwise_table(long: pd.DataFrame, target: str, pretraining: str = "lm") -> pd.DataFrame:
    """Every pair of sources for one target under each measure that carries the answer: the size they
    met at, both values there, and the share of replicates in which the first is more similar."""
    _check(long, pretraining)
    if not isinstance(target, str):
        raise InvalidArgument(f"target must be a target's name (text), not {type(target).__name__}")
    return recommendation.pairwise_table(long, target, pretraining)
