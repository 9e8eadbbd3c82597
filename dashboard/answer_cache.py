"""The answers (``recommend``) for a matrix, worked out once per content and kind for the whole server.

Home shows the answer for language models, the Ranking page ranks by it, and the Predictiveness page's
audit and regret rank each rule's sources by it: each used to work it out again for the same matrix
(about 50 ms a kind for 20 sources x 8 targets). Here they share one copy (each caller gets its own,
as ``st.cache_data`` returns).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from simcore.answer.recommendation import PRETRAINING, Recommendation, recommend


def fingerprint(table: pd.DataFrame) -> str:
    """A content hash of a table (its columns, their order and every value)."""
    values = pd.util.hash_pandas_object(table, index=False).to_numpy()
    return f"{len(table)}:{','.join(map(str, table.columns))}:{int(values.sum()) & (2**64 - 1)}:{int((values * 31).sum()) & (2**64 - 1)}"


def names_as_checked(long: pd.DataFrame) -> bool:
    """Whether the matrix's names are as the analyses read them (``checked_long`` of
    simcore.analysis.tables: no missing source or target, measures in lower case without blanks):
    then the answers worked out on the matrix as it is are the ones an analysis would work out."""
    if not {"source", "target", "measure"} <= set(long.columns):
        return False
    if long["source"].isna().any() or long["target"].isna().any() or long["measure"].isna().any():
        return False
    return all(isinstance(m, str) and m == m.strip().lower() for m in pd.unique(long["measure"]))


@st.cache_data(show_spinner=False, max_entries=64)
def _answers(key: str, _long: pd.DataFrame, pretraining: str) -> list[Recommendation]:
    return recommend(_long, pretraining)


def answers(long: pd.DataFrame, pretraining: str) -> list[Recommendation] | None:
    """``recommend(long, pretraining)``, worked out once per content; None when the matrix's names are
    not as the analyses read them, or when it fails (the caller then works it out itself and fails in
    its own words)."""
    if pretraining not in PRETRAINING or not names_as_checked(long):
        return None
    try:
        return _answers(fingerprint(long), long, pretraining)
    except Exception:  # noqa: BLE001 - see above
        return None


def applicable_answers(long: pd.DataFrame, kinds: tuple[str, ...] = tuple(PRETRAINING)) -> dict[str, list[Recommendation]]:
    """:func:`answers` of each kind whose measures the matrix has (those an audit ranks by)."""
    present = set(long["measure"]) if "measure" in long.columns else set()
    found = {kind: answers(long, kind) for kind in kinds if set(PRETRAINING[kind]) & present}
    return {kind: recs for kind, recs in found.items() if recs is not None}
