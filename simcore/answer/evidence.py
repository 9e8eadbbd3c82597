"""The evidence behind the answer, for a person to read and share: every pair of sources compared
under each carrying measure (:func:`simcore.answer.recommendation.pairwise_tables`), labelled, the pairs that
involve the recommended source marked and put first with that source on the left.

``pairs_evidence`` keeps numbers as numbers (the CSV and JSON downloads); ``readable_pairs`` formats
them for a screen or the HTML report (sizes as '8,419 tokens', shares as '97%', TVC as a percentage).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ..measures.lookup import all_measures, get_measure
from .recommendation import Recommendation, pairwise_tables

EVIDENCE_COLUMNS = ["target", "measure", "measure_id", "unit", "source_a", "source_b", "tokens", "value_a", "value_b",
                    "more_similar", "share_a_more_similar", "involves_answer"]


def pairs_evidence(long: pd.DataFrame, recommendations: list[Recommendation], pretraining: str = "lm") -> pd.DataFrame:
    """One row per pair of sources, per target and carrying measure: the size they met at, both values,
    the more similar one and in what share of the bootstrap replicates. ``involves_answer`` marks the
    pairs with a recommended source (that source then on the left); they come first in each target."""
    raw = pairwise_tables(long, pretraining)
    if raw.empty:
        return pd.DataFrame(columns=EVIDENCE_COLUMNS)
    answer = {r.target: set(r.recommended) for r in recommendations}
    chosen = raw["target"].map(lambda t: answer.get(str(t), set()))
    in_a = np.array([a in c for a, c in zip(raw["source_a"], chosen)])
    in_b = np.array([b in c for b, c in zip(raw["source_b"], chosen)])
    swap = in_b & ~in_a
    out = raw.copy()
    for left, right in (("source_a", "source_b"), ("value_a", "value_b")):
        out.loc[swap, [left, right]] = raw.loc[swap, [right, left]].to_numpy()
    share = pd.to_numeric(raw["share_a_better"], errors="coerce")
    out["share_a_more_similar"] = np.where(swap, 1 - share, share)
    out["more_similar"] = raw["better"].replace("=", "neither")
    out["involves_answer"] = in_a | in_b
    out["measure_id"] = raw["measure"]
    known = all_measures()
    ids = raw["measure"].tolist()
    label = {m: get_measure(m).label if m in known else m for m in set(ids)}  # once per measure
    out["measure"] = [label[m] for m in ids]
    unit = {m: get_measure(m).unit if m in known else "" for m in set(ids)}
    out["unit"] = [unit[m] for m in ids]
    out["tokens"] = pd.to_numeric(raw["tokens"], errors="coerce").astype("Int64")
    order = np.lexsort((~out["involves_answer"].to_numpy(), out["target"].astype(str).to_numpy()))
    return out.iloc[order][EVIDENCE_COLUMNS].reset_index(drop=True)


def readable_pairs(evidence: pd.DataFrame, answer_only: bool = True) -> pd.DataFrame:
    """The evidence formatted for a reader: labelled columns, sizes with thousands separators, values
    with their unit, shares as percentages; only the answer's pairs unless ``answer_only`` is False."""
    rows = evidence[evidence["involves_answer"].astype(bool)] if answer_only else evidence
    return pd.DataFrame({
        "target": rows["target"].astype(str),
        "measure": [_measure(m) for m in rows["measure_id"]],
        "source A": rows["source_a"], "source B": rows["source_b"],
        "compared at": [f"{int(t):,} tokens" if pd.notna(t) else "size not in the table" for t in rows["tokens"]],
        "A's value": [_value(v, m) for v, m in zip(rows["value_a"], rows["measure_id"])],
        "B's value": [_value(v, m) for v, m in zip(rows["value_b"], rows["measure_id"])],
        "more similar": rows["more_similar"],
        "A more similar in": [f"{s:.0%} of replicates" if _finite(s) else "–" for s in rows["share_a_more_similar"]],
    }).reset_index(drop=True)


def _measure(name: str) -> str:
    """'PPL (perplexity per word, lower is closer)', 'TVC (% of the target's vocabulary, higher is closer)'."""
    if name not in all_measures():
        return str(name)
    spec = get_measure(name)
    unit = spec.shown_unit  # a fraction in the table, a percentage for a reader (TVC, TVcC)
    way = {1: "higher is closer", -1: "lower is closer"}.get(spec.direction, "")
    words = ", ".join(w for w in (unit, way) if w)
    return f"{spec.label} ({words})" if words else spec.label


def _finite(value: Any) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def _value(value: Any, measure: str) -> str:
    """A value as a reader wants it: TVC 0.817 -> '81.7%', PPL 1368.5574 -> '1,368.6', JSD 0.4123 -> '0.412'."""
    if not _finite(value):
        return "–"
    v = float(value)
    if measure in all_measures() and get_measure(measure).percent and 0 <= v <= 1:
        return f"{100 * v:.1f}%"
    if abs(v) >= 100:
        return f"{v:,.1f}"
    if abs(v) >= 1e-3 or v == 0:
        return f"{v:.3g}"
    return f"{v:.2e}"
