"""Exports of ranked source choices: CSV, JSON, and a readable Markdown or HTML report."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pandas as pd

from .errors import SimcoreError
from .output_paths import write_text_atomic
from .recommendation import PRETRAINING_LABEL, Recommendation, recommendation_table

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _needs_quote(text: str) -> bool:
    """True for text a spreadsheet would run as a formula, or text that looks already quoted.

    Quoting the second kind too makes the quoting reversible (see :func:`unescape_formula`).
    """
    return text.lstrip("'").startswith(_FORMULA_START)


def escape_formula(value: Any) -> Any:
    """One cell with an apostrophe in front when a spreadsheet would run it as a formula."""
    return "'" + value if isinstance(value, str) and _needs_quote(value) else value


def unescape_formula(value: Any) -> Any:
    """The inverse of :func:`escape_formula`: the original name from a cell of simcore's own CSV."""
    if isinstance(value, str) and value.startswith("'") and _needs_quote(value[1:]):
        return value[1:]
    return value


def escape_formulas(table: pd.DataFrame) -> pd.DataFrame:
    """Prefix text cells that a spreadsheet would run as a formula with an apostrophe."""
    out = table.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(escape_formula)
    return out


def csv_text(table: pd.DataFrame, **options: Any) -> str:
    """A table as simcore writes every CSV: formula-like cells escaped, and every name read back exactly.

    Python's csv quotes a cell holding a line feed but not one holding a lone carriage return, which
    a reader takes for the end of a row; a table with such a cell is written with CRLF line ends,
    which makes every carriage return quoted (pandas and spreadsheets read both kinds of file).
    """
    escaped = escape_formulas(table)
    text_cells = [escaped[c] for c in escaped.columns
                  if escaped[c].dtype == object or pd.api.types.is_string_dtype(escaped[c])]
    carriage = any(col.map(lambda v: isinstance(v, str) and "\r" in v).any() for col in text_cells)
    return escaped.to_csv(index=False, lineterminator="\r\n" if carriage else "\n", **options)


def ranking_csv(ranking: pd.DataFrame) -> str:
    return csv_text(ranking)


def recommendations_csv(recommendations: list[Recommendation]) -> str:
    return csv_text(recommendation_table(recommendations))


def _number(value: Any) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def ranking_json(ranking: pd.DataFrame, options: dict[str, Any] | None = None,
                 recommendations: list[Recommendation] | None = None) -> str:
    """{"recommendations": [...], "targets": {target: {measure: [{"rank", "source", "value"}, ...]}}, "options"}."""
    targets: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for row in ranking.itertuples(index=False):
        targets.setdefault(row.target, {}).setdefault(row.measure, []).append(
            {"rank": int(row.rank), "source": row.source, "value": _number(row.value)})
    recs = [{**r.as_dict(), "confidence": _number(r.confidence)} for r in recommendations or []]
    return json.dumps({"recommendations": recs, "targets": targets, "options": options or {}}, indent=2)


def _md(text: Any) -> str:
    """Text safe inside a Markdown table cell: HTML and Markdown syntax escaped, the name recoverable exactly.

    A line feed or carriage return would end the table row: they are written as the character
    references ``&#10;`` and ``&#13;`` (html.unescape gives them back); other characters stay as given.
    """
    escaped = "".join("\\" + c if c in "\\`*_{}[]()#+-.!|~>" else c for c in html.escape(str(text), quote=False))
    return escaped.replace("\n", "&#10;").replace("\r", "&#13;")


def _confidence(rec: Recommendation) -> str:
    return rec.confidence_text()


def ranking_markdown(ranking: pd.DataFrame, options: dict[str, Any] | None = None,
                     recommendations: list[Recommendation] | None = None) -> str:
    lines = ["# Which source to pretrain on", ""]
    if recommendations:
        lines += [f"## Recommendation ({PRETRAINING_LABEL[recommendations[0].pretraining]})", "",
                  "| target | pretrain on | confidence | why |", "|---|---|---|---|"]
        for rec in recommendations:
            lines.append(f"| {_md(rec.target)} | {_md(' or '.join(rec.recommended) or 'no recommendation')} | "
                         f"{_confidence(rec)} | {_md(rec.reason)} |")
        lines.append("")
    if options:
        lines += ["Options: " + _md(", ".join(f"{k}={v}" for k, v in sorted(options.items()))), ""]
    for target, group in ranking.groupby("target", sort=True):
        ranks = sorted(group["rank"].unique())
        lines += [f"## {_md(target)}", "", "| measure | " + " | ".join(f"#{r}" for r in ranks) + " |"]
        lines.append("|---" * (1 + len(ranks)) + "|")
        for measure, part in group.groupby("measure", sort=False):
            cells = [_md(", ".join(map(str, part[part["rank"] == r]["source"]))) for r in ranks]
            lines.append(f"| {_md(measure)} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def recommendation_html(recommendations: list[Recommendation]) -> str:
    """The recommendation as an HTML section (every name escaped)."""
    if not recommendations:
        return ""
    rows = "".join(
        f"<tr><td>{html.escape(r.target)}</td><td><b>{html.escape(' or '.join(r.recommended) or 'none')}</b></td>"
        f"<td>{html.escape(_confidence(r))}</td><td>{html.escape(r.reason)}</td></tr>" for r in recommendations)
    label = PRETRAINING_LABEL[recommendations[0].pretraining]
    return (f"<h2>Recommendation ({html.escape(label)})</h2><table><tr><th>target</th><th>pretrain on</th>"
            f"<th>confidence</th><th>why</th></tr>{rows}</table>")


def ranking_html(ranking: pd.DataFrame, options: dict[str, Any] | None = None, extra_html: str = "",
                 recommendations: list[Recommendation] | None = None, show_options: bool = True) -> str:
    """A self-contained page: the recommendation, then one ranking table per target; every corpus text is escaped."""
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>simcore report</title>",
             "<style>body{font-family:sans-serif;max-width:960px;margin:2em auto}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:4px 8px}th{background:#f3f3f3}</style></head><body>",
             "<h1>Which source to pretrain on</h1>", recommendation_html(recommendations or [])]
    if options and show_options:
        parts.append("<p>Options: " + html.escape(", ".join(f"{k}={v}" for k, v in sorted(options.items()))) + "</p>")
    parts.append("<h2>Sources ranked per target</h2>")
    for target, group in ranking.groupby("target", sort=True):
        ranks = sorted(group["rank"].unique())
        parts.append(f"<h3>{html.escape(str(target))}</h3><table><tr><th>measure</th>"
                     + "".join(f"<th>#{r}</th>" for r in ranks) + "</tr>")
        for measure, part in group.groupby("measure", sort=False):
            cells = "".join("<td>" + html.escape(", ".join(map(str, part[part["rank"] == r]["source"]))) + "</td>"
                            for r in ranks)
            parts.append(f"<tr><td>{html.escape(str(measure))}</td>{cells}</tr>")
        parts.append("</table>")
    parts.append(extra_html)
    parts.append("</body></html>")
    return "\n".join(parts)


def write_ranking(ranking: pd.DataFrame, path: Path | str, options: dict[str, Any] | None = None,
                  recommendations: list[Recommendation] | None = None) -> None:
    """Write the ranking in the format the file's suffix names (.csv, .json, .md, .html)."""
    path = Path(path)
    writers = {".csv": lambda: ranking_csv(ranking), ".json": lambda: ranking_json(ranking, options, recommendations),
               ".md": lambda: ranking_markdown(ranking, options, recommendations),
               ".html": lambda: ranking_html(ranking, options, recommendations=recommendations)}
    if path.suffix.lower() not in writers:
        raise SimcoreError(f"cannot write {path.name}: use a .csv, .json, .md or .html file name")
    write_text_atomic(path, writers[path.suffix.lower()]())


def write_recommendations(recommendations: list[Recommendation], ranking: pd.DataFrame, path: Path | str,
                          options: dict[str, Any] | None = None) -> None:
    """The recommendation as .csv (one row per target), or .json/.md/.html with the rankings after it."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        write_text_atomic(path, recommendations_csv(recommendations))
    else:
        write_ranking(ranking, path, options, recommendations)
