"""The answer: per target, the source to pretrain on, how sure that is, and why.

What the user will pretrain decides which measures carry the recommendation (Dai et al. 2019,
2020, and ../shared/DESIGN.md): for language models and BERT-style encoders, perplexity and
Jensen-Shannon divergence (how close the source is in field and register); for word vectors, the
target vocabulary covered (content words first) and word vector variance. The other measures are
reported beside it but cannot change it.

Sources are compared in pairs, each pair at the largest sample size both sources have (the table's
size, or a larger rung of the ladder, :mod:`simcore.matrix.ladder`), so that no decision compares values
taken at different sizes. In every bootstrap replicate of the target (see
:mod:`simcore.measures.uncertainty`; with k source samples, replicate r comes from sample r mod k) a pair is
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

import math
import os
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..contamination.verdict import OVERLAP_THRESHOLD, with_overlap
from ..corpora.lang.detect import known_language, language_name
from ..matrix.ladder import size_bias
from ..measures.lookup import explained, family, get_measure
from ..measures.registry import LM, VECTORS
from ..utils.errors import SimcoreError
from .pairwise import (
    NO_COMMON,
    STD_DRAWS,
    MeasureCells,
    Pairs,
    TargetRows,
    by_majority,
    compare,
    first_shares,
    is_false,
    is_true,
    measure_cells,
    pairs_of,
    ranks,
    std_replicates,
)

# The measures carrying each answer, from each measure's `family`: lm = PPL, JSD; vectors = TVcC, TVC, WVV.
PRETRAINING: dict[str, tuple[str, ...]] = {kind: family(kind) for kind in (LM, VECTORS)}
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
    outcome: str = ""  # what measured training outcomes say beside the answer (simcore.outcomes)

    def as_row(self) -> dict[str, Any]:
        return {"target": self.target, "recommended": "|".join(self.recommended), "confidence": self.confidence,
                "level": self.level, "measures": ",".join(self.measures), "pretraining": self.pretraining,
                "reason": self.reason}

    def as_dict(self) -> dict[str, Any]:
        return {**self.as_row(), "recommended": self.recommended, "measures": self.measures,
                "shares": self.shares, "flags": self.flags, "firsts": self.firsts, "outcome": self.outcome}

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
        # the level is the measures' agreement across replicates, said as such (not a promise about F1)
        sure = "" if math.isnan(self.confidence) else \
            f"; the measures agree: {self.confidence:.0%} of the votes ({self.level})"
        told = f"; {self.outcome}" if self.outcome else ""
        return f"{self.target}: pretrain on {self.recommended[0]}{sure}{told}"


def recommend(long: pd.DataFrame, pretraining: str = "lm", overlap_threshold: float = OVERLAP_THRESHOLD, *,
              outcomes: bool = True, probe_results: pd.DataFrame | None = None) -> list[Recommendation]:
    """The recommendation for every target of a long similarity table (``simcore matrix`` output).

    A source holding ``overlap_threshold`` of the target's test sentences is named in the reason
    (:mod:`simcore.contamination.verdict`). With ``outcomes`` each answer also says what the committed measured
    outcomes showed for its kind of pretraining, and, given ``probe_results`` (a probe's results table),
    the user's own F1 for the target (:func:`simcore.outcomes.with_outcomes`).
    """
    answers = _recommend(long, pretraining, overlap_threshold)
    if not outcomes and probe_results is None:
        return answers
    from ..outcomes import COLUMNS, with_outcomes  # its table is read only when an answer asks

    measured = None if outcomes else pd.DataFrame(columns=COLUMNS)
    return with_outcomes(answers, measured=measured, probe_results=probe_results)


def _recommend(long: pd.DataFrame, pretraining: str, overlap_threshold: float) -> list[Recommendation]:
    if pretraining not in PRETRAINING:
        raise SimcoreError(f"unknown pretraining {pretraining!r}; choose from {', '.join(PRETRAINING)}")
    if not isinstance(long, pd.DataFrame) or not {"source", "target", "measure", "value"} <= set(long.columns):
        raise SimcoreError("the recommendation needs a similarity table with source, target, measure and value")
    parts = TargetRows.split(long)
    answers: list[Recommendation | None] = [None] * len(parts)
    shapes: dict[tuple[Any, ...], list[int]] = {}
    for i, (_, part) in enumerate(parts):
        shapes.setdefault(_layout(part), []).append(i)
    for indices in shapes.values():
        if len(indices) >= BATCH_MIN:
            batch = _recommend_batch([parts[i] for i in indices], pretraining)
            for i, answer in zip(indices, batch or []):
                answers[i] = answer
    found = [a if a is not None else _recommend_target(t, part, pretraining) for a, (t, part) in zip(answers, parts)]
    return with_overlap(found, long, overlap_threshold)


def _layout(part: TargetRows) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A target's rows as (source, measure), in order: targets of one layout go together."""
    return tuple(part.source.tolist()), tuple(part.measure.tolist())


def _flags(cells: np.ndarray, test: Any) -> np.ndarray:
    """``test`` of each cell of a (targets, n) object array, as booleans of that shape."""
    return np.array([test(c) for c in cells.ravel()], dtype=bool).reshape(cells.shape)


def _written(cell: Any) -> bool:
    """Whether a cell holds text other than blanks."""
    return isinstance(cell, str) and bool(cell.strip())


def recommendation_table(recommendations: list[Recommendation]) -> pd.DataFrame:
    """One row per target: target, recommended (tied sources joined by '|'), confidence, level, measures, reason."""
    return pd.DataFrame([r.as_row() for r in recommendations], columns=COLUMNS)


def _recommend_target(target: str, part: TargetRows, pretraining: str) -> Recommendation:
    sources = part.sources
    measures, left_out = [], []
    for name in PRETRAINING[pretraining]:
        if name not in part.measures:
            continue
        cells = measure_cells(part, name, sources)
        (measures if isinstance(cells, MeasureCells) else left_out).append(cells)
    flags = list(left_out) + _size_flags(part, sources, [m.name for m in measures])
    flags += _unsettled(part, [m.name for m in measures]) + language_flags(part, sources)
    if not measures:
        wanted = ", ".join(get_measure(m).label for m in PRETRAINING[pretraining])
        reason = "; ".join(left_out) or f"the table has none of the measures for {PRETRAINING_LABEL[pretraining]} ({wanted})"
        return Recommendation(target, pretraining, [], math.nan, "none", [], reason, {}, flags)
    pairs = [pairs_of(m) for m in measures]
    point_first = [first_shares(p.points) for p in pairs]
    firsts = {m.name: sources[int(np.argmax(f))] for m, f in zip(measures, point_first)}
    unequal = [m for m, p in zip(measures, pairs) if (p.size[~np.eye(len(sources), dtype=bool)] == NO_COMMON).any()]
    if any(p.replicates is None for p in pairs):
        shares = first_shares(by_majority(np.stack([p.points for p in pairs])))
        order = np.argsort(-shares, kind="stable")
        chosen = [sources[i] for i in order if shares[i] > 0]
        share_map = {s: float(w) for s, w in zip(sources, shares)}
        reason = _reason(part, sources, measures, pairs, chosen, "unknown", share_map, firsts, pretraining, flags)
        return Recommendation(target, pretraining, chosen, math.nan, "unknown", [m.name for m in measures], reason,
                              share_map, flags, firsts)
    count = min(p.replicates.shape[0] for p in pairs)
    outcomes = np.stack([p.replicates[:count] for p in pairs])  # (measures, R, n, n)
    combined = first_shares(by_majority(outcomes)).mean(axis=0)  # share of replicates each source wins
    per_measure = first_shares(outcomes).mean(axis=1)  # (measures, n): how often each measure puts a source first
    beaten = (outcomes == 1.0).mean(axis=1)  # (measures, n, n): share of replicates i beats j
    return _decide(target, part, pretraining, sources, measures, pairs, flags, firsts, unequal, combined,
                   per_measure.mean(axis=0), beaten)


def _decide(target: str, part: TargetRows, pretraining: str, sources: list[str], measures: list[MeasureCells],
            pairs: list[Pairs], flags: list[str], firsts: dict[str, str], unequal: list[MeasureCells],
            combined: np.ndarray, votes: np.ndarray, beaten: np.ndarray) -> Recommendation:
    """The answer from the replicate statistics: ``combined`` (share of replicates each source wins),
    ``votes`` (its share of the votes) and ``beaten`` (measures × n × n: share of replicates i beats j)."""
    won, voted = combined.tolist(), votes.tolist()
    order = sorted(range(len(sources)), key=lambda i: (-won[i], -voted[i], sources[i]))
    winner = order[0]
    first_counts = Counter(firsts.values())
    majority_first = [s for s in sources if first_counts[s] * 2 > len(measures)]
    firm = [m.name for m, b in zip(measures, beaten)
            if firsts[m.name] != sources[winner] and b[sources.index(firsts[m.name]), winner] >= SEPARATED]
    if len(set(firsts.values())) > 1 and not majority_first and firm:
        level = "disagree"
        chosen = sorted(set(firsts.values()), key=lambda s: (-votes[sources.index(s)], s))
    elif combined[winner] >= WINNER_SHARE:
        chosen = [sources[winner]]
        level = "moderate" if _not_high(sources, measures, pairs, beaten, winner, votes[winner], unequal) else "high"
    else:
        cumulative = np.cumsum([combined[i] for i in order])
        count_tied = int(np.searchsorted(cumulative, TIE_MASS - 1e-9)) + 1
        chosen = [sources[i] for i in order[:count_tied]]
        chosen += [s for s in dict.fromkeys(firsts.values()) if s not in chosen]
        chosen.sort(key=lambda s: (-votes[sources.index(s)], s))
        level = "tie"
    confidence = float(votes[sources.index(chosen[0])])
    share_map = dict(zip(sources, voted))
    reason = _reason(part, sources, measures, pairs, chosen, level, share_map, firsts, pretraining, flags,
                     beaten=beaten, combined=combined, unequal=unequal)
    return Recommendation(target, pretraining, chosen, confidence, level, [m.name for m in measures], reason,
                          share_map, flags, firsts)


BATCH_MIN = 16  # targets of one shape from which the batched path pays
BATCH_CHUNK = 256  # targets whose pairwise outcomes are held in memory at once, at most ...
BATCH_CELLS = 5_000_000  # ... and at most this many outcomes (targets x R x n x n): in cache


def _recommend_batch(parts: list[tuple[str, TargetRows]], pretraining: str) -> list[Recommendation | None] | None:
    """The same answers as :func:`_recommend_target` for many targets of one shape at once (the
    same rows in the same order, one size per target and no ladder, every value present, and for
    each measure either every replicate or, with no replicates at all, a ``std`` column), their
    replicates parsed (or drawn from the std, :func:`simcore.answer.pairwise.std_replicates`) and
    compared in bulk; None when the targets do not have that shape, and None in place of a target
    whose std gives no replicates (answered one at a time)."""
    first = parts[0][1]
    sources = first.sources
    n = len(sources)
    names = [m for m in PRETRAINING[pretraining] if m in first.measures]
    layout = _layout(first)
    if not names or n < 2 or any(_layout(part) != layout for _, part in parts):
        return None
    wanted = ("value", "sample_tokens", "replicates", "std", "ladder", "reliable")
    columns = {c: np.stack([part.columns[c] for _, part in parts]) for c in wanted if first.has(c)}
    values, replicates, spreads, settled, tokens = {}, {}, {}, {}, {}
    sizes = np.full(len(parts), -1, dtype=np.int64)
    alone = np.zeros(len(parts), dtype=bool)  # targets answered one at a time
    has_tokens = "sample_tokens" in columns
    for name in names:
        spec = get_measure(name)
        rows = first.rows(name, sources)
        if (rows < 0).any():
            return None
        cells = {c: v[:, rows] for c, v in columns.items()}  # (targets, n) each
        if "ladder" in cells and _flags(cells["ladder"], _written).any():
            return None
        unreliable = (_flags(cells["reliable"], is_false) if "reliable" in cells
                      else np.zeros((len(parts), n), dtype=bool))
        if spec.noise_when_small and unreliable.any():
            return None
        tokens[name] = cells.get("sample_tokens", np.full((len(parts), n), np.nan))
        sized = np.isfinite(tokens[name]).any(axis=1)
        at = tokens[name][sized]
        if not (np.isfinite(at).all() and (at == at[:, :1]).all()):
            return None
        sizes[sized] = at[:, 0].astype(np.int64)
        text = cells.get("replicates", np.full((len(parts), n), None))
        filled = _flags(text, lambda t: isinstance(t, str) and bool(t)).all(axis=1)
        blank = ~_flags(text, _written).any(axis=1)
        from_std = ~filled & blank & ("std" in cells)  # no replicates: drawn from the std
        if not (filled | from_std).all() or (filled.any() and from_std.any()):
            return None  # replicates for some targets, std for others: one at a time
        if not np.isfinite(cells["value"]).all():
            return None
        values[name] = cells["value"]
        floor_ok = ~np.isfinite(tokens[name][:, 0]) | (tokens[name][:, 0] >= spec.reliable_tokens)
        settled[name] = floor_ok[:, None] & ~unreliable
        if from_std.any():
            spreads[name] = cells["std"]
            usable = np.isfinite(cells["std"]) & (cells["std"] > 0)
            alone |= ~usable.any(axis=1)  # no replicates at all: the answer is "unknown"
            continue
        parsed = _parse_replicates(text.ravel().tolist())
        if parsed is None:
            return None
        numbers, count = parsed
        replicates[name] = numbers.reshape(len(parts), n, count)  # (targets, n, R)
    count = min([r.shape[2] for r in replicates.values()] + [STD_DRAWS] * bool(spreads))
    directions = [get_measure(m).direction for m in names]
    step = max(1, min(BATCH_CHUNK, BATCH_CELLS // (count * n * n)))

    def statistics(chunk: slice) -> tuple[np.ndarray, ...]:
        drawn = [replicates[m][chunk, :, :count].transpose(1, 2, 0) if m in replicates else
                 std_replicates(values[m][chunk], spreads[m][chunk])[:, :count].transpose(2, 1, 0)
                 for m in names]
        return _replicate_statistics(drawn, directions)

    chunks = [slice(start, start + step) for start in range(0, len(parts), step)]
    out: list[Recommendation | None] = []
    for chunk, (combined, votes, beaten) in zip(chunks, _in_threads(statistics, chunks)):
        points = [compare(values[m][chunk], d) for m, d in zip(names, directions)]
        for p in points:
            p[..., np.arange(n), np.arange(n)] = 0.0
        point_first = [first_shares(p) for p in points]  # (targets, n) each
        for k, g in enumerate(range(chunk.start, min(chunk.stop, len(parts)))):
            if alone[g]:
                out.append(None)
                continue
            target, part = parts[g]
            size = np.where(np.eye(n, dtype=bool), NO_COMMON, sizes[g])
            measures = [MeasureCells(m, d, values[m][g], {}, [int(sizes[g]) if sizes[g] >= 0 else None] * n,
                                 settled[m][g], True) for m, d in zip(names, directions)]
            pairs = [Pairs(p[k], None, size) for p in points]
            firsts = {m: sources[int(np.argmax(f[k]))] for m, f in zip(names, point_first)}
            below = _unsettled_of({m: tokens[m][g] for m in names}) if has_tokens else []
            flags = _size_flags(part, sources, names) + below + language_flags(part, sources)
            out.append(_decide(target, part, pretraining, sources, measures, pairs, flags, firsts, [],
                               combined[k], votes[k], beaten[:, k]))
    return out


PARSE_CELLS = 16_384  # replicate cells split and read at once (bounds the memory the reading takes)


def _parse_replicates(texts: list[str]) -> tuple[np.ndarray, int] | None:
    """Every cell's replicates as one flat array, and how many each cell has; None unless every
    cell has the same number of space-separated numbers. The cells are split and read by Arrow, a
    block of cells per thread (its reading is correctly rounded, as ``float``'s is, and accepts a
    subset of what ``float`` accepts once ``nan(...)`` is set aside); where Arrow refuses a word,
    ``float`` reads each word."""
    if not texts:
        return None
    blocks = [texts[i:i + PARSE_CELLS] for i in range(0, len(texts), PARSE_CELLS)]
    read = _in_threads(_read_cells, blocks)
    counts = {count for _, count in read}
    if len(counts) != 1 or None in counts:
        return None
    count = counts.pop()
    if any(numbers is None for numbers, _ in read):
        return _parse_words(texts, count)
    return np.concatenate([numbers for numbers, _ in read]), count


def _read_cells(texts: list[str]) -> tuple[np.ndarray | None, int | None]:
    """(every number, the count per cell) of a block of cells read by Arrow; (None, count) where it
    refuses a word, (None, None) where the cells' counts differ."""
    import pyarrow as pa
    import pyarrow.compute as pc

    cells = pa.array(texts, type=pa.large_string())
    words = pc.split_pattern(cells, " ")
    lengths = pc.list_value_length(words).to_numpy()
    count = int(lengths[0])
    if (lengths != count).any():
        return None, None
    try:
        numbers = pc.cast(pc.list_flatten(words), pa.float64()).to_numpy(zero_copy_only=False)
    except pa.ArrowInvalid:
        return None, count
    if np.isnan(numbers).any() and _holds_byte(cells, b"("):  # 'nan(...)', which float refuses
        return None, count
    return numbers, count


def _in_threads(function: Any, items: list[Any]) -> list[Any]:
    """``[function(item) for item in items]``, the items shared among a thread per core: for work
    that runs in numpy and Arrow, which let go of the interpreter while they compute."""
    affinity = getattr(os, "sched_getaffinity", None)
    cores = len(affinity(0)) if affinity else (os.cpu_count() or 1)
    workers = min(len(items), cores, 8)
    if workers <= 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(function, items))


def _holds_byte(cells: Any, byte: bytes) -> bool:
    """Whether any cell of an unsliced Arrow large_string array holds ``byte``."""
    _, offset_buffer, data_buffer = cells.buffers()
    if data_buffer is None:
        return False
    offsets = np.frombuffer(offset_buffer, dtype=np.int64)[: len(cells) + 1]
    data = np.frombuffer(data_buffer, dtype=np.uint8)[offsets[0]:offsets[-1]]
    return bool((data == byte[0]).any())


def _parse_words(texts: list[str], count: int) -> tuple[np.ndarray, int] | None:
    """The cells read word by word as ``float`` reads them; None unless each has ``count`` words."""
    flat = " ".join(texts).split()
    if len(flat) != len(texts) * count:
        return None
    try:
        return np.array(flat, dtype=float), count
    except ValueError:
        return None


def _replicate_statistics(drawn: list[np.ndarray], directions: list[int]) -> tuple[np.ndarray, ...]:
    """(combined, votes, beaten) of :func:`_recommend_target` for a chunk of targets: each
    measure's replicates (n, R, targets) -> the share of replicates each source wins with the
    measures combined (targets, n), its share of the votes (targets, n) and the share of replicates
    i beats j (measures, targets, n, n).

    With every replicate finite (the usual case) a measure's outcomes are the signs
    w[i, j] - w[j, i] of "i beats j" (w), so one comparison per ordered pair gives them all; w is
    kept in bytes and laid out (i, j, R, targets), so that every pass runs over long stretches of
    memory. A measure's first place is its best value (for finite values the Copeland winner).
    Every float that decides is computed as :func:`by_majority` and :func:`first_shares` compute
    it, means over the replicates summed replicate after replicate as theirs are, so the answers
    are the same to the bit.
    """
    if not all(np.isfinite(d).all() for d in drawn):
        laid_out = [np.ascontiguousarray(d.transpose(2, 1, 0)) for d in drawn]  # (targets, R, n)
        return _outcome_statistics(laid_out, directions)
    n, count, targets = drawn[0].shape
    measures = len(drawn)
    preferred = np.zeros((n, n, count, targets), dtype=np.int8)  # measures preferring i to j
    wins = np.empty((n, n, count, targets), dtype=bool)
    votes, beaten = [], []
    for d, direction in zip(drawn, directions):
        d = np.ascontiguousarray(d)
        for i in range(n):
            (np.greater if direction > 0 else np.less)(d[i], d, out=wins[i])
        beaten.append(_count_replicates(wins).transpose(2, 0, 1) / count)
        preferred += wins.view(np.int8)
        key = direction * d
        votes.append(_first_place_mean(key == key.max(axis=0)))  # Copeland winners of finite values
    total = preferred - preferred.swapaxes(0, 1)  # (i, j, R, targets): measures for i minus against
    firsts = _combined_firsts(total, measures)
    if firsts is None:
        # by_majority, value for value, laid out as it lays them out (targets, R, i, j)
        combined = _combined_table(measures)[total.transpose(3, 2, 0, 1).astype(np.intp) + measures]
        combined[..., np.arange(n), np.arange(n)] = 0.0
        shares = first_shares(np.ascontiguousarray(combined)).mean(axis=1)
    else:
        shares = _first_place_mean(firsts)
    return shares, np.mean(votes, axis=0), np.stack(beaten)


def _count_replicates(flags: np.ndarray) -> np.ndarray:
    """How many replicates are true, for flags (..., R, targets) -> (..., targets): halves added in
    place of a sum along R (numpy sums rows as short as a chunk's targets slowly)."""
    count = flags.shape[-2]
    acc = flags.view(np.uint8) if count < 256 else flags.astype(np.int64)
    while acc.shape[-2] > 1:
        half = acc.shape[-2] // 2
        folded = acc[..., :half, :] + acc[..., half:2 * half, :]
        if acc.shape[-2] % 2:
            folded[..., :1, :] += acc[..., 2 * half:, :]
        acc = folded
    return acc[..., 0, :]


def _first_place_mean(best: np.ndarray) -> np.ndarray:
    """Each source's mean share of the first place over the replicates, for best (n, R, targets),
    the sources placed first (a tie splits the place) -> (targets, n). Without ties the shares are
    0 and 1, whose sum is a whole count in any order; with ties they are summed as
    :func:`_replicate_mean` sums them."""
    tied = best.sum(axis=0)
    if (tied == 1).all():
        return (_count_replicates(best) / best.shape[1]).T
    return _replicate_mean(best / tied)


def _replicate_mean(shares: np.ndarray) -> np.ndarray:
    """The mean over the replicates of (n, R, targets), as (targets, n), summed replicate after
    replicate as :func:`_recommend_target`'s means are (a sum along one stretch of memory, which a
    single target makes this, is summed in pairs and can round otherwise)."""
    return (np.cumsum(shares, axis=1)[:, -1] / shares.shape[1]).T


def _outcome_statistics(drawn: list[np.ndarray], directions: list[int]) -> tuple[np.ndarray, ...]:
    """:func:`_replicate_statistics` from the outcome tensors themselves (replicates (targets, R,
    n)), as :func:`_recommend_target` computes them: for replicates that are not all finite."""
    n = drawn[0].shape[-1]
    diagonal = np.arange(n)
    outcomes = np.stack([compare(d, s) for d, s in zip(drawn, directions)])
    outcomes[..., diagonal, diagonal] = 0.0  # (measures, targets, R, n, n)
    combined = first_shares(by_majority(outcomes)).mean(axis=1)
    votes = first_shares(outcomes).mean(axis=2).mean(axis=0)
    return combined, votes, (outcomes == 1.0).mean(axis=2)


def _combined_firsts(total: np.ndarray, measures: int) -> np.ndarray | None:
    """The sources that ``first_shares`` puts first in the combined outcomes
    (:func:`_combined_table` at ``total``, (i, j, R, targets), diagonal 0), as flags (n, R,
    targets), without building them: a combined outcome is N / (2000 m) for the whole number
    N = 1000 m x (2 if the sum of signs t > 0, 1 if t = 0, else 0) + t + m, so each source's
    Copeland count is exact in integers. The first places are those ``first_shares`` finds (its
    tolerance applied to the exact counts); None when a count lies so near that tolerance's edge
    that rounding could decide."""
    n = total.shape[0]
    small = np.int8 if measures * (n - 1) <= 127 else np.int64  # every sum below fits
    signs = np.sign(total).sum(axis=1, dtype=small).astype(np.int64)  # pairs won minus pairs lost
    rows = total.sum(axis=1, dtype=small).astype(np.int64)
    exact = 1000 * measures * (signs + n - 1) + rows + measures * (n - 1)  # the count x 2000 m
    scale = 2000.0 * measures
    top = exact.max(axis=0)
    gap = (top - exact) / scale  # exact to about 1e-16 relative: both are whole numbers below 2**53
    edge = 1e-8 + 1e-5 * np.abs(top / scale)  # np.isclose's default atol and rtol (first_shares)
    if (np.abs(gap - edge) < 1e-9).any():
        return None
    return gap <= edge


def _combined_table(measures: int) -> np.ndarray:
    """:func:`by_majority`'s value for each sum of outcome signs (-measures .. measures), computed as it
    computes it: the majority (0, 0.5 or 1) plus 1e-3 times the mean outcome."""
    total = np.arange(-measures, measures + 1)
    mean = (total + measures) * 0.5 / measures
    majority = np.where(mean > 0.5 + 1e-9, 1.0, np.where(mean < 0.5 - 1e-9, 0.0, 0.5))
    return majority + 1e-3 * mean


def _below_settled(measures: list[MeasureCells], pairs: list[Pairs], winner: int) -> list[tuple[str, int, int]]:
    """(measure, source, size) for each deciding comparison (the winner against another source under a
    carrying measure) made below the size at which that measure's rankings settled, however far apart
    the two are: a decision resting on such a comparison is not "high". A pair whose size the table
    does not record counts as below when either cell is flagged unsettled."""
    out = []
    for m, p in zip(measures, pairs):
        floor = get_measure(m.name).reliable_tokens
        for j in range(len(m.points)):
            if j == winner:
                continue
            size = int(p.size[winner, j])
            if size < floor if size > 0 else not (m.settled[winner] and m.settled[j]):
                out.append((m.name, j, max(size, 0)))
    return out


def _not_high(sources: list[str], measures: list[MeasureCells], pairs: list[Pairs], beaten: np.ndarray,
              winner: int, share: float, unequal: list[MeasureCells]) -> list[str]:
    """Each condition for "high" (README: at least ``HIGH_SHARE`` of the votes, no carrying measure
    separating another source above it, every deciding comparison at or above the settled size, no
    unfair comparison) that the winner misses, in words; empty when the answer is high. The level
    and the reason both come from here, so they cannot disagree."""
    labels = {m.name: get_measure(m.name).label for m in measures}
    out = []
    if share < HIGH_SHARE:
        out.append(f"under {HIGH_SHARE:.0%} of the votes")
    against = [f"{labels[m.name]} puts {sources[int(np.argmax(b[:, winner]))]} ahead"
               for m, b in zip(measures, beaten) if b[:, winner].max() >= SEPARATED]
    if against:
        out.append(_join(against) + f" by more than its noise (in {SEPARATED:.0%} of the replicates)")
    below = _below_settled(measures, pairs, winner)
    if below:
        groups: dict[int, tuple[list[str], list[str]]] = {}
        for name, j, size in below:
            names, others = groups.setdefault(size, ([], []))
            names.extend([labels[name]] if labels[name] not in names else [])
            others.extend([sources[j]] if sources[j] not in others else [])
        floors = {labels[name]: get_measure(name).reliable_tokens for name, _, _ in below}
        floor = (f"{next(iter(floors.values())):,} tokens" if len(set(floors.values())) == 1
                 else _join([f"{z:,} for {label}" for label, z in floors.items()]) + " tokens")
        parts = []
        for size, (names, others) in sorted(groups.items()):
            who = _join(others) if len(others) <= 3 else f"{len(others)} other sources"
            at = f"at {size:,} tokens" if size > 0 else "at a size flagged below it"
            parts.append(f"with {who} under {_join(names)} {at}")
        out.append(f"{sources[winner]} was compared " + "; ".join(parts)
                   + f", below the {floor} at which rankings settled")
    if unequal:
        out.append(f"{_join([labels[m.name] for m in unequal])} compared some sources at no common size")
    return out


def _fmt(value: float) -> str:
    return f"{value:.4g}" if math.isfinite(value) else "n/a"


def _in_unit(name: str, value: float, points: np.ndarray) -> str:
    """A value as the tables show it: a measure the registry marks ``percent`` (TVC, TVcC) as a
    percentage when its values are fractions (every value within 0..1; a published table may hold percentages
    already), others as they are."""
    if get_measure(name).percent and math.isfinite(value):
        finite = np.asarray(points, dtype=float)
        finite = finite[np.isfinite(finite)]
        if len(finite) and finite.min() >= 0 and finite.max() <= 1:
            return f"{value * 100:.4g}%"
    return _fmt(value)


def _reason(part: TargetRows, sources: list[str], measures: list[MeasureCells], pairs: list[Pairs],
            chosen: list[str], level: str, shares: dict[str, float], firsts: dict[str, str], pretraining: str,
            flags: list[str], *, beaten: np.ndarray | None = None, combined: np.ndarray | None = None,
            unequal: list[MeasureCells] | None = None) -> str:
    labels = {m.name: get_measure(m.name).label for m in measures}
    plain = {m.name: explained(m.name) for m in measures}  # each measure said in words at its first mention
    sentences = []
    if len(set(firsts.values())) == 1:
        best = next(iter(firsts.values()))
        b = sources.index(best)
        both = "both " if len(measures) == 2 else ("all " if len(measures) > 2 else "")
        text = f"{_join(list(plain.values()))} {both}rank{'s' if len(measures) == 1 else ''} {best} first"
        if beaten is not None and len(sources) > 1:
            close = []
            for k, m in enumerate(measures):
                rival = max((j for j in range(len(sources)) if j != b), key=lambda j: beaten[k][j, b])
                if beaten[k][b, rival] < SEPARATED:
                    close.append(f"{labels[m.name]} from {sources[rival]}")
            text += (", ahead of every other source by more than " + ("its" if len(measures) == 1 else "their")
                     + " noise") if not close else f", but within noise for {_join(close)}"
        values = [f"{labels[m.name]} {_in_unit(m.name, m.points[b], m.points)}" for m in measures]
        sentences.append(text + f" ({', '.join(values)})")
    else:
        named = "; ".join(f"{plain[m]} ranks {s} first" for m, s in firsts.items())
        if level == "disagree":
            sentences.append("the measures that carry it disagree, each by more than its noise: " + named)
        else:
            sentences.append("the measures that carry it do not agree: " + named)
    sizes = sorted({z for p in pairs for z in p.size[p.size > 0].tolist()})
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
        w = sources.index(chosen[0])
        if level == "moderate" and measures and beaten is not None:
            missed = _not_high(sources, measures, pairs, beaten, w, shares[chosen[0]], unequal or [])
            sentences.append("not high: " + "; ".join(missed))
        elif level == "high":
            met = [int(p.size[w, j]) for p in pairs for j in range(len(sources)) if j != w and p.size[w, j] > 0]
            if met:
                sentences.append(f"every comparison of {chosen[0]} met at {min(met):,} tokens or more, at or above "
                                 "the size at which rankings settled")
    elif level in ("tie", "disagree"):
        rank_of: dict[str, np.ndarray] = {}  # each measure's ranks, when a reason needs them
        why = []
        for s in chosen:
            own = [labels[m] for m, f in firsts.items() if f == s]
            if own:
                why.append(f"{s} {shares[s]:.0%} (first under {_join(own)})")
            else:
                won = f", wins {combined[sources.index(s)]:.0%} of the replicates overall" if combined is not None else ""
                for m in measures:
                    rank_of.setdefault(m.name, ranks(m.points, m.direction))
                ranked = ", ".join(f"{labels[m.name]} {int(rank_of[m.name][sources.index(s)])}" for m in measures)
                why.append(f"{s} {shares[s]:.0%} (ranked {ranked}{won})")
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
        top = sources[int(np.argmin(ranks(values, get_measure(name).direction)))]
        if top not in chosen:
            others.append(f"{explained(name)} prefers {top}")
    if others:
        sentences.append(f"{_join(others)} (not used for {PRETRAINING_LABEL[pretraining]})")
    return "; ".join(sentences + flags)


PAIR_COLUMNS = ["measure", "source_a", "source_b", "tokens", "value_a", "value_b", "better", "share_a_better"]


def pairwise_table(long: pd.DataFrame, target: str, pretraining: str = "lm") -> pd.DataFrame:
    """Every pair of sources for one target under each carrying measure: the size they met at, both
    values there, and the share of replicates in which the first is more similar (the drill-down)."""
    found = [p for t, p in TargetRows.split(long[long["target"].astype(str) == str(target)])]
    if not found or pretraining not in PRETRAINING:
        return pd.DataFrame(columns=PAIR_COLUMNS)
    return pd.DataFrame(_pair_rows(found[0], pretraining), columns=PAIR_COLUMNS)


def pairwise_tables(long: pd.DataFrame, pretraining: str = "lm") -> pd.DataFrame:
    """:func:`pairwise_table` for every target at once (the table split once), with a ``target`` column."""
    if pretraining not in PRETRAINING:
        raise SimcoreError(f"unknown pretraining {pretraining!r}; choose from {', '.join(PRETRAINING)}")
    rows = [{"target": target, **row} for target, part in TargetRows.split(long) for row in _pair_rows(part, pretraining)]
    return pd.DataFrame(rows, columns=["target", *PAIR_COLUMNS])


def _pair_rows(part: TargetRows, pretraining: str) -> list[dict[str, Any]]:
    sources = part.sources
    rows = []
    for name in PRETRAINING[pretraining]:
        m = measure_cells(part, name, sources) if name in part.measures else None
        if not isinstance(m, MeasureCells):
            continue
        p = pairs_of(m)
        # each pair's share of replicates won, for every pair at once (a count over the replicates)
        shares = (p.replicates == 1.0).mean(axis=0).tolist() if p.replicates is not None else None
        for i in range(len(sources)):
            for j in range(i + 1, len(sources)):
                z = int(p.size[i, j])
                va, vb = (m.at[z][0][i], m.at[z][0][j]) if z in m.at else (m.points[i], m.points[j])
                share = shares[i][j] if shares is not None else math.nan
                better = sources[i] if p.points[i, j] == 1.0 else sources[j] if p.points[i, j] == 0.0 else "="
                rows.append({"measure": name, "source_a": sources[i], "source_b": sources[j],
                             "tokens": z if z > 0 else None, "value_a": va, "value_b": vb, "better": better,
                             "share_a_better": share})
    return rows


def _size_flags(part: TargetRows, sources: list[str], measures: list[str]) -> list[str]:
    """Sources used whole for the carrying measures (smaller than the size the others were sampled at)."""
    if not part.has("used_whole") or not part.has("source_tokens") or not measures:
        return []
    whole: dict[str, int] = {}
    used: list[str] = []
    for name in measures:
        rows = part.rows(name, sources)
        for source, flag, tokens in zip(sources, part.take("used_whole", rows), part.take("source_tokens", rows)):
            if is_true(flag) and math.isfinite(tokens):
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


def language_flags(part: TargetRows, sources: list[str]) -> list[str]:
    """What the reader must know of the languages (the table's ``source_language`` and ``target_language``):
    nothing when every corpus is English (or the table does not say), else the target's language and the
    sources in another one (allowed: an English corpus may be asked about for German NER)."""
    if not part.has("source_language") or not part.has("target_language"):
        return []
    targets = [v for v in part.columns["target_language"] if known_language(v)]
    if not targets:
        return []
    target = targets[0]
    of: dict[str, str] = {}
    for source, language in zip(part.source, part.columns["source_language"]):
        if known_language(language):
            of.setdefault(source, language)
    others = {s: lang for s, lang in of.items() if lang != target and s in sources}
    if not others:
        return [] if target == "en" else [f"the target and its sources are in {language_name(target)}"]
    listed = _join([f"{s} ({language_name(lang)})" for s, lang in sorted(others.items())])
    one = len(others) == 1
    return [f"the target is in {language_name(target)}; {listed} {'is' if one else 'are'} in another language, "
            f"so {'its' if one else 'their'} values compare texts across languages"]


def _unsettled(part: TargetRows, measures: list[str]) -> list[str]:
    """Carrying measures computed below the size at which their rankings settled on real corpora."""
    if not part.has("sample_tokens"):
        return []
    return _unsettled_of({name: part.take("sample_tokens", part.rows(name, part.sources))
                          for name in measures})


def _unsettled_of(sample_tokens: dict[str, np.ndarray]) -> list[str]:
    """:func:`_unsettled` from each carrying measure's sample sizes over the sources."""
    below, used = [], []
    for name, tokens in sample_tokens.items():
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
