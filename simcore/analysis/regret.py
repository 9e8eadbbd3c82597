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

from ..utils.errors import TableError
from .correlation import join, usable_results
from .ranking import rank_sources


def _spread(a: float, b: float) -> float:
    """sqrt(a² + b²), a missing spread counting as 0."""
    a = a if isinstance(a, (int, float)) and math.isfinite(a) else 0.0
    b = b if isinstance(b, (int, float)) and math.isfinite(b) else 0.0
    return math.hypot(a, b)


def regret(long: pd.DataFrame, results: pd.DataFrame, measures: list[str] | None = None,
           include_capped: bool = False) -> pd.DataFrame:
    """Per target and measure: chosen source, its F1, the best source and F1, and the regret.

    Rows with target ``mean`` give each measure's average regret. Ties for first place count as
    the worst of the tied sources, so a measure gets no credit for failing to decide. ``tied_best``
    lists the sources within the seed spread of the best (see the module's note); choosing any of
    them has regret 0, and ``note`` says so. Results cut short by the probe's time cap are left out
    unless ``include_capped``; the table's ``attrs["left_out"]`` lists them.
    """
    results, left_out = usable_results(results, include_capped)
    ranking = rank_sources(long, measures)
    joined = join(ranking.assign(direction=0), results)
    spread = "f1_std" in joined.columns
    joined = joined[["target", "measure", "rank", "source", "f1", *(["f1_std"] if spread else [])]]
    joined = joined[np.isfinite(joined["f1"].astype(float))]  # a pair without a finite F1 cannot be chosen or be best
    if joined.empty:
        raise TableError("no (target, source) pair of the matrix has an F1 in the results table")
    rows = []
    for (target, measure), group in joined.groupby(["target", "measure"], sort=True):
        best = group.loc[group["f1"].idxmax()]
        stds = group["f1_std"].astype(float) if spread else pd.Series(np.nan, index=group.index)
        margins = [_spread(float(stds[best.name]), float(s)) for s in stds]
        within = (best["f1"] - group["f1"]).to_numpy(float) < np.array(margins)
        tied = sorted(set(group["source"][within]) | {best["source"]})
        chosen = group[group["rank"] == group["rank"].min()]
        worst_chosen = chosen.loc[chosen["f1"].idxmin()]
        note = ""
        if worst_chosen["source"] in tied and worst_chosen["source"] != best["source"]:
            margin = _spread(float(stds[best.name]), float(stds[worst_chosen.name]))
            note = (f"{worst_chosen['source']} (F1 {worst_chosen['f1']:.2f}) is within the spread over seeds of "
                    f"{best['source']} ({best['f1']:.2f}; ±{margin:.2f}): a tie, regret 0")
        elif len(tied) > 1:
            note = f"tied for best within the spread over seeds: {', '.join(tied)}"
        rows.append({"target": target, "measure": measure, "chosen": worst_chosen["source"],
                     "chosen_f1": worst_chosen["f1"], "best": best["source"], "best_f1": best["f1"],
                     "regret": 0.0 if worst_chosen["source"] in tied else best["f1"] - worst_chosen["f1"],
                     "tied_best": ", ".join(tied), "note": note})
    table = pd.DataFrame(rows)
    means = table.groupby("measure", as_index=False)["regret"].mean().assign(target="mean", tied_best="", note="")
    table = pd.concat([table, means], ignore_index=True)
    table.attrs["left_out"] = left_out
    return table
