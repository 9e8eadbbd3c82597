"""Choosing the kept units from a stored score file with bounded memory.

Choosing the top K keeps a running heap of K (key, index) pairs; choosing a fraction finds the
cut-off in the score file by histogram refinement, with memory bounded by a chunk of scores.
A unit is eligible when it was scored, is not a duplicate of the target (unless duplicates are
kept) and has at least the cut-off's minimum number of tokens.
"""

from __future__ import annotations

import heapq
import math
import numbers
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..utils.errors import InvalidArgument, SimcoreError

CHUNK = 1 << 20          # scores read per chunk when choosing and writing
IN_MEMORY = 1 << 21      # candidates gathered in memory once the cut-off range is this small
BINS = 4096
MAX_MIN_TOKENS = 10_000
# ppl and xent score a unit per token, so a unit of a few tokens gets an extreme score and crowds the top
# ("Source :", "N / A =", "Wrapped in tissue ."). 5 keeps every unit of 4 tokens or fewer out and drops
# 5.5% of a pool of raw lines from ../shared/data (bench/bench_min_tokens.py).
PER_TOKEN_MIN_TOKENS = 5
PER_TOKEN_METHODS = frozenset({"ppl", "xent"})
_MAX_COUNT = 2**62   # sentences, ranks and chunk sizes: far beyond any pool


def _whole(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def check_count(name: str, value: Any, low: int = 0, high: int = _MAX_COUNT) -> int:
    """``value`` as an int when it is a whole number in [low, high], else InvalidArgument naming ``name``."""
    if not _whole(value) or not low <= value <= high:
        bounds = f"of at least {low:,}" if high == _MAX_COUNT else f"from {low:,} to {high:,}"
        raise InvalidArgument(f"{name} must be a whole number {bounds}, not {value!r}"[:300])
    return int(value)


def check_flag(name: str, value: Any) -> bool:
    """``value`` when it is True or False, else InvalidArgument naming ``name``."""
    if not isinstance(value, bool | np.bool_):
        raise InvalidArgument(f"{name} must be True or False, not {value!r}"[:300])
    return bool(value)


def default_min_tokens(method: str) -> int:
    """The shortest unit a method keeps unless told otherwise: PER_TOKEN_MIN_TOKENS for the methods
    that score per token (ppl, xent), 1 for the others."""
    return PER_TOKEN_MIN_TOKENS if str(method) in PER_TOKEN_METHODS else 1


def check_min_tokens(min_tokens: Any) -> int:
    """The shortest unit that may be kept, in tokens: a whole number from 1 to MAX_MIN_TOKENS."""
    if isinstance(min_tokens, bool) or not isinstance(min_tokens, int | np.integer) \
            or not 1 <= min_tokens <= MAX_MIN_TOKENS:
        raise InvalidArgument(f"the minimum sentence length must be a whole number of tokens from 1 to "
                              f"{MAX_MIN_TOKENS:,}, not {min_tokens!r}"[:300])
    return int(min_tokens)


@dataclass
class ScoreSet:
    """Scores of every pool unit (pool order), with duplicate flags, token counts and run details."""

    path: Path
    method: str
    higher_kept: bool
    n: int
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.path, str | os.PathLike) or not str(self.path).strip() or "\0" in str(self.path):
            raise InvalidArgument(f"ScoreSet.path must be the folder holding the scores, not {self.path!r}"[:300])
        self.path = Path(self.path)
        if not isinstance(self.method, str):
            raise InvalidArgument(f"ScoreSet.method must be the method's name, not {self.method!r}"[:300])
        self.higher_kept = check_flag("ScoreSet.higher_kept", self.higher_kept)
        self.n = check_count("ScoreSet.n", self.n)
        if not isinstance(self.meta, dict):
            raise InvalidArgument(f"ScoreSet.meta must be a dict, not {type(self.meta).__name__}")

    def _stored(self, name: str, dtype: type) -> np.ndarray:
        try:
            return np.memmap(self.path / name, dtype=dtype, mode="r", shape=(self.n,))
        except (OSError, ValueError):  # missing, or shorter than n values (a cleaned or damaged store)
            raise SimcoreError(f"the stored scores in {self.path} are missing or incomplete; "
                               "run the selection again") from None

    def scores(self) -> np.ndarray:
        if self.n == 0:
            return np.zeros(0)
        return self._stored("scores.f64", np.float64)

    def duplicates(self) -> np.ndarray:
        if self.n == 0:
            return np.zeros(0, dtype=bool)
        return self._stored("dups.u8", np.uint8)

    def lengths(self) -> np.ndarray:
        """Tokens per unit (capped at 2**32 - 1); score sets stored by an older simcore have none."""
        if self.n == 0:
            return np.zeros(0, dtype=np.uint32)
        if not (self.path / "lens.u32").is_file():
            raise SimcoreError("these scores were stored without sentence lengths (an older simcore); "
                               "run the selection again to use a minimum length")
        return self._stored("lens.u32", np.uint32)


@dataclass(frozen=True)
class Cutoff:
    """Kept: eligible units whose (key, index) is at most (key, index) of the cut-off.

    The key is the score for methods where lower is kept and minus the score otherwise, so ties
    are broken by pool order (earlier kept first).
    """

    key: float
    index: int
    n_kept: int
    n_eligible: int
    n_duplicates: int
    n_unscored: int
    k: int
    min_tokens: int = 1   # units with fewer tokens are not eligible
    n_short: int = 0      # scored units with fewer than min_tokens tokens (duplicates among them too)

    def __post_init__(self) -> None:
        if not isinstance(self.key, numbers.Real) or isinstance(self.key, bool):
            raise InvalidArgument(f"Cutoff.key must be a number, not {self.key!r}"[:300])
        for name in ("index", "n_kept", "n_eligible", "n_duplicates", "n_unscored", "k", "n_short"):
            check_count(f"Cutoff.{name}", getattr(self, name))
        check_min_tokens(self.min_tokens)

    def score(self, higher_kept: bool) -> float:
        return -self.key if higher_kept else self.key


def _chunks(scores: ScoreSet, keep_duplicates: bool, chunk: int,
            min_tokens: int = 1) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """(start, keys, eligible) for consecutive chunks of the score file."""
    for start in range(0, scores.n, chunk):
        keys, eligible = _keys_and_eligible(scores, keep_duplicates, min_tokens, start, min(start + chunk, scores.n))
        yield start, keys, eligible


def _keys_and_eligible(scores: ScoreSet, keep_duplicates: bool, min_tokens: int, start: int,
                       stop: int) -> tuple[np.ndarray, np.ndarray]:
    """Sort keys of units [start, stop) and which of them may be kept."""
    sign = -1.0 if scores.higher_kept else 1.0
    keys = sign * np.asarray(scores.scores()[start:stop], dtype=np.float64)
    eligible = np.isfinite(keys)
    if not keep_duplicates:
        eligible &= np.asarray(scores.duplicates()[start:stop]) == 0
    if min_tokens > 1:  # every scored unit has a token; old score sets without lengths still work
        eligible &= np.asarray(scores.lengths()[start:stop]) >= min_tokens
    return keys, eligible


def count_to_keep(n: int, top: int | None = None, fraction: float | None = None) -> int:
    """K from --top or --fraction (a fraction of all ``n`` pool units, rounded, at least 1)."""
    n = check_count("the number of pool sentences", n)
    if (top is None) == (fraction is None):
        raise InvalidArgument("give either a number of sentences to keep (top K) or a fraction, not both")
    if top is not None:
        if not _whole(top) or top < 1:
            raise InvalidArgument(f"top K must be a whole number of at least 1, not {top!r}"[:300])
        return int(top)
    number = isinstance(fraction, numbers.Real) and not isinstance(fraction, bool)
    if not number or not math.isfinite(fraction) or not 0 < fraction <= 1:
        hint = f" (for {fraction:g}% give {fraction / 100:g})" if number and 1 < fraction <= 100 else ""
        raise InvalidArgument(f"the fraction must be above 0 and at most 1, not {fraction!r}{hint}"[:300])
    return max(1, int(math.floor(float(fraction) * n + 0.5)))


def choose(scores: ScoreSet, top: int | None = None, fraction: float | None = None,
           keep_duplicates: bool = False, chunk: int = CHUNK, in_memory: int = IN_MEMORY,
           min_tokens: int = 1) -> Cutoff:
    """The cut-off keeping the best K eligible units (top K: a heap; a fraction: the score file).

    Units with fewer than ``min_tokens`` tokens are not eligible: short units get extreme
    per-token scores (ppl, xent), and this leaves them out without scoring the pool again.
    """
    _check_scores(scores)
    k = count_to_keep(scores.n, top, fraction)
    keep_duplicates = check_flag("keep_duplicates", keep_duplicates)
    chunk, in_memory = check_count("chunk", chunk, 1), check_count("in_memory", in_memory, 1)
    min_tokens = check_min_tokens(min_tokens)
    n_eligible = n_dups = n_unscored = n_short = 0
    n_allowed, longest = 0, 0   # eligible but for the length, and the longest of them
    for start, keys, _ in _chunks(scores, True, chunk):
        stop = start + len(keys)
        finite = np.isfinite(keys)
        n_unscored += int((~finite).sum())
        dups = np.asarray(scores.duplicates()[start:stop]) != 0
        n_dups += int((dups & finite).sum())
        allowed = finite & (keep_duplicates | ~dups)
        if min_tokens > 1:
            lengths = np.asarray(scores.lengths()[start:stop])
            n_short += int((finite & (lengths < min_tokens)).sum())
            n_allowed += int(allowed.sum())
            longest = max(longest, int(lengths[allowed].max(initial=0)))
            allowed &= lengths >= min_tokens
        n_eligible += int(allowed.sum())
    kept = min(k, n_eligible)
    if kept == 0:
        if n_allowed:
            raise SimcoreError(f"no pool sentence can be kept: every scored sentence "
                               f"{'' if keep_duplicates else 'that is not a duplicate of the target '}"
                               f"has fewer than {min_tokens:,} tokens (the longest has {longest:,}); "
                               f"give a smaller minimum length")
        raise SimcoreError("no pool sentence can be kept: every one is unscored or a duplicate of the target")
    if top is not None:
        key, index = _heap_cutoff(scores, kept, keep_duplicates, chunk, min_tokens)
    else:
        key, index = _histogram_cutoff(scores, kept, keep_duplicates, chunk, in_memory, min_tokens)
    return Cutoff(key, index, kept, n_eligible, n_dups, n_unscored, k, min_tokens, n_short)


def _heap_cutoff(scores: ScoreSet, k: int, keep_duplicates: bool, chunk: int, min_tokens: int) -> tuple[float, int]:
    """The k-th smallest (key, index): a running max-heap of the k best pairs seen so far."""
    heap: list[tuple[float, int]] = []   # (-key, -index): the root is the worst pair kept
    for start, keys, eligible in _chunks(scores, keep_duplicates, chunk, min_tokens):
        candidates = np.flatnonzero(eligible)
        if len(heap) >= k:
            worst = -heap[0][0]
            candidates = candidates[keys[candidates] <= worst]
        for i in candidates.tolist():
            item = (-float(keys[i]), -(start + i))
            if len(heap) < k:
                heapq.heappush(heap, item)
            elif item > heap[0]:
                heapq.heapreplace(heap, item)
    return -heap[0][0], -heap[0][1]


def _histogram_cutoff(scores: ScoreSet, k: int, keep_duplicates: bool, chunk: int,
                      in_memory: int, min_tokens: int) -> tuple[float, int]:
    """The k-th smallest (key, index) with memory bounded by a chunk, refining a histogram."""
    levels: list[tuple[float, float, int]] = []   # (low, high, bin) restrictions so far
    below = 0                                      # eligible pairs known to come before the range

    def in_range(keys: np.ndarray, eligible: np.ndarray) -> np.ndarray:
        mask = eligible.copy()
        for low, high, b in levels:
            mask &= _bin_of(keys, low, high) == b
        return mask

    while True:
        count, low, high = 0, math.inf, -math.inf
        for _, keys, eligible in _chunks(scores, keep_duplicates, chunk, min_tokens):
            mask = in_range(keys, eligible)
            if mask.any():
                count += int(mask.sum())
                low, high = min(low, float(keys[mask].min())), max(high, float(keys[mask].max()))
        rank = k - below   # 1-based rank of the cut-off within the range
        if count <= in_memory or low == high:
            return _rank_in_range(scores, keep_duplicates, chunk, min_tokens, in_range, rank, count <= in_memory)
        histogram = np.zeros(BINS, dtype=np.int64)
        for _, keys, eligible in _chunks(scores, keep_duplicates, chunk, min_tokens):
            mask = in_range(keys, eligible)
            histogram += np.bincount(_bin_of(keys[mask], low, high), minlength=BINS)
        cumulative = np.cumsum(histogram)
        b = int(np.searchsorted(cumulative, rank))
        below += int(cumulative[b - 1]) if b > 0 else 0
        levels.append((low, high, b))


def _bin_of(keys: np.ndarray, low: float, high: float) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = (keys - low) / (high - low) * BINS
    return np.clip(np.nan_to_num(scaled, nan=-1.0, posinf=BINS, neginf=-1.0), -1, BINS - 1).astype(np.int64)


def _rank_in_range(scores: ScoreSet, keep_duplicates: bool, chunk: int, min_tokens: int, in_range: Callable,
                   rank: int, gather: bool) -> tuple[float, int]:
    if gather:
        keys_in, index_in = [], []
        for start, keys, eligible in _chunks(scores, keep_duplicates, chunk, min_tokens):
            where = np.flatnonzero(in_range(keys, eligible))
            keys_in.append(keys[where])
            index_in.append(where + start)
        all_keys, all_index = np.concatenate(keys_in), np.concatenate(index_in)
        order = np.lexsort((all_index, all_keys))
        pick = order[rank - 1]
        return float(all_keys[pick]), int(all_index[pick])
    # Every key in the range is equal: the cut-off is the rank-th of them in pool order.
    seen = 0
    for start, keys, eligible in _chunks(scores, keep_duplicates, chunk, min_tokens):
        where = np.flatnonzero(in_range(keys, eligible))
        if seen + len(where) >= rank:
            i = int(where[rank - seen - 1])
            return float(keys[i]), start + i
        seen += len(where)
    raise AssertionError("rank beyond the range")  # pragma: no cover


def kept_mask(scores: ScoreSet, cutoff: Cutoff, keep_duplicates: bool, start: int, stop: int) -> np.ndarray:
    """Which units in [start, stop) are kept (the minimum length is the cut-off's own)."""
    keep_duplicates = check_chosen(scores, cutoff, keep_duplicates)
    start = check_count("start", start, 0, scores.n)
    stop = check_count("stop", stop, start, scores.n)
    keys, eligible = _keys_and_eligible(scores, keep_duplicates, cutoff.min_tokens, start, stop)
    index = np.arange(start, stop)
    return eligible & ((keys < cutoff.key) | ((keys == cutoff.key) & (index <= cutoff.index)))


def kept_indices(scores: ScoreSet, cutoff: Cutoff, keep_duplicates: bool = False) -> np.ndarray:
    """Indices of the kept units (for comparing selections; K integers)."""
    keep_duplicates = check_chosen(scores, cutoff, keep_duplicates)
    parts = [np.flatnonzero(kept_mask(scores, cutoff, keep_duplicates, s, min(s + CHUNK, scores.n))) + s
             for s in range(0, scores.n, CHUNK)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """|A ∩ B| / |A ∪ B| of two selections given as index arrays (or lists or sets of indices)."""
    a, b = _indices("the first selection", a), _indices("the second selection", b)
    union = np.union1d(a, b).size
    return float(np.intersect1d(a, b).size / union) if union else 1.0



def _check_scores(scores: Any) -> None:
    if not isinstance(scores, ScoreSet):
        raise InvalidArgument(f"scores must be a ScoreSet (from score_pool), not {type(scores).__name__}")


def check_chosen(scores: Any, cutoff: Any, keep_duplicates: Any) -> bool:
    """Scores, a cut-off chosen on them and the keep_duplicates flag, checked; the flag returned."""
    _check_scores(scores)
    if not isinstance(cutoff, Cutoff):
        raise InvalidArgument(f"cutoff must be a Cutoff (from choose), not {type(cutoff).__name__}")
    if cutoff.index >= scores.n:
        raise InvalidArgument(f"the cut-off (at sentence {cutoff.index:,}) was chosen on other scores: these "
                              f"have {scores.n:,} sentences")
    return check_flag("keep_duplicates", keep_duplicates)


def _indices(label: str, value: Any) -> np.ndarray:
    """A one-dimensional array of whole numbers (indices of kept units), else InvalidArgument."""
    if isinstance(value, set | frozenset):
        value = list(value)
    if isinstance(value, str | bytes | dict) or value is None:
        array = None
    else:
        try:
            array = np.asarray(value)
        except (TypeError, ValueError, RecursionError):
            array = None
    if array is None or array.ndim != 1 or (array.size and array.dtype.kind not in "iu"):
        raise InvalidArgument(f"{label} must be the indices of the kept sentences (kept_indices), "
                              f"not {type(value).__name__}")
    return array
