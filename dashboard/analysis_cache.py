"""Analyses a page reruns on every click (correlations with bootstrap intervals, regret, the audit), cached by content.

A rerun of the Predictiveness page (a name match picked, a view changed) recomputed the correlations'
bootstrap intervals each time: 1.5 s on Table 3. Keyed by fingerprints of the tables' content (strings:
``st.cache_data`` would hash a large DataFrame by sampling it), so a changed value is a new entry.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st
from streamlit.dataframe_util import convert_anything_to_arrow_bytes

from simcore.analysis.agreement import AgreementResult, agreement
from simcore.analysis.audit import WRITERS, audit, display_table
from simcore.analysis.correlation import correlate
from simcore.analysis.regret import regret

from .answer_cache import answers, applicable_answers, fingerprint
from .charts import SpecIncomplete, scatter_spec
from .compare import Comparison, compare


@st.cache_data(show_spinner="Correlating…", max_entries=64)
def _correlate(key: str, _long: pd.DataFrame, _results: pd.DataFrame, measures: tuple[str, ...]) -> pd.DataFrame:
    return correlate(_long, _results, list(measures), per_target=True)


@st.cache_data(show_spinner=False, max_entries=64)
def _regret(key: str, _long: pd.DataFrame, _results: pd.DataFrame, measures: tuple[str, ...]) -> pd.DataFrame:
    return regret(_long, _results, list(measures), recommendations=answers(_long, "lm"))


def correlations(long: pd.DataFrame, results: pd.DataFrame, measures: list[str]) -> pd.DataFrame:
    """``simcore.analysis.correlate(..., per_target=True)``, computed once per content."""
    return _correlate(fingerprint(long) + "|" + fingerprint(results), long, results, tuple(measures)).copy()


def regrets(long: pd.DataFrame, results: pd.DataFrame, measures: list[str]) -> pd.DataFrame:
    """``simcore.analysis.regret``, computed once per content."""
    return _regret(fingerprint(long) + "|" + fingerprint(results), long, results, tuple(measures)).copy()


@st.cache_data(show_spinner="Auditing…", max_entries=64)
def _audit(key: str, _long: pd.DataFrame, _results: pd.DataFrame, measures: tuple[str, ...], k: int, tie_f1: float,
           include_capped: bool) -> pd.DataFrame:
    return audit(_long, _results, list(measures), k=k, tie_f1=tie_f1, include_capped=include_capped,
                 recommendations=applicable_answers(_long, ("lm", "vectors")))


def audits(long: pd.DataFrame, results: pd.DataFrame, measures: list[str], k: int, tie_f1: float,
           include_capped: bool = False) -> pd.DataFrame:
    """``simcore.analysis.audit.audit`` (both recommendation rules, 2000 resamples, seed 0), computed once per content."""
    table = _audit(fingerprint(long) + "|" + fingerprint(results), long, results, tuple(measures), int(k),
                   float(tie_f1), bool(include_capped))
    out = table.copy()
    out.attrs = {key: value for key, value in table.attrs.items() if key != "left_out"}
    return out


@st.cache_data(show_spinner=False, max_entries=64)
def _audit_views(key: str, _table: pd.DataFrame, scope: str) -> tuple[pd.DataFrame, dict[str, str]]:
    files = {suffix: writer(_table) for suffix, writer in WRITERS.items()}
    return display_table(_table, scope), files


def audit_views(long: pd.DataFrame, results: pd.DataFrame, measures: list[str], k: int,
                tie_f1: float, include_capped: bool, scope: str
                ) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, str]]:
    """:func:`audits`, its table as the page shows it for ``scope`` (``all`` when the audit has no
    such scope) and its files (:data:`simcore.analysis.audit.WRITERS`), each made once per content:
    the four files were written again on every visit."""
    table = audits(long, results, measures, k, tie_f1, include_capped)
    shown = scope if scope in set(table["scope"]) else "all"
    key = "|".join([fingerprint(long), fingerprint(results), ",".join(measures), str(int(k)),
                    repr(float(tie_f1)), str(bool(include_capped)), shown])
    view, files = _audit_views(key, table, shown)
    return table, view.copy(), files


@st.cache_data(show_spinner=False, max_entries=256)
def _scatter_spec(key: str, _points: pd.DataFrame, measure: str, targets: tuple[str, ...],
                  capped_column: str | None) -> dict:
    spec = scatter_spec(_points, measure, list(targets), capped_column)
    # sent as Arrow, as st.altair_chart sends them: converted here once, not on every visit
    spec["datasets"] = {name: convert_anything_to_arrow_bytes(pd.DataFrame(rows))
                        for name, rows in spec["datasets"].items()}
    return spec


def scatter_specs(points: pd.DataFrame, measures: list[str], targets: list[str],
                  capped_column: str | None) -> dict[str, dict | None]:
    """Each measure's scatter (:func:`dashboard.charts.scatter_spec`) of ``points`` (the joined
    table: a row per target, source and measure), built once per content; None for a measure with more
    rows than altair inlines (the page draws that one with ``st.altair_chart``, which sends Arrow)."""
    key = fingerprint(points) + "|" + ",".join(targets) + "|" + str(capped_column)
    specs: dict[str, dict | None] = {}
    for measure in measures:
        try:
            part = points[points["measure"] == measure]
            specs[measure] = _scatter_spec(f"{key}|{measure}", part, measure, tuple(targets),
                                           capped_column)
        except SpecIncomplete:
            specs[measure] = None
    return specs


@st.cache_data(show_spinner=False, max_entries=64)
def _agreement(
    key: str, _long: pd.DataFrame, measures: tuple[str, ...], include_unreliable: bool
) -> AgreementResult:
    return agreement(_long, list(measures), include_unreliable=include_unreliable)


def agreements(
    long: pd.DataFrame, measures: list[str], include_unreliable: bool = False
) -> AgreementResult:
    """``simcore.analysis.agreement`` (kappas and every disagreement), computed once per content:
    each visit of the Agreement page by its address is a new session."""
    return _agreement(fingerprint(long), long, tuple(measures), bool(include_unreliable))


@st.cache_data(show_spinner=False, max_entries=32)
def _comparison(
    key: str, _long_a: pd.DataFrame, _long_b: pd.DataFrame
) -> tuple[Comparison, pd.DataFrame]:
    result = compare(_long_a, _long_b)
    return result, result.summary()


def comparison(long_a: pd.DataFrame, long_b: pd.DataFrame) -> tuple[Comparison, pd.DataFrame]:
    """:func:`dashboard.compare.compare` of two matrices and its summary, once per content."""
    return _comparison(fingerprint(long_a) + "|" + fingerprint(long_b), long_a, long_b)
