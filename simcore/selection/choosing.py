"""Choosing the kept units from a stored score file with bounded memory.

Choosing the top K keeps a running heap of K (key, index) pairs; choosing a fraction finds the
cut-off in the score file by histogram refinement, with memory bounded by a chunk of scores.
A unit is eligible when it was scored, is not a duplicate of the target (unless duplicates are
kept) and has at least the cut-off's minimum number of tokens.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InvalidArgument, SimcoreError

CHUNK = 1 << 20          # scores read per chunk when choosing and writing
IN_MEMORY = 1 << 21      # candidates gathered in memory once the cut-off range is this small
BINS = 4096
MAX_MIN_TOKENS = 10_000


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

    def scores(self) -> np.ndarray:
        if self.n == 0:
            return np.zeros(0)
        return np.memmap(self.path / "scores.f64", dtype=np.float64, mode="r", shape=(self.n,))

    def duplicates(self) -> np.ndarray:
        if self.n == 0:
            return np.zeros(0, dtype=bool)
        return np.memmap(self.path / "dups.u8", dtype=np.uint8, mode="r", shape=(self.n,))

    def lengths(self) -> np.ndarray:
        """Tokens per unit (capped at 2**32 - 1); score sets stored by an older simcore have none."""
        if self.n == 0:
            return np.zeros(0, dtype=np.uint32)
        path = self.path / "lens.u32"
        if not path.is_file():
            raise SimcoreError("these scores were stored without sentence lengths (an older simcore); "
                               "run the selection again to use a minimum length")
        return np.memmap(path, dtype=np.uint32, mode="r", shape=(self.n,))


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
    """K from --top or --fraction (a fraction of all pool units, rounded, at least 1)."""
    if (top is None) == (fraction is None):
        raise SimcoreError("give either a number of sentences to keep (top K) or a fraction, not both")
    if top is not None:
        if isinstance(top, bool) or not isinstance(top, int | np.integer) or top < 1:
            raise SimcoreError(f"top K must be a whole number of at least 1, not {top!r}")
        return int(top)
    if not isinstance(fraction, int | float) or not math.isfinite(fraction) or not 0 < fraction <= 1:
        hint = f" (for {fraction:g}% give {fraction / 100:g})" if isinstance(fraction, int | float) and 1 < fraction <= 100 else ""
        raise SimcoreError(f"the fraction must be above 0 and at most 1, not {fraction!r}{hint}")
    return max(1, int(math.floor(fraction * n + 0.5)))


def choose(scores: ScoreSet, top: int | None = None, fraction: float | None = None,
           keep_duplicates: bool = False, chunk: int = CHUNK, in_memory: int = IN_MEMORY,
           min_tokens: int = 1) -> Cutoff:
    """The cut-off keeping the best K eligible units (top K: a heap; a fraction: the score file).

    Units with fewer than ``min_tokens`` tokens are not eligible: short units get extreme
    per-token scores (ppl, xent), and this leaves them out without scoring the pool again.
    """
    k = count_to_keep(scores.n, top, fraction)
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
    keys, eligible = _keys_and_eligible(scores, keep_duplicates, cutoff.min_tokens, start, stop)
    index = np.arange(start, stop)
    return eligible & ((keys < cutoff.key) | ((keys == cutoff.key) & (index <= cutoff.index)))


def kept_indices(scores: ScoreSet, cutoff: Cutoff, keep_duplicates: bool = False) -> np.ndarray:
    """Indices of the kept units (for comparing selections; K integers)."""
    parts = [np.flatnonzero(kept_mask(scores, cutoff, keep_duplicates, s, min(s + CHUNK, scores.n))) + s
             for s in range(0, scores.n, CHUNK)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """|A ∩ B| / |A ∪ B| of two selections given as index arrays."""
    union = np.union1d(a, b).size
    return float(np.intersect1d(a, b).size / union) if union else 1.0

