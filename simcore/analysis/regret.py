"""Regret of choosing a source by each measure: best F1 minus the F1 of the source it ranks first."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import TableError
from .correlation import join
from .ranking import rank_sources


def regret(long: pd.DataFrame, results: pd.DataFrame, measures: list[str] | None = None) -> pd.DataFrame:
    """Per target and measure: chosen source, its F1, the best source and F1, and the regret.

    Rows with target ``mean`` give each measure's average regret. Ties for first place count as
    the worst of the tied sources, so a measure gets no credit for failing to decide.
    """
    ranking = rank_sources(long, measures)
    joined = join(ranking.assign(direction=0), results)[["target", "measure", "rank", "source", "f1"]]
    joined = joined[np.isfinite(joined["f1"].astype(float))]  # a pair without a finite F1 cannot be chosen or be best
    if joined.empty:
        raise TableError("no (target, source) pair of the matrix has an F1 in the results table")
    rows = []
    for (target, measure), group in joined.groupby(["target", "measure"], sort=True):
        best = group.loc[group["f1"].idxmax()]
        chosen = group[group["rank"] == group["rank"].min()]
        worst_chosen = chosen.loc[chosen["f1"].idxmin()]
        rows.append({"target": target, "measure": measure, "chosen": worst_chosen["source"],
                     "chosen_f1": worst_chosen["f1"], "best": best["source"], "best_f1": best["f1"],
                     "regret": best["f1"] - worst_chosen["f1"]})
    table = pd.DataFrame(rows)
    means = table.groupby("measure", as_index=False)["regret"].mean().assign(target="mean")
    return pd.concat([table, means], ignore_index=True)
