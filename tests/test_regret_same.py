"""simcore.analysis.regret: the rows read as arrays are those of the row-by-row definition."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from simcore.analysis.correlation import join, usable_results
from simcore.analysis.ranking import rank_sources
from simcore.analysis.regret import regret


def spread(a: float, b: float) -> float:
    a = a if isinstance(a, (int, float)) and math.isfinite(a) else 0.0
    b = b if isinstance(b, (int, float)) and math.isfinite(b) else 0.0
    return math.hypot(a, b)


def reference(long: pd.DataFrame, results: pd.DataFrame, measures=None) -> pd.DataFrame:
    """The regret table as first written: pandas lookups per group."""
    results, left_out = usable_results(results, False)
    joined = join(rank_sources(long, measures).assign(direction=0), results)
    has_spread = "f1_std" in joined.columns
    joined = joined[["target", "measure", "rank", "source", "f1", *(["f1_std"] if has_spread else [])]]
    joined = joined[np.isfinite(joined["f1"].astype(float))]
    rows = []
    for (target, measure), group in joined.groupby(["target", "measure"], sort=True):
        best = group.loc[group["f1"].idxmax()]
        stds = group["f1_std"].astype(float) if has_spread else pd.Series(np.nan, index=group.index)
        margins = [spread(float(stds[best.name]), float(s)) for s in stds]
        within = (best["f1"] - group["f1"]).to_numpy(float) < np.array(margins)
        tied = sorted(set(group["source"][within]) | {best["source"]})
        chosen = group[group["rank"] == group["rank"].min()]
        worst = chosen.loc[chosen["f1"].idxmin()]
        note = ""
        if worst["source"] in tied and worst["source"] != best["source"]:
            margin = spread(float(stds[best.name]), float(stds[worst.name]))
            note = (f"{worst['source']} (F1 {worst['f1']:.2f}) is within the spread over seeds of "
                    f"{best['source']} ({best['f1']:.2f}; ±{margin:.2f}): a tie, regret 0")
        elif len(tied) > 1:
            note = f"tied for best within the spread over seeds: {', '.join(tied)}"
        rows.append({"target": target, "measure": measure, "chosen": worst["source"], "chosen_f1": worst["f1"],
                     "best": best["source"], "best_f1": best["f1"],
                     "regret": 0.0 if worst["source"] in tied else best["f1"] - worst["f1"],
                     "tied_best": ", ".join(tied), "note": note})
    table = pd.DataFrame(rows)
    means = table.groupby("measure", as_index=False)["regret"].mean().assign(target="mean", tied_best="", note="")
    return pd.concat([table, means], ignore_index=True)


def random_case(seed: int, with_std: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sources with values from few levels (ties in rank), F1 from few levels (ties for best and
    worst), spreads with gaps (a missing spread counts 0) and a pair without F1."""
    rng = np.random.default_rng(seed)
    sources, targets = [f"s{i}" for i in range(6)], [f"t{i}" for i in range(5)]
    long = pd.DataFrame([{"source": s, "target": t, "measure": m, "value": float(rng.integers(0, 3))}
                         for m in ("tvc", "ppl", "jsd") for s in sources for t in targets])
    results = pd.DataFrame([{"target": t, "source": s, "f1": 70 + float(rng.integers(0, 4)),
                             "improvement": float(rng.integers(0, 4))} for s in sources for t in targets])
    results.loc[3, "f1"] = np.nan
    if with_std:
        results["f1_std"] = np.where(rng.random(len(results)) < 0.3, np.nan, rng.random(len(results)) * 1.5)
    return long, results


def test_the_random_cases_hold_ties_within_the_spread():
    notes = [note for seed in range(6) for note in regret(*random_case(seed, True))["note"]]
    assert any("a tie, regret 0" in n for n in notes) and any("tied for best" in n for n in notes)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("with_std", [False, True])
def test_regret_is_the_row_by_row_definition(seed, with_std):
    long, results = random_case(seed, with_std)
    got = regret(long, results)
    pd.testing.assert_frame_equal(got, reference(long, results))
