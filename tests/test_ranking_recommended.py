"""simcore.analysis.ranking.recommended_ranking: the recommended rows of rank_sources, alone."""

from __future__ import annotations

import pandas as pd
import pytest

from dashboard.paths import TABLE3
from simcore.analysis.ranking import RECOMMENDED, rank_sources, recommended_ranking
from simcore.analysis.tables import to_long
from simcore.answer.recommendation import recommend
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


@pytest.mark.parametrize("kind", ["lm", "vectors"])
def test_answers_given_rank_as_those_worked_out_here(kind):
    """The answers a caller already has (``recommend`` of the same matrix, as the dashboard shares them)
    give the same rows as those recommended_ranking works out itself; on Table 3 and on replicates with
    ties and a missing value."""
    for long in (to_long(pd.read_csv(TABLE3)), random_table(2, targets=9)):
        given = recommend(long, kind)
        pd.testing.assert_frame_equal(recommended_ranking(long, kind, given), recommended_ranking(long, kind))
    with pytest.raises(InvalidArgument, match="recommendations must be a list"):
        recommended_ranking(long, kind, {"lm": given})


def test_the_audit_and_regret_with_the_answers_given_are_the_same_tables():
    """audit and regret of Table 3 against its LM F1, with each rule's answers given (as the Predictiveness
    page gives those Home worked out) and without."""
    from simcore.analysis.audit import audit
    from simcore.analysis.correlation import read_results
    from simcore.analysis.regret import regret
    from simcore.analysis.tables import read_matrix

    long, results = read_matrix(TABLE3), read_results(TABLE3, f1="lm_f1")
    given = {kind: recommend(long, kind) for kind in ("lm", "vectors")}
    pd.testing.assert_frame_equal(audit(long, results, recommendations=given), audit(long, results))
    pd.testing.assert_frame_equal(regret(long, results, recommendations=given["lm"]), regret(long, results))
    # a rule without answers given works its own out
    pd.testing.assert_frame_equal(audit(long, results, recommendations={"lm": given["lm"]}), audit(long, results))
