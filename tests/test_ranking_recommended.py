"""simcore.analysis.ranking.recommended_ranking: the recommended rows of rank_sources, alone."""

from __future__ import annotations

import pandas as pd
import pytest

from dashboard.paths import TABLE3
from simcore.analysis.ranking import RECOMMENDED, rank_sources, recommended_ranking
from simcore.analysis.tables import to_long
from simcore.utils.errors import InvalidArgument

from .test_recommendation_batch import random_table


def from_rank_sources(long: pd.DataFrame, kind: str) -> pd.DataFrame:
    ranking = rank_sources(long, None, kind)
    return ranking[ranking["measure"] == RECOMMENDED].reset_index(drop=True)


@pytest.mark.parametrize("kind", ["lm", "vectors"])
def test_table3s_recommended_rows_are_rank_sources(kind):
    long = to_long(pd.read_csv(TABLE3))
    pd.testing.assert_frame_equal(recommended_ranking(long, kind), from_rank_sources(long, kind))


@pytest.mark.parametrize("seed", [0, 1])
def test_replicates_ties_and_a_missing_value_give_rank_sources_rows(seed):
    """Three-way ties between sources within replicates, a 'nan' replicate, a target with a source
    missing and a missing value (tests/test_recommendation_batch.py's table)."""
    long = random_table(seed, targets=9)
    got = recommended_ranking(long, "lm")
    pd.testing.assert_frame_equal(got, from_rank_sources(long, "lm"))
    assert (got.groupby("target")["rank"].min() == 1).all()


def test_an_unknown_kind_is_refused():
    with pytest.raises(InvalidArgument, match="pretraining must be one of"):
        recommended_ranking(to_long(pd.read_csv(TABLE3)), "bert")
