"""Tables shaped for reading on a page (no computation beyond re-arranging)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

import pandas as pd

from simcore.analysis.correlation import results_frame
from simcore.answer import flags
from simcore.answer.recommendation import Recommendation
from simcore.reporting.report import MARK, flag_rows
from simcore.utils.errors import SimcoreError

from .charts import label

NO_COLUMN = "(none)"


def ranking_grid(ranking: pd.DataFrame, target: str, long: pd.DataFrame | None = None,
                 carrying: tuple[str, ...] | list[str] = ()) -> pd.DataFrame:
    """One row per position (1 = most similar), one column per measure, the source at that position.

    Sources that share a rank fill consecutive positions in name order, each marked "(tie)", so no
    cell is blank and every column lists every source once. With the matrix ``long``, a source whose
    cell for that measure is flagged (used whole, or below the size at which the measure is reliable)
    is marked ⚠; in the "recommended" column, a source flagged under any of the ``carrying`` measures
    (those the recommendation follows).
    """
    part = ranking[ranking["target"] == target]
    marked = _marked(long, target, carrying)
    columns = {}
    for measure, group in part.groupby("measure", sort=False):
        if measure != "recommended" and not pd.to_numeric(group["value"], errors="coerce").notna().any():
            columns[label(measure)] = ["(not computed)"]  # e.g. WVV below 1M tokens: no ranking to show
            continue
        group = group.sort_values(["rank", "source"])
        tied = group["rank"].map(group["rank"].value_counts()) > 1
        columns[label(measure)] = [s + (" (tie)" if t else "") + (f" {MARK}" if (measure, s) in marked else "")
                                   for s, t in zip(group["source"], tied)]
    length = max((len(v) for v in columns.values()), default=0)
    grid = pd.DataFrame({k: v + [""] * (length - len(v)) for k, v in columns.items()})
    grid.insert(0, "position", range(1, length + 1))
    return grid


def rank_table(ranking: pd.DataFrame, target: str, long: pd.DataFrame | None = None,
               carrying: tuple[str, ...] | list[str] = ()) -> pd.DataFrame:
    """One row per source (each name once), one column per measure, the source's rank under it
    (1 = most similar; "=2": tied at 2, as the ranking's "1, 1, 3"), rows in the order of the
    recommendation (else of the first measure): the rankings of :func:`ranking_grid` in a table
    whose width does not grow with the names (issue 37: eight columns of 28-character names
    scrolled sideways). ⚠ marks a flagged cell, as there; "–" a measure with no value."""
    part = ranking[ranking["target"] == target]
    marked = _marked(long, target, carrying)
    names = part["source"].astype(str)
    sources = sorted(names.unique())
    # one pass over the target's rows, in plain Python: a groupby per target took 50 ms a page
    rows: dict[str, list[tuple[str, object]]] = {}
    valued: set[str] = set()
    for measure, source, rank, ranked, value in zip(
            part["measure"], names, part["rank"], part["rank"].notna().to_numpy(),
            pd.to_numeric(part["value"], errors="coerce").notna().to_numpy()):
        group = rows.setdefault(measure, [])
        if ranked:
            group.append((source, rank))
        if value:
            valued.add(measure)
    columns: dict[str, list[str]] = {}
    order: dict[str, float] = {}
    for measure, ranked_rows in rows.items():
        ranks = dict(ranked_rows)
        if measure != "recommended" and measure not in valued:
            ranks = {}  # e.g. WVV below 1M tokens: no ranking to show
        counts = Counter(float(r) for r in ranks.values())
        columns[label(measure)] = [
            "–" if s not in ranks else "=" * bool(counts[float(ranks[s])] > 1) + str(int(ranks[s]))
            + f" {MARK}" * ((measure, s) in marked) for s in sources]
        if ranks and (not order or measure == "recommended"):
            order = {s: float(ranks.get(s, math.inf)) for s in sources}
    shown = sorted(sources, key=lambda s: (order.get(s, math.inf), s))
    at = {s: i for i, s in enumerate(sources)}
    return pd.DataFrame({"source": shown,
                         **{c: [v[at[s]] for s in shown] for c, v in columns.items()}})


def _marked(long: pd.DataFrame | None, target: str,
            carrying: Sequence[str]) -> set[tuple[str, str]]:
    """(measure, source) of the target's flagged cells; ("recommended", source) for a source
    flagged under a measure that carries the recommendation."""
    if long is None:
        return set()
    cells = long[long["target"] == target]  # marked is decided row by row: the target's rows only
    cells = cells[flags.marked(cells).to_numpy()]
    marked = set(zip(cells["measure"], cells["source"]))
    return marked | {("recommended", s) for m, s in list(marked) if m in carrying}


def recommendation_frame(recommendations: list[Recommendation]) -> pd.DataFrame:
    """The recommendation as a table for the page: target, pretrain on, confidence, level, carried by, why."""
    return pd.DataFrame({
        "target": [r.target for r in recommendations],
        "pretrain on": [_answer(r) for r in recommendations],
        "confidence": [r.confidence for r in recommendations],
        "level": [r.level for r in recommendations],
        "carried by": [", ".join(label(m) for m in r.measures) for r in recommendations],
        "why": [r.reason for r in recommendations],
    })


def _answer(rec: Recommendation) -> str:
    """The source to pretrain on; for a tie or a disagreement each candidate with its share of the votes."""
    if not rec.recommended:
        return "no recommendation"
    if rec.level in ("tie", "disagree"):
        return " or ".join(f"{s} ({rec.shares.get(s, math.nan):.0%})" for s in rec.recommended)
    return rec.recommended[0]


def _interval(low: float, high: float) -> str:
    return "–" if not (math.isfinite(low) and math.isfinite(high)) else f"[{low:.2f}, {high:.2f}]"


def correlation_table(corr: pd.DataFrame, scope: str) -> pd.DataFrame:
    part = corr[corr["scope"] == scope]
    return pd.DataFrame({
        "measure": part["measure"].map(label), "pairs": part["n"],
        "Pearson r": part["pearson_r"].round(3), "Pearson p": part["pearson_p"].map(lambda p: f"{p:.3g}"),
        "Pearson 95% CI": [_interval(a, b) for a, b in zip(part["pearson_low"], part["pearson_high"])],
        "Spearman ρ": part["spearman_r"].round(3), "Spearman p": part["spearman_p"].map(lambda p: f"{p:.3g}"),
        "Spearman 95% CI": [_interval(a, b) for a, b in zip(part["spearman_low"], part["spearman_high"])],
    })


def normalised_results(table: pd.DataFrame, columns: dict[str, str | None]) -> pd.DataFrame:
    """simcore's results frame (target, source, f1, improvement) from the user's table and column choice."""
    f1 = columns.get("f1")
    if not f1:
        raise SimcoreError("choose the column that holds F1")
    improvement = columns.get("improvement") or None
    baseline = columns.get("baseline") or "__no_baseline__"
    out = results_frame(table, f1=f1, baseline=baseline, improvement=improvement)
    return out.dropna(subset=["improvement"])


def size_notes(long: pd.DataFrame) -> list[str]:
    """One line saying the size each measure compared sources at."""
    if "sample_tokens" not in long or "used_whole" not in long:
        return []
    sampled = long[~long["used_whole"].map(lambda v: str(v).lower() == "true")]
    sizes = sampled.groupby("measure", sort=False)["sample_tokens"].max().dropna()
    if sizes.empty:
        return ["Every source was smaller than the comparison size and was used whole."]
    return ["Sources compared on sub-corpora of " + ", ".join(
        f"{int(n):,} tokens ({label(m)})" for m, n in sizes.items()) + "; smaller sources were used whole."]


def flagged_cells(long: pd.DataFrame) -> pd.DataFrame:
    """One row per flagged (source, measure), grouped by source (its name on the group's first row only):
    tokens used, the source's size, whether the measure is reliable there, and why, in full."""
    rows = flag_rows(long)
    if rows.empty:
        return rows
    rows["source"] = rows["source"].where(rows["source"] != rows["source"].shift(), "")
    return rows


def flag_summary(long: pd.DataFrame) -> str:
    """'12 cells of 3 sources are flagged (5 unreliable)': the line above the flags table ('' when none)."""
    mask = flags.marked(long)
    if not mask.any():
        return ""
    bad = int(flags.unreliable(long).sum())
    sources = long.loc[mask, "source"].nunique()
    return (f"{int(mask.sum())} cell(s) of {sources} source(s) are flagged ({bad} below the size at which their "
            f"measure is reliable). They are marked {MARK} and outlined in the heatmaps and the rankings; where a "
            "target's column also has unflagged values, the flagged ones are grey and left out of its colour scale.")


# A table's room on a 1400-pixel-wide window with the sidebar open (the main column is 940 pixels;
# Chromium, Streamlit 1.67), and the grid's measure of its text: 14-pixel Source Sans Pro, about 7.2
# pixels a character, 8 pixels of padding each side, and room for the header's menu.
TABLE_ROOM = 900
CHAR_PX, CELL_PAD, HEADER_PAD, MIN_COLUMN, PROSE_MIN = 7.2, 16, 44, 70, 150


def natural_widths(frame: pd.DataFrame, rows: int = 500) -> dict[str, int]:
    """The pixels each column takes when the grid sizes it to its content (its first ``rows`` values
    and its header), as Streamlit's grid does, capped at its largest (500 pixels)."""
    widths = {}
    for column in frame.columns:
        values = frame[column].head(rows).tolist()
        shown = [v for v in values if not (isinstance(v, float) and math.isnan(v))]
        longest = max((len(str(v)) for v in shown), default=0)
        header = len(str(column)) * CHAR_PX + HEADER_PAD
        widths[str(column)] = int(min(500, max(MIN_COLUMN, longest * CHAR_PX + CELL_PAD, header)))
    return widths


def prose_columns(frame: pd.DataFrame, rows: int = 500) -> list[str]:
    """The columns of sentences (most values hold a space: reasons, notes, 'a (50%) or b (22%)',
    paths with their origin), which read well cut short; not names, numbers or flags, which would
    become ambiguous (two sources named alike but for their ends)."""
    found = []
    for column in frame.columns:
        values = [v for v in frame[column].head(rows).tolist() if isinstance(v, str)]
        if values and sum(" " in v.strip() for v in values) >= 0.5 * len(values):
            found.append(str(column))
    return found


def fitted_widths(frame: pd.DataFrame, room: int = TABLE_ROOM,
                  fixed: dict[str, int] | None = None) -> dict[str, int]:
    """Column widths (pixels) that keep a table within ``room``: {} when its columns fit as they
    are; else its columns of sentences (:func:`prose_columns`) are narrowed to one common width, the
    widest first and the least that fits, never under :data:`PROSE_MIN` (their text is cut at the
    cell's edge; a column can be widened by dragging its border, and the page says it in full
    elsewhere). Names and numbers keep their width: a table of many names can still scroll
    sideways. ``fixed``: widths the page sets itself, kept."""
    fixed = fixed or {}
    natural = {c: w for c, w in natural_widths(frame).items() if c not in fixed}
    prose = {c: natural[c] for c in prose_columns(frame) if c in natural}
    free = room - sum(fixed.values()) - sum(w for c, w in natural.items() if c not in prose)
    if sum(natural.values()) + sum(fixed.values()) <= room or not prose:
        return {}
    # water-filling: the cap T with sum(min(w, T)) == free over the prose columns
    order = sorted(prose.values())
    left, cap = float(free), float(PROSE_MIN)
    for i, width in enumerate(order):
        share = left / (len(order) - i)
        if width >= share:
            cap = max(float(PROSE_MIN), share)
            break
        left -= width
    else:
        return {}
    return {c: int(min(w, cap)) for c, w in prose.items() if w > cap}


NAME_MIN = 10  # characters a shortened corpus name keeps: its start, "…", its end


def short_name(name: str, chars: int) -> str:
    """``name`` in at most ``chars`` characters: its start and its end around "…" (the end is what
    tells sources cut from one corpus apart: ``…_part0``, ``…_part1``)."""
    if len(name) <= chars:
        return name
    tail = chars // 2
    return name[:chars - 1 - tail] + "…" + name[len(name) - tail:]


def short_names(names: Iterable[str], chars: int) -> dict[str, str]:
    """The names longer than ``chars`` and their short forms: ``chars`` long, or longer where two
    names would otherwise read alike (never two names one short form)."""
    names = sorted(set(names))
    longest = max((len(n) for n in names), default=0)
    for size in range(max(chars, 3), longest + 1):
        short = {n: short_name(n, size) for n in names}
        if len(set(short.values())) == len(names):
            return {n: s for n, s in short.items() if s != n}
    return {}


def _shortened(frame: pd.DataFrame, columns: Sequence[str],
               mapping: dict[str, str]) -> pd.DataFrame:
    """``frame`` with every name of ``mapping`` in ``columns`` replaced by its short form."""
    if not mapping:
        return frame
    longest_first = sorted(mapping, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, longest_first)) + r")(?![\w.-])")
    done: dict[str, str] = {}  # each distinct cell once: a table repeats its names
    out = frame.copy()
    for column in columns:
        out[column] = [v if not isinstance(v, str) else done[v] if v in done else
                       done.setdefault(v, pattern.sub(lambda m: mapping[m.group(1)], v))
                       for v in out[column]]
    return out


def fitted_table(frame: pd.DataFrame, room: int = TABLE_ROOM, fixed: dict[str, int] | None = None,
                 name_columns: Sequence[str] = (), names: Iterable[str] = ()
                 ) -> tuple[pd.DataFrame, dict[str, int], dict[str, str]]:
    """The table as shown, its columns' widths and the names shortened, so that it fits ``room``:
    as it is when it fits; else its sentences narrowed (:func:`fitted_widths`, never the
    ``name_columns``); else, in the ``name_columns``, the corpus ``names`` shortened
    (:func:`short_names`) to the longest length that fits, never under :data:`NAME_MIN` (a
    table that does not fit even then scrolls)."""
    fixed = dict(fixed or {})
    name_columns = [c for c in name_columns if c in frame.columns and c not in fixed]
    names = [n for n in names if isinstance(n, str)]

    def attempt(shown: pd.DataFrame) -> tuple[dict[str, int], int]:
        natural = natural_widths(shown)
        keep = {c: natural[c] for c in name_columns}
        widths = fitted_widths(shown, room, {**fixed, **keep})
        total = sum(fixed.values()) + sum(widths.get(c, w) for c, w in natural.items()
                                          if c not in fixed)
        return widths, total

    widths, total = attempt(frame)
    if total <= room or not name_columns or not names:
        return frame, widths, {}
    head = frame.head(500)
    low, high = NAME_MIN, max(len(n) for n in names) - 1
    if high < low:
        return frame, widths, {}
    found = attempt(_shortened(head, name_columns, short_names(names, low)))
    chars = low
    while low < high:  # bisection: the longest length that fits (the width shrinks with it)
        middle = (low + high + 1) // 2
        tried = attempt(_shortened(head, name_columns, short_names(names, middle)))
        if tried[1] <= room:
            low, found, chars = middle, tried, middle
        else:
            high = middle - 1
    mapping = short_names(names, chars)
    return _shortened(frame, name_columns, mapping), found[0], mapping
