"""Tables shaped for reading on a page (no computation beyond re-arranging)."""

from __future__ import annotations

import math

import pandas as pd

from simcore.analysis.correlation import results_frame
from simcore.errors import SimcoreError
from simcore.recommendation import Recommendation

from .charts import label

NO_COLUMN = "(none)"


def ranking_grid(ranking: pd.DataFrame, target: str) -> pd.DataFrame:
    """One row per position (1 = most similar), one column per measure, the source at that position.

    Sources that share a rank fill consecutive positions in name order, each marked "(tie)", so no
    cell is blank and every column lists every source once.
    """
    part = ranking[ranking["target"] == target]
    columns = {}
    for measure, group in part.groupby("measure", sort=False):
        group = group.sort_values(["rank", "source"])
        tied = group["rank"].map(group["rank"].value_counts()) > 1
        columns[label(measure)] = [f"{s} (tie)" if t else s for s, t in zip(group["source"], tied)]
    length = max((len(v) for v in columns.values()), default=0)
    grid = pd.DataFrame({k: v + [""] * (length - len(v)) for k, v in columns.items()})
    grid.insert(0, "position", range(1, length + 1))
    return grid


def recommendation_frame(recommendations: list[Recommendation]) -> pd.DataFrame:
    """The recommendation as a table for the page: target, pretrain on, confidence, level, carried by, why."""
    return pd.DataFrame({
        "target": [r.target for r in recommendations],
        "pretrain on": [_answer(r) for r in recommendations],
        "confidence": [r.confidence for r in recommendations],
        "level": [r.level for r in recommendations],
        "carried by": [", ".join(label(m) for m in r.measures) for r in recommendations],
        "why": [r.reason for r in recommendations],
    })


def _answer(rec: Recommendation) -> str:
    """The source to pretrain on; for a tie or a disagreement each candidate with its share of the votes."""
    if not rec.recommended:
        return "no recommendation"
    if rec.level in ("tie", "disagree"):
        return " or ".join(f"{s} ({rec.shares.get(s, math.nan):.0%})" for s in rec.recommended)
    return rec.recommended[0]


def _interval(low: float, high: float) -> str:
    return "–" if not (math.isfinite(low) and math.isfinite(high)) else f"[{low:.2f}, {high:.2f}]"


def correlation_table(corr: pd.DataFrame, scope: str) -> pd.DataFrame:
    part = corr[corr["scope"] == scope]
    return pd.DataFrame({
        "measure": part["measure"].map(label), "pairs": part["n"],
        "Pearson r": part["pearson_r"].round(3), "Pearson p": part["pearson_p"].map(lambda p: f"{p:.3g}"),
        "Pearson 95% CI": [_interval(a, b) for a, b in zip(part["pearson_low"], part["pearson_high"])],
        "Spearman ρ": part["spearman_r"].round(3), "Spearman p": part["spearman_p"].map(lambda p: f"{p:.3g}"),
        "Spearman 95% CI": [_interval(a, b) for a, b in zip(part["spearman_low"], part["spearman_high"])],
    })


def normalised_results(table: pd.DataFrame, columns: dict[str, str | None]) -> pd.DataFrame:
    """simcore's results frame (target, source, f1, improvement) from the user's table and column choice."""
    f1 = columns.get("f1")
    if not f1:
        raise SimcoreError("choose the column that holds F1")
    improvement = columns.get("improvement") or None
    baseline = columns.get("baseline") or "__no_baseline__"
    out = results_frame(table, f1=f1, baseline=baseline, improvement=improvement)
    return out.dropna(subset=["improvement"])


def size_notes(long: pd.DataFrame) -> list[str]:
    """One line saying the size each measure compared sources at."""
    if "sample_tokens" not in long or "used_whole" not in long:
        return []
    sampled = long[~long["used_whole"].map(lambda v: str(v).lower() == "true")]
    sizes = sampled.groupby("measure", sort=False)["sample_tokens"].max().dropna()
    if sizes.empty:
        return ["Every source was smaller than the comparison size and was used whole."]
    return ["Sources compared on sub-corpora of " + ", ".join(
        f"{int(n):,} tokens ({label(m)})" for m, n in sizes.items()) + "; smaller sources were used whole."]


def flagged_cells(long: pd.DataFrame) -> pd.DataFrame:
    """Source, measure and the size flag, once per flagged (source, measure)."""
    if "flag" not in long:
        return pd.DataFrame(columns=["source", "measure", "flag"])
    flagged = long[long["flag"].fillna("").astype(str) != ""]
    return (flagged[["source", "measure", "flag"]].drop_duplicates()
            .assign(measure=lambda f: f["measure"].map(label)).reset_index(drop=True))
