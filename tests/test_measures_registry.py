"""simcore.measures.registry: a measure declares everything about itself on :class:`Measure`, and every
list of measures (the CLI, the matrix CSV, the report, the dashboard's choices, the answer's families,
the schedule's costs) reads it from the registry: adding one is one module and one registry line."""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from simcore.analysis.ranking import rank_sources
from simcore.analysis.tables import measure_range, validate_columns
from simcore.cli.main import build_parser, main
from simcore.measures.lookup import all_measures, default_measures, family, get_measure
from simcore.measures.prepared import PreparedSource, PreparedTarget, Score
from simcore.measures.registry import LM, LOWER, REGISTRY, VECTORS, Measure, register
from simcore.reporting.report import build_report, unit_label
from simcore.utils.errors import TableError

from .app_helpers import go, no_problems
from .conftest import SAMPLE_DATA


class SampleSize(Measure):
    """A toy: the source sample's token count, which the matrix also writes in ``sample_tokens``."""

    name = "toysize"
    label = "TOY"
    description = "tokens in the source sample (a toy measure for the registry's test)"
    direction = LOWER
    unit = "toy tokens"
    value_range = (0.0, math.inf)

    def prepare(self, source: PreparedSource) -> None:
        pass

    def score(self, source: PreparedSource, target: PreparedTarget) -> Score:
        return Score(float(source.sample.n_tokens), {})


@pytest.fixture
def toy() -> Iterator[Measure]:
    all_measures()  # the built-in ones first, as a new module would be after them
    measure = register(SampleSize())
    yield measure
    REGISTRY.pop(measure.name, None)


@pytest.fixture(scope="module")
def small_dirs(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("toy")
    (root / "sources").mkdir()
    (root / "targets").mkdir()
    for name in ("news.txt", "lab_protocols.txt"):
        (root / "sources" / name).write_bytes((SAMPLE_DATA / "sources" / name).read_bytes())
    (root / "targets" / "news_ner.conll").write_bytes((SAMPLE_DATA / "targets" / "news_ner.conll").read_bytes())
    return root / "sources", root / "targets"


def test_a_new_measure_gets_sensible_defaults(toy: Measure):
    assert toy.cost == 1.0 and not toy.default and toy.default_rank == 0 and toy.family == "" and toy.reliable_tokens == 0
    assert not toy.percent and toy.shown_unit == "toy tokens" and toy.option_names == ()
    assert toy.size_bias() == "TOY moves with size" and toy.drill_title == ""
    assert toy.name not in default_measures() and toy.name not in family(LM) + family(VECTORS)
    with pytest.raises(NotImplementedError):
        Measure().score(None, None)  # type: ignore[arg-type]


def test_the_built_in_declarations_give_the_lists_the_tables_held(toy: Measure):
    """The values the tables scattered over the code held before each measure declared its own."""
    assert default_measures() == ("tvc", "tvcc", "ppl", "wvv", "jsd", "ttr")
    assert family(LM) == ("ppl", "jsd") and family(VECTORS) == ("tvcc", "tvc", "wvv")
    costs = {n: get_measure(n).cost for n in ("emb", "wvv", "tvcc", "ppl", "jsd", "kl", "tvc", "ttr")}
    assert costs == {"emb": 30.0, "wvv": 20.0, "tvcc": 4.0, "ppl": 3.0, "jsd": 2.0, "kl": 2.0, "tvc": 1.0,
                     "ttr": 0.5}
    assert [n for n in all_measures() if get_measure(n).percent] == ["tvc", "tvcc"]
    assert get_measure("tvc").shown_unit == "% of the target's vocabulary"
    assert get_measure("tvc").unit == "fraction of the target's vocabulary"
    assert unit_label("tvcc") == "TVcC (%)" and unit_label("wvv") == "WVV"
    assert unit_label("ppl") == "PPL"


def test_the_cli_offers_and_accepts_a_registered_measure(toy: Measure):
    matrix = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices["matrix"]
    assert "toysize" in matrix.format_help()
    args = build_parser().parse_args(["matrix", "--sources", "s", "--targets", "t", "--out", "m.csv",
                                      "--measures", "tvc,toysize"])
    assert args.measures == ["tvc", "toysize"]


def test_a_registered_measure_lands_in_the_csv_and_the_report(toy: Measure, small_dirs, tmp_path):
    sources, targets = small_dirs
    out = tmp_path / "m.csv"
    assert main(["matrix", "--sources", str(sources), "--targets", str(targets), "--out", str(out),
                 "--measures", "toysize,tvc", "--cache", str(tmp_path / "cache"), "--jobs", "1", "--quiet"]) == 0
    table = pd.read_csv(out)
    rows = table[table["measure"] == "toysize"]
    assert len(rows) == 2 and set(rows["source"]) == {"news", "lab_protocols"}
    # the value is the sample's size: the whole source for the smallest (the matrix's own columns), else
    # whole units from the size the sources are compared at, short of the source's size
    whole = rows["sample_tokens"] == rows["source_tokens"]
    assert list(rows[whole]["source"]) == ["lab_protocols"]
    assert (rows[whole]["value"] == rows[whole]["source_tokens"]).all()
    drawn = rows[~whole]
    assert ((drawn["sample_tokens"] <= drawn["value"]) & (drawn["value"] < drawn["source_tokens"])).all()
    assert (rows["direction"] == LOWER).all()
    long = validate_columns(table)
    html = build_report(long, rank_sources(long))
    assert "TOY (toy tokens): lower is more similar" in html
    assert "TOY (tokens in the source sample" in html  # explained() beside the heatmaps


def test_a_value_outside_a_measures_declared_range_is_a_broken_table(toy: Measure):
    assert measure_range("toysize") == (0.0, math.inf) and measure_range("nosuch") == (-math.inf, math.inf)
    bad = pd.DataFrame({"source": ["a"], "target": ["t"], "measure": ["toysize"], "value": [-1.0]})
    with pytest.raises(TableError, match="toysize"):
        validate_columns(bad)


def test_the_dashboard_offers_a_registered_measure(toy: Measure, app_environment: Path):
    from streamlit.testing.v1 import AppTest

    from .conftest import ROOT

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.button(key="load_sample").click().run()
    at = go(at, "pages/2_Similarity.py")
    no_problems(at)
    choices = at.multiselect(key="f_measures")
    assert "TOY" in choices.options and "TVC" in choices.options  # shown by their labels
    assert "toysize" not in choices.value  # not a default: offered, not chosen


def test_every_measure_with_a_drill_down_view_has_its_table():
    """A measure naming a drill-down tab (drill_title) implements drill(), and only then."""
    for name in all_measures():
        measure = get_measure(name)
        assert bool(measure.drill_title) == (type(measure).drill is not Measure.drill), name
