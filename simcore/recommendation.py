"""The answer: per target, the source to pretrain on, how sure that is, and why.

What the user will pretrain decides which measures carry the recommendation (Dai et al. 2019,
2020, and ../shared/DESIGN.md): for language models and BERT-style encoders, perplexity and
Jensen-Shannon divergence (how close the source is in field and register); for word vectors, the
target vocabulary covered (content words first) and word vector variance. The other measures are
reported beside it but cannot change it.

In every bootstrap replicate of the target (see :mod:`simcore.uncertainty`) each carrying measure
ranks the sources and the source with the best median rank wins the replicate (mean rank breaks ties
between equal medians; a remaining tie splits the win).
The confidence is the share of replicates a source wins. A source that wins at least
``WINNER_SHARE`` of them is the recommendation; otherwise the sources that together win
``TIE_MASS`` of them are named as a tie: an honest tie beats a false winner.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .errors import SimcoreError
from .measures import get_measure

PRETRAINING: dict[str, tuple[str, ...]] = {"lm": ("ppl", "jsd"), "vectors": ("tvcc", "tvc", "wvv")}
PRETRAINING_LABEL = {"lm": "language models and BERT-style encoders", "vectors": "word vectors"}
WINNER_SHARE = 0.8  # a source winning this share of replicates is recommended alone
HIGH_SHARE = 0.95  # ... with high confidence from here on
TIE_MASS = 0.95  # otherwise: the fewest sources that together win this share are named as a tie
SEPARATED = 0.95  # a measure separates two sources when one is better in this share of replicates
COLUMNS = ["target", "recommended", "confidence", "level", "measures", "pretraining", "reason"]


@dataclass
class Recommendation:
    """One target's answer."""

    target: str
    pretraining: str
    recommended: list[str]
    confidence: float  # share of replicates won by the recommended source (or the tied ones together)
    level: str  # "high", "moderate", "tie", "unknown" (no uncertainty in the table) or "none"
    measures: list[str]
    reason: str
    shares: dict[str, float] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)

    def as_row(self) -> dict[str, Any]:
        return {"target": self.target, "recommended": "|".join(self.recommended), "confidence": self.confidence,
                "level": self.level, "measures": ",".join(self.measures), "pretraining": self.pretraining,
                "reason": self.reason}

    def as_dict(self) -> dict[str, Any]:
        return {**self.as_row(), "recommended": self.recommended, "measures": self.measures,
                "shares": self.shares, "flags": self.flags}

    def headline(self) -> str:
        """One line: target, answer, confidence."""
        if not self.recommended:
            return f"{self.target}: no recommendation ({self.reason})"
        sure = "" if math.isnan(self.confidence) else f", {self.level} confidence {self.confidence:.0%}"
        if self.level == "tie":
            return (f"{self.target}: too close to call between {_join(self.recommended)} "
                    f"(together first in {self.confidence:.0%} of the bootstrap replicates)")
        return f"{self.target}: pretrain on {self.recommended[0]}{sure}"


def recommend(long: pd.DataFrame, pretraining: str = "lm") -> list[Recommendation]:
    """The recommendation for every target of a long similarity table (``simcore matrix`` output)."""
    if pretraining not in PRETRAINING:
        raise SimcoreError(f"unknown pretraining {pretraining!r}; choose from {', '.join(PRETRAINING)}")
    if not isinstance(long, pd.DataFrame) or not {"source", "target", "measure", "value"} <= set(long.columns):
        raise SimcoreError("the recommendation needs a similarity table with source, target, measure and value")
    return [_recommend_target(str(t), part, pretraining) for t, part in long.groupby("target", sort=True)]


def recommendation_table(recommendations: list[Recommendation]) -> pd.DataFrame:
    """One row per target: target, recommended (tied sources joined by '|'), confidence, level, measures, reason."""
    return pd.DataFrame([r.as_row() for r in recommendations], columns=COLUMNS)


@dataclass
class _Measure:
    name: str
    points: np.ndarray  # (sources,)
    replicates: np.ndarray | None  # (replicates, sources) or None without uncertainty
    low: np.ndarray
    high: np.ndarray


def _cells(part: pd.DataFrame, name: str, sources: list[str]) -> _Measure | str:
    """One measure's values over the sources, or why it cannot carry the recommendation."""
    from .matrix import decode_replicates

    rows = part[part["measure"] == name].drop_duplicates("source").set_index("source").reindex(sources)
    label = get_measure(name).label
    values = pd.to_numeric(rows["value"], errors="coerce").to_numpy(float)
    if not np.isfinite(values).any():
        errors = rows["error"].dropna() if "error" in rows else pd.Series(dtype=object)
        return f"{label} has no values" + (f" ({errors.iloc[0]})" if len(errors) else "")
    if get_measure(name).noise_when_small and "reliable" in rows and rows["reliable"].map(_false).any():
        used = int(pd.to_numeric(rows["sample_tokens"], errors="coerce").min()) if "sample_tokens" in rows else 0
        return (f"{label} left out: unreliable below {get_measure(name).reliable_tokens:,} tokens per source "
                f"({used:,} used)")
    samples = [decode_replicates(r) for r in rows["replicates"]] if "replicates" in rows else [None] * len(sources)
    if not any(s is not None for s in samples) and "std" in rows:
        samples = _from_std(values, pd.to_numeric(rows["std"], errors="coerce").to_numpy(float), part, name)
    present = [s for s in samples if s is not None]
    replicates = None
    if present:
        n = min(len(s) for s in present)
        replicates = np.column_stack([s[:n] if s is not None else np.full(n, v) for s, v in zip(samples, values)])
    low = pd.to_numeric(rows.get("ci_low"), errors="coerce").to_numpy(float) if "ci_low" in rows else values * np.nan
    high = pd.to_numeric(rows.get("ci_high"), errors="coerce").to_numpy(float) if "ci_high" in rows else values * np.nan
    return _Measure(name, values, replicates, low, high)


def _false(value: Any) -> bool:
    return str(value).strip().lower() == "false"


def _true(value: Any) -> bool:
    return str(value).strip().lower() == "true"


def _from_std(values: np.ndarray, std: np.ndarray, part: pd.DataFrame, name: str) -> list[np.ndarray | None]:
    """Normal replicates from the spread over source samples, for tables without bootstrap replicates."""
    rng = np.random.default_rng(13)
    return [rng.normal(v, s, 200) if math.isfinite(s) and s > 0 else None for v, s in zip(values, std)]


def _ranks(values: np.ndarray, direction: int) -> np.ndarray:
    """Ranks along the last axis (1 = most similar; ties share the mean rank; missing values last)."""
    from scipy.stats import rankdata

    key = np.where(np.isfinite(values), -direction * values, np.inf)
    return rankdata(key, axis=-1, method="average")


def _combined(ranks: np.ndarray) -> np.ndarray:
    """Measures (first axis) combined: the median rank, so that with three measures one outlier cannot
    move a source that the other two agree on; the mean rank breaks ties between equal medians."""
    return np.median(ranks, axis=0) + 1e-3 * ranks.mean(axis=0)


def _wins(combined: np.ndarray) -> np.ndarray:
    """Per replicate (rows), each source's share of the win: 1 for a sole best, split among tied ones."""
    best = combined == combined.min(axis=-1, keepdims=True)
    return best / best.sum(axis=-1, keepdims=True)


def _recommend_target(target: str, part: pd.DataFrame, pretraining: str) -> Recommendation:
    sources = sorted(part["source"].astype(str).unique())
    measures, left_out = [], []
    for name in PRETRAINING[pretraining]:
        if not (part["measure"] == name).any():
            continue
        cells = _cells(part, name, sources)
        (measures if isinstance(cells, _Measure) else left_out).append(cells)
    flags = list(left_out) + _size_flags(part, sources, [m.name for m in measures])
    flags += _unsettled(part, [m.name for m in measures])
    if not measures:
        wanted = ", ".join(get_measure(m).label for m in PRETRAINING[pretraining])
        reason = "; ".join(left_out) or f"the table has none of the measures for {PRETRAINING_LABEL[pretraining]} ({wanted})"
        return Recommendation(target, pretraining, [], math.nan, "none", [], reason, {}, flags)
    directions = [get_measure(m.name).direction for m in measures]
    point_ranks = np.stack([_ranks(m.points, d) for m, d in zip(measures, directions)])
    if all(m.replicates is None for m in measures):
        shares = _wins(_combined(point_ranks)[None, :])[0]
        chosen = [s for s, w in zip(sources, shares) if w > 0]
        level, confidence = "unknown", math.nan
    else:
        n = min(m.replicates.shape[0] for m in measures if m.replicates is not None)
        replicate_ranks = np.stack([
            _ranks(m.replicates[:n] if m.replicates is not None else np.tile(m.points, (n, 1)), d)
            for m, d in zip(measures, directions)])
        shares = _wins(_combined(replicate_ranks)).mean(axis=0)
        order = np.argsort(-shares, kind="stable")
        if shares[order[0]] >= WINNER_SHARE:
            chosen, confidence = [sources[order[0]]], float(shares[order[0]])
            level = "high" if confidence >= HIGH_SHARE else "moderate"
        else:
            cumulative = np.cumsum(shares[order])
            count = int(np.searchsorted(cumulative, TIE_MASS - 1e-9)) + 1
            chosen = [sources[i] for i in order[:count]]
            confidence, level = float(cumulative[count - 1]), "tie"
    share_map = {s: float(w) for s, w in zip(sources, shares)}
    reason = _reason(part, sources, measures, directions, chosen, level, share_map, pretraining, flags)
    return Recommendation(target, pretraining, chosen, confidence, level, [m.name for m in measures], reason,
                          share_map, flags)


def _separation(m: _Measure, direction: int, first: int, second: int) -> float:
    """Share of replicates in which ``first`` is more similar than ``second`` under one measure."""
    if m.replicates is None:
        return math.nan
    a, b = m.replicates[:, first], m.replicates[:, second]
    return float(np.mean(direction * (a - b) > 0))


def _fmt(value: float) -> str:
    return f"{value:.4g}" if math.isfinite(value) else "n/a"


def _reason(part: pd.DataFrame, sources: list[str], measures: list[_Measure], directions: list[int],
            chosen: list[str], level: str, shares: dict[str, float], pretraining: str, flags: list[str]) -> str:
    labels = [get_measure(m.name).label for m in measures]
    firsts = []
    for m, d in zip(measures, directions):
        ranks = _ranks(m.points, d)
        firsts.append(int(np.argmin(ranks)))
    sentences = []
    agree = len(set(firsts)) == 1
    if agree:
        best = firsts[0]
        order = [np.argsort(_ranks(m.points, d), kind="stable") for m, d in zip(measures, directions)]
        runner = [int(o[1]) if len(o) > 1 else None for o in order]
        separated = [(_separation(m, d, best, r) if r is not None else math.nan)
                     for m, d, r in zip(measures, directions, runner)]
        both = "both " if len(measures) == 2 else ("all " if len(measures) > 2 else "")
        text = f"{_join(labels)} {both}rank{'s' if len(measures) == 1 else ''} {sources[best]} first"
        if all(math.isfinite(x) for x in separated) and len(sources) > 1:
            if all(x >= SEPARATED for x in separated):
                text += ", ahead of the next source by more than " + ("its" if len(measures) == 1 else "their") + " noise"
            else:
                close = [f"{lab} from {sources[r]}" for lab, x, r in zip(labels, separated, runner) if x < SEPARATED]
                text += f", but within noise for {_join(close)}"
        values = [f"{lab} {_fmt(m.points[best])}" for lab, m in zip(labels, measures)]
        sentences.append(text + f" ({', '.join(values)})")
    else:
        parts = [f"{lab} ranks {sources[f]} first" for lab, f in zip(labels, firsts)]
        sentences.append("the measures that carry it disagree: " + "; ".join(parts))
    if level in ("high", "moderate"):
        sentences.append(f"it stays first in {shares[chosen[0]]:.0%} of the bootstrap replicates of the target")
    elif level == "tie":
        sentences.append(("within noise of each other" if agree else "they split the bootstrap replicates")
                         + ": first in " + ", ".join(
            f"{shares[s]:.0%} ({s})" for s in chosen) + " of the bootstrap replicates")
    elif level == "unknown":
        sentences.append("the table has no uncertainty (no bootstrap replicates or sample spread), so how sure "
                         "this is cannot be said")
    others = []
    for name in dict.fromkeys(part["measure"]):
        if name in PRETRAINING[pretraining] or get_measure(name).direction == 0:
            continue
        values = (part[part["measure"] == name].drop_duplicates("source").set_index("source")
                  .reindex(sources)["value"])
        values = pd.to_numeric(values, errors="coerce").to_numpy(float)
        if not np.isfinite(values).any():
            continue
        top = sources[int(np.argmin(_ranks(values, get_measure(name).direction)))]
        if top not in chosen:
            others.append(f"{get_measure(name).label} prefers {top}")
    if others:
        sentences.append(f"{_join(others)} (not used for {PRETRAINING_LABEL[pretraining]})")
    return "; ".join(sentences + flags)


def _size_flags(part: pd.DataFrame, sources: list[str], measures: list[str]) -> list[str]:
    """Sources used whole for the carrying measures (smaller than the comparison size)."""
    if "used_whole" not in part or "source_tokens" not in part or not measures:
        return []
    rows = part[part["measure"].isin(measures) & part["used_whole"].map(_true)]
    if rows.empty:
        return []
    tokens = rows.groupby("source")["source_tokens"].max().astype(int)
    names = _join([get_measure(m).label for m in dict.fromkeys(rows["measure"])])
    if len(tokens) == len(sources):
        return [f"every source is smaller than the comparison size and was used whole ({tokens.min():,} to "
                f"{tokens.max():,} tokens), which biases {names} against the smaller ones"]
    listed = _join([f"{s} ({n:,} tokens)" for s, n in tokens.items()])
    return [f"{listed} {'is' if len(tokens) == 1 else 'are'} smaller than the comparison size and "
            f"{'was' if len(tokens) == 1 else 'were'} used whole, which biases {names} against "
            f"{'it' if len(tokens) == 1 else 'them'}"]


def _unsettled(part: pd.DataFrame, measures: list[str]) -> list[str]:
    """Carrying measures computed below the size at which their rankings settled on real corpora."""
    if "reliable" not in part or "sample_tokens" not in part:
        return []
    below = [n for n in measures if ((part["measure"] == n) & part["reliable"].map(_false)).any()]
    if not below:
        return []
    used = int(pd.to_numeric(part[part["measure"].isin(below)]["sample_tokens"], errors="coerce").min())
    settle = max(get_measure(n).reliable_tokens for n in below)
    return [f"{_join([get_measure(n).label for n in below])} {'was' if len(below) == 1 else 'were'} computed on "
            f"{used:,} tokens per source, below the {settle:,} at which rankings settled on real corpora"]


def _join(items: list[str]) -> str:
    return items[0] if len(items) <= 1 else ", ".join(items[:-1]) + " and " + items[-1] if items else ""
