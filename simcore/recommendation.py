"""The answer: per target, the source to pretrain on, how sure that is, and why.

What the user will pretrain decides which measures carry the recommendation (Dai et al. 2019,
2020, and ../shared/DESIGN.md): for language models and BERT-style encoders, perplexity and
Jensen-Shannon divergence (how close the source is in field and register); for word vectors, the
target vocabulary covered (content words first) and word vector variance. The other measures are
reported beside it but cannot change it.

Sources are compared in pairs, each pair at the largest sample size both sources have (the table's
size, or a larger rung of the ladder, :mod:`simcore.ladder`), so that no decision compares values
taken at different sizes. In every bootstrap replicate of the target (see
:mod:`simcore.uncertainty`; with k source samples, replicate r comes from sample r mod k) a pair is
won by the source that the majority of the carrying measures prefer (a split is half a win each),
and the source that wins the most pairs (a Copeland count) wins the replicate.

The confidence is the share of votes the recommended source gets: over every carrying measure and
every replicate, how often that measure, on its own, puts the source first. 100% means every
carrying measure puts it first in every replicate; it falls when the measures disagree, when the
target's sentences or the source's samples move the ranking, and when a comparison is unfair
(sources at unequal sizes, which counts as no evidence). "high" needs at least ``HIGH_SHARE``, no
carrying measure separating another source above it by more than its noise, and no decision resting
on a flagged cell; measures that firmly disagree give "disagree" (each measure's first choice
named, with its share); a source that wins fewer than ``WINNER_SHARE`` of the replicates gives a tie.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .errors import SimcoreError
from .ladder import size_bias
from .measures import get_measure

PRETRAINING: dict[str, tuple[str, ...]] = {"lm": ("ppl", "jsd"), "vectors": ("tvcc", "tvc", "wvv")}
PRETRAINING_LABEL = {"lm": "language models and BERT-style encoders", "vectors": "word vectors"}
WINNER_SHARE = 0.8  # a source winning this share of replicates is recommended alone
HIGH_SHARE = 0.9  # ... with high confidence from this share of the votes on (and the conditions above)
TIE_MASS = 0.95  # otherwise: the fewest sources that together win this share are named as a tie
SEPARATED = 0.95  # a measure separates two sources when one is better in this share of replicates
COLUMNS = ["target", "recommended", "confidence", "level", "measures", "pretraining", "reason"]


@dataclass
class Recommendation:
    """One target's answer."""

    target: str
    pretraining: str
    recommended: list[str]
    confidence: float  # the recommended source's share of the votes (the first-named one in a tie or disagreement)
    level: str  # "high", "moderate", "tie", "disagree", "unknown" (no uncertainty in the table) or "none"
    measures: list[str]
    reason: str
    shares: dict[str, float] = field(default_factory=dict)  # every source's share of the votes
    flags: list[str] = field(default_factory=list)
    firsts: dict[str, str] = field(default_factory=dict)  # carrying measure -> the source it puts first

    def as_row(self) -> dict[str, Any]:
        return {"target": self.target, "recommended": "|".join(self.recommended), "confidence": self.confidence,
                "level": self.level, "measures": ",".join(self.measures), "pretraining": self.pretraining,
                "reason": self.reason}

    def as_dict(self) -> dict[str, Any]:
        return {**self.as_row(), "recommended": self.recommended, "measures": self.measures,
                "shares": self.shares, "flags": self.flags, "firsts": self.firsts}

    def confidence_text(self) -> str:
        """The confidence in words: 'high (97%)', or each tied source's share."""
        if math.isnan(self.confidence):
            return "–" if self.level in ("none", "unknown") else self.level
        if self.level in ("tie", "disagree"):
            return f"{self.level}: " + ", ".join(f"{s} {self.shares.get(s, math.nan):.0%}" for s in self.recommended)
        return f"{self.level} ({self.confidence:.0%})"

    def headline(self) -> str:
        """One line: target, answer, confidence."""
        if not self.recommended:
            return f"{self.target}: no recommendation ({self.reason})"
        shares = ", ".join(f"{s} {self.shares.get(s, math.nan):.0%}" for s in self.recommended)
        if self.level == "tie":
            return f"{self.target}: too close to call between {_join(self.recommended)} (share of the votes: {shares})"
        if self.level == "disagree":
            named = "; ".join(f"{get_measure(m).label} {s}" for m, s in self.firsts.items())
            return f"{self.target}: the measures disagree ({named}; share of the votes: {shares})"
        sure = "" if math.isnan(self.confidence) else f", {self.level} confidence ({self.confidence:.0%} of the votes)"
        return f"{self.target}: pretrain on {self.recommended[0]}{sure}"


def recommend(long: pd.DataFrame, pretraining: str = "lm") -> list[Recommendation]:
    """The recommendation for every target of a long similarity table (``simcore matrix`` output)."""
    if pretraining not in PRETRAINING:
        raise SimcoreError(f"unknown pretraining {pretraining!r}; choose from {', '.join(PRETRAINING)}")
    if not isinstance(long, pd.DataFrame) or not {"source", "target", "measure", "value"} <= set(long.columns):
        raise SimcoreError("the recommendation needs a similarity table with source, target, measure and value")
    parts = _Part.split(long)
    answers: list[Recommendation | None] = [None] * len(parts)
    shapes: dict[tuple[Any, ...], list[int]] = {}
    for i, (_, part) in enumerate(parts):
        shapes.setdefault((tuple(part.sources), tuple(part.measures)), []).append(i)
    for indices in shapes.values():
        if len(indices) >= BATCH_MIN:
            batch = _recommend_batch([parts[i] for i in indices], pretraining)
            for i, answer in zip(indices, batch or []):
                answers[i] = answer
    return [a if a is not None else _recommend_target(t, part, pretraining) for a, (t, part) in zip(answers, parts)]


def recommendation_table(recommendations: list[Recommendation]) -> pd.DataFrame:
    """One row per target: target, recommended (tied sources joined by '|'), confidence, level, measures, reason."""
    return pd.DataFrame([r.as_row() for r in recommendations], columns=COLUMNS)


_NUMERIC = ("value", "std", "sample_tokens", "source_tokens")


class _Part:
    """One target's rows of the long table as plain arrays (pandas per target is too slow for
    10,000 targets): numeric columns converted once, text columns as objects."""

    def __init__(self, columns: dict[str, np.ndarray]) -> None:
        self.columns = columns
        self.source = columns["source"]
        self.measure = columns["measure"]
        self.sources = sorted(set(self.source.tolist()))
        self.measures = list(dict.fromkeys(self.measure.tolist()))
        self._index: dict[str, dict[str, int]] | None = None

    @classmethod
    def split(cls, long: pd.DataFrame) -> list[tuple[str, _Part]]:
        columns = {c: long[c].to_numpy(dtype=object) for c in long.columns}
        for c in _NUMERIC:
            if c in long:
                columns[c] = pd.to_numeric(long[c], errors="coerce").to_numpy(float)
        columns["source"] = long["source"].astype(str).to_numpy(dtype=object)
        columns["measure"] = long["measure"].astype(str).to_numpy(dtype=object)
        targets = long["target"].astype(str).to_numpy(dtype=object)
        order = np.argsort(targets, kind="stable")
        names, starts = np.unique(targets[order], return_index=True)
        bounds = list(starts) + [len(order)]
        return [(str(name), cls({c: v[order[bounds[k]:bounds[k + 1]]] for c, v in columns.items()}))
                for k, name in enumerate(names)]

    def has(self, column: str) -> bool:
        return column in self.columns

    def rows(self, measure: str, sources: list[str]) -> np.ndarray:
        """Row index of each source's (first) row for ``measure``; -1 where it has none."""
        if self._index is None:
            self._index = {}
            for i, (m, s) in enumerate(zip(self.measure.tolist(), self.source.tolist())):
                self._index.setdefault(m, {}).setdefault(s, i)
        first = self._index.get(measure, {})
        return np.array([first.get(s, -1) for s in sources], dtype=np.int64)

    def take(self, column: str, rows: np.ndarray) -> np.ndarray:
        """A column at ``rows`` (NaN or None where a row is -1)."""
        values = self.columns[column]
        if values.dtype == float:
            return np.where(rows >= 0, values[np.maximum(rows, 0)], np.nan)
        return np.array([values[r] if r >= 0 else None for r in rows], dtype=object)


@dataclass
class _Measure:
    """One carrying measure's values for one target, at every size the sources were sampled at."""

    name: str
    direction: int
    points: np.ndarray  # (sources,) the table's values
    at: dict[int, tuple[np.ndarray, np.ndarray | None]]  # size -> (points (sources,), replicates (R, sources))
    main: list[int | None]  # each source's table size
    settled: np.ndarray  # (sources,) the table cell is at or above the size where rankings settled
    replicated: bool


def _cells(part: _Part, name: str, sources: list[str]) -> _Measure | str:
    """One measure's values over the sources, or why it cannot carry the recommendation."""
    from .matrix import decode_replicates

    spec = get_measure(name)
    rows = part.rows(name, sources)
    values = part.take("value", rows)
    reliable = part.take("reliable", rows) if part.has("reliable") else np.array([None] * len(sources))
    unreliable = np.array([_false(r) for r in reliable], dtype=bool)
    tokens = part.take("sample_tokens", rows) if part.has("sample_tokens") else np.full(len(sources), np.nan)
    if spec.noise_when_small and unreliable.any():
        used = int(np.nanmin(tokens)) if np.isfinite(tokens).any() else 0
        return (f"{spec.label} left out: unreliable below {spec.reliable_tokens:,} tokens per source "
                f"({used:,} used)")
    if not np.isfinite(values).any():
        errors = [e for e in part.take("error", rows) if isinstance(e, str) and e] if part.has("error") else []
        return f"{spec.label} has no values" + (f" ({errors[0]})" if errors else "")
    n = len(sources)
    main = [int(t) if math.isfinite(t) else None for t in tokens]
    samples = ([decode_replicates(r) for r in part.take("replicates", rows)] if part.has("replicates")
               else [None] * n)
    if not any(s is not None for s in samples) and part.has("std"):
        samples = _from_std(values, part.take("std", rows))
    ladders = part.take("ladder", rows) if part.has("ladder") else [None] * n
    entries: dict[int, list[tuple[float, np.ndarray | None]]] = {}
    for i in range(n):
        entries.setdefault(main[i] if main[i] is not None else -1, [(math.nan, None)] * n)[i] = (values[i], samples[i])
        for size, (value, reps) in _ladder(ladders[i]).items():
            entries.setdefault(size, [(math.nan, None)] * n)[i] = (value, reps)
    present = [r for col in entries.values() for _, r in col if r is not None]
    count = min(len(r) for r in present) if present else 0
    at = {}
    for size, col in entries.items():
        points = np.array([v for v, _ in col], dtype=float)
        reps = (np.column_stack([r[:count] if r is not None else np.full(count, v) for v, r in col])
                if count else None)
        at[size] = (points, reps)
    settled = np.array([t is None or t >= spec.reliable_tokens for t in main]) & ~unreliable
    return _Measure(name, spec.direction, values, at, main, settled, bool(count))


def _ladder(text: Any) -> dict[int, tuple[float, np.ndarray | None]]:
    """A row's ``ladder`` cell: size -> (value, replicates); {} when empty or unreadable."""
    from .matrix import decode_replicates

    if not isinstance(text, str) or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    out = {}
    if isinstance(data, dict):
        for size, cell in data.items():
            try:
                value = float(cell["value"])
                out[int(size)] = (value, decode_replicates(cell.get("replicates")))
            except (TypeError, ValueError, KeyError):
                continue
    return out


def _false(value: Any) -> bool:
    return str(value).strip().lower() == "false"


def _true(value: Any) -> bool:
    return str(value).strip().lower() == "true"


def _from_std(values: np.ndarray, std: np.ndarray) -> list[np.ndarray | None]:
    """Normal replicates from the spread over source samples, for tables without bootstrap replicates."""
    rng = np.random.default_rng(13)
    return [rng.normal(v, s, 200) if math.isfinite(s) and s > 0 else None for v, s in zip(values, std)]


def _ranks(values: np.ndarray, direction: int) -> np.ndarray:
    """Ranks along the last axis (1 = most similar; ties share the mean rank, as scipy's rankdata
    'average'; missing values last)."""
    key = np.where(np.isfinite(values), -direction * values, np.inf)
    a, b = key[..., :, None], key[..., None, :]
    return 1 + (b < a).sum(axis=-1) + 0.5 * ((b == a).sum(axis=-1) - 1)


@dataclass
class _Pairs:
    """Pairwise outcomes of one measure: outcome[r, i, j] = 1 when source i beats j in replicate r
    (0.5 for a tie or an unfair comparison), at ``size[i, j]`` tokens (-1: size not recorded in the
    table; ``_NO_COMMON``: the two were never sampled at one size)."""

    points: np.ndarray  # (sources, sources)
    replicates: np.ndarray | None  # (R, sources, sources)
    size: np.ndarray  # (sources, sources)


_NO_COMMON = -2


def _compare(values: np.ndarray, direction: int) -> np.ndarray:
    """outcome[..., i, j] for values (..., sources): 1 better, 0.5 equal (or both missing), 0 worse."""
    a, b = values[..., :, None], values[..., None, :]
    fa, fb = np.isfinite(a), np.isfinite(b)
    with np.errstate(invalid="ignore"):
        diff = direction * (a - b)
    out = np.where(diff > 0, 1.0, np.where(diff < 0, 0.0, 0.5))
    out = np.where(fa & ~fb, 1.0, np.where(~fa & fb, 0.0, np.where(~fa & ~fb, 0.5, out)))
    return out


def _pairs(m: _Measure) -> _Pairs:
    """Each pair of sources compared at the largest size both have."""
    n = len(m.points)
    sizes = sorted(m.at)
    present = np.stack([np.isfinite(m.at[z][0]) for z in sizes])  # (sizes, sources)
    common = present[:, :, None] & present[:, None, :]
    level = np.where(common.any(axis=0), (common * np.arange(1, len(sizes) + 1)[:, None, None]).max(axis=0) - 1, -1)
    size = np.where(level >= 0, np.array(sizes, dtype=np.int64)[np.maximum(level, 0)], _NO_COMMON)
    np.fill_diagonal(size, _NO_COMMON)
    points = np.full((n, n), 0.5)
    reps = None
    count = next((r.shape[0] for _, r in m.at.values() if r is not None), 0) if m.replicated else 0
    if count:
        reps = np.full((count, n, n), 0.5)
    for z, (p, r) in m.at.items():
        mask = size == z
        if not mask.any():
            continue
        points = np.where(mask, _compare(p, m.direction), points)
        if reps is not None and r is not None:
            reps = np.where(mask, _compare(r, m.direction), reps)
    np.fill_diagonal(points, 0.0)
    if reps is not None:
        reps[:, np.arange(n), np.arange(n)] = 0.0
    return _Pairs(points, reps, size)


def _first(outcome: np.ndarray) -> np.ndarray:
    """Each source's share of the first place (Copeland count; a tie splits it), along the last axis."""
    score = outcome.sum(axis=-1)
    best = np.isclose(score, score.max(axis=-1, keepdims=True))
    return best / best.sum(axis=-1, keepdims=True)


def _combined(outcomes: np.ndarray) -> np.ndarray:
    """Measures (first axis) combined per pair by majority, with the mean of the outcomes breaking
    ties between equal Copeland counts: with three measures one outlier cannot move a pair."""
    mean = outcomes.mean(axis=0)
    majority = np.where(mean > 0.5 + 1e-9, 1.0, np.where(mean < 0.5 - 1e-9, 0.0, 0.5))
    n = mean.shape[-1]
    majority[..., np.arange(n), np.arange(n)] = 0.0
    return majority + 1e-3 * mean


def _recommend_target(target: str, part: _Part, pretraining: str) -> Recommendation:
    sources = part.sources
    measures, left_out = [], []
    for name in PRETRAINING[pretraining]:
        if name not in part.measures:
            continue
        cells = _cells(part, name, sources)
        (measures if isinstance(cells, _Measure) else left_out).append(cells)
    flags = list(left_out) + _size_flags(part, sources, [m.name for m in measures])
    flags += _unsettled(part, [m.name for m in measures])
    if not measures:
        wanted = ", ".join(get_measure(m).label for m in PRETRAINING[pretraining])
        reason = "; ".join(left_out) or f"the table has none of the measures for {PRETRAINING_LABEL[pretraining]} ({wanted})"
        return Recommendation(target, pretraining, [], math.nan, "none", [], reason, {}, flags)
    pairs = [_pairs(m) for m in measures]
    point_first = [_first(p.points) for p in pairs]
    firsts = {m.name: sources[int(np.argmax(f))] for m, f in zip(measures, point_first)}
    unequal = [m for m, p in zip(measures, pairs) if (p.size[~np.eye(len(sources), dtype=bool)] == _NO_COMMON).any()]
    if any(p.replicates is None for p in pairs):
        shares = _first(_combined(np.stack([p.points for p in pairs])))
        order = np.argsort(-shares, kind="stable")
        chosen = [sources[i] for i in order if shares[i] > 0]
        share_map = {s: float(w) for s, w in zip(sources, shares)}
        reason = _reason(part, sources, measures, pairs, chosen, "unknown", share_map, firsts, pretraining, flags)
        return Recommendation(target, pretraining, chosen, math.nan, "unknown", [m.name for m in measures], reason,
                              share_map, flags, firsts)
    count = min(p.replicates.shape[0] for p in pairs)
    outcomes = np.stack([p.replicates[:count] for p in pairs])  # (measures, R, n, n)
    combined = _first(_combined(outcomes)).mean(axis=0)  # share of replicates each source wins
    per_measure = _first(outcomes).mean(axis=1)  # (measures, n): how often each measure puts a source first
    beaten = (outcomes == 1.0).mean(axis=1)  # (measures, n, n): share of replicates i beats j
    return _decide(target, part, pretraining, sources, measures, pairs, flags, firsts, unequal, combined,
                   per_measure.mean(axis=0), beaten)


def _decide(target: str, part: _Part, pretraining: str, sources: list[str], measures: list[_Measure],
            pairs: list[_Pairs], flags: list[str], firsts: dict[str, str], unequal: list[_Measure],
            combined: np.ndarray, votes: np.ndarray, beaten: np.ndarray) -> Recommendation:
    """The answer from the replicate statistics: ``combined`` (share of replicates each source wins),
    ``votes`` (its share of the votes) and ``beaten`` (measures × n × n: share of replicates i beats j)."""
    order = sorted(range(len(sources)), key=lambda i: (-combined[i], -votes[i], sources[i]))
    winner = order[0]
    majority_first = [sources[i] for i in range(len(sources))
                      if sum(f == sources[i] for f in firsts.values()) * 2 > len(measures)]
    firm = [m.name for m, b in zip(measures, beaten)
            if firsts[m.name] != sources[winner] and b[sources.index(firsts[m.name]), winner] >= SEPARATED]
    if len(set(firsts.values())) > 1 and not majority_first and firm:
        level = "disagree"
        chosen = sorted(set(firsts.values()), key=lambda s: (-votes[sources.index(s)], s))
    elif combined[winner] >= WINNER_SHARE:
        chosen = [sources[winner]]
        within_noise = all(b[:, winner].max() < SEPARATED for b in beaten)
        settled = not _close_unsettled(measures, pairs, beaten, winner)
        fair = not any(m in unequal for m in measures)
        level = "high" if votes[winner] >= HIGH_SHARE and within_noise and settled and fair else "moderate"
    else:
        cumulative = np.cumsum([combined[i] for i in order])
        count_tied = int(np.searchsorted(cumulative, TIE_MASS - 1e-9)) + 1
        chosen = [sources[i] for i in order[:count_tied]]
        chosen += [s for s in dict.fromkeys(firsts.values()) if s not in chosen]
        chosen.sort(key=lambda s: (-votes[sources.index(s)], s))
        level = "tie"
    confidence = float(votes[sources.index(chosen[0])])
    share_map = {s: float(v) for s, v in zip(sources, votes)}
    reason = _reason(part, sources, measures, pairs, chosen, level, share_map, firsts, pretraining, flags,
                     beaten=beaten, combined=combined, unequal=unequal)
    return Recommendation(target, pretraining, chosen, confidence, level, [m.name for m in measures], reason,
                          share_map, flags, firsts)


BATCH_MIN = 16  # targets of one shape from which the batched path pays
BATCH_CHUNK = 256  # targets whose pairwise outcomes are held in memory at once


def _recommend_batch(parts: list[tuple[str, _Part]], pretraining: str) -> list[Recommendation] | None:
    """The same answers as :func:`_recommend_target` for many targets of one shape at once (the same
    sources, one size per target and no ladder, every value and replicate present), their replicates
    parsed and compared in bulk; None when the targets do not have that shape."""
    first = parts[0][1]
    sources = first.sources
    n = len(sources)
    names = [m for m in PRETRAINING[pretraining] if m in first.measures]
    if not names or n < 2:
        return None
    values, replicates, settled, sizes = {}, {}, {}, np.full(len(parts), -1, dtype=np.int64)
    for name in names:
        spec = get_measure(name)
        vals, texts, ok = [], [], []
        for g, (_, part) in enumerate(parts):
            if part.sources != sources or name not in part.measures:
                return None
            rows = part.rows(name, sources)
            if (rows < 0).any() or not part.has("replicates"):
                return None
            if part.has("ladder") and any(isinstance(x, str) and x.strip() for x in part.take("ladder", rows)):
                return None
            unreliable = (np.array([_false(r) for r in part.take("reliable", rows)], dtype=bool)
                          if part.has("reliable") else np.zeros(n, dtype=bool))
            if spec.noise_when_small and unreliable.any():
                return None
            tokens = part.take("sample_tokens", rows) if part.has("sample_tokens") else np.full(n, np.nan)
            if np.isfinite(tokens).any():
                if not (np.isfinite(tokens).all() and (tokens == tokens[0]).all()):
                    return None
                size = int(tokens[0])
                if sizes[g] not in (-1, size) and name == names[0]:
                    return None
                sizes[g] = size
            text = part.take("replicates", rows)
            if not all(isinstance(t, str) and t for t in text):
                return None
            v = part.take("value", rows)
            if not np.isfinite(v).all():
                return None
            vals.append(v)
            texts.extend(text)
            floor_ok = (not np.isfinite(tokens[0])) or tokens[0] >= spec.reliable_tokens
            ok.append(np.full(n, floor_ok) & ~unreliable)
        spaces = {t.count(" ") for t in texts}
        if len(spaces) != 1:
            return None
        count = spaces.pop() + 1
        flat = " ".join(texts).split()
        if len(flat) != len(texts) * count:
            return None
        try:
            numbers = np.array(flat, dtype=float)
        except ValueError:
            return None
        values[name] = np.array(vals)
        replicates[name] = numbers.reshape(len(parts), n, count).transpose(0, 2, 1)  # (targets, R, n)
        settled[name] = np.array(ok)
    count = min(r.shape[1] for r in replicates.values())
    directions = [get_measure(m).direction for m in names]
    out = []
    for start in range(0, len(parts), BATCH_CHUNK):
        chunk = slice(start, start + BATCH_CHUNK)
        outcomes = np.stack([_compare(replicates[m][chunk, :count], d) for m, d in zip(names, directions)])
        outcomes[..., np.arange(n), np.arange(n)] = 0.0  # (measures, targets, R, n, n)
        combined = _first(_combined(outcomes)).mean(axis=1)  # (targets, n)
        votes = _first(outcomes).mean(axis=2).mean(axis=0)
        beaten = (outcomes == 1.0).mean(axis=2)  # (measures, targets, n, n)
        points = [_compare(values[m][chunk], d) for m, d in zip(names, directions)]
        for p in points:
            p[..., np.arange(n), np.arange(n)] = 0.0
        point_first = [_first(p) for p in points]  # (targets, n) each
        for k, g in enumerate(range(start, min(start + BATCH_CHUNK, len(parts)))):
            target, part = parts[g]
            size = np.where(np.eye(n, dtype=bool), _NO_COMMON, sizes[g])
            measures = [_Measure(m, d, values[m][g], {}, [int(sizes[g]) if sizes[g] >= 0 else None] * n,
                                 settled[m][g], True) for m, d in zip(names, directions)]
            pairs = [_Pairs(p[k], None, size) for p in points]
            firsts = {m: sources[int(np.argmax(f[k]))] for m, f in zip(names, point_first)}
            flags = _size_flags(part, sources, names) + _unsettled(part, names)
            out.append(_decide(target, part, pretraining, sources, measures, pairs, flags, firsts, [],
                               combined[k], votes[k], beaten[:, k]))
    return out


def _close_unsettled(measures: list[_Measure], pairs: list[_Pairs], beaten: np.ndarray,
                     winner: int) -> list[tuple[str, int, int]]:
    """(measure, source, size) for each comparison of the winner that was made below the size where the
    measure's rankings settled and that the winner does not win by more than its noise: a decision
    resting on such a cell is not "high". A far-apart comparison at a small size does not count."""
    out = []
    for k, (m, p) in enumerate(zip(measures, pairs)):
        floor = get_measure(m.name).reliable_tokens
        for j in range(len(m.points)):
            if j == winner:
                continue
            size = int(p.size[winner, j])
            below = size < floor if size > 0 else not (m.settled[winner] and m.settled[j])
            if below and beaten[k][winner, j] < SEPARATED:
                out.append((m.name, j, max(size, 0)))
    return out


def _fmt(value: float) -> str:
    return f"{value:.4g}" if math.isfinite(value) else "n/a"


def _reason(part: _Part, sources: list[str], measures: list[_Measure], pairs: list[_Pairs],
            chosen: list[str], level: str, shares: dict[str, float], firsts: dict[str, str], pretraining: str,
            flags: list[str], *, beaten: np.ndarray | None = None, combined: np.ndarray | None = None,
            unequal: list[_Measure] | None = None) -> str:
    labels = {m.name: get_measure(m.name).label for m in measures}
    sentences = []
    if len(set(firsts.values())) == 1:
        best = next(iter(firsts.values()))
        b = sources.index(best)
        both = "both " if len(measures) == 2 else ("all " if len(measures) > 2 else "")
        text = f"{_join(list(labels.values()))} {both}rank{'s' if len(measures) == 1 else ''} {best} first"
        if beaten is not None and len(sources) > 1:
            close = []
            for k, m in enumerate(measures):
                rival = max((j for j in range(len(sources)) if j != b), key=lambda j: beaten[k][j, b])
                if beaten[k][b, rival] < SEPARATED:
                    close.append(f"{labels[m.name]} from {sources[rival]}")
            text += (", ahead of every other source by more than " + ("its" if len(measures) == 1 else "their")
                     + " noise") if not close else f", but within noise for {_join(close)}"
        values = [f"{labels[m.name]} {_fmt(m.points[b])}" for m in measures]
        sentences.append(text + f" ({', '.join(values)})")
    else:
        named = "; ".join(f"{labels[m]} ranks {s} first" for m, s in firsts.items())
        if level == "disagree":
            sentences.append("the measures that carry it disagree, each by more than its noise: " + named)
        else:
            sentences.append("the measures that carry it do not agree: " + named)
    sizes = sorted(int(z) for z in np.unique(np.concatenate([p.size[p.size > 0] for p in pairs])))
    if len(sizes) > 1:
        sentences.append(f"each pair of sources compared at the largest size both have ({sizes[0]:,} to "
                         f"{sizes[-1]:,} tokens)")
    elif sizes:
        sentences.append(f"every source compared at {sizes[0]:,} tokens")
    if unequal:
        sentences.append(f"{_join([labels[m.name] for m in unequal])} had pairs of sources with no common size, "
                         "which count as no evidence (recompute the matrix for its size ladder)")
    if level in ("high", "moderate"):
        sentences.append(f"{shares[chosen[0]]:.0%} of the votes (each carrying measure, each bootstrap replicate "
                         "of the target and sample of the source) put it first")
        if level == "moderate" and measures and beaten is not None:
            w = sources.index(chosen[0])
            against = [f"{labels[m.name]} puts {sources[int(np.argmax(b[:, w]))]} ahead"
                       for m, b in zip(measures, beaten) if b[:, w].max() >= SEPARATED]
            unsettled = _close_unsettled(measures, pairs, beaten, w)
            if against:
                sentences.append("not high: " + _join(against) + " by more than its noise")
            elif unsettled:
                sentences.append("not high: it is within noise of " + _join(
                    [f"{sources[j]} under {labels[m]} at {size:,} tokens" for m, j, size in unsettled])
                    + ", below the size at which rankings settled")
            elif shares[chosen[0]] < HIGH_SHARE:
                sentences.append(f"not high: under {HIGH_SHARE:.0%} of the votes")
    elif level in ("tie", "disagree"):
        rank_of = {m.name: _ranks(m.points, m.direction) for m in measures}
        why = []
        for s in chosen:
            own = [labels[m] for m, f in firsts.items() if f == s]
            if own:
                why.append(f"{s} {shares[s]:.0%} (first under {_join(own)})")
            else:
                won = f", wins {combined[sources.index(s)]:.0%} of the replicates overall" if combined is not None else ""
                ranks = ", ".join(f"{labels[m.name]} {int(rank_of[m.name][sources.index(s)])}" for m in measures)
                why.append(f"{s} {shares[s]:.0%} (ranked {ranks}{won})")
        lead = "too close to call" if level == "tie" else "a disagreement of the measures, not noise"
        sentences.append(f"{lead}; share of the votes: " + ", ".join(why))
    elif level == "unknown":
        sentences.append("the table has no uncertainty (no bootstrap replicates or sample spread), so how sure "
                         "this is cannot be said")
    others = []
    for name in part.measures:
        if name in PRETRAINING[pretraining] or get_measure(name).direction == 0:
            continue
        values = part.take("value", part.rows(name, sources))
        if not np.isfinite(values).any():
            continue
        top = sources[int(np.argmin(_ranks(values, get_measure(name).direction)))]
        if top not in chosen:
            others.append(f"{get_measure(name).label} prefers {top}")
    if others:
        sentences.append(f"{_join(others)} (not used for {PRETRAINING_LABEL[pretraining]})")
    return "; ".join(sentences + flags)


def pairwise_table(long: pd.DataFrame, target: str, pretraining: str = "lm") -> pd.DataFrame:
    """Every pair of sources for one target under each carrying measure: the size they met at, both
    values there, and the share of replicates in which the first is more similar (the drill-down)."""
    columns = ["measure", "source_a", "source_b", "tokens", "value_a", "value_b", "better", "share_a_better"]
    found = [p for t, p in _Part.split(long[long["target"].astype(str) == str(target)])]
    if not found or pretraining not in PRETRAINING:
        return pd.DataFrame(columns=columns)
    part = found[0]
    sources = part.sources
    rows = []
    for name in PRETRAINING[pretraining]:
        m = _cells(part, name, sources) if name in part.measures else None
        if not isinstance(m, _Measure):
            continue
        p = _pairs(m)
        for i in range(len(sources)):
            for j in range(i + 1, len(sources)):
                z = int(p.size[i, j])
                va, vb = (m.at[z][0][i], m.at[z][0][j]) if z in m.at else (m.points[i], m.points[j])
                share = float((p.replicates[:, i, j] == 1.0).mean()) if p.replicates is not None else math.nan
                better = sources[i] if p.points[i, j] == 1.0 else sources[j] if p.points[i, j] == 0.0 else "="
                rows.append({"measure": name, "source_a": sources[i], "source_b": sources[j],
                             "tokens": z if z > 0 else None, "value_a": va, "value_b": vb, "better": better,
                             "share_a_better": share})
    return pd.DataFrame(rows, columns=columns)


def _size_flags(part: _Part, sources: list[str], measures: list[str]) -> list[str]:
    """Sources used whole for the carrying measures (smaller than the size the others were sampled at)."""
    if not part.has("used_whole") or not part.has("source_tokens") or not measures:
        return []
    whole: dict[str, int] = {}
    used: list[str] = []
    for name in measures:
        rows = part.rows(name, sources)
        for source, flag, tokens in zip(sources, part.take("used_whole", rows), part.take("source_tokens", rows)):
            if _true(flag) and math.isfinite(tokens):
                whole[source] = max(whole.get(source, 0), int(tokens))
                used.append(name)
    if not whole:
        return []
    bias = "; ".join(size_bias(m) for m in dict.fromkeys(used))
    one = len(whole) == 1
    listed = _join([f"{s} ({n:,} tokens)" for s, n in whole.items()])
    return [f"{listed} {'is' if one else 'are'} smaller than the table's sample size and "
            f"{'was' if one else 'were'} used whole; pairs with {'it' if one else 'them'} "
            f"are compared at {'its' if one else 'their'} size where the table has it ({bias})"]


def _unsettled(part: _Part, measures: list[str]) -> list[str]:
    """Carrying measures computed below the size at which their rankings settled on real corpora."""
    if not part.has("sample_tokens"):
        return []
    below, used = [], []
    for name in measures:
        tokens = part.take("sample_tokens", part.rows(name, part.sources))
        small = tokens[np.isfinite(tokens) & (tokens < get_measure(name).reliable_tokens)]
        if len(small):
            below.append(name)
            used += small.tolist()
    if not below:
        return []
    settle = max(get_measure(n).reliable_tokens for n in below)
    return [f"{_join([get_measure(n).label for n in below])} {'was' if len(below) == 1 else 'were'} computed on "
            f"{int(min(used)):,} tokens per source in the table, below the {settle:,} at which rankings settled on "
            "real corpora"]


def _join(items: list[str]) -> str:
    return items[0] if len(items) <= 1 else ", ".join(items[:-1]) + " and " + items[-1] if items else ""
