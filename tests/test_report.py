"""simcore.reporting.report: colour orientation, escaping, and a report that needs nothing outside itself."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from simcore.analysis.agreement import agreement
from simcore.analysis.ranking import rank_sources
from simcore.analysis.tables import to_long
from simcore.answer.recommendation import recommend
from simcore.reporting.report import (
    DARK,
    LIGHT,
    build_report,
    column_shade,
    format_value,
    heatmap_svg,
    scatter_svg,
    shade_colour,
    similarity_shade,
)

from .conftest import SAMPLE_DATA


def _hex(rgb):
    return "#" + "".join(f"{c:02x}" for c in rgb)


def test_shade_is_one_for_the_most_similar_whatever_the_direction():
    values = np.array([300.0, 1000.0, 650.0])
    np.testing.assert_allclose(similarity_shade(values, -1), [1.0, 0.0, 0.5])  # PPL: lowest is most similar
    np.testing.assert_allclose(similarity_shade(values, 1), [0.0, 1.0, 0.5])  # TVC: highest is most similar
    assert np.isnan(similarity_shade(np.array([np.nan, 1.0]), 1)[0])
    assert similarity_shade(np.array([2.0, 2.0]), -1).tolist() == [0.5, 0.5]
    assert shade_colour(1.0) == _hex(DARK) and shade_colour(0.0) == _hex(LIGHT)
    assert shade_colour(float("nan")) == "#dddddd"


def _table3() -> pd.DataFrame:
    return pd.read_csv(SAMPLE_DATA / "results" / "dai2019_table3.csv")


def test_heatmap_darkest_cell_is_the_most_similar_source_of_each_target():
    long = to_long(_table3())
    for measure, pick in (("ppl", "idxmin"), ("tvc", "idxmax")):
        svg = heatmap_svg(long, measure)
        part = long[long["measure"] == measure]
        best = part.loc[part.groupby("target")["value"].agg(pick)]
        # each target's column has its own scale: the cell text right after each darkest rect is a target's best
        shown = re.findall(re.escape(f'fill="{_hex(DARK)}"') + r'/><text[^>]*>([^<]+)</text>', svg)
        expected = [f"{v:.0f}" if v >= 100 else f"{v:.2f}" for v in best["value"]]
        assert sorted(shown) == sorted(expected), measure


def test_column_shade_scales_each_target_on_its_own():
    grid = np.array([[100.0, 5.0], [200.0, 6.0], [150.0, 7.0]])  # PPL: two targets on very different scales
    np.testing.assert_allclose(column_shade(grid, -1), [[1.0, 1.0], [0.0, 0.5], [0.5, 0.0]])


def test_small_values_get_short_labels():
    assert format_value(4.53e-4) == "4.5e-4" and format_value(0.01234) == "0.0123" and format_value(1234.5) == "1234"


def test_report_is_self_contained_and_escaped():
    long = to_long(_table3())
    long.loc[long["source"] == "Wiki", "source"] = "Wiki<script>alert(1)</script>"  # sorts as before
    ranking = rank_sources(long, ["ppl", "wvv", "tvc"])
    agree = agreement(long, ["ppl", "wvv", "tvc"])
    joined = long[long["measure"] == "ppl"].assign(improvement=np.linspace(0, 1, (long["measure"] == "ppl").sum()))
    recommendations = recommend(long, "lm")
    html = build_report(long, ranking, {"ppl_order": 5, "note": "<b>"}, source_label="Table 3", agreement=agree,
                        joined=joined, recommendations=recommendations)
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "src=" not in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in html
    assert html.count("<svg") == long["measure"].nunique() + 1  # one heatmap per measure, one scatter
    assert f"{agree.fleiss:.3f}" == "0.733" and "<b>0.733</b>" in html
    assert "&quot;note&quot;: &quot;&lt;b&gt;&quot;" in html
    for target in long["target"].unique():
        assert f"<h3>{target}</h3>" in html
    # the report opens with the recommendation, and prints the options once
    assert html.index("<h2>Recommendation") < html.index("<h2>Sources ranked per target")
    assert html.count("ppl_order") == 1
    ttr = pd.DataFrame({"source": ["a", "b"], "target": ["t", "t"], "measure": ["ttr", "ttr"], "value": [0.2, 0.3],
                        "direction": [0, 0]})
    assert "darker = higher" in heatmap_svg(ttr, "ttr") and "more similar" not in heatmap_svg(ttr, "ttr")


def test_scatter_draws_every_point_and_a_rising_line_for_rising_data():
    points = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "y": [1.0, 2.1, 2.9, 4.2]})
    svg = scatter_svg(points, "x", "y", "t")
    assert svg.count("<circle") == 4
    x1, y1, x2, y2 = map(float, re.search(r'<line x1="([\d.]+)" y1="([\d.]+)" x2="([\d.]+)" y2="([\d.]+)"', svg).groups())
    assert x2 > x1 and y2 < y1  # SVG y grows downwards: the line rises


def _one_unreliable_extreme() -> pd.DataFrame:
    """PPL on two targets; source c is far the lowest (most similar) for t1 but marked unreliable."""
    rows = [("a", "t1", 300.0), ("b", "t1", 500.0), ("c", "t1", 20.0), ("a", "t2", 400.0), ("b", "t2", 200.0),
            ("c", "t2", 600.0)]
    long = pd.DataFrame(rows, columns=["source", "target", "value"]).assign(measure="ppl", direction=-1)
    unreliable = long["source"] == "c"
    return long.assign(reliable=~unreliable, flag=np.where(unreliable, "PPL is unreliable below 100,000 tokens "
                                                                      "(9,000 used)", ""))


def test_a_flagged_extreme_is_marked_and_kept_out_of_the_colour_scale():
    long = _one_unreliable_extreme()
    svg = heatmap_svg(long, "ppl")
    cells = re.findall(r'<rect [^>]*fill="([^"]+)"([^>]*)>(?:<title>([^<]*)</title></rect>)?<text[^>]*>([^<]+)</text>',
                       svg)
    by_value = {text: (fill, rest, title) for fill, rest, title, text in cells}
    assert set(by_value) == {"300", "500", "20.00 ⚠", "400", "200", "600 ⚠"}
    fill, rest, title = by_value["20.00 ⚠"]
    assert fill == "#e4e4e4" and "stroke-dasharray" in rest and "unreliable below 100,000" in title
    # t1 is shaded over a and b alone: a (300) is the darkest, b the lightest
    assert by_value["300"][0] == _hex(DARK) and by_value["500"][0] == _hex(LIGHT)
    assert by_value["200"][0] == _hex(DARK) and by_value["400"][0] == _hex(LIGHT)
    assert "stroke" not in by_value["300"][1]
    # a column of flagged values only is shaded among them, and stays marked
    all_flagged = long.assign(reliable=False, flag="used whole")
    svg = heatmap_svg(all_flagged, "ppl")
    assert f'fill="{_hex(DARK)}" stroke=' in svg and "#e4e4e4" not in svg


def test_rank_tables_and_flag_table_of_the_report_mark_flagged_cells():
    long = _one_unreliable_extreme()
    ranking = rank_sources(long, ["ppl"], pretraining=None)
    html = build_report(long, ranking)
    t1 = html[html.index("<h3>t1</h3>"):html.index("<h3>t2</h3>")]
    assert "<td>c ⚠</td>" in t1 and "<td>a</td>" in t1  # c still ranks first by its value, but is marked
    flags = html[html.index("<h2>Size flags</h2>"):]
    assert flags.count("<tr>") == 2  # header + one row for (c, PPL), not one per cell
    assert "PPL is unreliable below 100,000 tokens (9,000 used)" in flags and "<td>no</td>" in flags
    values = html[html.index("<h2>Values</h2>"):html.index("<h2>Size flags</h2>")]
    assert "<td>20.00 ⚠</td>" in values and "<td>300</td>" in values


def test_report_reads_as_a_reader_expects_labels_units_wide_tables_and_ties():
    """Issue 19: ids (`tvc`) for measures, tables wider than the page, legends cut, seven tied sources in one cell,
    TVC a fraction in one matrix and a percentage in Table 3."""
    from simcore.answer.recommendation import Recommendation

    table3 = to_long(_table3())
    long = table3.assign(value=np.where(table3["measure"] == "tvc", table3["value"] / 100, table3["value"]))
    ranking = rank_sources(long, ["ppl", "wvv", "tvc"])
    tied = [f"source {i}" for i in range(7)]
    rec = Recommendation(target="CADEC", pretraining="lm", recommended=tied, confidence=1 / 7, level="tie",
                         measures=["ppl"], reason="tied")
    html = build_report(long, ranking, recommendations=[rec])
    ranks = html[html.index("<h2>Sources ranked per target"):html.index("<h2>Similarity heatmaps")]
    assert "<td>TVC</td>" in ranks and "<td>PPL</td>" in ranks and "<td>tvc</td>" not in ranks
    assert ranks.count("<div class='wide'><table>") == long["target"].nunique()  # each scrolls in its own box
    assert ".wide{max-width:100%;overflow-x:auto}" in html
    first = html[html.index("<h2>Recommendation"):html.index("<h2>Sources ranked")]
    assert "any of 7 (tied):<br><b>source 0<br>source 1<br>" in first   # one name a line, not one long cell
    # TVC as a percentage whichever way it is stored: a fraction here, a percentage in Table 3
    cadec_1bwb = "<td>CADEC</td><td>1BWB</td>"
    values = html[html.index("<h2>Values"):]
    assert "TVC (%)" in values and ">WVV<" in values and "(no unit)" not in values  # issue 37: no "(no unit)"
    row = values[values.index(cadec_1bwb):].split("</tr>")[0]
    assert "<td>81.73</td>" in row and "<td>0.817</td>" not in row
    assert heatmap_svg(long, "tvc") == heatmap_svg(table3, "tvc")
    # every legend line fits inside its SVG (the note was cut at "darker = more s")
    for measure in ("tvc", "wvv", "ppl"):
        svg = heatmap_svg(long, measure)
        width = float(re.search(r'<svg [^>]*width="(\d+)"', svg).group(1))
        legend = re.findall(r'<text x="10" [^>]*>([^<]+)</text>', svg)
        assert any("darker = more similar" in line for line in legend)
        assert all(10 + 7 * len(line) <= width for line in legend)
    assert "no unit" in heatmap_svg(long, "wvv") and "% of the target" in heatmap_svg(long, "tvc")


def test_the_report_names_measures_by_label_explains_them_and_lists_the_answers_pairs():
    from simcore.answer.evidence import pairs_evidence
    from simcore.measures.lookup import explained

    long = to_long(_table3())
    measures = ["ppl", "wvv", "tvc"]
    recs = recommend(long, "lm")
    pairs = pairs_evidence(long, recs, "lm")
    html = build_report(long, rank_sources(long, measures), agreement=agreement(long, measures),
                        recommendations=recs, pairs=pairs)
    agree = html[html.index("<h2>Agreement between measures"):]
    agree = agree[:agree.index("</table>")]
    assert "(PPL, WVV, TVC)" in agree and "<td>PPL</td><td>WVV</td>" in agree
    assert not re.search(r"<td>(ppl|wvv|tvc)</td>", agree) and "measure_a" not in agree
    # each measure said in words in the rankings and beside the heatmaps
    for m in measures:
        assert html.count(explained(m).replace("'", "&#x27;")) >= 2, m
    section = html[html.index("<h2>How each pair of sources was compared"):]
    section = section[:section.index("</table>")]
    answer_rows = int(pairs["involves_answer"].sum())
    assert section.count("<tr>") == 1 + answer_rows and f"{answer_rows} of {len(pairs)} pairs" in section
    assert "<td>PPL (perplexity per word, lower is closer)</td>" in section and "<td>ppl</td>" not in section


def test_a_heatmap_shows_each_cells_first_value_and_blanks_where_there_is_none():
    """By hand: b/t1 is given twice (NaN first, then 30: 30 is shown, as a pivot taking the first
    value shows it), a/t2 twice (10, then 99: 10), c has no value at all and b/t2 no row."""
    long = pd.DataFrame({"source": ["a", "a", "b", "b", "a", "c", "a"],
                         "target": ["t1", "t2", "t1", "t1", "t2", "t1", "t1"],
                         "measure": ["ppl"] * 7,
                         "value": [20.0, 10.0, np.nan, 30.0, 99.0, np.nan, 77.0]})
    texts = re.findall(r'text-anchor="middle" fill="#[0-9a-f]+">([^<]*)<', heatmap_svg(long, "ppl"))
    # rows a, b, c; columns t1, t2
    assert texts == ["20.00", "10.00", "30.00", "–", "–", "–"]
