"""dashboard.report_cache: the report's parts are the library's own answers, whichever way the
parts are built (the answers are worked out once, shared with the ranking when the names allow)."""

import json
import types

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from dashboard.report_cache import report_parts
from simcore.analysis.ranking import rank_sources
from simcore.analysis.tables import to_long
from simcore.answer.recommendation import recommend

from .conftest import SAMPLE_DATA


def _state(long: pd.DataFrame) -> types.SimpleNamespace:
    return types.SimpleNamespace(matrix=long, results=None, extra={}, matrix_options={},
                                 matrix_label="m", results_columns=None)


def _table3() -> pd.DataFrame:
    return to_long(pd.read_csv(SAMPLE_DATA / "results" / "dai2019_table3.csv"))


@pytest.mark.parametrize("names", ["clean", "upper case measures", "a missing source name"])
@pytest.mark.parametrize("pretraining", ["lm", "vectors"])
def test_the_parts_hold_the_ranking_and_answers_computed_on_their_own(names, pretraining):
    long = _table3()
    if names == "upper case measures":
        long["measure"] = long["measure"].str.upper()
    elif names == "a missing source name":
        long["source"] = long["source"].astype(object)
        long.loc[long["source"] == long["source"].iloc[0], "source"] = np.nan
    measures = ["ppl", "wvv", "tvc", "tvcc"]
    parts = report_parts(_state(long), measures, pretraining)
    assert parts.error is None
    assert_frame_equal(parts.ranking, rank_sources(long, measures, pretraining))
    # as text: answers shared through the server's cache are copies, whose NaN is another object
    assert _written(parts.recommendations) == _written(recommend(long, pretraining))


def _written(recommendations) -> list[str]:
    return [json.dumps(r.as_dict(), sort_keys=True) for r in recommendations]


def test_a_report_that_cannot_be_built_says_what_the_ranking_says():
    from simcore.utils.errors import SimcoreError

    long = _table3()
    with pytest.raises(SimcoreError) as raised:
        rank_sources(long, ["ppl", "not_a_measure"], "lm")
    assert report_parts(_state(long), ["ppl", "not_a_measure"], "lm").error == str(raised.value)
