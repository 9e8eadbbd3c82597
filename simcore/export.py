"""Exports of ranked source choices: CSV, JSON, and a readable Markdown or HTML report."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pandas as pd

from .errors import SimcoreError

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def escape_formulas(table: pd.DataFrame) -> pd.DataFrame:
    """Prefix text cells that a spreadsheet would run as a formula with an apostrophe."""
    out = table.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(
                lambda v: "'" + v if isinstance(v, str) and v.startswith(_FORMULA_START) else v
            )
    return out


def ranking_csv(ranking: pd.DataFrame) -> str:
    return escape_formulas(ranking).to_csv(index=False)


def ranking_json(ranking: pd.DataFrame, options: dict[str, Any] | None = None) -> str:
    """{"targets": {target: {measure: [{"rank", "source", "value"}, ...]}}, "options": {...}}."""
    targets: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for row in ranking.itertuples(index=False):
        value = None if pd.isna(row.value) else float(row.value)
        targets.setdefault(row.target, {}).setdefault(row.measure, []).append(
            {"rank": int(row.rank), "source": row.source, "value": value})
    return json.dumps({"targets": targets, "options": options or {}}, indent=2)


def ranking_markdown(ranking: pd.DataFrame, options: dict[str, Any] | None = None) -> str:
    lines = ["# Which source to pretrain on", ""]
    if options:
        lines += ["Options: " + ", ".join(f"{k}={v}" for k, v in sorted(options.items())), ""]
    for target, group in ranking.groupby("target", sort=True):
        lines += [f"## {target}", "", "| measure | " + " | ".join(f"#{r}" for r in sorted(group["rank"].unique())) + " |"]
        lines.append("|---" * (1 + group["rank"].nunique()) + "|")
        for measure, part in group.groupby("measure", sort=False):
            cells = [", ".join(part[part["rank"] == r]["source"]) for r in sorted(group["rank"].unique())]
            lines.append(f"| {measure} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def ranking_html(ranking: pd.DataFrame, options: dict[str, Any] | None = None, extra_html: str = "") -> str:
    """A self-contained page: one table per target; every corpus text is escaped."""
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>simcore report</title>",
             "<style>body{font-family:sans-serif;max-width:960px;margin:2em auto}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:4px 8px}th{background:#f3f3f3}</style></head><body>",
             "<h1>Which source to pretrain on</h1>"]
    if options:
        parts.append("<p>Options: " + html.escape(", ".join(f"{k}={v}" for k, v in sorted(options.items()))) + "</p>")
    for target, group in ranking.groupby("target", sort=True):
        ranks = sorted(group["rank"].unique())
        parts.append(f"<h2>{html.escape(str(target))}</h2><table><tr><th>measure</th>"
                     + "".join(f"<th>#{r}</th>" for r in ranks) + "</tr>")
        for measure, part in group.groupby("measure", sort=False):
            cells = "".join("<td>" + html.escape(", ".join(part[part["rank"] == r]["source"])) + "</td>" for r in ranks)
            parts.append(f"<tr><td>{html.escape(str(measure))}</td>{cells}</tr>")
        parts.append("</table>")
    parts.append(extra_html)
    parts.append("</body></html>")
    return "\n".join(parts)


def write_ranking(ranking: pd.DataFrame, path: Path | str, options: dict[str, Any] | None = None) -> None:
    """Write the ranking in the format the file's suffix names (.csv, .json, .md, .html)."""
    path = Path(path)
    writers = {".csv": lambda: ranking_csv(ranking), ".json": lambda: ranking_json(ranking, options),
               ".md": lambda: ranking_markdown(ranking, options), ".html": lambda: ranking_html(ranking, options)}
    if path.suffix.lower() not in writers:
        raise SimcoreError(f"cannot write {path.name}: use a .csv, .json, .md or .html file name")
    path.write_text(writers[path.suffix.lower()](), encoding="utf-8")
