"""Reading the agreement results: kappa in words, and which disagreements decide the first choice."""

from __future__ import annotations

import math

import numpy as np
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
    part = long[long["measure"].isin(measures)].dropna(subset=["value", "target"])
    if part.empty:
        return pd.DataFrame([], columns=["target", "measure", "source"])
    keys = [part["target"], part["measure"]]
    # each (target, measure) in the direction of its first row: the largest value, or the smallest
    up = part.groupby(keys, sort=False)["direction"].transform("first").astype(int).to_numpy() > 0
    values = part["value"].to_numpy(float)
    signed = pd.Series(np.where(up, values, -values), index=part.index)
    best = signed.groupby(keys, sort=False).transform("max").to_numpy()
    top = part.loc[signed.to_numpy() == best, ["target", "measure", "source"]]
    rows = sorted(zip(top["target"].tolist(), top["measure"].tolist(), top["source"].tolist()))
    return pd.DataFrame({"target": [r[0] for r in rows], "measure": [r[1] for r in rows],
                         "source": [r[2] for r in rows]}, columns=["target", "measure", "source"])


def flag_first_choice(disagreements: pd.DataFrame, long: pd.DataFrame, measures: list[str]) -> pd.Series:
    """True for a disagreement about a source that some measure ranks first for that target.

    Such a comparison decides which source to pretrain on: if measure A ranks s first and another
    measure prefers t over s, the measures' first choices differ.
    """
    firsts = first_choices(long, measures)
    tops = firsts.groupby("target")["source"].agg(set).to_dict()
    return pd.Series([bool({row.first, row.second} & tops.get(row.target, set()))
                      for row in disagreements.itertuples(index=False)], index=disagreements.index, dtype=bool)
