"""Tables shaped for reading on a page (no computation beyond re-arranging)."""

from __future__ import annotations

import math

import pandas as pd

from simcore.analysis.correlation import results_frame
from simcore.errors import SimcoreError

from .charts import label

NO_COLUMN = "(none)"


def ranking_grid(ranking: pd.DataFrame, target: str) -> pd.DataFrame:
    """Rank down the side, one column per measure, source names in the cells (ties joined)."""
    part = ranking[ranking["target"] == target]
    grid = part.groupby(["rank", "measure"], sort=False)["source"].agg(", ".join).unstack("measure")
    order = list(dict.fromkeys(part["measure"]))
    return grid.reindex(columns=order).rename(columns=label).fillna("").reset_index().rename(columns={"rank": "rank"})


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
