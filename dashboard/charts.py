"""Charts: plotly heatmaps where darker always means more similar, altair scatters with a fitted line."""

from __future__ import annotations

import hashlib
import json

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from simcore.answer import flags
from simcore.contamination.verdict import CONTAMINATED, HELD, OVERLAP_THRESHOLD, overlap_grid
from simcore.corpora.lang.detect import across_languages, language_name
from simcore.measures.lookup import all_measures, get_measure
from simcore.reporting.report import (
    MARK,
    OUT_OF_SCALE,
    OUTLINE,
    column_shade,
    display_scale,
    format_value,
    unit_label,
    with_interval,
)

DIRECTION_NOTE = {1: "higher is more similar", -1: "lower is more similar", 0: "not a similarity (source diversity)"}


def label(measure: str) -> str:
    return get_measure(measure).label if measure in all_measures() else measure


def _gloss(measure: str) -> str:
    """'how surprised a language model ... ': what the measure is, in a few words, for a chart's title."""
    gloss = getattr(get_measure(measure), "gloss", "") if measure in all_measures() else ""
    return f"{gloss} " if gloss else ""


def _across_languages(part: pd.DataFrame, sources: list[str], targets: list[str]) -> list[list[str]]:
    """Per cell, '' or 'across languages: English (en) source, German (de) target' (the table's language columns)."""
    out = [["" for _ in targets] for _ in sources]
    if "source_language" not in part or "target_language" not in part:
        return out
    rows = part[["source", "target", "source_language", "target_language"]].drop_duplicates(["source", "target"])
    for source, target, a, b in rows.itertuples(index=False):
        if across_languages(a, b):
            out[sources.index(source)][targets.index(target)] = (f"across languages: {language_name(a)} source, "
                                                              f"{language_name(b)} target")
    return out


def heatmap(long: pd.DataFrame, measure: str) -> go.Figure:
    """Sources × targets; each target's column shaded on its own scale (darker = more similar for this
    target); cells show the value and, where known, ± half its 95% interval.

    Flagged cells (a source used whole, a value below the size at which the measure is reliable) are
    outlined and marked ⚠, and the hover says why. Where a column also holds unflagged values, its
    flagged cells are grey and left out of its colour scale, so a flagged extreme never becomes the
    darkest cell (see simcore.answer.flags.out_of_scale). Trace 0 holds the colour scale, trace 1 the grey cells.
    """
    part = long[long["measure"] == measure]
    sources = sorted(part["source"].unique())
    targets = sorted(part["target"].unique())
    direction = int(part["direction"].iloc[0]) if len(part) else 0

    def grid(column: str) -> np.ndarray:
        if column not in part:
            return np.full((len(sources), len(targets)), np.nan)
        table = part.pivot_table(index="source", columns="target", values=column, aggfunc="first")
        return table.reindex(index=sources, columns=targets).to_numpy(float)

    values, low, high = grid("value"), grid("ci_low"), grid("ci_high")
    scale = display_scale(measure, values)  # TVC and TVcC in %, as in the Values table and the report
    values, low, high = values * scale, low * scale, high * scale
    marks, reasons = flags.grids(part, sources, targets)
    greyed = flags.out_of_scale(values, marks)
    shade = column_shade(np.where(greyed, np.nan, values), direction)
    half = (high - low) / 2
    text = [[format_value(v) + (f" {MARK}" if m else "")
             + (f"<br><span style='font-size:10px'>±{format_value(h)}</span>" if np.isfinite(h) else "")
             for v, h, m in zip(vr, hr, mr)] for vr, hr, mr in zip(values, half, marks)]
    tokens = grid("sample_tokens")
    across = _across_languages(part, sources, targets)
    held, dirty = overlap_grid(part, sources, targets)  # which cells' sources hold the target's test text
    text = [[t + (f"<br><span style='color:{CONTAMINATED}'>{HELD}</span>" if d else "") for t, d in zip(tr, dr)]
            for tr, dr in zip(text, dirty)]
    hover = [[with_interval(v, a, b) + (f"<br>at {int(t):,} tokens per source" if np.isfinite(t) else "")
              + (f"<br>{MARK} {r}" + ("<br>(left out of the colour scale)" if g else "") if m else "")
              + (f"<br>{x}" if x else "")
              + (f"<br>{'⚑ contaminated: ' if d else 'overlap: '}{o}" + (" (the measures reward a source for "
                                                                       "holding the target's own text)" if d else "")
                 if o else "")
              for v, a, b, m, r, g, t, x, o, d in zip(*rows)]
             for rows in zip(values, low, high, marks, reasons, greyed, tokens, across, held, dirty)]
    colours = "Greys" if direction == 0 else "Blues"
    font = 13 if len(targets) <= 6 else 11
    template = "source %{y}<br>target %{x}<br>" + unit_label(measure) + " %{customdata}<extra></extra>"
    fig = go.Figure(go.Heatmap(
        z=np.where(greyed, np.nan, shade).tolist(), x=targets, y=sources,
        text=[[t if not g else "" for t, g in zip(tr, gr)] for tr, gr in zip(text, greyed)], texttemplate="%{text}",
        textfont={"size": font}, customdata=hover, colorscale=colours, zmin=0, zmax=1, xgap=2, ygap=2,
        hovertemplate=template, hoverongaps=False,
        colorbar={"tickvals": [0, 1], "ticktext": ["less", "more similar"] if direction else ["low", "high"],
                  "thickness": 12, "len": 0.9, "title": {"text": "per target", "side": "right"}},
    ))
    fig.add_trace(go.Heatmap(
        z=np.where(greyed, 0.0, np.nan).tolist(), x=targets, y=sources, colorscale=[[0, OUT_OF_SCALE], [1, OUT_OF_SCALE]],
        showscale=False, text=[[t if g else "" for t, g in zip(tr, gr)] for tr, gr in zip(text, greyed)],
        texttemplate="%{text}", textfont={"size": font, "color": "#555"}, customdata=hover, xgap=2, ygap=2,
        hovertemplate=template, hoverongaps=False, name="flagged",
    ))
    # one assignment: fig.add_shape per cell re-validates every shape already there (180 outlines took 5 s)
    outlines = [{"type": "rect", "x0": j - 0.47, "x1": j + 0.47, "y0": i - 0.45, "y1": i + 0.45, "xref": "x",
                 "yref": "y", "line": {"color": OUTLINE, "width": 2, "dash": "dot"}, "layer": "above"}
                for i, j in zip(*np.nonzero(marks))]
    note = ""
    if any(any(r) for r in dirty):
        note = (f"<br><span style='font-size:11px;color:{CONTAMINATED}'>{HELD}: the source holds at least "
                f"{OVERLAP_THRESHOLD:.0%} of the target's test sentences (see Ranking)</span>")
    if marks.any():
        note += (f"<br><span style='font-size:11px;color:{OUTLINE}'>{MARK} dotted outline: flagged"
                + ("; grey: left out of its column's scale" if greyed.any() else "; every value of a column flagged: "
                   "shaded among themselves") + "</span>")
    # Plotly never wraps a title: one long line was cut at the chart's edge, so the gloss and the
    # reading each get a line of their own.
    gloss = _gloss(measure).strip()
    lines = [
        f"<span style='font-size:12px;color:#666'>{text}</span>"
        for text in (gloss, f"{DIRECTION_NOTE[direction]}; each target's column on its own scale")
        if text
    ]
    title_top = 40 + 16 * len(lines) + (16 if note else 0)
    fig.update_layout(
        shapes=outlines,
        title={
            "text": " <br>".join([unit_label(measure), *lines]) + note,
            "y": 0.99,
            "yanchor": "top",
        },
        height=120 + title_top + 44 * len(sources),
        margin={"l": 10, "r": 10, "t": title_top, "b": 10},
        xaxis={"side": "bottom", "title": None, "tickangle": -25},
        yaxis={"autorange": "reversed", "title": None},
    )
    return fig


def kappa_heatmap(cohen: pd.DataFrame, measures: list[str]) -> go.Figure:
    labels = [label(m) for m in measures]
    grid = pd.DataFrame(np.eye(len(measures)), index=measures, columns=measures)
    for row in cohen.itertuples(index=False):
        grid.at[row.measure_a, row.measure_b] = grid.at[row.measure_b, row.measure_a] = row.kappa
    text = [[f"{v:.3f}" for v in row] for row in grid.to_numpy()]
    fig = go.Figure(go.Heatmap(z=grid.to_numpy().tolist(), x=labels, y=labels, text=text, texttemplate="%{text}",
                               textfont={"size": 14}, colorscale="RdBu", zmid=0, zmin=-1, zmax=1, xgap=2, ygap=2,
                               colorbar={"title": "κ", "thickness": 12}))
    fig.update_layout(height=120 + 60 * len(measures), margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      yaxis={"autorange": "reversed"}, title="Cohen's kappa between measures")
    return fig


# Ten clearly different colours (matplotlib's category10); Streamlit's default palette comes in light/dark pairs
# of one hue, which made targets look alike. Shapes repeat the distinction past ten targets.
TARGET_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                  "#bcbd22", "#17becf"]
TARGET_SHAPES = ["circle", "square", "triangle-up", "diamond", "cross", "triangle-down"]
CAPPED_RING = "#d62728"  # the ring around a point whose probe runs were cut short by the time cap


def fitted_lines(data: pd.DataFrame, by: str | None = "target") -> pd.DataFrame:
    """Least-squares line ends (value, improvement) per group of ``by`` (or pooled when None)."""
    rows = []
    groups = [("all targets", data)] if by is None else list(data.groupby(by, sort=True))
    for name, part in groups:
        xs, ys = part["value"].to_numpy(float), part["improvement"].to_numpy(float)
        if len(part) >= 2 and np.ptp(xs) > 0:
            slope, intercept = np.polyfit(xs, ys, 1)
            for x in (xs.min(), xs.max()):
                rows.append({"target": name, "value": float(x), "improvement": float(slope * x + intercept),
                             "slope": float(slope)})
    return pd.DataFrame(rows, columns=["target", "value", "improvement", "slope"])


def scatter(points: pd.DataFrame, measure: str, y_title: str = "F1 improvement",
            targets: list[str] | None = None, capped_column: str | None = None) -> alt.LayerChart:
    """Similarity against improvement: one colour and shape per target, source names on the points, a
    least-squares line per target, and the pooled line (dashed) when several targets are shown.

    ``targets`` fixes the colour of each target across charts and views (all targets, in order). Points
    whose ``capped_column`` (the probe's count of runs cut short by its time cap) is above 0 are ringed.
    """
    data = points[["source", "target", "value", "improvement"]].dropna()
    capped = pd.to_numeric(points[capped_column], errors="coerce").fillna(0) if capped_column in points else None
    data = data.assign(capped=False if capped is None else (capped.loc[data.index] > 0))
    domain = targets or sorted(data["target"].unique())
    colours = [TARGET_COLOURS[i % len(TARGET_COLOURS)] for i in range(len(domain))]
    shapes = [TARGET_SHAPES[i % len(TARGET_SHAPES)] for i in range(len(domain))]  # the caption promises shapes
    # One legend definition for every channel and layer that shows the target: Vega-Lite merges the colour and
    # shape legends of one field, and the layers' legends, into one, and warned "Conflicting legend property"
    # for each difference (a legend here, legend=None there) on every render.
    legend = alt.Legend(orient="right", title="target")
    colour = alt.Color("target:N", scale=alt.Scale(domain=domain, range=colours), legend=legend)
    shape = alt.Shape("target:N", scale=alt.Scale(domain=domain, range=shapes), legend=legend)
    x = alt.X("value:Q", title=f"{label(measure)} ({DIRECTION_NOTE.get(get_measure(measure).direction, '')})"
              if measure in all_measures() else measure, scale=alt.Scale(zero=False))
    y = alt.Y("improvement:Q", title=y_title, scale=alt.Scale(zero=False))
    base = alt.Chart(data).encode(x=x, y=y)
    dots = base.mark_point(size=80, filled=True, opacity=0.85).encode(
        color=colour, shape=shape,
        tooltip=["target", "source", alt.Tooltip("value:Q", format=".4g"), alt.Tooltip("improvement:Q", format=".3g")])
    names = base.mark_text(align="left", dx=6, dy=-4, fontSize=9, color="#444").encode(text="source:N")
    # The least-squares lines are computed here: vega's regression transform does not render in Streamlit's
    # sandboxed chart component (checked in Chromium).
    lines = alt.Chart(fitted_lines(data)).mark_line(strokeWidth=1.5, opacity=0.8).encode(
        x="value:Q", y="improvement:Q", color=colour, detail="target:N")
    layers = [dots, names, lines]
    if data["capped"].any():  # included on request: ringed, so their F1 (trained fewer epochs) is not read as others'
        rings = alt.Chart(data[data["capped"]]).mark_point(shape="circle", size=300, filled=False, strokeWidth=2,
                                                             color=CAPPED_RING)
        layers.append(rings.encode(x="value:Q", y="improvement:Q", tooltip=[
            "target", "source", alt.Tooltip("capped:N", title="cut short by the probe's time cap")]))
    if data["target"].nunique() > 1:
        pooled = alt.Chart(fitted_lines(data, by=None)).mark_line(color="#222", strokeDash=[5, 4], strokeWidth=2)
        layers.append(pooled.encode(x="value:Q", y="improvement:Q"))
    return alt.layer(*layers).resolve_scale(color="shared").properties(title=label(measure), height=300)


class SpecIncomplete(Exception):
    """A chart too large to send inline (over altair's 5,000 rows): drawn with ``st.altair_chart``."""


INLINE_ROWS = 5000  # altair's limit on rows sent inline; st.altair_chart sends larger data as Arrow


def _dataset(frame: pd.DataFrame, datasets: dict[str, list]) -> dict[str, str]:
    """``frame``'s rows as altair inlines them, kept in ``datasets`` under altair's name for them."""
    values = alt.to_values(frame)["values"]
    if len(values) > INLINE_ROWS:
        raise SpecIncomplete(f"{len(values)} rows")
    name = "empty" if values == [{}] else "data-" + hashlib.sha256(
        json.dumps(values, sort_keys=True, default=str).encode()).hexdigest()[:32]
    datasets[name] = values
    return {"name": name}


def scatter_spec(points: pd.DataFrame, measure: str, targets: list[str] | None = None,
                 capped_column: str | None = None) -> dict:
    """:func:`scatter` as the Vega-Lite spec ``st.vega_lite_chart`` draws (without altair's default
    width and height, as ``st.altair_chart`` draws it), written directly: the same dict as altair's
    ``to_dict`` (tests/test_charts_spec.py compares them), without altair's construction and schema
    validation (0.1 s a chart: a server's first Predictiveness page built five)."""
    data = points[["source", "target", "value", "improvement"]].dropna()
    capped = pd.to_numeric(points[capped_column], errors="coerce").fillna(0) if capped_column in points else None
    data = data.assign(capped=False if capped is None else (capped.loc[data.index] > 0))
    domain = targets or sorted(data["target"].unique())
    legend = {"orient": "right", "title": "target"}
    colour = {"field": "target", "legend": legend, "type": "nominal", "scale": {
        "domain": list(domain), "range": [TARGET_COLOURS[i % len(TARGET_COLOURS)] for i in range(len(domain))]}}
    shape = {"field": "target", "legend": legend, "type": "nominal", "scale": {
        "domain": list(domain), "range": [TARGET_SHAPES[i % len(TARGET_SHAPES)] for i in range(len(domain))]}}
    x_title = (f"{label(measure)} ({DIRECTION_NOTE.get(get_measure(measure).direction, '')})"
               if measure in all_measures() else measure)
    x = {"field": "value", "scale": {"zero": False}, "title": x_title, "type": "quantitative"}
    y = {"field": "improvement", "scale": {"zero": False}, "title": "F1 improvement", "type": "quantitative"}
    plain = {"x": {"field": "value", "type": "quantitative"}, "y": {"field": "improvement", "type": "quantitative"}}
    datasets: dict[str, list] = {}
    points_data = _dataset(data, datasets)
    layers = [
        {"data": points_data, "mark": {"type": "point", "filled": True, "opacity": 0.85, "size": 80},
         "encoding": {"color": colour, "shape": shape, "x": x, "y": y, "tooltip": [
             {"field": "target", "type": "nominal"}, {"field": "source", "type": "nominal"},
             {"field": "value", "format": ".4g", "type": "quantitative"},
             {"field": "improvement", "format": ".3g", "type": "quantitative"}]}},
        {"data": points_data, "mark": {"type": "text", "align": "left", "color": "#444", "dx": 6, "dy": -4,
                                       "fontSize": 9},
         "encoding": {"text": {"field": "source", "type": "nominal"}, "x": x, "y": y}},
        {"data": _dataset(fitted_lines(data), datasets),
         "mark": {"type": "line", "opacity": 0.8, "strokeWidth": 1.5},
         "encoding": {"color": colour, "detail": {"field": "target", "type": "nominal"}, **plain}},
    ]
    if data["capped"].any():
        layers.append({"data": _dataset(data[data["capped"]], datasets),
                       "mark": {"type": "point", "color": CAPPED_RING, "filled": False, "shape": "circle",
                                "size": 300, "strokeWidth": 2},
                       "encoding": {"tooltip": [
                           {"field": "target", "type": "nominal"}, {"field": "source", "type": "nominal"},
                           {"field": "capped", "title": "cut short by the probe's time cap", "type": "nominal"}],
                           **plain}})
    if data["target"].nunique() > 1:
        layers.append({"data": _dataset(fitted_lines(data, by=None), datasets),
                       "mark": {"type": "line", "color": "#222", "strokeDash": [5, 4], "strokeWidth": 2},
                       "encoding": plain})
    return {"layer": layers, "height": 300, "resolve": {"scale": {"color": "shared"}}, "title": label(measure),
            "$schema": alt.SCHEMA_URL, "datasets": datasets}


