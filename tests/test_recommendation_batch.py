"""The batched recommendation (many targets of one shape at once) against one target at a time.

``_recommend_target`` computes each target's answer from its own outcome tensors (``compare``,
``by_majority``, ``first_shares``); the batched path computes the same statistics for thousands of
targets at once another way (integer signs, first places by value, counts by halves). Every field
of every answer must be the same, every float to the bit, on tables built to reach its corners:
ties in values and in replicates (three-way ties give shares that are not sums of halves, whose
sums depend on their order), a replicate that is not a number, a value that is missing, chunks of
one target, replicate counts that do or do not fit a byte, mixed directions and a contaminated
source.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from simcore.answer import recommendation as module
from simcore.answer.pairwise import TargetRows
from simcore.answer.recommendation import recommend
from simcore.contamination.verdict import OVERLAP_THRESHOLD, with_overlap
from simcore.matrix.rows import encode_replicates
from simcore.measures.lookup import get_measure

LM = (("ppl", 500.0, 8.0), ("jsd", 0.5, 0.004))
VECTORS = (("tvcc", 0.2, 0.01), ("tvc", 0.3, 0.01), ("wvv", 1e-4, 3e-6))


def random_table(
    seed: int, measures: tuple = LM, targets: int = 37, sources: int = 7, count: int = 41
) -> pd.DataFrame:
    """Targets x sources x measures with ``count`` replicates per cell. Values come from four levels
    (ties between sources); every third target's replicates take three values only (ties between
    sources within a replicate, three-way ones included); target t03 has one replicate 'nan';
    targets t05 and t08 a source far ahead (t05's holding its sentences); a last target lacks a
    source and has a missing value (answered alone)."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(targets):
        for measure, base, sd in measures:
            for s in range(sources):
                ahead = 1 + 0.2 * get_measure(measure).direction
                far = (t, s) in ((5, 0), (8, 1))
                value = base * (ahead if far else 1 + 0.03 * rng.integers(0, 4) / 3)
                if t % 3 == 0:
                    reps = value * (1 + 0.01 * rng.integers(-1, 2, count))
                else:
                    reps = value + sd * rng.standard_normal(count)
                if t == 3 and s == 2:
                    reps[count // 2] = np.nan
                rows.append(
                    {
                        "source": f"s{s}",
                        "target": f"t{t:02d}",
                        "measure": measure,
                        "value": value,
                        "replicates": encode_replicates(reps.tolist()),
                        "sample_tokens": 100_000,
                    }
                )
    odd = [
        dict(r, target="zz_missing") for r in rows if r["target"] == "t01" and r["source"] != "s6"
    ]
    odd[0]["value"] = np.nan
    table = pd.DataFrame(rows + odd)
    table["overlap_all"] = np.where(
        (table["target"] == "t05") & (table["source"] == "s0"), 0.4, 0.0
    )
    return table


def bits(value: Any) -> Any:
    """A value with every float as its exact hex form, so that == compares floats to the bit."""
    if isinstance(value, float):
        return value.hex()
    if isinstance(value, dict):
        return {k: bits(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [bits(v) for v in value]
    return value


def one_at_a_time(table: pd.DataFrame, pretraining: str) -> list[dict[str, Any]]:
    answers = [
        module._recommend_target(t, part, pretraining) for t, part in TargetRows.split(table)
    ]
    return [bits(a.as_dict()) for a in with_overlap(answers, table, OVERLAP_THRESHOLD)]


@pytest.mark.parametrize("step", [1, 4, module.BATCH_CHUNK])  # targets per chunk
@pytest.mark.parametrize(
    ("pretraining", "measures", "count"), [("lm", LM, 41), ("lm", LM, 300), ("vectors", VECTORS, 2)]
)
def test_the_batched_answers_are_those_of_one_target_at_a_time(
    monkeypatch, step, pretraining, measures, count
):
    monkeypatch.setattr(module, "BATCH_CELLS", step * count * 7 * 7)
    table = random_table(count, measures, count=count)
    parts = TargetRows.split(table)
    batched = module._recommend_batch(parts[:-1], pretraining)
    assert batched is not None and all(
        b is not None for b in batched
    )  # the batched path answers these
    got = [bits(r.as_dict()) for r in recommend(table, pretraining, outcomes=False)]
    want = one_at_a_time(table, pretraining)
    assert len(got) == len(want) == 38
    for g, w in zip(got, want):
        assert g == w, g["target"]
    answers = recommend(table, pretraining, outcomes=False)
    assert answers[-1].target == "zz_missing" and answers[5].recommended == ["s0"]
    assert "s0 holds" in answers[5].reason  # the contamination clause
    assert answers[8].recommended == ["s1"]
    assert {a.level for a in answers} >= {
        "tie",
        "moderate",
        "high" if pretraining == "lm" else "tie",
    }
    if (
        count > 2
    ):  # three-way ties: shares that are no sum of halves, summed in the reference's order
        assert any((np.array(list(a.shares.values())) * 2**20 % 1).any() for a in answers)


def test_counts_by_halves_are_the_counts():
    rng = np.random.default_rng(2)
    for count in (1, 2, 3, 41, 255, 256, 300):
        flags = rng.random((3, 4, count, 5)) < 0.4
        assert np.array_equal(module._count_replicates(flags), flags.sum(axis=-2))


def test_first_place_shares_are_averaged_in_the_reference_order():
    """The mean share of first place over the replicates is first_shares(...).mean(axis=1)'s (a sum
    replicate after replicate), with and without ties, for one target and for several."""
    from simcore.answer.pairwise import first_shares

    rng = np.random.default_rng(5)
    for targets in (1, 3):
        for levels in (3, 1000):
            values = rng.integers(0, levels, size=(targets, 200, 6)).astype(
                float
            )  # (targets, R, n)
            outcomes = (values[..., :, None] > values[..., None, :]).astype(float)
            want = first_shares(outcomes).mean(axis=1)
            best = values == values.max(axis=-1, keepdims=True)
            got = module._first_place_mean(np.ascontiguousarray(best.transpose(2, 1, 0)))
            assert got.tobytes() == want.tobytes()


def test_arrow_reads_a_replicate_word_as_float_does_or_not_at_all():
    """Words of the characters a number is written with (and a few others): where float reads every
    word of a cell, the cells read to float's values to the bit; where it refuses one, so does the
    reading (Arrow's 'nan(1)', which float refuses, included)."""
    rng = np.random.default_rng(6)
    alphabet = list("0123456789.eE+-nNaAiIfFtTyY_()")
    words = ["".join(rng.choice(alphabet, size=rng.integers(1, 6))) for _ in range(3000)]
    words += ["nan(1)", "-nan", "Infinity", "+1", "1e", "1.e5", ".5", "1_0", "inf", "-0"]
    for word in words:
        cells = ["1.5 2", f"3 {word}"]
        try:
            want = np.array([1.5, 2.0, 3.0, float(word)])
        except ValueError:
            want = None
        got = module._parse_replicates(cells)
        if want is None:
            assert got is None, word
        else:
            assert got is not None and got[1] == 2 and got[0].tobytes() == want.tobytes(), word


def test_the_float_path_at_the_tolerance_edge_gives_the_same_answers(monkeypatch):
    """Where an exact Copeland count could lie at first_shares' tolerance edge, the combined first
    places come from the float table as by_majority builds it: the same answers."""
    monkeypatch.setattr(module, "_combined_firsts", lambda total, measures: None)
    table = random_table(7)
    got = [bits(r.as_dict()) for r in recommend(table, "lm", outcomes=False)]
    assert got == one_at_a_time(table, "lm")
