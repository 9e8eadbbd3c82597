"""simcore.reporting.export: what a reader of each export sees."""

from __future__ import annotations

import pandas as pd

from simcore.analysis.ranking import rank_sources
from simcore.analysis.tables import to_long
from simcore.measures.lookup import get_measure
from simcore.reporting.export import ranking_markdown

from .conftest import SAMPLE_DATA


def test_markdown_rows_name_measures_by_label_not_id():
    ranking = rank_sources(to_long(pd.read_csv(SAMPLE_DATA / "results" / "dai2019_table3.csv")))
    rows = [line for line in ranking_markdown(ranking).splitlines() if line.startswith("| ")]
    firsts = {line.split("|")[1].strip() for line in rows} - {"measure", "target"}
    measures = set(ranking["measure"]) - {"recommended"}
    labels = {get_measure(m).label for m in measures}
    assert labels and labels <= firsts
    assert not firsts & (measures - labels)  # no row is named by a measure's id


def test_the_pairwise_comparisons_go_into_the_csv_and_json_downloads():
    import io
    import json

    from simcore.answer.evidence import pairs_evidence
    from simcore.answer.recommendation import pairwise_table, recommend
    from simcore.reporting.export import pairs_csv, ranking_json

    from .test_evidence import table

    long, _ = table()
    recs = recommend(long, "lm")
    evidence = pairs_evidence(long, recs, "lm")
    back = pd.read_csv(io.StringIO(pairs_csv(evidence)))
    assert back["measure"].tolist() == ["PPL"] * 3 and back["tokens"].tolist() == [8_419] * 3
    raw = pairwise_table(long, "conll", "lm")  # the drill-down's own numbers, before any relabelling
    assert sorted(back["value_a"].tolist() + back["value_b"].tolist()) == sorted(
        raw["value_a"].tolist() + raw["value_b"].tolist())
    document = json.loads(ranking_json(rank_sources(long, ["ppl", "tvc"]), {}, recs, evidence))
    assert [p["source_a"] for p in document["pairs"]] == evidence["source_a"].tolist()
    assert document["pairs"][0]["involves_answer"] is True and document["pairs"][0]["tokens"] == 8_419
    assert "pairs" not in json.loads(ranking_json(rank_sources(long, ["ppl"]), {}, recs))


def test_a_measure_not_computed_gets_no_rank_in_the_csv():
    import io

    import numpy as np

    from simcore.reporting.export import ranking_csv

    long = pd.DataFrame({"source": ["a", "b", "a", "b"], "target": "t", "measure": ["ppl", "ppl", "wvv", "wvv"],
                         "value": [100.0, 200.0, np.nan, np.nan], "direction": [-1, -1, -1, -1]})
    back = pd.read_csv(io.StringIO(ranking_csv(rank_sources(long, ["ppl", "wvv"], pretraining=None))))
    assert back[back.measure == "ppl"].set_index("source")["rank"].to_dict() == {"a": 1, "b": 2}
    assert back[back.measure == "wvv"]["rank"].isna().all() and len(back[back.measure == "wvv"]) == 2
    import json

    from simcore.reporting.export import ranking_json

    targets = json.loads(ranking_json(rank_sources(long, ["ppl", "wvv"], pretraining=None)))["targets"]
    assert [r["rank"] for r in targets["t"]["wvv"]] == [None, None] and targets["t"]["ppl"][0]["rank"] == 1


def _random_json(rng, depth: int = 0):
    """A document with every kind of JSON value, empty containers, and strings holding quotes,
    backslashes (before quotes too), brackets, commas and non-ASCII or control characters."""
    import numpy as np

    atoms = ['"', "\\", '\\"', "[", "]", "{", "}", ",", ":", " ", "a", "é", "中", "\n", "\x1b", "😀"]

    def text():
        return "".join(rng.choice(atoms) for _ in range(rng.randint(0, 6)))

    kind = rng.randint(0, 9 if depth < 4 else 5)
    if kind in (0, 5):
        return text()
    if kind == 1:
        return rng.choice([None, True, False, 0, -3, 10**20, 1.5, -0.0, float("nan"), float("inf"),
                           np.float64(2.5)])
    if kind == 2:
        return np.int64(7)  # written with str(), as default=str does
    if kind in (3, 4):
        return rng.choice([[], {}, ()])
    if kind in (6, 7):
        return [_random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice([text(), 1, 2.5, True, None]): _random_json(rng, depth + 1)
            for _ in range(rng.randint(0, 4))}


def test_indented_json_is_the_text_of_pythons_encoder_with_an_indent():
    import json
    import random

    from simcore.reporting.export import indented_json

    rng = random.Random(0)
    for _ in range(3000):
        document = _random_json(rng)
        assert indented_json(document) == json.dumps(document, indent=2, default=str)
    ranking = rank_sources(to_long(pd.read_csv(SAMPLE_DATA / "results" / "dai2019_table3.csv")))
    document = {"targets": ranking.to_dict("records"), "options": {"a": [1, {"b": []}]}}
    assert indented_json(document) == json.dumps(document, indent=2, default=str)
    assert indented_json({}) == "{}" and indented_json("x") == '"x"'


def test_the_pairs_in_the_json_are_the_tables_records_with_missing_values_null():
    import json

    import numpy as np

    from simcore.reporting.export import ranking_json

    ranking = rank_sources(to_long(pd.read_csv(SAMPLE_DATA / "results" / "dai2019_table3.csv")))
    pairs = pd.DataFrame({
        "text": pd.array(["a", None, "c"], dtype="str"),
        "tokens": pd.array([1, None, 3], dtype="Int64"),
        "value": [0.5, np.nan, np.inf], "flag": [True, False, True], "count": np.array([1, 2, 3]),
        "small": np.array([1.5, np.nan, 2], dtype=np.float32),
        "share": pd.array([0.5, None, 1], dtype="Float64"),
        "mixed": pd.Series([np.int64(4), None, "x"], dtype=object),
        "when": pd.to_datetime(["2020-01-01", None, "2021-05-06"])})
    by_hand = [{"text": "a", "tokens": 1, "value": 0.5, "flag": True, "count": 1, "small": 1.5,
                "share": 0.5, "mixed": 4, "when": "2020-01-01 00:00:00"},
               {"text": None, "tokens": None, "value": None, "flag": False, "count": 2,
                "small": None, "share": None, "mixed": None, "when": None},
               {"text": "c", "tokens": 3, "value": float("inf"), "flag": True, "count": 3,
                "small": 2.0, "share": 1.0, "mixed": "x", "when": "2021-05-06 00:00:00"}]
    for table in (pairs, pairs.drop(columns=["mixed", "when"])):  # the second: a column at a time
        got = json.loads(ranking_json(ranking, pairs=table))["pairs"]
        assert got == [{k: v for k, v in row.items() if k in table.columns} for row in by_hand]
