"""Exports of ranked source choices: CSV, JSON, and a readable Markdown or HTML report."""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..answer.recommendation import PRETRAINING_LABEL, Recommendation, recommendation_table
from ..utils.errors import InvalidArgument, OutputError, SimcoreError, TableError
from ..utils.output_paths import write_text_atomic
from ..utils.terminal import visible_controls

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
RANKING_COLUMNS = ("target", "measure", "rank", "source", "value")

__all__ = ["csv_text", "escape_formula", "escape_formulas", "html_text", "pairs_csv", "ranking_csv", "ranking_html", "ranking_json",
           "markdown_cell", "ranking_markdown", "recommendation_html", "recommendations_csv", "unescape_formula", "write_ranking",
           "write_recommendations"]


def _table(table: Any, what: str = "the table") -> pd.DataFrame:
    if not isinstance(table, pd.DataFrame):
        raise InvalidArgument(f"{what} must be a pandas DataFrame, not {type(table).__name__}")
    return table


def _ranking(ranking: Any) -> pd.DataFrame:
    """A ranking made by simcore.analysis.rank_sources: its columns there, ranks whole numbers."""
    ranking = _table(ranking, "the ranking")
    missing = [c for c in RANKING_COLUMNS if c not in ranking.columns]
    if missing:
        raise TableError(f"the ranking lacks column(s) {', '.join(missing)}; make it with simcore.analysis.rank_sources")
    ranks = pd.to_numeric(ranking["rank"], errors="coerce")
    if len(ranking) and (ranks.isna().any() or not np.isfinite(ranks.to_numpy(float)).all()
                         or (ranks != ranks.round()).any() or (ranks < 1).any()):
        raise TableError("the ranking's rank column must hold whole numbers from 1; make it with rank_sources")
    return ranking


def _options(options: Any) -> dict[str, Any]:
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise InvalidArgument(f"options must be a dict (or None), not {type(options).__name__}")
    return options


def _recommendations(recommendations: Any) -> list[Recommendation]:
    if recommendations is None:
        return []
    if not isinstance(recommendations, (list, tuple)) or not all(isinstance(r, Recommendation) for r in recommendations):
        raise InvalidArgument("recommendations must be a list of Recommendation (from simcore.answer.recommendation."
                              "recommend), or None")
    return list(recommendations)


def _path(path: Any) -> Path:
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip() or "\0" in str(path):
        raise InvalidArgument(f"the output must be a file path, not {path!r}"[:200])
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{path} is a directory; give a file name")
    if not path.parent.is_dir():
        raise OutputError(f"cannot write {path}: the folder {path.parent} does not exist")
    return path


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
    out = _table(table).copy()
    for column in out.columns:
        values = out[column]
        if values.dtype == object or pd.api.types.is_string_dtype(values):
            escaped = _per_distinct(values, escape_formula)
            if escaped is not None:
                out[column] = escaped
    return out


def _per_distinct(values: pd.Series, change: Any) -> pd.Series | None:
    """``values`` with ``change`` applied once per distinct value (a ranking repeats each name thousands of
    times); None when nothing changes."""
    objects = values.astype(object)
    try:
        codes, uniques = pd.factorize(objects, use_na_sentinel=True)
    except TypeError:  # unhashable cells: one at a time
        changed = objects.map(change)
        return None if changed.equals(objects) else changed
    new = [change(u) for u in uniques]
    if all(a is b for a, b in zip(new, uniques)):
        return None
    table = np.array(new + [None], dtype=object)
    result = pd.Series(table[codes], index=values.index, dtype=object)
    return result.where(codes != -1, objects)


def _has_carriage_return(values: pd.Series) -> bool:
    objects = values.astype(object)
    try:
        distinct = pd.unique(objects)
    except TypeError:
        distinct = objects.to_numpy()
    return any(isinstance(v, str) and "\r" in v for v in distinct)


def csv_text(table: pd.DataFrame, **options: Any) -> str:
    """A table as simcore writes every CSV: formula-like cells escaped, and every name read back exactly.

    Python's csv quotes a cell holding a line feed but not one holding a lone carriage return, which
    a reader takes for the end of a row; a table with such a cell is written with CRLF line ends,
    which makes every carriage return quoted (pandas and spreadsheets read both kinds of file).
    """
    escaped = escape_formulas(_table(table))
    text_cells = [escaped[c] for c in escaped.columns
                  if escaped[c].dtype == object or pd.api.types.is_string_dtype(escaped[c])]
    carriage = any(_has_carriage_return(col) for col in text_cells)
    return escaped.to_csv(index=False, lineterminator="\r\n" if carriage else "\n", **options)


def ranking_csv(ranking: pd.DataFrame) -> str:
    """The ranking as CSV text; a source without a value (a measure not computed, such as WVV on small
    sources) has an empty rank, not a shared first place."""
    ranking = _ranking(ranking)
    missing = pd.to_numeric(ranking["value"], errors="coerce").isna()
    if missing.any():
        ranking = ranking.assign(rank=pd.to_numeric(ranking["rank"]).astype("Int64").mask(missing))
    return csv_text(ranking)


def recommendations_csv(recommendations: list[Recommendation]) -> str:
    """One CSV row per target: the recommendation."""
    return csv_text(recommendation_table(_recommendations(recommendations)))


def pairs_csv(evidence: pd.DataFrame) -> str:
    """The pairwise comparisons behind the answer (:func:`simcore.answer.evidence.pairs_evidence`) as CSV text."""
    return csv_text(_table(evidence, "the pairwise comparisons"))


def _number(value: Any) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def ranking_json(ranking: pd.DataFrame, options: dict[str, Any] | None = None,
                 recommendations: list[Recommendation] | None = None, pairs: pd.DataFrame | None = None) -> str:
    """{"recommendations": [...], "targets": {target: {measure: [{"rank", "source", "value"}, ...]}}, "options"},
    and "pairs" (one object per row of :func:`simcore.answer.evidence.pairs_evidence`) when ``pairs`` is given."""
    ranking, options, recommendations = _ranking(ranking), _options(options), _recommendations(recommendations)
    targets: dict[str, dict[str, list[dict[str, Any]]]] = {}
    values = pd.to_numeric(ranking["value"], errors="coerce").astype(float) if len(ranking) else ranking["value"]
    for target, measure, rank, source, value in zip(ranking["target"], ranking["measure"], ranking["rank"],
                                                    ranking["source"], values):
        targets.setdefault(target, {}).setdefault(measure, []).append(
            {"rank": None if value != value else int(rank), "source": source,
             "value": None if value != value else float(value)})
    recs = [{**r.as_dict(), "confidence": _number(r.confidence)} for r in recommendations or []]
    document: dict[str, Any] = {"recommendations": recs, "targets": targets, "options": options}
    if pairs is not None:
        document["pairs"] = _json_records(_table(pairs, "the pairwise comparisons"))
    if len(ranking) > 10_000:  # a file that large is read by programs: no indent
        return json.dumps(document, default=str)
    return indented_json(document)


# what each byte of compact JSON is: 1 a quote, 2 a comma, 3 an opening, 4 a closing, 0 the rest
_JSON_KIND = np.zeros(256, dtype=np.int8)
_JSON_KIND[ord('"')], _JSON_KIND[ord(",")] = 1, 2
_JSON_KIND[[ord("["), ord("{")]] = 3
_JSON_KIND[[ord("]"), ord("}")]] = 4


def indented_json(document: Any, indent: int = 2) -> str:
    """``json.dumps(document, indent=indent, default=str)``, the same text, from the C encoder.

    Python's encoder is pure Python once given an indent (several times slower): this encodes
    without one, then puts each line break and indent where that encoder puts them, found with
    numpy: after every ``[``, ``{`` and ``,`` outside a string and before every ``]`` and ``}``,
    except inside an empty ``[]`` or ``{}``.
    """
    # ASCII: the encoder writes every other character as a \u escape
    compact = json.dumps(document, separators=(",", ": "), default=str).encode("ascii")
    text = np.frombuffer(compact, dtype=np.uint8)
    kinds = _JSON_KIND[text]
    where = np.flatnonzero(kinds)
    kind = kinds[where]
    quote = kind == 1
    if b"\\" in compact:  # a quote after an odd run of backslashes is inside its string
        slash = text == ord("\\")
        position = np.arange(len(text))
        last_other = np.maximum.accumulate(np.where(slash, -1, position))
        before = where[quote] - 1
        run = np.where(before >= 0, before - last_other[np.maximum(before, 0)], 0)
        quote[quote] = run % 2 == 0
    outside = (np.cumsum(quote) & 1) == 0
    marks = outside & (kind > 1)
    where, kind = where[marks], kind[marks]
    if not len(where):
        return compact.decode("ascii")
    opens, closes = kind == 3, kind == 4
    depth = np.cumsum(opens.astype(np.int64) - closes)  # the depth after each mark
    empty = np.zeros(len(where), dtype=bool)  # an opening whose closing follows at once
    empty[:-1] = opens[:-1] & closes[1:] & (where[1:] == where[:-1] + 1)
    after = (opens & ~empty) | (kind == 2)
    before = closes.copy()
    before[1:] &= ~empty[:-1]
    width = 1 + indent * depth  # a line break, then the indent
    # the text cut before each break: a break after a mark cuts after it
    cut = np.concatenate([where[before], where[after] + 1])
    grow = np.concatenate([width[before], width[after]])
    order = np.argsort(cut, kind="stable")
    cut, grow = cut[order], grow[order]
    lengths = np.diff(np.concatenate([[0], cut, [len(text)]]))
    shifts = np.concatenate([[0], np.cumsum(grow)])
    out = np.full(len(text) + int(shifts[-1]), ord(" "), dtype=np.uint8)
    out[np.arange(len(text)) + np.repeat(shifts, lengths)] = text
    out[cut + shifts[:-1]] = ord("\n")
    return out.tobytes().decode("ascii")


def _json_records(table: pd.DataFrame) -> list[dict[str, Any]]:
    """``table.to_dict("records")`` with every cell as :func:`_json_cell` gives it, built a column
    at a time (a cell at a time took 50 ms for 3,000 pairs) where the columns are of plain kinds."""
    kinds = pd.api.types
    plain = not table.columns.duplicated().any() and all(
        kinds.is_float_dtype(t) or kinds.is_integer_dtype(t) or kinds.is_bool_dtype(t)
        or (kinds.is_string_dtype(t) and not isinstance(t, np.dtype))  # text, not objects
        for t in table.dtypes)
    if not plain:
        return [{k: _json_cell(v) for k, v in row.items()} for row in table.to_dict("records")]
    columns = []
    for name in table.columns:
        values = table[name]
        if values.dtype == np.float64:
            columns.append([None if v != v else v for v in values.to_numpy().tolist()])
        elif values.dtype in (np.bool_, np.int64):
            columns.append(values.to_numpy().tolist())
        else:  # text, nullable numbers: a missing value of any kind becomes None
            columns.append([_json_cell(v) for v in values.tolist()])
    names = table.columns.tolist()
    return [dict(zip(names, row)) for row in zip(*columns)]


def _json_cell(value: Any) -> Any:
    """A cell as JSON: NaN and pandas' missing values as null, numpy numbers as Python's."""
    if value is None or (not isinstance(value, (str, bool, np.bool_)) and pd.isna(value)):
        return None
    return value.item() if isinstance(value, np.generic) else value


def html_text(text: Any, quote: bool = True) -> str:
    """Text for an HTML page: markup escaped and control characters shown (``\\x1b``), never sent raw."""
    if not isinstance(quote, bool):
        raise InvalidArgument(f"html_text's quote must be True or False, not {type(quote).__name__}")
    return html.escape(visible_controls(text), quote=quote)


def _md(text: Any) -> str:
    """Text safe inside a Markdown table cell: HTML and Markdown syntax escaped, the name recoverable exactly.

    A line feed or carriage return would end the table row: they are written as the character
    references ``&#10;`` and ``&#13;`` (html.unescape gives them back). Other control characters (an
    escape would recolour a terminal that shows the file) are written ``\\x1b``: as the backslash of
    the name's own text is doubled, ``\\xHH`` after an undoubled backslash is always one of them.
    """
    escaped = "".join("\\" + c if c in "\\`*_{}[]()#+-.!|~>" else c for c in html.escape(str(text), quote=False))
    return visible_controls(escaped.replace("\n", "&#10;").replace("\r", "&#13;"))


markdown_cell = _md  # the same escaping for other analyses' Markdown exports (simcore.analysis.audit)


def _confidence(rec: Recommendation) -> str:
    return rec.confidence_text()


def ranking_markdown(ranking: pd.DataFrame, options: dict[str, Any] | None = None,
                     recommendations: list[Recommendation] | None = None) -> str:
    """A readable Markdown report: the recommendation, then one table of ranks per target."""
    ranking, options, recommendations = _ranking(ranking), _options(options), _recommendations(recommendations)
    lines = ["# Which source to pretrain on", ""]
    if recommendations:
        lines += [f"## Recommendation ({PRETRAINING_LABEL[recommendations[0].pretraining]})", "",
                  "| target | pretrain on | confidence | why |", "|---|---|---|---|"]
        for rec in recommendations:
            lines.append(f"| {_md(rec.target)} | {_md(' or '.join(rec.recommended) or 'no recommendation')} | "
                         f"{_confidence(rec)} | {_md(rec.reason)} |")
        lines.append("")
    if options:
        lines += ["Options: " + _md(", ".join(f"{k}={v}" for k, v in sorted(options.items(), key=lambda kv: str(kv[0])))), ""]
    for target, measures in _cells(ranking).items():
        ranks = sorted({r for cells in measures.values() for r in cells})
        lines += [f"## {_md(target)}", "", "| measure | " + " | ".join(f"#{r}" for r in ranks) + " |"]
        lines.append("|---" * (1 + len(ranks)) + "|")
        for measure, cells in measures.items():
            lines.append(f"| {_md(measure_label(measure))} | " + " | ".join(_md(cells.get(r, "")) for r in ranks) + " |")
        lines.append("")
    return "\n".join(lines)


def _cells(ranking: pd.DataFrame) -> dict[str, dict[str, dict[int, str]]]:
    """{target: {measure: {rank: "source, source"}}}, targets sorted, measures and sources in ranking order."""
    return {target: {measure: {rank: ", ".join(names) for rank, names in cells.items()}
                     for measure, cells in measures.items()}
            for target, measures in _tied(ranking).items()}


def _tied(ranking: pd.DataFrame) -> dict[str, dict[str, dict[int, list[str]]]]:
    """{target: {measure: {rank: [source, ...]}}}, targets sorted, measures and sources in ranking order.

    One pass over the ranking (no filtering per target and rank), so 10,000 targets take seconds.
    """
    out: dict[str, dict[str, dict[int, list[str]]]] = {}
    if ranking.empty:
        return out
    frame = ranking[["target", "measure", "rank", "source"]]
    for target, measure, rank, source in zip(frame["target"].map(str), frame["measure"].map(str),
                                             frame["rank"].astype(int), frame["source"].map(str)):
        out.setdefault(target, {}).setdefault(measure, {}).setdefault(rank, []).append(source)
    return dict(sorted(out.items()))


def measure_label(measure: str) -> str:
    """A measure's label (``tvc`` -> TVC) for a reader; an unknown name as given."""
    from ..measures.lookup import all_measures, get_measure  # here: the measures import heavy modules

    return get_measure(measure).label if measure in all_measures() else measure


def _explained(measure: str) -> str:
    from ..measures.lookup import explained  # here: the measures import heavy modules

    return explained(measure)


def _names_html(names: list[str]) -> str:
    """Sources sharing a cell (tied), one per line: a cell of seven names joined by commas was unreadable."""
    return "<br>".join(html_text(n) for n in names)


def recommendation_html(recommendations: list[Recommendation]) -> str:
    """The recommendation as an HTML section (every name escaped)."""
    recommendations = _recommendations(recommendations)
    if not recommendations:
        return ""
    def chosen(names: list[str]) -> str:
        if len(names) <= 2:
            return f"<b>{html_text(' or '.join(names) or 'none')}</b>"
        return f"any of {len(names)} (tied):<br><b>" + _names_html(names) + "</b>"

    rows = "".join(
        f"<tr><td>{html_text(r.target)}</td><td>{chosen(list(r.recommended))}</td>"
        f"<td>{html_text(_confidence(r))}</td><td>{html_text(r.reason)}</td></tr>" for r in recommendations)
    label = PRETRAINING_LABEL[recommendations[0].pretraining]
    return (f"<h2>Recommendation ({html_text(label)})</h2><div class='wide'><table><tr><th>target</th><th>pretrain on</th>"
            f"<th>confidence</th><th>why</th></tr>{rows}</table></div>")


def ranking_html(ranking: pd.DataFrame, options: dict[str, Any] | None = None, extra_html: str = "",
                 recommendations: list[Recommendation] | None = None, show_options: bool = True) -> str:
    """A self-contained page: the recommendation, then one ranking table per target; every corpus text is escaped."""
    ranking, options, recommendations = _ranking(ranking), _options(options), _recommendations(recommendations)
    if not isinstance(extra_html, str):
        raise InvalidArgument(f"extra_html must be text, not {type(extra_html).__name__}")
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>simcore report</title>",
             "<style>body{font-family:sans-serif;max-width:960px;margin:2em auto}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}th{background:#f3f3f3}"
             # a table or chart wider than the page scrolls inside its own box, not the page
             ".wide{max-width:100%;overflow-x:auto}</style></head><body>",
             "<h1>Which source to pretrain on</h1>", recommendation_html(recommendations or [])]
    if options and show_options:
        parts.append("<p>Options: " + html_text(", ".join(f"{k}={v}" for k, v in sorted(options.items(), key=lambda kv: str(kv[0])))) + "</p>")
    parts.append("<h2>Sources ranked per target</h2>")
    shown = [m for m in dict.fromkeys(ranking["measure"].astype(str))]
    if shown:
        parts.append("<p>Rank 1 is the most similar source. " + "; ".join(html_text(_explained(m)) for m in shown)
                     + ".</p>")
    for target, measures in _tied(ranking).items():
        ranks = sorted({r for cells in measures.values() for r in cells})
        parts.append(f"<h3>{html_text(str(target))}</h3><div class='wide'><table><tr><th>measure</th>"
                     + "".join(f"<th>#{r}</th>" for r in ranks) + "</tr>")
        for measure, cells in measures.items():
            row = "".join("<td>" + _names_html(cells.get(r, [])) + "</td>" for r in ranks)
            parts.append(f"<tr><td>{html_text(measure_label(measure))}</td>{row}</tr>")
        parts.append("</table></div>")
    parts.append(extra_html)
    parts.append("</body></html>")
    return "\n".join(parts)


def write_ranking(ranking: pd.DataFrame, path: Path | str, options: dict[str, Any] | None = None,
                  recommendations: list[Recommendation] | None = None) -> None:
    """Write the ranking in the format the file's suffix names (.csv, .json, .md, .html), atomically."""
    path = _path(path)
    writers = {".csv": lambda: ranking_csv(ranking), ".json": lambda: ranking_json(ranking, options, recommendations),
               ".md": lambda: ranking_markdown(ranking, options, recommendations),
               ".html": lambda: ranking_html(ranking, options, recommendations=recommendations)}
    if path.suffix.lower() not in writers:
        raise SimcoreError(f"cannot write {path.name}: use a .csv, .json, .md or .html file name")
    write_text_atomic(path, writers[path.suffix.lower()]())


def write_recommendations(recommendations: list[Recommendation], ranking: pd.DataFrame, path: Path | str,
                          options: dict[str, Any] | None = None) -> None:
    """The recommendation as .csv (one row per target), or .json/.md/.html with the rankings after it."""
    path = _path(path)
    recommendations = _recommendations(recommendations)
    if path.suffix.lower() == ".csv":
        write_text_atomic(path, recommendations_csv(recommendations))
    else:
        write_ranking(ranking, path, options, recommendations)
