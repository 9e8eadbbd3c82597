"""The bounded-memory cut-offs agree with sorting everything."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simcore.selection import ScoreSet, choose, jaccard, kept_indices


def fake_scores(tmp_path: Path, values: np.ndarray, dups: np.ndarray, higher_kept: bool) -> ScoreSet:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "scores.f64").write_bytes(values.astype(np.float64).tobytes())
    (tmp_path / "dups.u8").write_bytes(dups.astype(np.uint8).tobytes())
    return ScoreSet(tmp_path, "test", higher_kept, len(values))


def brute_force(values: np.ndarray, dups: np.ndarray, higher_kept: bool, k: int, keep_duplicates: bool) -> set[int]:
    keys = -values if higher_kept else values
    ok = np.isfinite(keys) & (keep_duplicates | (dups == 0))
    index = np.flatnonzero(ok)
    order = np.lexsort((index, keys[index]))
    return set(index[order[:k]].tolist())


@pytest.mark.parametrize("kind", ["floats", "ties"])
@pytest.mark.parametrize("higher_kept", [True, False])
def test_heap_and_histogram_cutoffs_agree_with_sorting(tmp_path, kind, higher_kept):
    rng = np.random.default_rng(3)
    n = 5000
    values = rng.normal(size=n) if kind == "floats" else rng.integers(0, 4, size=n).astype(float)
    values[rng.choice(n, 50, replace=False)] = np.nan
    values[:100] = values[0] if kind == "floats" else values[:100]   # a block of equal values
    dups = (rng.random(n) < 0.05).astype(np.uint8)
    scores = fake_scores(tmp_path / "s", values, dups, higher_kept)
    for k in (1, 7, 500, 2400, 10_000):
        for keep_duplicates in (False, True):
            expected = brute_force(values, dups, higher_kept, k, keep_duplicates)
            # chunk and in-memory limits far below n force the streaming, refining paths
            by_heap = choose(scores, top=k, keep_duplicates=keep_duplicates, chunk=333)
            by_file = choose(scores, fraction=min(1.0, k / n), keep_duplicates=keep_duplicates, chunk=333,
                             in_memory=40)
            assert set(kept_indices(scores, by_heap, keep_duplicates).tolist()) == expected
            if by_file.k == k:
                assert set(kept_indices(scores, by_file, keep_duplicates).tolist()) == expected


def test_jaccard():
    assert jaccard(np.array([1, 2, 3]), np.array([2, 3, 4])) == pytest.approx(0.5)
    assert jaccard(np.array([1]), np.array([1])) == 1.0


