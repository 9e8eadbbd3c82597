"""The arguments of :func:`simcore.reporting.report.build_report`, checked before anything is rendered.

Kept apart from the rendering so that a notebook user's wrong argument (a list for a table, a
number for a label) gives one of simcore's own errors naming the argument, never a TypeError
from deep inside an SVG or HTML helper.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..analysis.agreement import AgreementResult
from ..analysis.tables import checked_long
from ..answer.recommendation import Recommendation
from ..utils.errors import InvalidArgument, TableError
from .export import RANKING_COLUMNS

_JOINED = ("measure", "value", "improvement")


def _optional_frame(value: Any, label: str, columns: tuple[str, ...] = ()) -> None:
    if value is None:
        return
    if not isinstance(value, pd.DataFrame):
        raise InvalidArgument(f"{label} must be a pandas DataFrame (or None), not {type(value).__name__}")
    missing = [c for c in columns if c not in value.columns]
    if missing and len(value):
        raise TableError(f"{label} lacks column(s) {', '.join(missing)}")


def check_report_arguments(long: Any, ranking: Any, options: Any, source_label: Any, agreement: Any,
                           correlations: Any, regret: Any, joined: Any, recommendations: Any,
                           agreement_note: Any) -> pd.DataFrame:
    """Raise InvalidArgument or TableError for a wrong argument; return the long matrix, checked and typed.

    :func:`simcore.reporting.export.ranking_html`, which the report ends with, checks the ranking's values again.
    """
    long = checked_long(long)
    if not isinstance(ranking, pd.DataFrame):
        raise InvalidArgument(f"the ranking must be a pandas DataFrame (from rank_sources), not {type(ranking).__name__}")
    missing = [c for c in RANKING_COLUMNS if c not in ranking.columns]
    if missing:
        raise TableError(f"the ranking lacks column(s) {', '.join(missing)}; make it with simcore.analysis.rank_sources")
    if recommendations is not None and (not isinstance(recommendations, (list, tuple)) or not all(
            isinstance(r, Recommendation) for r in recommendations)):
        raise InvalidArgument("recommendations must be a list of Recommendation (from simcore.answer.recommendation."
                              "recommend), or None")
    if options is not None and not isinstance(options, dict):
        raise InvalidArgument(f"options must be a dict (or None), not {type(options).__name__}")
    for label, text in (("source_label", source_label), ("agreement_note", agreement_note)):
        if not isinstance(text, str):
            raise InvalidArgument(f"{label} must be text, not {type(text).__name__}")
    if agreement is not None and not isinstance(agreement, AgreementResult):
        raise InvalidArgument(f"agreement must be the AgreementResult of simcore.analysis.agreement (or None), "
                              f"not {type(agreement).__name__}")
    _optional_frame(correlations, "correlations")
    _optional_frame(regret, "regret")
    _optional_frame(joined, "joined", _JOINED)
    return long
