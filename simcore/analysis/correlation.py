"""How well each measure predicts NER results: Pearson and Spearman correlation with the
improvement over a no-pretraining baseline (or with F1 when no baseline is known)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from ..errors import SimcoreError
from .tables import measures_in, read_csv_table


def results_frame(table: pd.DataFrame, f1: str = "f1", baseline: str = "baseline",
                  improvement: str | None = None) -> pd.DataFrame:
    """Normalise a results table to target, source, f1, improvement.

    ``improvement`` names a column that already holds F1 − baseline (the paper's ``lm_delta``);
    otherwise the improvement is ``f1 − baseline`` when a baseline column exists, else F1 itself.
    """
    table = table.rename(columns={c: str(c).strip().lower() for c in table.columns})
    needed = {"target", "source", f1} | ({improvement} if improvement else set())
    missing = needed - set(table.columns)
    if missing:
        raise SimcoreError(f"the results table lacks column(s) {', '.join(sorted(missing))}; "
                           f"it has {', '.join(table.columns)}")
    out = pd.DataFrame({"target": table["target"].astype(str), "source": table["source"].astype(str),
                        "f1": pd.to_numeric(table[f1], errors="coerce")})
    if improvement:
        out["improvement"] = pd.to_numeric(table[improvement], errors="coerce")
    elif baseline in table.columns:
        out["improvement"] = out["f1"] - pd.to_numeric(table[baseline], errors="coerce")
    else:
        out["improvement"] = out["f1"]
    return out


def read_results(path: Path | str, **columns: str | None) -> pd.DataFrame:
    table = read_csv_table(path)
    return results_frame(table, **{k: v for k, v in columns.items() if v is not None})


def join(long: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Measures and results side by side, matching target and source names case-insensitively."""
    left = long.assign(_t=long["target"].str.lower(), _s=long["source"].str.lower())
    right = results.assign(_t=results["target"].str.lower(), _s=results["source"].str.lower())
    joined = left.merge(right.drop(columns=["target", "source"]), on=["_t", "_s"]).drop(columns=["_t", "_s"])
    if joined.empty:
        raise SimcoreError("no (target, source) pair of the matrix appears in the results table; check the names")
    return joined


def _fisher_interval(r: float, n: int, se_scale: float = 1.0) -> tuple[float, float]:
    if n <= 3 or not math.isfinite(r) or abs(r) >= 1:
        return (float("nan"), float("nan"))
    z, se = math.atanh(r), math.sqrt(se_scale / (n - 3))
    q = stats.norm.ppf(0.975)
    return (math.tanh(z - q * se), math.tanh(z + q * se))


def correlation_row(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Pearson and Spearman r with p-values and 95% intervals (Fisher z; Fieller's SE for Spearman)."""
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    n = len(x)
    nan = float("nan")
    row = {"n": n, "pearson_r": nan, "pearson_p": nan, "pearson_low": nan, "pearson_high": nan,
           "spearman_r": nan, "spearman_p": nan, "spearman_low": nan, "spearman_high": nan}
    if n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return row
    pearson = stats.pearsonr(x, y)
    row["pearson_r"], row["pearson_p"] = float(pearson.statistic), float(pearson.pvalue)
    if n > 3:
        ci = pearson.confidence_interval(0.95)
        row["pearson_low"], row["pearson_high"] = float(ci.low), float(ci.high)
    spearman = stats.spearmanr(x, y)
    row["spearman_r"], row["spearman_p"] = float(spearman.statistic), float(spearman.pvalue)
    row["spearman_low"], row["spearman_high"] = _fisher_interval(row["spearman_r"], n, 1.06)
    return row


def correlate(long: pd.DataFrame, results: pd.DataFrame, measures: list[str] | None = None,
              per_target: bool = True) -> pd.DataFrame:
    """Correlation of each measure with the improvement, pooled over all pairs and per target."""
    joined = join(long, results)
    rows = []
    for name in measures_in(joined, measures):
        part = joined[joined["measure"] == name]
        scopes = [("all", part)]
        if per_target:
            scopes += [(t, g) for t, g in part.groupby("target", sort=True)]
        for scope, group in scopes:
            rows.append({"measure": name, "scope": scope,
                         **correlation_row(group["value"].to_numpy(float), group["improvement"].to_numpy(float))})
    return pd.DataFrame(rows)
