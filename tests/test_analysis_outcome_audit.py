"""simcore.analysis.outcome_audit: the audit per pretraining kind on a hand-worked outcome table."""

from __future__ import annotations

import pandas as pd
import pytest

from simcore.analysis.outcome_audit import audit_by_kind
from simcore.utils.errors import TableError

# One target T, sources A, B, C. PPL (lower is closer) orders A, B, C; TVC (higher is closer) orders B, C, A.
MATRIX = pd.DataFrame(
    [
        {"source": s, "target": "T", "measure": m, "value": v}
        for m, values in (("ppl", (100.0, 200.0, 300.0)), ("tvc", (0.1, 0.3, 0.2)))
        for s, v in zip("ABC", values)
    ]
)


def _outcomes() -> pd.DataFrame:
    rows = []
    # word vectors: A 50.0 ± 0.5, B 49.8 ± 0.5, C 45.0 ± 0.5; (A, B) differ by 0.2 < sqrt(0.5² + 0.5²) = 0.71: a tie.
    #   PPL: (A, C) right, (B, C) right -> 2 of 2.  TVC puts C above A (wrong), B above C (right) -> 1 of 2.
    #   The baseline (none) 99 must not count as a source (it would add pairs).
    for s, f1 in zip(["A", "B", "C", "(none)"], [50.0, 49.8, 45.0, 99.0]):
        rows.append({"kind": "vectors", "target": "T", "source": s, "f1": f1, "f1_std": 0.5})
    # LM: A 40, B 45, C 50 (± 0.1): every pair counted. PPL orders all three the wrong way: 0 of 3.
    #   TVC: (A, B) right, (A, C) right, (B, C) wrong -> 2 of 3. The LM rule (PPL only here) ranks sources by
    #   their share of the votes: A all of them, B and C none (left equal): (A, B), (A, C) wrong, (B, C) 1/2 -> 0.5 of 3.
    for s, f1 in zip("ABC", [40.0, 45.0, 50.0]):
        rows.append({"kind": "lm", "target": "T", "source": s, "f1": f1, "f1_std": 0.1})
    return pd.DataFrame(rows)


def test_decision_accuracy_per_kind_with_pairs_inside_the_seed_spread_as_ties():
    table = audit_by_kind(MATRIX, _outcomes(), bootstrap=0)
    pooled = table[table["scope"] == "all"].set_index(["kind", "measure"])
    assert pooled.loc[("vectors", "ppl"), "accuracy"] == 1.0
    assert (
        pooled.loc[("vectors", "ppl"), "pairs"] == 2
        and pooled.loc[("vectors", "ppl"), "f1_ties"] == 1
    )
    assert pooled.loc[("vectors", "tvc"), "accuracy"] == 0.5
    assert (
        pooled.loc[("lm", "ppl"), "accuracy"] == 0.0 and pooled.loc[("lm", "ppl"), "f1_ties"] == 0
    )
    assert pooled.loc[("lm", "tvc"), "accuracy"] == pytest.approx(2 / 3)
    assert pooled.loc[("lm", "recommended:lm"), "accuracy"] == pytest.approx(0.5 / 3)
    # each kind is audited with its own rule only
    assert ("vectors", "recommended:lm") not in pooled.index and (
        "lm",
        "recommended:vectors",
    ) not in pooled.index
    # top-1 regret: vectors' TVC chooses B, within the margin of the best A -> 0; LM's PPL chooses A: 50 - 40
    assert (
        pooled.loc[("vectors", "tvc"), "regret"] == 0.0
        and pooled.loc[("lm", "ppl"), "regret"] == 10.0
    )


def test_an_outcome_table_without_its_columns_is_a_clear_error():
    with pytest.raises(TableError, match="f1_std"):
        audit_by_kind(MATRIX, _outcomes().drop(columns="f1_std"))
