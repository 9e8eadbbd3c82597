"""Sources ranked per target by each measure and by consensus (mean rank across measures)."""

from __future__ import annotations

import pandas as pd

from .tables import measures_in


def rank_sources(long: pd.DataFrame, measures: list[str] | None = None) -> pd.DataFrame:
    """Rows target, measure, rank, source, value; rank 1 is the most similar source.

    Each measure ranks in its own direction; missing values rank last. The ``consensus`` rows
    rank by the mean of the measures' ranks (its ``value``).
    """
    names = measures_in(long, measures)
    parts = []
    for name in names:
        part = long[long["measure"] == name][["target", "source", "measure", "value", "direction"]].copy()
        key = part["value"] * part["direction"]
        part["rank"] = key.groupby(part["target"]).rank(ascending=False, method="min", na_option="bottom")
        parts.append(part)
    ranked = pd.concat(parts, ignore_index=True)
    consensus = ranked.groupby(["target", "source"], as_index=False)["rank"].mean().rename(columns={"rank": "value"})
    consensus["measure"] = "consensus"
    consensus["direction"] = -1
    consensus["rank"] = consensus.groupby("target")["value"].rank(method="min")
    out = pd.concat([ranked, consensus], ignore_index=True)
    out["rank"] = out["rank"].astype(int)
    order = {m: i for i, m in enumerate([*names, "consensus"])}
    out["_m"] = out["measure"].map(order)
    out = out.sort_values(["target", "_m", "rank", "source"]).drop(columns=["_m", "direction"])
    return out[["target", "measure", "rank", "source", "value"]].reset_index(drop=True)


def consensus_choice(ranking: pd.DataFrame) -> pd.DataFrame:
    """The top-ranked source per target and measure (ties listed together)."""
    top = ranking[ranking["rank"] == 1]
    return (top.groupby(["target", "measure"], sort=False)["source"].agg(", ".join)
            .unstack("measure").reset_index())
