"""dashboard.page_tables.rank_table (one pass over a target's rows) against the pandas version it
replaced, kept here as the reference: the same table, cell for cell, on random rankings."""

import math

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from dashboard.charts import label
from dashboard.page_tables import rank_table
from simcore.analysis.ranking import rank_sources
from simcore.answer import flags
from simcore.reporting.report import MARK


def reference(ranking: pd.DataFrame, target: str, long: pd.DataFrame | None = None,
              carrying: tuple[str, ...] = ()) -> pd.DataFrame:
    """rank_table as it was: a groupby per target, value_counts per measure, a sort at the end."""
    part = ranking[ranking["target"] == target]
    marked: set[tuple[str, str]] = set()
    if long is not None:
        cells = long[(long["target"] == target) & flags.marked(long).to_numpy()]
        marked = set(zip(cells["measure"], cells["source"]))
        marked |= {("recommended", s) for m, s in list(marked) if m in carrying}
    sources = sorted(part["source"].astype(str).unique())
    columns: dict[str, list[str]] = {}
    order: dict[str, float] = {}
    for measure, group in part.groupby("measure", sort=False):
        ranks = {str(s): r for s, r in zip(group["source"], group["rank"]) if pd.notna(r)}
        values = pd.to_numeric(group["value"], errors="coerce")
        if measure != "recommended" and not values.notna().any():
            ranks = {}
        counts = pd.Series(list(ranks.values()), dtype=float).value_counts()
        columns[label(measure)] = [
            "–" if s not in ranks else "=" * bool(counts[ranks[s]] > 1) + str(int(ranks[s]))
            + f" {MARK}" * ((measure, s) in marked) for s in sources]
        if ranks and (not order or measure == "recommended"):
            order = {s: float(ranks.get(s, math.inf)) for s in sources}
    frame = pd.DataFrame({"source": sources, **columns})
    frame["_order"] = [order.get(s, math.inf) for s in sources]
    return frame.sort_values(["_order", "source"]).drop(columns="_order").reset_index(drop=True)


@pytest.mark.parametrize("seed", range(25))
def test_rank_table_equals_the_pandas_version(seed):
    rng = np.random.default_rng(seed)
    sources = [f"s{i}" for i in rng.permutation(int(rng.integers(1, 9)))] + ["B", "a"]
    rows = []
    for target in ("t1", "T2"):
        for source in sources:
            for measure in ("ppl", "tvc", "wvv", "jsd"):
                value = float(rng.integers(0, 3))  # ties
                if measure == "wvv" and seed % 3 == 0 or rng.random() < 0.1:
                    value = np.nan  # a measure without values for the target, a missing value
                rows.append({"source": source, "target": target, "measure": measure, "value": value,
                             "std": value * 0.1, "used_whole": bool(rng.random() < 0.2),
                             "reliable": bool(rng.random() > 0.1)})
    long = pd.DataFrame(rows)
    ranking = rank_sources(long, ["ppl", "tvc", "wvv", "jsd"], "lm")
    for target in ("t1", "T2", "absent"):
        for carrying in ((), ("ppl", "jsd")):
            assert_frame_equal(rank_table(ranking, target, long, carrying),
                               reference(ranking, target, long, carrying))
        assert_frame_equal(rank_table(ranking, target), reference(ranking, target))
