"""Sources ranked per target by each measure, and by the recommendation (see simcore.answer.recommendation)."""

from __future__ import annotations

import pandas as pd

from ..answer.recommendation import PRETRAINING, Recommendation, recommend
from ..utils.errors import InvalidArgument, TableError
from .tables import as_frame, checked_long, measures_in

RECOMMENDED = "recommended"


def rank_sources(long: pd.DataFrame, measures: list[str] | None = None, pretraining: str | None = "lm",
                 recommendations: list[Recommendation] | None = None) -> pd.DataFrame:
    """Rows target, measure, rank, source, value; rank 1 is the most similar source.

    Each measure ranks in its own direction; missing values and ties share the best rank of their
    group ("1, 1, 3"). With ``pretraining``, ``recommended`` rows rank the sources by the share of
    bootstrap replicates each wins (its ``value``); the recommended source, or the tied ones, rank 1.
    ``recommendations`` already computed by simcore.answer.recommendation.recommend are used as they are
    (the command line computes them once for the ranking and its export).
    """
    if pretraining is not None and (not isinstance(pretraining, str) or pretraining not in PRETRAINING):
        raise InvalidArgument(f"pretraining must be one of {', '.join(PRETRAINING)} or None, not {pretraining!r}"[:200])
    recommendations = _checked_recommendations(recommendations)
    long = checked_long(long)
    names = measures_in(long, measures)
    parts = []
    for name in names:
        part = long[long["measure"] == name][["target", "source", "measure", "value", "direction"]].copy()
        key = part["value"] * part["direction"]
        part["rank"] = key.groupby(part["target"]).rank(ascending=False, method="min", na_option="bottom")
        parts.append(part)
    if pretraining and set(PRETRAINING[pretraining]) & set(long["measure"]):
        parts.append(_recommended(long, pretraining, recommendations))
    out = pd.concat(parts, ignore_index=True)
    out["rank"] = out["rank"].astype(int)
    order = {m: i for i, m in enumerate([*names, RECOMMENDED])}
    out["_m"] = out["measure"].map(order)
    out = out.sort_values(["target", "_m", "rank", "source"]).drop(columns=["_m", "direction"])
    return out[["target", "measure", "rank", "source", "value"]].reset_index(drop=True)


def recommended_ranking(long: pd.DataFrame, pretraining: str,
                        recommendations: list[Recommendation] | None = None) -> pd.DataFrame:
    """The ``recommended`` rows of :func:`rank_sources` (``pretraining`` applying to the matrix), in
    its order, without ranking every measure first: the audit asks only for these, once per kind.
    ``recommendations`` already made by ``recommend(long, pretraining)`` are used as they are."""
    if not isinstance(pretraining, str) or pretraining not in PRETRAINING:
        raise InvalidArgument(f"pretraining must be one of {', '.join(PRETRAINING)}, not {pretraining!r}"[:200])
    long = checked_long(long)
    out = _recommended(long, pretraining, _checked_recommendations(recommendations))
    # as rank_sources's concatenation with the measures' rows types the columns (their rows: none)
    out = pd.concat([long.iloc[:0][["target", "source", "measure", "value", "direction"]], out],
                    ignore_index=True)
    out["rank"] = out["rank"].astype(int)
    out = out.sort_values(["target", "rank", "source"])
    return out[["target", "measure", "rank", "source", "value"]].reset_index(drop=True)


def _checked_recommendations(recommendations: object) -> list[Recommendation] | None:
    if recommendations is not None and (not isinstance(recommendations, (list, tuple))
                                        or not all(isinstance(r, Recommendation) for r in recommendations)):
        raise InvalidArgument("recommendations must be a list of Recommendation (from recommend), or None")
    return None if recommendations is None else list(recommendations)


def _recommended(long: pd.DataFrame, pretraining: str, recommendations: list[Recommendation] | None) -> pd.DataFrame:
    rows = []
    sources = long.groupby("target", sort=False)["source"].unique()
    for rec in recommend(long, pretraining) if recommendations is None else recommendations:
        shares = rec.shares or {s: float("nan") for s in sources.get(rec.target, [])}
        others = sorted((s for s in shares if s not in rec.recommended), key=lambda s: -shares[s])
        rank = 1
        for source in rec.recommended:
            rows.append({"target": rec.target, "source": source, "value": shares.get(source), "rank": 1})
        previous, position = None, len(rec.recommended) + 1
        for i, source in enumerate(others):
            if shares[source] != previous:
                rank, previous = position + i, shares[source]
            rows.append({"target": rec.target, "source": source, "value": shares[source], "rank": rank})
    frame = pd.DataFrame(rows, columns=["target", "source", "value", "rank"])
    return frame.assign(measure=RECOMMENDED, direction=1)


def first_choices(ranking: pd.DataFrame) -> pd.DataFrame:
    """The top-ranked source per target and measure (ties listed together)."""
    ranking = as_frame(ranking, "the ranking")
    missing = {"target", "measure", "rank", "source"} - set(ranking.columns)
    if missing:
        raise TableError(f"the ranking lacks column(s) {', '.join(sorted(missing))}; make it with rank_sources")
    top = ranking[pd.to_numeric(ranking["rank"], errors="coerce") == 1].astype({"source": str})
    return (top.groupby(["target", "measure"], sort=False)["source"].agg(", ".join)
            .unstack("measure").reset_index())
