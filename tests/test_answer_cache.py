"""dashboard.answer_cache: the answers Home, the Ranking page and the audit share are ``recommend``'s own,
each caller gets its own copy, and a matrix whose names the analyses would read otherwise gets none."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from dashboard.answer_cache import answers, applicable_answers, names_as_checked
from simcore.analysis.tables import to_long
from simcore.answer.recommendation import recommend

from .conftest import SAMPLE_DATA


def _table3() -> pd.DataFrame:
    return to_long(pd.read_csv(SAMPLE_DATA / "results" / "dai2019_table3.csv"))


@pytest.mark.parametrize("kind", ["lm", "vectors"])
def test_the_shared_answers_are_recommends(kind):
    long = _table3()
    expected = _written(recommend(long, kind))
    first = answers(long, kind)
    assert _written(first) == expected
    first[0].recommended.append("changed by one caller")
    assert _written(answers(long, kind)) == expected  # the next caller's copy is untouched


def _written(recommendations) -> list[str]:
    """Each answer as JSON text (a missing confidence, NaN, written alike in both)."""
    return [json.dumps(r.as_dict(), sort_keys=True) for r in recommendations]


def test_names_the_analyses_read_otherwise_get_no_shared_answer():
    long = _table3()
    upper = long.assign(measure=long["measure"].str.upper())
    unnamed = long.copy()
    unnamed.loc[0, "source"] = None
    assert names_as_checked(long)
    for other in (upper, unnamed):
        assert not names_as_checked(other) and answers(other, "lm") is None
    assert answers(long, "bert") is None


def test_only_the_kinds_whose_measures_the_matrix_has():
    long = _table3()
    only_lm = long[long["measure"].isin(["ppl", "jsd"])]
    assert set(applicable_answers(long)) == {"lm", "vectors"}
    assert set(applicable_answers(only_lm, ("lm", "vectors"))) == {"lm"}
