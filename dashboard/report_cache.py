"""Rankings and export files for the Ranking page, built once per matrix and choice of measures."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import pandas as pd
import streamlit as st

from simcore.analysis.agreement import agreement
from simcore.analysis.correlation import correlate, join
from simcore.analysis.ranking import rank_sources
from simcore.analysis.regret import regret
from simcore.answer.evidence import pairs_evidence
from simcore.answer.recommendation import Recommendation, recommend
from simcore.reporting.export import pairs_csv, ranking_csv, ranking_json, recommendations_csv
from simcore.reporting.report import build_report
from simcore.utils.errors import SimcoreError

from .answer_cache import answers as shared_answers
from .answer_cache import names_as_checked
from .name_map import apply_mapping
from .page_tables import normalised_results
from .state import AppState


@dataclass
class ReportParts:
    ranking: pd.DataFrame | None = None
    recommendations: list[Recommendation] = field(default_factory=list)
    recommendations_csv: str = ""
    pairs: pd.DataFrame | None = None  # simcore.answer.evidence.pairs_evidence: how each pair of sources was compared
    pairs_csv: str = ""
    csv: str = ""
    json: str = ""
    html: str = ""
    notes: list[str] = field(default_factory=list)
    error: str | None = None


def _fingerprint(*frames: pd.DataFrame | None, extra: object = None) -> str:
    h = hashlib.sha256()
    for frame in frames:
        h.update(b"none" if frame is None else frame.to_csv(index=False).encode())
    h.update(json.dumps(extra, sort_keys=True, default=str).encode())
    return h.hexdigest()


def _probe_results(state: AppState) -> pd.DataFrame | None:
    """The NER probe's results table of this session (pages/9_NER_probe.py), when one has run."""
    table = state.extra.get("probe_results")
    return table if isinstance(table, pd.DataFrame) and {"target", "source", "f1"} <= set(table.columns) else None


def report_parts(state: AppState, measures: list[str], pretraining: str = "lm") -> ReportParts:
    """Kept per content fingerprint: neither a rerun nor another session rebuilds the report."""
    key = _fingerprint(state.matrix, state.results, _probe_results(state),
                       extra=[measures, pretraining, state.results_columns, state.matrix_options, state.matrix_label,
                              state.extra.get("name_map")])
    parts = _built(key, state, tuple(measures), pretraining)
    state.extra["report_parts"] = {key: parts}  # the session's current parts (what the tests read)
    return parts


@st.cache_resource(show_spinner="Building the rankings and the report…", max_entries=16)
def _built(key: str, _state: AppState, measures: tuple[str, ...], pretraining: str) -> ReportParts:
    """One build per content for the whole server: every page opened by its address is a new
    session, which rebuilt the report (2 s of CPU for 20 sources x 8 targets). Parts are only read."""
    return _build(_state, list(measures), pretraining)


def _build(state: AppState, measures: list[str], pretraining: str) -> ReportParts:
    long = state.matrix
    parts = ReportParts()
    try:
        # the user's own probe F1 stands beside each answer it covers (simcore.outcomes); without
        # one, the answers Home and the audit worked out for this matrix
        probe = _probe_results(state)
        answers = shared_answers(long, pretraining) if probe is None else None
        if answers is None:
            answers = recommend(long, pretraining, probe_results=probe)
    except Exception:  # noqa: BLE001 - made again below: it fails as it did, in the same order
        answers = None
    try:
        # the ranking's "recommended" rows follow the same answers: worked out once, not twice
        same = answers if answers is not None and names_as_checked(long) else None
        parts.ranking = rank_sources(long, measures, pretraining, recommendations=same)
        parts.recommendations = answers if answers is not None else recommend(
            long, pretraining, probe_results=_probe_results(state))
        parts.pairs = pairs_evidence(long, parts.recommendations, pretraining)
    except SimcoreError as exc:
        parts.error = str(exc)
        return parts
    options = {"measures": measures, "pretraining": pretraining, **state.matrix_options}
    parts.csv = ranking_csv(parts.ranking)
    parts.recommendations_csv = recommendations_csv(parts.recommendations)
    parts.pairs_csv = pairs_csv(parts.pairs)
    parts.json = ranking_json(parts.ranking, options, parts.recommendations, parts.pairs)
    agree = corr = regrets = joined = None
    agreement_note = ""
    if len(measures) >= 2:
        try:
            agree = agreement(long, measures)
        except SimcoreError as exc:
            agreement_note = str(exc)
            parts.notes.append(f"The report has no Fleiss' kappa: {exc}")
    if state.results is not None:
        try:
            results = normalised_results(apply_mapping(state.results, state.extra.get("name_map", {})),
                                         state.results_columns)
            corr = correlate(long, results, measures, per_target=False)
            regrets = regret(long, results, measures)
            joined = join(long[long["measure"].isin(measures)], results)
        except (SimcoreError, ValueError, KeyError) as exc:
            parts.notes.append(f"The report has no NER-results section: {exc}")
    parts.html = build_report(long, parts.ranking, options, source_label=state.matrix_label, agreement=agree,
                              correlations=corr, regret=regrets, joined=joined,
                              recommendations=parts.recommendations, agreement_note=agreement_note,
                              pairs=parts.pairs)
    return parts
