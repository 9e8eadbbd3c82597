"""An audit of how well each measure, and the recommendation rule, would have chosen the source.

Correlations over a small table are noisy and answer another question. A practitioner asks: would
the measure have put the sources in the order their NER F1 puts them, and what would following its
first choice have cost? For every measure (in the direction it declares: lower PPL, JSD, WVV is more
similar, higher TVC, TVcC is) and for the recommendation rule as ``simcore recommend`` applies it
(``--pretraining lm`` and ``vectors``; its sources ranked by their share of the votes), per target:

- **decision accuracy**: over the pairs of sources, the share the measure orders as their F1 orders
  them. A pair whose F1 differ by less than its *margin* is an F1 tie: it is neither right nor wrong
  and is left out of the share (counted in ``f1_ties``). The margin of sources a and b is
  ``max(tie_f1, sqrt(std_a² + std_b²))``: the spread over seeds of the difference of one run of each
  when the results carry ``f1_std`` (a missing spread counts as 0, as in :mod:`.regret`), and never
  less than ``tie_f1`` (``--tie-f1``, default 0: only equal F1 tie). A pair the measure does not order
  (equal values) scores ½, a coin toss.
- **top-1 regret**: best F1 minus the F1 of the source the measure ranks first (several tied first:
  the worst of them, as ``simcore regret`` counts it); 0 when that source is within the margin of the
  best.
- **NDCG@k**: the sources in the measure's order, gain = F1 − the target's lowest F1, discount
  1/log2(1 + position), summed over the first k positions and divided by the same sum in F1's order.
  Sources the measure ties share their positions: each of those positions gets the group's mean gain
  (the expectation over the orders of the tie). NaN when every F1 of the target is equal.

Pooled over targets, decision accuracy is the share over every counted pair of every target, regret
and NDCG are means over targets. The 95% intervals resample targets with replacement (percentile
bootstrap, seeded; the same resamples for every measure with the same targets): with a handful of
targets they are wide, which is the point. Nothing here is fitted, so no cross-validation is needed.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..answer.recommendation import PRETRAINING, Recommendation
from ..outcomes import margin
from ..reporting.export import csv_text, html_text, markdown_cell, measure_label
from ..utils.errors import InvalidArgument, SimcoreError, TableError
from ..utils.output_paths import write_text_atomic
from .correlation import join, usable_results
from .ranking import rank_sources, recommended_ranking
from .tables import checked_long

RULE = "recommended:"  # rows of the recommendation rule are named recommended:lm, recommended:vectors
MAX_BOOTSTRAP = 100_000
COLUMNS = ["measure", "label", "scope", "targets", "sources", "pairs", "f1_ties", "accuracy", "accuracy_low",
           "accuracy_high", "regret", "regret_low", "regret_high", "ndcg", "ndcg_low", "ndcg_high", "chosen",
           "chosen_f1", "best", "best_f1"]


def label_of(measure: str) -> str:
    """A row's label: the measure's (PPL) or the rule's ("recommended (lm)", as ``--pretraining lm`` applies it)."""
    if measure.startswith(RULE):
        return f"recommended ({measure[len(RULE):]})"
    return measure_label(measure)


def pair_margin(std_a: float, std_b: float, tie_f1: float) -> float:
    """The F1 difference below which two sources tie: ``max(tie_f1, sqrt(std_a² + std_b²))``."""
    return max(tie_f1, margin(std_a, std_b))


def decisions(f1: np.ndarray, std: np.ndarray, rank: np.ndarray, tie_f1: float) -> tuple[float, int, int]:
    """(score, counted pairs, F1 ties) over the pairs of one target's sources; rank 1 is the measure's best."""
    i, j = np.triu_indices(len(f1), k=1)
    diff = f1[i] - f1[j]
    spread = np.hypot(np.nan_to_num(std[i]), np.nan_to_num(std[j]))
    tied = (diff == 0) | (np.abs(diff) < np.maximum(tie_f1, spread))
    order = np.sign(rank[j] - rank[i])  # +1: the measure puts i above j
    agree = np.where(order == 0, 0.5, (order == np.sign(diff)).astype(float))
    return float(agree[~tied].sum()), int((~tied).sum()), int(tied.sum())


def top1_regret(f1: np.ndarray, std: np.ndarray, rank: np.ndarray, tie_f1: float) -> tuple[float, int, int]:
    """(regret, chosen index, best index): the worst of the sources ranked first against the best F1."""
    best = int(np.argmax(f1))
    first = np.flatnonzero(rank == rank.min())
    chosen = int(first[np.argmin(f1[first])])
    lost = float(f1[best] - f1[chosen])
    if chosen == best or lost < pair_margin(std[best], std[chosen], tie_f1):
        lost = 0.0
    return lost, chosen, best


def ndcg(f1: np.ndarray, rank: np.ndarray, k: int) -> float:
    """NDCG@k of the measure's order (see the module's note); NaN when every F1 is equal."""
    gain = f1 - f1.min()
    discount = 1.0 / np.log2(np.arange(2, len(f1) + 2))
    discount[k:] = 0.0
    ideal = float(np.sort(gain)[::-1] @ discount)
    if ideal <= 0:
        return math.nan
    dcg, position = 0.0, 0
    for value in np.unique(rank):  # ascending: the measure's best group first
        group = rank == value
        size = int(group.sum())
        dcg += float(gain[group].mean() * discount[position:position + size].sum())
        position += size
    return dcg / ideal


def _ranked(long: pd.DataFrame, measures: list[str] | None, pretraining: list[str],
            recommendations: dict[str, list[Recommendation]]) -> pd.DataFrame:
    """target, source, measure, rank (1 best) for every measure asked and every applicable rule."""
    parts = [rank_sources(long, measures, None)]
    for kind in pretraining:
        if set(PRETRAINING[kind]) & set(long["measure"]):
            parts.append(recommended_ranking(long, kind, recommendations.get(kind)).assign(measure=RULE + kind))
    ranked = pd.concat(parts, ignore_index=True)
    return ranked[np.isfinite(pd.to_numeric(ranked["value"], errors="coerce").astype(float))]


def _check(k: Any, tie_f1: Any, bootstrap: Any, seed: Any, pretraining: Any) -> list[str]:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InvalidArgument(f"k must be a whole number from 1, not {k!r}"[:200])
    if isinstance(tie_f1, bool) or not isinstance(tie_f1, (int, float)) or not math.isfinite(tie_f1) or tie_f1 < 0:
        raise InvalidArgument(f"tie_f1 must be a finite number of F1 points, at least 0, not {tie_f1!r}"[:200])
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, (int, np.integer)) or not 0 <= bootstrap <= MAX_BOOTSTRAP:
        raise InvalidArgument(f"bootstrap must be a whole number from 0 to {MAX_BOOTSTRAP:,}, not {bootstrap!r}"[:200])
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidArgument(f"seed must be a whole number from 0, not {seed!r}"[:200])
    if isinstance(pretraining, str):
        pretraining = [pretraining]
    if not isinstance(pretraining, (list, tuple)) or not all(isinstance(p, str) for p in pretraining):
        raise InvalidArgument(f"pretraining must be a list of {', '.join(PRETRAINING)} (or empty), not "
                              f"{type(pretraining).__name__}")
    kinds = list(dict.fromkeys(pretraining))
    unknown = [p for p in kinds if p not in PRETRAINING]
    if unknown:
        raise InvalidArgument(f"pretraining must be among {', '.join(PRETRAINING)}, not {unknown[0]!r}"[:200])
    return kinds


def audit(long: pd.DataFrame, results: pd.DataFrame, measures: list[str] | None = None, *,
          pretraining: str | list[str] | tuple[str, ...] = ("lm", "vectors"), k: int = 3, tie_f1: float = 0.0,
          bootstrap: int = 2000, seed: int = 0, include_capped: bool = False,
          recommendations: dict[str, list[Recommendation]] | None = None) -> pd.DataFrame:
    """Decision accuracy, top-1 regret and NDCG@k per measure (and rule), per target and pooled (scope ``all``).

    ``results`` as read by :func:`.correlation.read_results` (``f1``, optionally ``f1_std``). Results cut
    short by the probe's time cap are left out unless ``include_capped`` (``attrs["left_out"]``). The
    table's ``attrs`` also hold the options (k, tie_f1, bootstrap, seed). ``recommendations`` already
    made by ``recommend(long, kind)``, by kind, rank a rule's rows as they are.
    """
    kinds = _check(k, tie_f1, bootstrap, seed, pretraining)
    if recommendations is not None and not isinstance(recommendations, dict):
        raise InvalidArgument("recommendations must be a dict of pretraining kind to a list of Recommendation")
    results, left_out = usable_results(results, include_capped)
    long = checked_long(long)
    ranked = _ranked(long, measures, kinds, recommendations or {})
    joined = join(ranked.assign(value=ranked["rank"].astype(float)), results)
    joined = joined[np.isfinite(joined["f1"].astype(float))]
    if joined.empty:
        raise TableError("no (target, source) pair of the matrix has an F1 in the results table")
    has_std = "f1_std" in joined.columns
    rows, per_measure = [], {}
    order = {m: i for i, m in enumerate(dict.fromkeys(ranked["measure"]))}
    for measure, part in sorted(joined.groupby("measure", sort=False), key=lambda kv: order[kv[0]]):
        stats = []
        for target, group in part.groupby("target", sort=True):
            if len(group) < 2:
                continue
            f1 = group["f1"].to_numpy(float)
            std = group["f1_std"].to_numpy(float) if has_std else np.full(len(f1), math.nan)
            rank = group["rank"].to_numpy(float)
            sources = group["source"].tolist()
            score, counted, ties = decisions(f1, std, rank, float(tie_f1))
            lost, chosen, best = top1_regret(f1, std, rank, float(tie_f1))
            gain = ndcg(f1, rank, int(k))
            stats.append((score, counted, lost, gain))
            rows.append({"measure": measure, "scope": target, "targets": 1, "sources": len(f1), "pairs": counted,
                         "f1_ties": ties, "accuracy": score / counted if counted else math.nan, "regret": lost,
                         "ndcg": gain, "chosen": sources[chosen], "chosen_f1": f1[chosen], "best": sources[best],
                         "best_f1": f1[best]})
        if stats:
            per_measure[measure] = np.array(stats, dtype=float)
    for measure, stats in per_measure.items():
        target_rows = [r for r in rows if r["measure"] == measure]
        rows.append({"measure": measure, "scope": "all", "targets": len(stats),
                     "sources": int(sum(r["sources"] for r in target_rows)),
                     "pairs": int(stats[:, 1].sum()), "f1_ties": int(sum(r["f1_ties"] for r in target_rows)),
                     **_pooled(stats, int(bootstrap), int(seed))})
    if not rows:
        raise TableError("no target has two sources with an F1 in the results table; nothing to audit")
    table = pd.DataFrame(rows)
    table["label"] = table["measure"].map(label_of)
    table["_all"] = table["scope"] != "all"
    table["_m"] = table["measure"].map(order)
    table = table.sort_values(["_all", "_m", "scope"], kind="stable").reindex(columns=COLUMNS).reset_index(drop=True)
    table.attrs.update({"left_out": left_out, "k": int(k), "tie_f1": float(tie_f1), "bootstrap": int(bootstrap),
                        "seed": int(seed), "spread": bool(has_std and joined["f1_std"].notna().any())})
    return table


def _pooled(stats: np.ndarray, bootstrap: int, seed: int) -> dict[str, float]:
    """Pooled accuracy, regret and NDCG over targets (rows score, counted, regret, ndcg) with bootstrap intervals."""
    def summary(s: np.ndarray) -> np.ndarray:  # s: (..., targets, 4)
        with np.errstate(invalid="ignore", divide="ignore"):
            counted = s[..., 1].sum(axis=-1)
            accuracy = np.where(counted > 0, s[..., 0].sum(axis=-1) / np.where(counted > 0, counted, 1), np.nan)
            ndcgs = s[..., 3]
            finite = np.isfinite(ndcgs)
            mean_ndcg = np.where(finite.any(axis=-1), np.where(finite, ndcgs, 0).sum(axis=-1)
                                 / np.maximum(finite.sum(axis=-1), 1), np.nan)
        return np.stack([accuracy, s[..., 2].mean(axis=-1), mean_ndcg], axis=-1)

    point = summary(stats)
    out = {"accuracy": point[0], "regret": point[1], "ndcg": point[2]}
    low = high = np.full(3, math.nan)
    if bootstrap and len(stats) > 1:
        picks = np.random.default_rng(seed).integers(0, len(stats), size=(bootstrap, len(stats)))
        draws = summary(stats[picks])
        low, high = np.full(3, math.nan), np.full(3, math.nan)
        for i in range(3):
            column = draws[:, i][np.isfinite(draws[:, i])]
            if column.size:
                low[i], high[i] = np.quantile(column, [0.025, 0.975])
    for i, name in enumerate(("accuracy", "regret", "ndcg")):
        out[f"{name}_low"], out[f"{name}_high"] = float(low[i]), float(high[i])
    return {key: float(value) for key, value in out.items()}


# ---- exports (CSV, JSON, Markdown, HTML), as simcore.reporting.export writes the ranking ----

DEFINITIONS = {
    "accuracy": "share of source pairs ordered as their F1 orders them; pairs whose F1 differ by less than "
                "max(tie_f1, sqrt(std_a^2 + std_b^2)) are F1 ties, left out (f1_ties); a pair the measure "
                "leaves equal scores 1/2",
    "regret": "best F1 minus the F1 of the source ranked first (the worst of several tied first); 0 within the margin",
    "ndcg": "NDCG@k with gain = F1 minus the target's lowest F1, discount 1/log2(1 + position); tied sources share "
            "their positions' discounts",
    "intervals": "95% percentile bootstrap over targets (resampled with replacement, seeded)",
}


def _options(table: pd.DataFrame) -> dict[str, Any]:
    return {key: table.attrs[key] for key in ("k", "tie_f1", "bootstrap", "seed", "spread") if key in table.attrs}


def _number(value: Any) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def audit_csv(table: pd.DataFrame) -> str:
    """The audit as CSV (every column)."""
    return csv_text(_table(table))


def audit_json(table: pd.DataFrame) -> str:
    """{"options": ..., "definitions": ..., "rows": [...]} with NaN written as null."""
    table = _table(table)
    records = [{key: (_number(v) if isinstance(v, (float, np.floating)) else
                      int(v) if isinstance(v, (np.integer,)) else v) for key, v in row.items()}
               for row in table.to_dict(orient="records")]
    return json.dumps({"options": _options(table), "definitions": DEFINITIONS, "rows": records}, indent=2)


def _cell(value: float, low: float = math.nan, high: float = math.nan, digits: int = 2) -> str:
    if not math.isfinite(value):
        return "–"
    text = f"{value:.{digits}f}"
    if math.isfinite(low) and math.isfinite(high):
        text += f" [{low:.{digits}f}, {high:.{digits}f}]"
    return text


def display_table(table: pd.DataFrame, scope: str = "all") -> pd.DataFrame:
    """The rows of one scope for reading: label, accuracy, regret and NDCG with their intervals as text."""
    table = _table(table)
    k = table.attrs.get("k", 3)
    part = table[table["scope"] == scope]
    out = pd.DataFrame({
        "measure": part["label"],
        "decision accuracy": [_cell(*r) for r in zip(part["accuracy"], part["accuracy_low"], part["accuracy_high"])],
        "top-1 regret (F1)": [_cell(*r) for r in zip(part["regret"], part["regret_low"], part["regret_high"])],
        f"NDCG@{k}": [_cell(*r) for r in zip(part["ndcg"], part["ndcg_low"], part["ndcg_high"])],
        "pairs": part["pairs"].astype(int), "F1 ties": part["f1_ties"].astype(int)})
    if scope != "all":
        out["chosen"], out["best"] = part["chosen"].to_numpy(), part["best"].to_numpy()
    return out.reset_index(drop=True)


def _caption(table: pd.DataFrame) -> str:
    options = _options(table)
    margin = "the results' spread over seeds, at least " if options.get("spread") else ""
    return (f"k = {options.get('k')}; F1 ties: pairs closer than {margin}{options.get('tie_f1', 0):g} F1; "
            f"intervals: 95% bootstrap over targets ({options.get('bootstrap')} resamples, seed {options.get('seed')}).")


def audit_markdown(table: pd.DataFrame) -> str:
    """A readable Markdown report: pooled rows, then one table per target, then the definitions."""
    table = _table(table)
    lines = ["# Audit: how well each measure would have chosen", "", markdown_cell(_caption(table)), ""]
    for scope in ["all", *sorted(set(table["scope"]) - {"all"})]:
        shown = display_table(table, scope)
        lines += [f"## {'All targets' if scope == 'all' else markdown_cell(scope)}", "",
                  "| " + " | ".join(markdown_cell(c) for c in shown.columns) + " |", "|---" * len(shown.columns) + "|"]
        lines += ["| " + " | ".join(markdown_cell(v) for v in row) + " |" for row in shown.itertuples(index=False)]
        lines.append("")
    lines += ["## Definitions", ""] + [f"- {name}: {markdown_cell(text)}" for name, text in DEFINITIONS.items()]
    return "\n".join(lines) + "\n"


def audit_html(table: pd.DataFrame) -> str:
    """A self-contained page with the same content as :func:`audit_markdown`; every name escaped."""
    table = _table(table)
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>simcore audit</title>",
             "<style>body{font-family:sans-serif;max-width:960px;margin:2em auto}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:4px 8px}th{background:#f3f3f3}</style></head><body>",
             "<h1>Audit: how well each measure would have chosen</h1>", f"<p>{html_text(_caption(table))}</p>"]
    for scope in ["all", *sorted(set(table["scope"]) - {"all"})]:
        shown = display_table(table, scope)
        parts.append(f"<h2>{'All targets' if scope == 'all' else html_text(scope)}</h2><table><tr>"
                     + "".join(f"<th>{html_text(str(c))}</th>" for c in shown.columns) + "</tr>")
        parts += ["<tr>" + "".join(f"<td>{html_text(str(v))}</td>" for v in row) + "</tr>"
                  for row in shown.itertuples(index=False)]
        parts.append("</table>")
    parts.append("<h2>Definitions</h2><ul>" + "".join(f"<li>{html_text(n)}: {html_text(t)}</li>"
                                                      for n, t in DEFINITIONS.items()) + "</ul></body></html>")
    return "\n".join(parts)


WRITERS = {".csv": audit_csv, ".json": audit_json, ".md": audit_markdown, ".html": audit_html}


def write_audit(table: pd.DataFrame, path: Path | str) -> None:
    """Write the audit in the format the file's suffix names (.csv, .json, .md, .html), atomically."""
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip() or "\0" in str(path):
        raise InvalidArgument(f"the output must be a file path, not {path!r}"[:200])
    suffix = Path(path).suffix.lower()
    if suffix not in WRITERS:
        raise SimcoreError(f"cannot write {Path(path).name}: use a .csv, .json, .md or .html file name")
    write_text_atomic(path, WRITERS[suffix](table))


def _table(table: Any) -> pd.DataFrame:
    if not isinstance(table, pd.DataFrame) or not set(COLUMNS) <= set(table.columns):
        raise InvalidArgument("the audit must be the table simcore.analysis.audit returns")
    return table
