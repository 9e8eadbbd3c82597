"""How well each measure predicts NER results: Pearson and Spearman correlation with the
improvement over a no-pretraining baseline (or with F1 when no baseline is known).

Results written by ``simcore probe`` carry the probe's own noise and caps: ``f1_std`` (the spread of
F1 over seeds, used by regret to call near-equal sources a tie) and ``time_capped`` (runs cut short by
the time cap, which trained fewer epochs than the others: their F1 is not comparable, so they are
left out of correlation and regret unless asked for, and the analyses say how many).
"""

from __future__ import annotations

import functools
import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..utils.errors import InvalidArgument, SimcoreError, TableError
from .tables import as_frame, checked_long, measures_in, name_text, read_csv_table


def results_frame(table: pd.DataFrame, f1: str = "f1", baseline: str = "baseline",
                  improvement: str | None = None) -> pd.DataFrame:
    """Normalise a results table to target, source, f1, improvement.

    ``improvement`` names a column that already holds F1 − baseline (the paper's ``lm_delta``);
    otherwise the improvement is ``f1 − baseline`` when a baseline column exists, else F1 itself.
    """
    table = as_frame(table, "the results table")
    for label, column in (("f1", f1), ("baseline", baseline), ("improvement", improvement)):
        if column is not None and (not isinstance(column, str) or not column.strip()):
            raise InvalidArgument(f"{label} must name a column of the results table")
    f1, baseline = f1.strip().lower(), baseline.strip().lower()
    improvement = improvement.strip().lower() if improvement else None
    table = table.rename(columns={c: str(c).strip().lower() for c in table.columns})
    if table.columns.duplicated().any():
        raise TableError("the results table has two columns with the same name; rename one")
    needed = {"target", "source", f1} | ({improvement} if improvement else set())
    missing = needed - set(table.columns)
    if missing:
        raise TableError(f"the results table lacks column(s) {', '.join(sorted(missing))}; "
                         f"it has {', '.join(map(str, table.columns))}")
    out = pd.DataFrame({"target": name_text(table["target"]), "source": name_text(table["source"]),
                        "f1": _checked_f1(table[f1], table, f1)})
    if improvement:
        out["improvement"] = pd.to_numeric(table[improvement], errors="coerce")
    elif baseline in table.columns:
        out["improvement"] = out["f1"] - pd.to_numeric(table[baseline], errors="coerce")
    else:
        out["improvement"] = out["f1"]
    spread = f"{f1}_std"  # the probe writes f1 and f1_std; a column "lm_f1" would have "lm_f1_std"
    for column, name in ((spread, "f1_std"), ("seeds", "seeds"), (CAPPED, CAPPED)):
        if column in table.columns and name not in out:
            out[name] = pd.to_numeric(table[column], errors="coerce")
    unread = out["f1"].isna()
    out.attrs["dropped"] = [(t, s_, _shown(v)) for t, s_, v in zip(out["target"][unread], out["source"][unread],
                                                                  table[f1][unread])]
    return out[~unread].reset_index(drop=True).pipe(_keep_attrs, out.attrs)


def _keep_attrs(frame: pd.DataFrame, attrs: dict) -> pd.DataFrame:
    frame.attrs.update(attrs)
    return frame


def _shown(value: object) -> str:
    text = "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)
    return repr(text[:40])


def _checked_f1(column: pd.Series, table: pd.DataFrame, name: str) -> pd.Series:
    """F1 as numbers: a cell that is not a number (``abc``, empty, ``50%``, ``0,5``, NaN) is NaN (the row is
    dropped and named); a number no F1 can be (infinite, ``1e400``, below 0 or above 100) is refused."""
    values = pd.to_numeric(column, errors="coerce").astype(float)
    impossible = values.notna() & ~values.between(0, 100)
    if impossible.any():
        i = int(np.flatnonzero(impossible.to_numpy())[0])
        raise TableError(f"the results table's {name!r} of {table['target'].iloc[i]!s:.80} / "
                         f"{table['source'].iloc[i]!s:.80} is {_shown(column.iloc[i])}: an F1 is a number from 0 "
                         f"to 100 (or 0 to 1); {int(impossible.sum())} such row(s)")
    return values


def dropped_note(results: pd.DataFrame) -> str | None:
    """One line naming the results rows dropped because their F1 is not a number, or None."""
    dropped = results.attrs.get("dropped") or []
    if not dropped:
        return None
    named = "; ".join(f"{t} / {s} ({v})" for t, s, v in dropped[:5])
    more = f" and {len(dropped) - 5} more" if len(dropped) > 5 else ""
    return f"{len(dropped)} results row(s) left out, their F1 is not a number: {named}{more}"


CAPPED = "time_capped"  # the probe's count of runs (source and baseline) cut short by its time cap


def usable_results(results: pd.DataFrame, include_capped: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The results the analyses use, and the rows left out (target, source, why).

    Rows whose runs were cut short by the probe's time cap (``time_capped`` > 0) trained fewer epochs
    than the others, so their F1 measures the cap rather than the source: they are left out unless
    ``include_capped``. Every row is kept when the table has no ``time_capped`` column.
    """
    if not isinstance(include_capped, (bool, np.bool_)):
        raise InvalidArgument("include_capped must be True or False")
    results = as_frame(results, "the results table")
    empty = pd.DataFrame(columns=["target", "source", "why"])
    if CAPPED not in results.columns or include_capped:
        return results, empty
    capped = pd.to_numeric(results[CAPPED], errors="coerce").fillna(0) > 0
    if not capped.any():
        return results, empty
    left = results[capped]
    why = [f"{int(n)} run(s) cut short by the probe's time cap" for n in pd.to_numeric(left[CAPPED])]
    left_out = pd.DataFrame({"target": left["target"].to_numpy(), "source": left["source"].to_numpy(), "why": why})
    if capped.all():
        raise SimcoreError(f"every one of the {len(results)} results was cut short by the probe's time cap, so no F1 "
                           "is comparable; raise the probe's --max-seconds, or include them (include_capped=True; "
                           "--include-capped on the command line)")
    return results[~capped].reset_index(drop=True), left_out


def left_out_note(left_out: pd.DataFrame) -> str:
    """One line saying which results were left out and why ('' when none)."""
    if left_out is None or left_out.empty:
        return ""
    pairs = [f"{t}/{s}" for t, s in zip(left_out["target"], left_out["source"])]
    return (f"{len(pairs)} result(s) left out, cut short by the probe's time cap (column {CAPPED}): "
            f"{', '.join(pairs[:5])}{', …' if len(pairs) > 5 else ''}")


def read_results(path: Path | str, **columns: str | None) -> pd.DataFrame:
    """A results CSV (target, source, F1 [, baseline]) normalised by :func:`results_frame`."""
    unknown = set(columns) - {"f1", "baseline", "improvement"}
    if unknown:
        raise InvalidArgument(f"read_results takes the column names f1, baseline and improvement, not "
                              f"{', '.join(sorted(unknown))}")
    table = read_csv_table(path)
    return results_frame(table, **{k: v for k, v in columns.items() if v is not None})


def join(long: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Measures and results side by side, matching target and source names exactly.

    Names are data: ``news`` and ``NEWS`` are two corpora. Results rows repeating a (target,
    source) are kept once when they agree and refused when not. Pairs of the results table whose
    names match a matrix pair only when case is ignored are listed in ``attrs["case_only"]`` (and in
    the message when nothing matches), never joined silently.
    """
    long = checked_long(long)
    results = as_frame(results, "the results table")
    missing = {"target", "source", "f1", "improvement"} - set(results.columns)
    if missing:
        raise TableError(f"the results table lacks column(s) {', '.join(sorted(missing))}; read it with read_results")
    results = results.assign(target=name_text(results["target"]), source=name_text(results["source"]),
                             f1=pd.to_numeric(results["f1"], errors="coerce"),
                             improvement=pd.to_numeric(results["improvement"], errors="coerce"))
    results = _unique_results(results)
    joined = long.merge(results, on=["target", "source"])
    pairs = set(zip(long["target"], long["source"]))
    unmatched = [p for p in zip(results["target"], results["source"]) if p not in pairs]
    folded = {(t.casefold(), s.casefold()): (t, s) for t, s in pairs}
    case_only = sorted({(p, folded[(p[0].casefold(), p[1].casefold())]) for p in unmatched
                        if (p[0].casefold(), p[1].casefold()) in folded})
    if joined.empty:
        hint = ""
        if case_only:
            (t, s), (mt, ms) = case_only[0]
            hint = (f"; names must match exactly, and they differ only in case, e.g. results {t!r}/{s!r} "
                    f"against matrix {mt!r}/{ms!r}")
        raise SimcoreError("no (target, source) pair of the matrix appears in the results table; check the names"
                           + hint)
    joined.attrs["case_only"] = case_only
    return joined


def _unique_results(results: pd.DataFrame) -> pd.DataFrame:
    """One row per (target, source): agreeing repeats dropped, conflicting ones a TableError."""
    key = ["target", "source"]
    repeated = results[results.duplicated(key, keep=False)]
    if repeated.empty:
        return results
    spread = repeated.groupby(key, sort=False)[["f1", "improvement"]].nunique(dropna=False)
    conflicting = spread[(spread > 1).any(axis=1)]
    if len(conflicting):
        target, source = conflicting.index[0]
        raise TableError(f"the results table gives target {target!r}, source {source!r} twice with different "
                         "values; keep one row per pair")
    return results.drop_duplicates(key, keep="first")


EXACT_UP_TO = 8  # exact permutation p-values up to this many pairs (8! = 40,320 orderings)
SIMULATED_BELOW = 10  # intervals by inverting the simulated sampling distribution below this many pairs
_GRID = np.round(np.linspace(-0.995, 0.995, 200), 4)


def _fisher_interval(r: float, n: int, se_scale: float = 1.0) -> tuple[float, float]:
    from scipy import stats  # about 1 s of imports: not before a correlation is asked
    if n <= 3 or not math.isfinite(r) or abs(r) >= 1:
        return (float("nan"), float("nan"))
    z, se = math.atanh(r), math.sqrt(se_scale / (n - 3))
    q = stats.norm.ppf(0.975)
    return (math.tanh(z - q * se), math.tanh(z + q * se))


def _rank_rows(values: np.ndarray) -> np.ndarray:
    return values.argsort(axis=-1).argsort(axis=-1).astype(float)


def _row_correlation(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    x = x - x.mean(axis=-1, keepdims=True)
    y = y - y.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (x * y).sum(axis=-1) / np.sqrt((x * x).sum(axis=-1) * (y * y).sum(axis=-1))


SAMPLING_TABLE = Path(__file__).with_name("sampling_quantiles.json")  # bench/sampling_table.py writes it
TABLED = range(3, SIMULATED_BELOW)  # the pair counts whose quantiles are stored: every small-n interval


def simulate_quantiles(n: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """2.5% and 97.5% quantiles of r from n bivariate-normal pairs, for each true correlation in the
    grid (4,000 draws, seeded by n and kind)."""
    rng = np.random.default_rng([n, len(kind)])
    draws = 4000
    z1 = rng.standard_normal((draws, n))
    z2 = rng.standard_normal((draws, n))
    x = _rank_rows(z1) if kind == "spearman" else z1  # the same for every grid point
    low, high = np.empty(len(_GRID)), np.empty(len(_GRID))
    for i, rho in enumerate(_GRID):
        y = rho * z1 + math.sqrt(1 - rho * rho) * z2
        if kind == "spearman":
            y = _rank_rows(y)
        r = _row_correlation(x, y)
        low[i], high[i] = np.quantile(r, [0.025, 0.975])
    return low, high


@functools.lru_cache(maxsize=1)
def _stored_quantiles() -> dict[str, list[list[float]]]:
    """The simulated quantiles of :data:`TABLED` pair counts as written once (0.2-0.6 s of simulation
    each, paid by a server's first correlation otherwise); {} when the file is missing or unreadable."""
    import json
    try:
        table = json.loads(SAMPLING_TABLE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return table if isinstance(table, dict) else {}


@functools.lru_cache(maxsize=64)
def _sampling_quantiles(n: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`simulate_quantiles`, read from :data:`SAMPLING_TABLE` when it holds them (the same
    numbers: tests/test_correlation_table.py simulates them again)."""
    stored = _stored_quantiles().get(f"{n} {kind}")
    if stored is not None and len(stored) == 2 and all(len(q) == len(_GRID) for q in stored):
        return np.array(stored[0], dtype=float), np.array(stored[1], dtype=float)
    return simulate_quantiles(n, kind)


def simulated_interval(r: float, n: int, kind: str) -> tuple[float, float]:
    """95% interval for the true correlation by test inversion: every correlation on a grid under which
    the observed r is within the central 95% of r's sampling distribution (bivariate normal, simulated
    with a fixed seed). Unlike Fisher's z it neither collapses at |r| = 1 nor needs large n."""
    if n < 3 or not math.isfinite(r):
        return (float("nan"), float("nan"))
    low, high = _sampling_quantiles(n, kind)
    r = max(-0.999, min(0.999, r))  # |r| = 1 has probability 0 under a continuous model: take the edge
    accepted = _GRID[(low <= r + 1e-9) & (high >= r - 1e-9)]
    if accepted.size == 0:
        return (float("nan"), float("nan"))
    lower = -1.0 if accepted.min() == _GRID[0] else float(accepted.min())
    upper = 1.0 if accepted.max() == _GRID[-1] else float(accepted.max())
    return (lower, upper)


def permutation_pvalue(x: np.ndarray, y: np.ndarray, kind: str) -> float:
    """Two-sided p-value over every ordering of y (exact; for small n): twice the smaller tail, as scipy's
    permutation_test counts it."""
    from scipy import stats  # about 1 s of imports: not before a correlation is asked
    n = len(x)
    orders = np.array(list(itertools.permutations(range(n))))
    if kind == "spearman":
        x, y = stats.rankdata(x), stats.rankdata(y)
    observed = _row_correlation(x[None, :], y[None, :])[0]
    permuted = _row_correlation(np.broadcast_to(x, orders.shape), y[orders])
    upper = np.mean(permuted >= observed - 1e-12)
    lower = np.mean(permuted <= observed + 1e-12)
    return float(min(1.0, 2 * min(upper, lower)))


def correlation_row(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Pearson and Spearman r with p-values and 95% intervals.

    p-values are exact permutation p-values up to 8 pairs, else scipy's (never below the smallest
    permutation p-value, 2/n!, which the t approximation passes at |r| = 1). Intervals: Fisher's z
    (Fieller's SE for Spearman) from 10 pairs when |r| < 1, else test inversion (see simulated_interval).
    """
    from scipy import stats  # about 1 s of imports: not before a correlation is asked
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    n = len(x)
    nan = float("nan")
    row = {"n": n, "pearson_r": nan, "pearson_p": nan, "pearson_low": nan, "pearson_high": nan,
           "spearman_r": nan, "spearman_p": nan, "spearman_low": nan, "spearman_high": nan}
    if n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return row
    pearson = stats.pearsonr(x, y)
    spearman = stats.spearmanr(x, y)
    row["pearson_r"], row["spearman_r"] = float(pearson.statistic), float(spearman.statistic)
    floor = 2.0 / math.factorial(n) if n <= 170 else 0.0
    for kind, result in (("pearson", pearson), ("spearman", spearman)):
        r = row[f"{kind}_r"]
        if n <= EXACT_UP_TO:
            row[f"{kind}_p"] = permutation_pvalue(x, y, kind)
        else:
            row[f"{kind}_p"] = max(float(result.pvalue), floor)
        if n < SIMULATED_BELOW or abs(r) >= 0.999:
            row[f"{kind}_low"], row[f"{kind}_high"] = simulated_interval(r, n, kind)
        elif kind == "pearson":
            ci = pearson.confidence_interval(0.95)
            row["pearson_low"], row["pearson_high"] = float(ci.low), float(ci.high)
        else:
            row["spearman_low"], row["spearman_high"] = _fisher_interval(r, n, 1.06)
    return row


def correlate(long: pd.DataFrame, results: pd.DataFrame, measures: list[str] | None = None,
              per_target: bool = True, include_capped: bool = False) -> pd.DataFrame:
    """Correlation of each measure with the improvement, pooled over all pairs and per target.

    Results cut short by the probe's time cap are left out unless ``include_capped``; the table's
    ``attrs["left_out"]`` lists them (target, source, why).
    """
    results, left_out = usable_results(results, include_capped)
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
    table = pd.DataFrame(rows)
    table.attrs["left_out"] = left_out
    return table
