"""simcore.export: what a reader of each export sees."""

from __future__ import annotations

import pandas as pd

from simcore.analysis import rank_sources, to_long
from simcore.export import ranking_markdown
from simcore.measures import get_measure

from .conftest import SAMPLE_DATA


def test_markdown_rows_name_measures_by_label_not_id():
    ranking = rank_sources(to_long(pd.read_csv(SAMPLE_DATA / "results" / "dai2019_table3.csv")))
    rows = [line for line in ranking_markdown(ranking).splitlines() if line.startswith("| ")]
    firsts = {line.split("|")[1].strip() for line in rows} - {"measure", "target"}
    measures = set(ranking["measure"]) - {"recommended"}
    labels = {get_measure(m).label for m in measures}
    assert labels and labels <= firsts
    assert not firsts & (measures - labels)  # no row is named by a measure's id
