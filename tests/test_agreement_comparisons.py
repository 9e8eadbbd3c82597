"""simcore.analysis.agreement.comparisons (numpy over each target's pairs) against the plain loop
it replaced, kept here as the reference: the same rows, order, columns, dtypes and answers."""

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from simcore.analysis.agreement import comparisons
from simcore.analysis.tables import checked_long, to_long

from .conftest import SAMPLE_DATA

MEASURES = ["ppl", "jsd", "tvc", "tvcc", "wvv", "made_up"]


def reference(long: pd.DataFrame, measures: list[str]) -> pd.DataFrame:
    """The loop comparisons ran before: one pivot per target, one lookup per cell."""
    long = checked_long(long)
    rows = []
    for target, group in long[long["measure"].isin(measures)].groupby("target", sort=True):
        values = group.pivot_table(index="source", columns="measure", values="value",
                                   aggfunc="first")
        directions = group.groupby("measure")["direction"].first()
        for a, b in combinations(sorted(values.index), 2):
            row: dict[str, object] = {"target": target, "first": a, "second": b}
            for m in measures:
                va = values.at[a, m] if m in values else np.nan
                vb = values.at[b, m] if m in values else np.nan
                with np.errstate(invalid="ignore"):  # inf * 0, as the loop computed it
                    row[m] = (bool(va * directions[m] > vb * directions[m])
                              if pd.notna(va) and pd.notna(vb) else None)
            rows.append(row)
    return pd.DataFrame(rows, columns=["target", "first", "second", *measures])


def random_long(rng: np.random.Generator) -> pd.DataFrame:
    """A long matrix with NaNs, ties, infinities, missing and repeated cells, one-source targets,
    names that sort differently by case and accent, and given directions (some 0)."""
    sources = list(rng.choice(["b", "B", "a", "a b", "é", "z", "10", "9"], size=rng.integers(1, 8),
                              replace=False))
    targets = list(rng.choice(["t", "T", "ü", "x y"], size=rng.integers(1, 4), replace=False))
    measures = list(rng.choice(MEASURES[:5], size=rng.integers(1, 6), replace=False))
    rows = []
    for t in targets:
        here = sources if rng.random() > 0.2 else sources[:1]  # a target with one source
        for s in here:
            for m in measures:
                if rng.random() < 0.15:
                    continue  # a missing cell
                value = float(rng.integers(0, 4))  # few values: many ties
                pick = rng.random()
                value = np.nan if pick < 0.15 else np.inf if pick < 0.18 else value
                for _ in range(1 + (rng.random() < 0.1)):  # a repeated cell
                    rows.append({"source": s, "target": t, "measure": m, "value": value})
    long = pd.DataFrame(rows, columns=["source", "target", "measure", "value"])
    if rng.random() < 0.5 and len(long):
        long["direction"] = rng.choice([-1, 0, 1], size=len(long))
    return long


@pytest.mark.parametrize("seed", range(60))
def test_comparisons_equal_the_plain_loop(seed):
    rng = np.random.default_rng(seed)
    long = random_long(rng)
    if long.empty:
        pytest.skip("no rows drawn")
    wanted = list(rng.choice(MEASURES, size=rng.integers(1, 4), replace=False))
    if rng.random() < 0.2:
        wanted.append(wanted[0])  # a measure named twice
    got, expected = comparisons(long, wanted), reference(long, wanted)
    assert_frame_equal(got, expected)
    for m in dict.fromkeys(wanted):
        column = got[m]
        cells = column.iloc[:, 0] if isinstance(column, pd.DataFrame) else column
        assert {type(v) for v in cells} <= {bool, type(None)}
        assert (cells.dtype == bool) == (len(cells) > 0 and cells.notna().all())


def test_comparisons_on_table3_equal_the_plain_loop():
    long = to_long(pd.read_csv(SAMPLE_DATA / "results" / "dai2019_table3.csv"))
    for wanted in (["ppl", "wvv", "tvc"], ["tvcc", "ppl"], ["made_up", "tvc"]):
        assert_frame_equal(comparisons(long, wanted), reference(long, wanted))


def test_comparisons_by_hand():
    long = pd.DataFrame({"source": ["a", "b", "c", "a", "b"], "target": ["t"] * 5,
                         "measure": ["ppl", "ppl", "ppl", "tvc", "tvc"],
                         "value": [10.0, 20.0, np.nan, 0.5, 0.4]})
    got = comparisons(long, ["ppl", "tvc"])
    # c has no value at all: only the pair (a, b); lower PPL and higher TVC are more similar
    assert got.to_dict("records") == [
        {"target": "t", "first": "a", "second": "b", "ppl": True, "tvc": True}]
    assert list(got.dtypes.astype(str)) == ["str", "str", "str", "bool", "bool"]


@pytest.mark.parametrize("seed", range(20))
def test_disagreements_are_the_items_whose_answers_differ(seed):
    from simcore.analysis.agreement import agreement

    rng = np.random.default_rng(seed)
    rows = [{"source": s, "target": t, "measure": m, "value": float(rng.integers(0, 3))}
            for t in ("t1", "t2") for s in ("a", "b", "c", "d") for m in ("ppl", "tvc", "jsd")]
    result = agreement(pd.DataFrame(rows), ["ppl", "tvc", "jsd"])
    answers = result.items[result.measures]
    expected = result.items[answers.nunique(axis=1) > 1].reset_index(drop=True)
    assert_frame_equal(result.disagreements, expected)
    # answers held as objects (a table built elsewhere) are read the same way
    result.items = result.items.astype({m: object for m in result.measures})
    assert_frame_equal(result.disagreements, expected.astype({m: object for m in result.measures}))


def first_choices_reference(long: pd.DataFrame, measures: list[str]) -> pd.DataFrame:
    """dashboard.agreement_view.first_choices as it was: a loop over (target, measure) groups."""
    part = long[long["measure"].isin(measures)].dropna(subset=["value"])
    rows = []
    for (target, measure), group in part.groupby(["target", "measure"], sort=True):
        direction = int(group["direction"].iloc[0])
        best = group["value"].max() if direction > 0 else group["value"].min()
        for source in sorted(group.loc[group["value"] == best, "source"]):
            rows.append({"target": target, "measure": measure, "source": source})
    return pd.DataFrame(rows, columns=["target", "measure", "source"])


@pytest.mark.parametrize("seed", range(40))
def test_first_choices_equal_the_loop_over_groups(seed):
    from dashboard.agreement_view import first_choices

    rng = np.random.default_rng(seed)
    long = checked_long(random_long(rng)) if seed else checked_long(random_long(rng)).iloc[:0]
    wanted = list(rng.choice(MEASURES, size=rng.integers(1, 4), replace=False))
    assert_frame_equal(first_choices(long, wanted), first_choices_reference(long, wanted))


def compare_reference(values: np.ndarray, direction: int) -> np.ndarray:
    """simcore.answer.pairwise.compare as it was: nested wheres."""
    a, b = values[..., :, None], values[..., None, :]
    fa, fb = np.isfinite(a), np.isfinite(b)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = direction * (a - b)
    out = np.where(diff > 0, 1.0, np.where(diff < 0, 0.0, 0.5))
    return np.where(fa & ~fb, 1.0, np.where(~fa & fb, 0.0, np.where(~fa & ~fb, 0.5, out)))


def test_pairwise_outcomes_equal_the_nested_wheres():
    """The outcomes of every pair (the recommendation's replicates x pairs) against the version they
    replaced: ties, missing and infinite values, a difference that overflows, every direction."""
    from simcore.answer.pairwise import compare

    rng = np.random.default_rng(0)
    cases = [np.array([1e308, -1e308, 0.0]), np.array([np.nan, np.inf, -np.inf, 1.0])]
    for k in range(400):
        shape = tuple(rng.integers(1, 5, size=rng.integers(1, 4)))
        values = rng.integers(-2, 3, size=shape).astype(float)
        if k % 2:
            odd = rng.choice([np.nan, np.inf, -np.inf, 1e308, -1e308])
            values[rng.random(values.shape) < 0.3] = odd
        cases.append(values)
    for values in cases:
        for direction in (-1, 0, 1):
            got, expected = compare(values, direction), compare_reference(values, direction)
            assert got.dtype == expected.dtype and np.array_equal(got, expected)
