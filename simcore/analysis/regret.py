"""Regret of choosing a source by each measure: best F1 minus the F1 of the source it ranks first.

When the results carry the probe's spread over seeds (``f1_std``), F1 scores closer than that
spread are not told apart: a source within the spread of the best is tied with it, and choosing it
costs nothing. Two sources a and b are within the spread when
``|F1(a) − F1(b)| < sqrt(std(a)² + std(b)²)``, the standard deviation of the difference of one run
of each; a missing spread (one seed, or no such column) counts as 0, so F1 is compared exactly.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..answer.recommendation import Recommendation
from ..utils.errors import TableError
from .correlation import join, usable_results
from .ranking import rank_sources


def _spread(a: float, b: float) -> float:
    """sqrt(a² + b²), a missing spread counting as 0."""
    a = a if isinstance(a, (int, float)) and math.isfinite(a) else 0.0
    b = b if isinstance(b, (int, float)) and math.isfinite(b) else 0.0
    return math.hypot(a, b)


def regret(long: pd.DataFrame, results: pd.DataFrame, measures: list[str] | None = None,
           include_capped: bool = False, recommendations: list[Recommendation] | None = None) -> pd.DataFrame:
    """Per target and measure: chosen source, its F1, the best source and F1, and the regret.

    Rows with target ``mean`` give each measure's average regret. Ties for first place count as
    the worst of the tied sources, so a measure gets no credit for failing to decide. ``tied_best``
    lists the sources within the seed spread of the best (see the module's note); choosing any of
    them has regret 0, and ``note`` says so. Results cut short by the probe's time cap are left out
    unless ``include_capped``; the table's ``attrs["left_out"]`` lists them. ``recommendations``
    already made by ``recommend(long, "lm")`` rank the ``recommended`` rows as they are.
    """
    results, left_out = usable_results(results, include_capped)
    ranking = rank_sources(long, measures, recommendations=recommendations)
    joined = join(ranking.assign(direction=0), results)
    spread = "f1_std" in joined.columns
    joined = joined[["target", "measure", "rank", "source", "f1", *(["f1_std"] if spread else [])]]
    joined = joined[np.isfinite(joined["f1"].astype(float))]  # a pair without a finite F1 cannot be chosen or be best
    if joined.empty:
        raise TableError("no (target, source) pair of the matrix has an F1 in the results table")
    rows = []
    f1 = joined["f1"].to_numpy(float)
    ranks = joined["rank"].to_numpy()
    sources = joined["source"].to_numpy(object)
    stds = joined["f1_std"].astype(float).to_numpy() if spread else np.full(len(joined), np.nan)
    # each group's rows in the table's order (as groupby keeps them), read as arrays: a pandas
    # lookup per row and group was most of the Predictiveness page's regret
    for (target, measure), rows_at in joined.groupby(["target", "measure"], sort=True).indices.items():
        best = rows_at[np.argmax(f1[rows_at])]  # the first of equal bests, as idxmax
        margins = [_spread(float(stds[best]), float(stds[i])) for i in rows_at]
        within = (f1[best] - f1[rows_at]) < np.array(margins)
        tied = sorted(set(sources[rows_at][within]) | {sources[best]})
        chosen = rows_at[ranks[rows_at] == ranks[rows_at].min()]
        worst = chosen[np.argmin(f1[chosen])]  # the first of equal worsts, as idxmin
        note = ""
        if sources[worst] in tied and sources[worst] != sources[best]:
            margin = _spread(float(stds[best]), float(stds[worst]))
            note = (f"{sources[worst]} (F1 {f1[worst]:.2f}) is within the spread over seeds of "
                    f"{sources[best]} ({f1[best]:.2f}; ±{margin:.2f}): a tie, regret 0")
        elif len(tied) > 1:
            note = f"tied for best within the spread over seeds: {', '.join(tied)}"
        rows.append({"target": target, "measure": measure, "chosen": sources[worst],
                     "chosen_f1": f1[worst], "best": sources[best], "best_f1": f1[best],
                     "regret": 0.0 if sources[worst] in tied else f1[best] - f1[worst],
                     "tied_best": ", ".join(tied), "note": note})
    table = pd.DataFrame(rows)
    means = table.groupby("measure", as_index=False)["regret"].mean().assign(target="mean", tied_best="", note="")
    table = pd.concat([table, means], ignore_index=True)
    table.attrs["left_out"] = left_out
    return table
