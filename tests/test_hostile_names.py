"""Names are data: every character a file name can hold survives every writer and read_matrix exactly,
or is refused up front naming the file; the terminal shows control characters escaped.

Generated: names made of plain text and control characters (CR, LF, tab, escape sequences, C1
controls, formula starts, HTML), as sources and targets of a long table written by every export.
"""

from __future__ import annotations

import contextlib
import html
import io
import json
import os
import random
import re
from html.parser import HTMLParser

import pandas as pd
import pytest

from simcore.analysis.ranking import rank_sources
from simcore.analysis.tables import read_matrix
from simcore.answer.recommendation import recommend
from simcore.cli import main as cli
from simcore.reporting.export import (
    csv_text,
    ranking_html,
    ranking_json,
    ranking_markdown,
    write_recommendations,
)
from simcore.utils.terminal import has_control, terminal_text, visible_controls

from .conftest import SAMPLE_DATA

PIECES = ["cr\rname", "lf\nname", "tab\tname", "\x1b[31mred\x1b[0m", "\x1b]0;title\x07", "c1\x85\x9b2J", "\x7fdel",
          "=1+1", "\r", "\t", "<b>&amp;</b>", "a|b", "名前", "x\r\ny", " lead", "trail ", "'quote", '"dq"', "nan"]


def _names(rng: random.Random, n: int) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        name = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 3)))
        if name not in out:
            out.append(name)
    return out


def _long(sources: list[str], targets: list[str], rng: random.Random) -> pd.DataFrame:
    rows = [{"source": s, "target": t, "measure": m, "value": rng.uniform(0.1, 0.9) if m != "ppl" else rng.uniform(50, 900),
             "direction": d}
            for t in targets for s in sources for m, d in (("tvc", 1), ("ppl", -1), ("jsd", -1))]
    return pd.DataFrame(rows)


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.texts: list[str] = []
        self._in = False

    def handle_starttag(self, tag, attrs):
        self._in = tag in ("td", "h3")
        if self._in:
            self.texts.append("")

    def handle_endtag(self, tag):
        self._in = False

    def handle_data(self, data):
        if self._in:
            self.texts[-1] += data


def _md_cells(text: str) -> list[str]:
    cells = []
    for line in text.split("\n"):  # Markdown ends lines only at LF, CR, CRLF (not at U+0085)
        if line.startswith("## "):
            cells.append(line[3:])
        elif line.startswith("| ") and not line.startswith("|---"):
            cells += re.split(r"(?<!\\) \| ", line[2:-2])
    return [html.unescape(re.sub(r"\\x([0-9a-f]{2})|\\u([0-9a-f]{4})|\\(.)", _md_unescape, c)) for c in cells]


def _md_unescape(match: re.Match[str]) -> str:
    """A Markdown escape, or a control character written visibly (after an undoubled backslash)."""
    code = match.group(1) or match.group(2)
    return chr(int(code, 16)) if code else match.group(3)


@pytest.mark.parametrize("seed", range(3))
def test_generated_names_round_trip_through_every_writer(tmp_path, seed):
    rng = random.Random(seed)
    sources, targets = _names(rng, 3), _names(rng, 2)
    long = _long(sources, targets, rng)
    path = tmp_path / "m.csv"
    path.write_text(csv_text(long), encoding="utf-8", newline="")
    back = read_matrix(path)
    assert sorted(set(back["source"])) == sorted(sources) and sorted(set(back["target"])) == sorted(targets)
    assert len(back) == len(long)
    ranking = rank_sources(back)
    csv_back = pd.read_csv(io.StringIO(csv_text(ranking)), dtype=str, keep_default_na=False)
    from simcore.reporting.export import unescape_formula
    assert set(csv_back["source"].map(unescape_formula)) == set(sources)
    data = json.loads(ranking_json(ranking))
    assert set(data["targets"]) == set(targets)
    assert {e["source"] for t in data["targets"].values() for entries in t.values() for e in entries} == set(sources)
    recs = recommend(back)
    markdown = ranking_markdown(ranking, recommendations=recs)
    md = _md_cells(markdown)
    assert set(targets) <= set(md) and set(sources) <= set(md)
    page = ranking_html(ranking, recommendations=recs)
    parser = _Cells()
    parser.feed(page)
    # a control character (escape, C1, DEL) is shown as \x1b in a page: never sent raw to a browser or a terminal
    assert {visible_controls(t) for t in targets} <= set(parser.texts)
    assert {visible_controls(s) for s in sources} <= set(parser.texts)
    for document in (markdown, page):
        assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]", document)
    write_recommendations(recs, ranking, tmp_path / "r.csv")
    table = pd.read_csv(tmp_path / "r.csv", dtype=str, keep_default_na=False)
    assert set(table["target"].map(unescape_formula)) == set(targets)
    write_recommendations(recs, ranking, tmp_path / "r.json")
    assert {r["target"] for r in json.loads((tmp_path / "r.json").read_text())["recommendations"]} == set(targets)


def test_terminal_text_escapes_every_control_character():
    for piece in PIECES:
        shown = terminal_text(piece)
        assert not has_control(shown) and "\x1b" not in shown and "\r" not in shown
    assert terminal_text("a\rb\x1b[2J\n", keep_newlines=True) == "a\\rb\\x1b[2J\n"
    assert terminal_text("\udcff") == "\\udcff"


def test_matrix_keeps_a_carriage_return_in_a_file_name_and_the_terminal_shows_it_escaped(tmp_path):
    sources, targets = tmp_path / "sources", tmp_path / "targets"
    sources.mkdir()
    targets.mkdir()
    (sources / "lab\x1b[31mred.txt").write_bytes((SAMPLE_DATA / "sources" / "lab_protocols.txt").read_bytes())
    (sources / "news.txt").write_bytes((SAMPLE_DATA / "sources" / "news.txt").read_bytes())
    (targets / "cr\rname.conll").write_bytes((SAMPLE_DATA / "targets" / "news_ner.conll").read_bytes())
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["matrix", "--sources", str(sources), "--targets", str(targets), "--measures", "tvc,ttr",
                         "--out", str(tmp_path / "m.csv"), "--cache", str(tmp_path / "cache")])
    assert code == 0, err.getvalue()
    long = read_matrix(tmp_path / "m.csv")
    assert set(long["target"]) == {"cr\rname"} and set(long["source"]) == {"lab\x1b[31mred", "news"}
    assert len(pd.read_csv(tmp_path / "m.csv")) == 4  # every row one row, also for pandas
    shown = out.getvalue() + err.getvalue()
    assert "\x1b" not in shown and "cr\rname" not in shown and "cr\\rname" in shown  # (tqdm redraws with \r)


def test_a_name_that_is_not_utf8_is_refused_naming_the_file(tmp_path):
    sources, targets = tmp_path / "sources", tmp_path / "targets"
    sources.mkdir()
    targets.mkdir()
    (sources / "news.txt").write_bytes((SAMPLE_DATA / "sources" / "news.txt").read_bytes())
    bad = os.fsencode(str(targets)) + b"/bad\xffname.conll"
    with open(bad, "wb") as f:
        f.write((SAMPLE_DATA / "targets" / "news_ner.conll").read_bytes())
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = cli.main(["matrix", "--sources", str(sources), "--targets", str(targets), "--measures", "ttr",
                         "--out", str(tmp_path / "m.csv"), "--cache", str(tmp_path / "cache")])
    assert code == 2 and "bad\\udcffname.conll: the file name is not valid UTF-8" in err.getvalue(), err.getvalue()
    assert not (tmp_path / "m.csv").exists()
