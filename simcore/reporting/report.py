"""A self-contained HTML report: rankings, one heatmap per measure, values, and (when known) agreement,
correlation with NER results and regret, with the options used.

Charts are inline SVG written here (no JavaScript, no network): the file opens anywhere and can be
mailed. Every corpus or file name is escaped. Colours follow one rule in the report and the
dashboard alike: darker means *more similar*, whatever the measure's direction. Cells the matrix
flags (a source used whole, a value below the size at which its measure is reliable) are outlined
and marked ⚠, and kept out of their column's colour scale (see simcore.answer.flags.out_of_scale); the
rank tables mark them ⚠ too.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd

from ..answer import flags
from ..answer.evidence import EVIDENCE_COLUMNS, readable_pairs
from ..contamination.verdict import OVERLAP_THRESHOLD, overlap_table
from ..corpora.lang.detect import language_name
from ..measures.lookup import all_measures, explained, get_measure
from ..utils.errors import InvalidArgument
from .export import html_text, measure_label, ranking_html

LIGHT = (247, 251, 255)
DARK = (8, 48, 107)
MARK = "⚠"  # after a flagged value or source name, in the report and the dashboard alike
OUT_OF_SCALE = "#e4e4e4"  # the fill of a flagged cell left out of its column's colour scale
OUTLINE = "#c05621"  # the dashed outline of a flagged cell
PAIR_TARGETS = 100  # targets whose pairs the report lists (the downloads have them all)
CHAR_W = 7  # about the width of one character of the 12 px sans-serif text, for sizing an SVG to its text


def display_scale(measure: str, values: pd.Series | np.ndarray) -> float:
    """The factor the report multiplies a measure's values by: 100 for a percentage measure stored as a
    fraction (every value within 0..1), else 1."""
    if not _percent(measure):
        return 1.0
    v = pd.to_numeric(pd.Series(np.asarray(values).ravel()), errors="coerce").to_numpy(float)
    v = v[np.isfinite(v)]
    return 100.0 if len(v) and v.min() >= 0 and v.max() <= 1 else 1.0


def unit_label(measure: str) -> str:
    """'TVC (%)', 'WVV', 'PPL': a measure's label with its unit where one needs saying (a
    percentage; a measure without a unit is its label alone, not 'WVV (no unit)')."""
    label = _label(measure)
    return f"{label} (%)" if _percent(measure) else label


def _percent(measure: str) -> bool:
    """Whether the measure is a fraction in a computed matrix shown as a percentage (TVC, TVcC: they are
    percentages in Dai et al.'s Table 3; the stored values are unchanged)."""
    return measure in all_measures() and get_measure(measure).percent


def _unit(measure: str) -> str:
    """What a measure's numbers are, for the reader ('' for an unknown measure)."""
    return get_measure(measure).shown_unit if measure in all_measures() else ""


def similarity_shade(values: pd.Series | np.ndarray, direction: int) -> np.ndarray:
    """Values mapped to [0, 1] where 1 is the most similar (direction +1: higher is more similar,
    -1: lower is more similar, 0: higher is darker). NaN stays NaN; a constant measure maps to 0.5."""
    v = np.asarray(values, dtype=float) * (direction if direction else 1)
    finite = np.isfinite(v)
    out = np.full(v.shape, np.nan)
    if not finite.any():
        return out
    low, high = v[finite].min(), v[finite].max()
    out[finite] = 0.5 if high == low else (v[finite] - low) / (high - low)
    return out


def column_shade(grid: np.ndarray, direction: int) -> np.ndarray:
    """A sources × targets grid shaded per target column: the question is which source is closest
    for this target, so each column runs from its least to its most similar source."""
    grid = np.asarray(grid, dtype=float)
    if grid.ndim != 2 or grid.size == 0:
        return grid.copy()
    return np.column_stack([similarity_shade(grid[:, j], direction) for j in range(grid.shape[1])])


def shade_colour(shade: float) -> str:
    """The fill for a shade in [0, 1] (light blue to dark blue; grey for missing)."""
    if shade is None or not math.isfinite(shade):
        return "#dddddd"
    r, g, b = (round(lo + (hi - lo) * shade) for lo, hi in zip(LIGHT, DARK))
    return f"#{r:02x}{g:02x}{b:02x}"


def format_value(value: float) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    magnitude = abs(value)
    if magnitude >= 100:
        return f"{value:.0f}"
    if magnitude >= 1:
        return f"{value:.2f}"
    if magnitude >= 1e-3 or magnitude == 0:
        return f"{value:.3g}"
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"  # 4.5e-4: short enough for a heatmap cell


def with_interval(value: float, low: float = math.nan, high: float = math.nan) -> str:
    """'0.532 [0.51, 0.55]', or the value alone when there is no interval."""
    text = format_value(value)
    if low is not None and high is not None and math.isfinite(low) and math.isfinite(high):
        text += f" [{format_value(low)}, {format_value(high)}]"
    return text


def values_with_intervals(long: pd.DataFrame) -> pd.DataFrame:
    """One row per (target, source), one column per measure, each cell its value and 95% interval
    (followed by ⚠ where the matrix flags the cell)."""
    measures = list(dict.fromkeys(long["measure"]))
    low = long["ci_low"] if "ci_low" in long else pd.Series(math.nan, index=long.index)
    high = long["ci_high"] if "ci_high" in long else pd.Series(math.nan, index=long.index)
    scale = long["measure"].map({m: display_scale(m, long.loc[long["measure"] == m, "value"]) for m in measures})
    cells = long.assign(cell=[with_interval(float(v) * k, float(a) * k, float(b) * k) + (f" {MARK}" if m else "")
                              for v, a, b, k, m in zip(pd.to_numeric(long["value"], errors="coerce"),
                                                       pd.to_numeric(low, errors="coerce"),
                                                       pd.to_numeric(high, errors="coerce"), scale,
                                                       flags.marked(long))])
    wide = cells.pivot_table(index=["target", "source"], columns="measure", values="cell", aggfunc="first")
    return wide.reindex(columns=measures).rename(columns=unit_label).reset_index()


def _label(measure: str) -> str:
    return measure_label(measure)


def _first_values(part: pd.DataFrame, sources: list[str], targets: list[str]) -> np.ndarray:
    """A sources × targets grid of each cell's first value (NaN where it has none), as a pivot
    table taking the first value would hold it, without building one per heatmap."""
    grid = np.full((len(sources), len(targets)), np.nan)
    values = pd.to_numeric(part["value"], errors="coerce").to_numpy(float)
    known = ~np.isnan(values)
    rows = pd.Index(sources).get_indexer(part["source"])[known]
    columns = pd.Index(targets).get_indexer(part["target"])[known]
    cells = rows * len(targets) + columns
    _, first = np.unique(cells, return_index=True)  # the first row of each cell
    grid.flat[cells[first]] = values[known][first]
    return grid


def heatmap_svg(long: pd.DataFrame, measure: str) -> str:
    """One measure as a sources × targets grid of shaded cells with the values written in."""
    part = long[long["measure"] == measure]
    sources = sorted(part["source"].unique())
    targets = sorted(part["target"].unique())
    direction = int(part["direction"].iloc[0]) if "direction" in part and len(part) else 0
    values = _first_values(part, sources, targets)
    values = values * display_scale(measure, values)
    marks, reasons = flags.grids(part, sources, targets)
    out_scale = flags.out_of_scale(values, marks)
    shades = column_shade(np.where(out_scale, np.nan, values), direction)
    cell_w, cell_h, left, top = 110, 30, 170, 60
    note = {1: "higher is more similar; darker = more similar", -1: "lower is more similar; darker = more similar",
            0: "not a similarity; darker = higher"}[direction]
    unit = f" ({_unit(measure)})" if _unit(measure) else ""
    legend = [f"{_label(measure)}{unit}: {note}", explained(measure), "each target column on its own scale"]
    if marks.any():
        legend.append(f"{MARK} flagged (dashed outline; grey: left out of its column's scale): see the size flags")
    # wide enough for the grid and for every line of the legend under it (a fixed width cut them off)
    width = max(left + cell_w * len(targets) + 10, 10 + CHAR_W * max(len(line) for line in legend))
    height = top + cell_h * len(sources) + 14 + 16 * len(legend)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12" role="img" aria-label="{html_text(_label(measure))} heatmap">']
    for j, t in enumerate(targets):
        x = left + j * cell_w + cell_w / 2
        out.append(f'<text x="{x}" y="{top - 8}" text-anchor="middle">{html_text(_short(t))}</text>')
    for i, s in enumerate(sources):
        y = top + i * cell_h
        out.append(f'<text x="{left - 6}" y="{y + cell_h / 2 + 4}" text-anchor="end">{html_text(_short(s, 24))}</text>')
        for j, _t in enumerate(targets):
            shade = shades[i, j]
            x = left + j * cell_w
            text_colour = "#ffffff" if math.isfinite(shade) and shade > 0.55 else "#000000"
            fill = OUT_OF_SCALE if out_scale[i, j] else shade_colour(shade)
            outline = f' stroke="{OUTLINE}" stroke-width="2" stroke-dasharray="4 2"' if marks[i, j] else ""
            rect = f'<rect x="{x}" y="{y}" width="{cell_w - 2}" height="{cell_h - 2}" fill="{fill}"'
            out.append(f'{rect}{outline}><title>{html_text(reasons[i, j])}</title></rect>' if marks[i, j]
                       else f"{rect}/>")
            shown = format_value(values[i, j]) + (f" {MARK}" if marks[i, j] else "")
            out.append(f'<text x="{x + cell_w / 2}" y="{y + cell_h / 2 + 4}" text-anchor="middle" '
                       f'fill="{text_colour}">{html_text(shown)}</text>')
    for k, line in enumerate(legend):
        colour = OUTLINE if line.startswith(MARK) else "#555"
        out.append(f'<text x="10" y="{height - 8 - 16 * (len(legend) - 1 - k)}" fill="{colour}">'
                   f'{html_text(line)}</text>')
    out.append("</svg>")
    return "".join(out)


def scatter_svg(points: pd.DataFrame, x: str, y: str, title: str) -> str:
    """A scatter of ``points[x]`` against ``points[y]`` with its least-squares line."""
    data = points[[x, y]].apply(pd.to_numeric, errors="coerce").dropna()
    w, h, pad = 360, 260, 45
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
           f'font-size="11" role="img" aria-label="{html_text(title)}">',
           f'<text x="{w / 2}" y="14" text-anchor="middle" font-size="13">{html_text(title)}</text>',
           f'<rect x="{pad}" y="{pad - 20}" width="{w - pad - 10}" height="{h - 2 * pad + 10}" fill="none" stroke="#999"/>']
    if len(data) >= 1:
        xs, ys = data[x].to_numpy(float), data[y].to_numpy(float)
        x0, x1 = _padded(xs)
        y0, y1 = _padded(ys)

        def px(v: float) -> float:
            return pad + (v - x0) / (x1 - x0) * (w - pad - 10)

        def py(v: float) -> float:
            return (h - pad - 10) - (v - y0) / (y1 - y0) * (h - 2 * pad + 10)

        for a, b in zip(xs, ys):
            out.append(f'<circle cx="{px(a):.1f}" cy="{py(b):.1f}" r="4" fill="#2b6cb0" fill-opacity="0.7"/>')
        if len(data) >= 2 and np.ptp(xs) > 0:
            slope, intercept = np.polyfit(xs, ys, 1)
            out.append(f'<line x1="{px(x0):.1f}" y1="{py(slope * x0 + intercept):.1f}" x2="{px(x1):.1f}" '
                       f'y2="{py(slope * x1 + intercept):.1f}" stroke="#c53030" stroke-width="2"/>')
        out.append(f'<text x="{pad}" y="{h - 22}">{html_text(format_value(x0))}</text>')
        out.append(f'<text x="{w - 10}" y="{h - 22}" text-anchor="end">{html_text(format_value(x1))}</text>')
        out.append(f'<text x="{pad - 4}" y="{pad - 8}" text-anchor="end">{html_text(format_value(y1))}</text>')
        out.append(f'<text x="{pad - 4}" y="{h - pad - 10}" text-anchor="end">{html_text(format_value(y0))}</text>')
    out.append(f'<text x="{w / 2}" y="{h - 6}" text-anchor="middle">{html_text(x)}</text>')
    out.append(f'<text x="12" y="{h / 2}" transform="rotate(-90 12 {h / 2})" text-anchor="middle">'
               f'{html_text(y)}</text>')
    out.append("</svg>")
    return "".join(out)


def _padded(values: np.ndarray) -> tuple[float, float]:
    low, high = float(values.min()), float(values.max())
    if high == low:
        return low - 1, high + 1
    margin = (high - low) * 0.05
    return low - margin, high + margin


def _short(name: str, limit: int = 16) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


def _table(frame: pd.DataFrame, floats: str = "{:.3f}") -> str:
    escaped: dict[str, str] = {}  # each distinct text escaped once: a table repeats its names

    def cell(v: Any) -> str:
        if isinstance(v, float):
            return "–" if not math.isfinite(v) else floats.format(v)
        text = str(v)
        if text not in escaped:
            escaped[text] = html_text(text)
        return escaped[text]

    head = "".join(f"<th>{html_text(str(c))}</th>" for c in frame.columns)
    rows = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>"
                   for row in frame.itertuples(index=False))
    return f"<table><tr>{head}</tr>{rows}</table>"


def build_report(long: pd.DataFrame, ranking: pd.DataFrame, options: dict[str, Any] | None = None, *,
                 source_label: str = "", agreement: Any = None, correlations: pd.DataFrame | None = None,
                 regret: pd.DataFrame | None = None, joined: pd.DataFrame | None = None,
                 recommendations: list[Any] | None = None, agreement_note: str = "",
                 pairs: pd.DataFrame | None = None) -> str:
    """The whole report as one HTML string.

    ``agreement`` is a :class:`simcore.analysis.AgreementResult`; ``correlations`` and ``regret`` are
    the tables of :func:`simcore.analysis.correlate` and :func:`simcore.analysis.regret`; ``joined``
    holds measure values next to the NER improvement (columns measure, value, improvement) for scatters.
    ``agreement_note`` says why there is no agreement (for example every comparison rests on an
    unreliable value) when ``agreement`` is None. ``pairs`` (:func:`simcore.answer.evidence.pairs_evidence`)
    adds how each pair of sources with the recommended one was compared.
    """
    from .report_checks import check_report_arguments  # arguments checked before anything is rendered

    long = check_report_arguments(long, ranking, options, source_label, agreement, correlations, regret, joined,
                                  recommendations, agreement_note)
    if pairs is not None and (not isinstance(pairs, pd.DataFrame) or not set(EVIDENCE_COLUMNS) <= set(pairs.columns)):
        raise InvalidArgument("pairs must be the table of simcore.answer.evidence.pairs_evidence (or None)")
    parts: list[str] = []
    if pairs is not None and len(pairs):
        shown = readable_pairs(pairs)
        targets = list(dict.fromkeys(shown["target"]))
        cut = (f" Pairs for the first {PAIR_TARGETS} of {len(targets)} targets." if len(targets) > PAIR_TARGETS else "")
        shown = shown[shown["target"].isin(targets[:PAIR_TARGETS])]
        parts.append("<h2>How each pair of sources was compared</h2><p>The recommended source against every other "
                     "source under each measure that carries the answer, at the largest sample size both have; "
                     "'A more similar in' is the share of bootstrap replicates in which A is the more similar. "
                     f"{len(shown)} of {len(pairs)} pairs (every pair is in the pairwise CSV and the JSON "
                     f"downloads).{cut}</p><div class='wide'>" + _table(shown) + "</div>")
    if source_label:
        parts.append(f"<p>Similarity values: {html_text(source_label)}</p>")
    measures = list(dict.fromkeys(long["measure"]))
    languages = language_rows(long)
    if len(languages):
        parts.append("<h2>Languages</h2><p>What each corpus was read as (detected from its text, or given); a "
                     "source in another language than its target is compared across languages.</p>"
                     + _table(languages))
    parts.append("<h2>Similarity heatmaps</h2><p>Darker cells are more similar, whatever the measure's "
                 "direction (TTR, not a similarity: darker is higher); each target's column has its own scale; "
                 "the numbers are the measures' own values.</p>")
    parts.append("<ul>" + "".join(f"<li>{html_text(explained(m))}</li>" for m in measures) + "</ul>")
    parts.extend(f"<div class='wide'>{heatmap_svg(long, m)}</div>" for m in measures)
    parts.append("<h2>Values</h2><p>With the 95% interval from the bootstrap over the target's sentences "
                 "(and the source samples, when there are several). TVC and TVcC are shown as percentages "
                 "(a computed matrix stores them as fractions, Dai et al.'s Table 3 as percentages); WVV has "
                 "no unit.</p><div class='wide'>" + _table(values_with_intervals(long)) + "</div>")
    held = overlap_table(long)
    if len(held):
        dirty = held[held["contaminated"]]
        lead = (f"{len(dirty)} source-target pair(s) at or above {OVERLAP_THRESHOLD:.0%} of the test sentences: "
                "pretraining on such a source inflates the test F1; `simcore decontaminate` writes it without "
                "those units." if len(dirty) else
                f"No source holds {OVERLAP_THRESHOLD:.0%} or more of any target's test sentences.")
        parts.append("<h2>Which sources already hold your test set</h2><p>The share of each target's sentences "
                     "(its test split, and all of it) that share an n-gram with the source (13 words by default; "
                     "characters for targets cut into characters; see docs/contamination.md). "
                     + html_text(lead) + "</p>" + _table(held, "{:.2%}"))
    flagged = flag_rows(long)
    if len(flagged):
        parts.append("<h2>Size flags</h2><p>One row per source and measure: its cells are marked "
                     f"{MARK} in the heatmaps and the rank tables.</p>" + _table(flagged))
    if "error" in long:
        errors = long[long["error"].notna() & (long["error"].astype(str) != "")]
        if len(errors):
            parts.append("<h2>Measures that failed</h2>"
                         + _table(errors[["source", "target", "measure", "error"]].drop_duplicates()))
    if agreement is not None:
        left_out = getattr(agreement, "left_out_note", "")
        cohen = agreement.cohen.copy()
        for column in ("measure_a", "measure_b"):
            if column in cohen:
                cohen[column] = cohen[column].map(lambda m: _label(str(m)))
        cohen = cohen.rename(columns={"measure_a": "measure A", "measure_b": "measure B", "kappa": "Cohen's kappa"})
        parts.append(f"<h2>Agreement between measures</h2><p>Fleiss' kappa over {len(agreement.items)} comparisons "
                     f"({html_text(', '.join(_label(m) for m in agreement.measures))}): "
                     f"<b>{agreement.fleiss:.3f}</b></p>"
                     + (f"<p>{MARK} {html_text(left_out)}.</p>" if left_out else "") + _table(cohen))
    elif agreement_note:
        parts.append(f"<h2>Agreement between measures</h2><p>No Fleiss' kappa: {html_text(agreement_note)}.</p>")
    if correlations is not None and len(correlations):
        left = correlations.attrs.get("left_out")
        note = "" if left is None or left.empty else (
            f"<p>{MARK} {len(left)} result(s) left out: runs cut short by the probe's time cap ("
            + html_text(", ".join(f"{t}/{s}" for t, s in zip(left["target"], left["source"]))) + ").</p>")
        parts.append("<h2>Correlation with NER improvement</h2>" + note + _table(_labelled(correlations)))
    if joined is not None and len(joined):
        parts.append("<div>" + "".join(
            scatter_svg(joined[joined["measure"] == m].rename(columns={"value": _label(m)}), _label(m), "improvement",
                        f"{_label(m)} vs improvement")
            for m in dict.fromkeys(joined["measure"])) + "</div>")
    if regret is not None and len(regret):
        parts.append("<h2>Regret of choosing by each measure</h2>" + _table(_labelled(regret)))
    if options:
        parts.append("<h2>Options used</h2><pre>" + html_text(json.dumps(options, indent=2, sort_keys=True,
                                                                         default=str)) + "</pre>")
    return ranking_html(marked_ranking(ranking, long), options, extra_html="\n".join(parts),
                        recommendations=recommendations, show_options=False)


def language_rows(long: pd.DataFrame) -> pd.DataFrame:
    """One row per corpus with its language ('German (de)'), sources then targets; empty when the table
    does not say (an older table, Table 3) or every corpus is English."""
    if "source_language" not in long or "target_language" not in long:
        return pd.DataFrame()
    rows = {}
    for role, name_col, lang_col in (("source", "source", "source_language"), ("target", "target", "target_language")):
        for name, code in long[[name_col, lang_col]].drop_duplicates().itertuples(index=False):
            if isinstance(code, str) and code:
                rows[(role, str(name))] = language_name(code)
    if not rows or all(v == language_name("en") for v in rows.values()):
        return pd.DataFrame()
    return pd.DataFrame([{"corpus": n, "role": r, "language": v} for (r, n), v in rows.items()])


def _labelled(frame: pd.DataFrame) -> pd.DataFrame:
    """A table with its measure ids (``ppl``) shown as their labels (PPL)."""
    if "measure" not in frame:
        return frame
    return frame.assign(measure=frame["measure"].map(lambda m: _label(str(m))))


def marked_ranking(ranking: pd.DataFrame, long: pd.DataFrame) -> pd.DataFrame:
    """The ranking with ⚠ after each source whose cell (target, measure) the matrix flags."""
    if not {"target", "measure", "source"} <= set(ranking.columns):
        return ranking
    marks = long[flags.marked(long).to_numpy()]
    keys = set(zip(marks["target"], marks["measure"], marks["source"]))
    if not keys:
        return ranking
    named = [f"{s} {MARK}" if (t, m, s) in keys else s
             for t, m, s in zip(ranking["target"], ranking["measure"], ranking["source"])]
    return ranking.assign(source=named)


def flag_rows(long: pd.DataFrame) -> pd.DataFrame:
    """One row per flagged (source, measure), sorted by source: tokens used, source size, reliable, why."""
    mask = flags.marked(long).to_numpy()
    if not mask.any():
        return pd.DataFrame(columns=["source", "measure", "tokens used", "source tokens", "reliable", "why"])
    part = long[mask].assign(why=flags.why(long)[mask], bad=flags.unreliable(long)[mask])
    rows = []
    for (source, measure), group in part.groupby(["source", "measure"], sort=True):
        first = group.iloc[0]
        used = pd.to_numeric(group.get("sample_tokens", pd.Series(dtype=float)), errors="coerce").max()
        size = pd.to_numeric(group.get("source_tokens", pd.Series(dtype=float)), errors="coerce").max()
        rows.append({"source": source, "measure": _label(measure),
                     "tokens used": f"{int(used):,}" if math.isfinite(used) else "–",
                     "source tokens": f"{int(size):,}" if math.isfinite(size) else "–",
                     "reliable": "no" if bool(group["bad"].any()) else "yes",
                     "why": "; ".join(dict.fromkeys(w for w in group["why"] if w)) or first["why"]})
    return pd.DataFrame(rows)
