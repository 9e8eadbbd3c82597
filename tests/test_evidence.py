"""simcore.answer.evidence: the pairwise comparisons behind the answer, labelled for a reader and for the downloads."""

from __future__ import annotations

import numpy as np
import pandas as pd

from simcore.answer.evidence import EVIDENCE_COLUMNS, pairs_evidence, readable_pairs
from simcore.answer.recommendation import recommend
from simcore.matrix.rows import encode_replicates


def table(tokens: int = 8_419) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """PPL and TVC for three sources; gamma (sorted last) is the most similar under both, by far."""
    rng = np.random.default_rng(5)
    ppl = {"alpha": 1368.5574, "beta": 1500.0, "gamma": 400.0}
    tvc = {"alpha": 0.8173, "beta": 0.70, "gamma": 0.95}
    reps, rows = {}, []
    for measure, values in (("ppl", ppl), ("tvc", tvc)):
        for source, value in values.items():
            r = value * (1 + 0.05 * rng.standard_normal(200))
            reps[(measure, source)] = r
            rows.append({"source": source, "target": "conll", "measure": measure, "value": value,
                         "replicates": encode_replicates(r.tolist()), "sample_tokens": tokens})
    return pd.DataFrame(rows), reps


def test_the_answers_pairs_come_first_with_the_recommended_source_on_the_left():
    long, reps = table()
    recs = recommend(long, "lm")
    assert recs[0].recommended == ["gamma"]
    evidence = pairs_evidence(long, recs, "lm")
    assert list(evidence.columns) == EVIDENCE_COLUMNS
    assert set(evidence["measure_id"]) == {"ppl"}  # TVC does not carry a language model's answer
    assert evidence["involves_answer"].tolist() == [True, True, False]
    first = evidence.iloc[0]
    assert (first.measure, first.source_a, first.source_b, first.tokens) == ("PPL", "gamma", "alpha", 8_419)
    assert (first.value_a, first.value_b, first.more_similar) == (400.0, 1368.5574, "gamma")
    # the share of replicates in which gamma (left) has the lower perplexity, counted by hand
    by_hand = np.mean(reps[("ppl", "gamma")][:len(reps[("ppl", "alpha")])] < reps[("ppl", "alpha")])
    assert first.share_a_more_similar == by_hand
    last = evidence.iloc[2]  # alpha against beta: no recommended source, left as it was
    assert (last.source_a, last.source_b, last.more_similar) == ("alpha", "beta", "alpha")
    assert last.share_a_more_similar == np.mean(reps[("ppl", "alpha")] < reps[("ppl", "beta")])


def test_a_reader_sees_labels_units_and_formatted_sizes_and_only_the_answers_pairs_by_default():
    long, _ = table()
    recs = recommend(long, "vectors")
    evidence = pairs_evidence(long, recs, "vectors")
    shown = readable_pairs(evidence)
    assert len(shown) == evidence["involves_answer"].sum() == 2 and len(readable_pairs(evidence, False)) == 3
    row = shown.iloc[0]
    assert row["measure"] == "TVC (% of the target's vocabulary, higher is closer)"
    assert (row["source A"], row["source B"], row["compared at"]) == ("gamma", "alpha", "8,419 tokens")
    assert (row["A's value"], row["B's value"]) == ("95.0%", "81.7%")
    assert row["A more similar in"] == f"{evidence.iloc[0].share_a_more_similar:.0%} of replicates"
    ppl = readable_pairs(pairs_evidence(long, recommend(long, "lm"), "lm"), False)
    assert ppl["measure"].iloc[0] == "PPL (perplexity per word, lower is closer)"
    assert ppl["B's value"].iloc[0] == "1,368.6"


def test_an_empty_table_gives_an_empty_evidence_table():
    long, _ = table()
    only_ttr = long.assign(measure="ttr")
    assert pairs_evidence(only_ttr, recommend(only_ttr), "lm").empty
