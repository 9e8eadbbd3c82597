"""Charts: plotly heatmaps where darker always means more similar, altair scatters with a fitted line."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from simcore.measures import all_measures, get_measure
from simcore.report import column_shade, format_value, with_interval

DIRECTION_NOTE = {1: "higher is more similar", -1: "lower is more similar", 0: "not a similarity (source diversity)"}


def label(measure: str) -> str:
    return get_measure(measure).label if measure in all_measures() else measure


def heatmap(long: pd.DataFrame, measure: str) -> go.Figure:
    """Sources × targets; each target's column shaded on its own scale (darker = more similar for this
    target); cells show the value and, where known, ± half its 95% interval."""
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
    shade = column_shade(values, direction)
    half = (high - low) / 2
    text = [[format_value(v) + (f"<br><span style='font-size:10px'>±{format_value(h)}</span>"
                                if np.isfinite(h) else "") for v, h in zip(vr, hr)] for vr, hr in zip(values, half)]
    hover = [[f"{with_interval(v, a, b)}" for v, a, b in zip(vr, ar, br)] for vr, ar, br in zip(values, low, high)]
    scale = "Greys" if direction == 0 else "Blues"
    font = 13 if len(targets) <= 6 else 11
    fig = go.Figure(go.Heatmap(
        z=shade.tolist(), x=targets, y=sources, text=text, texttemplate="%{text}", textfont={"size": font},
        customdata=hover, colorscale=scale, zmin=0, zmax=1, xgap=2, ygap=2,
        hovertemplate="source %{y}<br>target %{x}<br>" + label(measure) + " %{customdata}<extra></extra>",
        colorbar={"tickvals": [0, 1], "ticktext": ["less", "more similar"] if direction else ["low", "high"],
                  "thickness": 12, "len": 0.9, "title": {"text": "per target", "side": "right"}},
    ))
    fig.update_layout(
        title={"text": f"{label(measure)} <span style='font-size:12px;color:#666'>({DIRECTION_NOTE[direction]}; "
                       "each target's column on its own scale)</span>"},
        height=160 + 44 * len(sources), margin={"l": 10, "r": 10, "t": 40, "b": 10},
        xaxis={"side": "bottom", "title": None, "tickangle": -25}, yaxis={"autorange": "reversed", "title": None},
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


def scatter(points: pd.DataFrame, measure: str, y_title: str = "F1 improvement") -> alt.LayerChart:
    """Similarity against improvement, one colour per target, with the pooled least-squares line."""
    data = points[["source", "target", "value", "improvement"]].dropna()
    x = alt.X("value:Q", title=f"{label(measure)} ({DIRECTION_NOTE.get(get_measure(measure).direction, '')})"
              if measure in all_measures() else measure, scale=alt.Scale(zero=False))
    y = alt.Y("improvement:Q", title=y_title, scale=alt.Scale(zero=False))
    dots = alt.Chart(data).mark_circle(size=90, opacity=0.8).encode(
        x=x, y=y, color=alt.Color("target:N", legend=alt.Legend(orient="right", title="target")),
        tooltip=["target", "source", alt.Tooltip("value:Q", format=".4g"), alt.Tooltip("improvement:Q", format=".3g")])
    # The least-squares line is computed here: vega's regression transform does not render in Streamlit's
    # sandboxed chart component (checked in Chromium).
    xs, ys = data["value"].to_numpy(float), data["improvement"].to_numpy(float)
    if len(data) >= 2 and np.ptp(xs) > 0:
        slope, intercept = np.polyfit(xs, ys, 1)
        ends = np.array([xs.min(), xs.max()])
        fit = pd.DataFrame({"value": ends, "improvement": slope * ends + intercept})
    else:
        fit = pd.DataFrame({"value": [], "improvement": []})
    line = alt.Chart(fit).mark_line(color="#c53030", strokeWidth=2).encode(x="value:Q", y="improvement:Q")
    return (dots + line).properties(title=label(measure), height=280)
