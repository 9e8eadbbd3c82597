"""Reading the agreement results: kappa in words, and which disagreements decide the first choice."""

from __future__ import annotations

import math

import pandas as pd

# Landis & Koch (1977), the usual reading of Cohen's and Fleiss' kappa.
KAPPA_BANDS = [(0.20, "slight"), (0.40, "fair"), (0.60, "moderate"),
               (0.80, "substantial"), (1.0, "almost perfect")]


def kappa_reading(kappa: float) -> str:
    """Landis & Koch's words for a kappa: < 0 poor, 0–0.20 slight, …, 0.61–0.80 substantial, 0.81–1 almost perfect."""
    if kappa is None or not math.isfinite(kappa):
        return "undefined"
    if kappa < 0:
        return "poor (less than chance)"
    for upper, words in KAPPA_BANDS:
        if kappa <= upper + 1e-12:
            return words
    return KAPPA_BANDS[-1][1]


def first_choices(long: pd.DataFrame, measures: list[str]) -> pd.DataFrame:
    """Per (target, measure): the source that measure ranks most similar (rows target, measure, source)."""
    part = long[long["measure"].isin(measures)].dropna(subset=["value"])
    rows = []
    for (target, measure), group in part.groupby(["target", "measure"], sort=True):
        direction = int(group["direction"].iloc[0])
        best = group["value"].max() if direction > 0 else group["value"].min()
        for source in sorted(group.loc[group["value"] == best, "source"]):
            rows.append({"target": target, "measure": measure, "source": source})
    return pd.DataFrame(rows, columns=["target", "measure", "source"])


def flag_first_choice(disagreements: pd.DataFrame, long: pd.DataFrame, measures: list[str]) -> pd.Series:
    """True for a disagreement about a source that some measure ranks first for that target.

    Such a comparison decides which source to pretrain on: if measure A ranks s first and another
    measure prefers t over s, the measures' first choices differ.
    """
    firsts = first_choices(long, measures)
    tops = firsts.groupby("target")["source"].agg(set).to_dict()
    return pd.Series([bool({row.first, row.second} & tops.get(row.target, set()))
                      for row in disagreements.itertuples(index=False)], index=disagreements.index, dtype=bool)
