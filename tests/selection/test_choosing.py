"""The bounded-memory cut-offs agree with sorting everything."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from simcore.selection.choosing import (
    Cutoff,
    ScoreSet,
    choose,
    count_to_keep,
    jaccard,
    kept_indices,
    kept_mask,
)
from simcore.selection.options import SelectionOptions, with_method
from simcore.utils.errors import InvalidArgument, SimcoreError


def fake_scores(tmp_path: Path, values: np.ndarray, dups: np.ndarray, higher_kept: bool,
                lengths: np.ndarray | None = None) -> ScoreSet:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "scores.f64").write_bytes(values.astype(np.float64).tobytes())
    (tmp_path / "dups.u8").write_bytes(dups.astype(np.uint8).tobytes())
    if lengths is not None:
        (tmp_path / "lens.u32").write_bytes(lengths.astype(np.uint32).tobytes())
    return ScoreSet(tmp_path, "test", higher_kept, len(values))


def brute_force(values: np.ndarray, dups: np.ndarray, higher_kept: bool, k: int, keep_duplicates: bool,
                lengths: np.ndarray | None = None, min_tokens: int = 1) -> set[int]:
    keys = -values if higher_kept else values
    ok = np.isfinite(keys) & (keep_duplicates | (dups == 0))
    if lengths is not None:
        ok &= lengths >= min_tokens
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
    lengths = rng.integers(1, 12, size=n)
    scores = fake_scores(tmp_path / "s", values, dups, higher_kept, lengths)
    for k in (1, 7, 500, 2400, 10_000):
        for keep_duplicates in (False, True):
            for min_tokens in (1, 6):
                expected = brute_force(values, dups, higher_kept, k, keep_duplicates, lengths, min_tokens)
                # chunk and in-memory limits far below n force the streaming, refining paths
                by_heap = choose(scores, top=k, keep_duplicates=keep_duplicates, chunk=333, min_tokens=min_tokens)
                by_file = choose(scores, fraction=min(1.0, k / n), keep_duplicates=keep_duplicates, chunk=333,
                                 in_memory=40, min_tokens=min_tokens)
                assert set(kept_indices(scores, by_heap, keep_duplicates).tolist()) == expected
                if by_file.k == k:
                    assert set(kept_indices(scores, by_file, keep_duplicates).tolist()) == expected
                short = int((np.isfinite(values) & (lengths < min_tokens)).sum()) if min_tokens > 1 else 0
                assert by_heap.n_short == by_file.n_short == short
                assert by_heap.min_tokens == min_tokens


def test_scores_stored_without_lengths_choose_without_a_minimum_only(tmp_path):
    """Score sets from before lens.u32 (a workspace may point at one) still choose; a minimum asks for a rerun."""
    values = np.array([3.0, 1.0, 2.0, np.nan])
    scores = fake_scores(tmp_path / "old", values, np.zeros(4), higher_kept=False)
    cutoff = choose(scores, top=2)
    assert kept_indices(scores, cutoff).tolist() == [1, 2] and (cutoff.min_tokens, cutoff.n_short) == (1, 0)
    with pytest.raises(SimcoreError, match="without sentence lengths.*run the selection again"):
        choose(scores, top=2, min_tokens=2)


def test_a_minimum_no_sentence_reaches_says_so(tmp_path):
    values = np.array([1.0, 2.0, 3.0, 4.0])
    scores = fake_scores(tmp_path / "s", values, np.array([0, 0, 0, 1]), False, np.array([2, 4, 3, 9]))
    with pytest.raises(SimcoreError, match=r"fewer than 5 tokens \(the longest has 4\); give a smaller minimum"):
        choose(scores, top=2, min_tokens=5)
    assert kept_indices(scores, choose(scores, top=2, min_tokens=5, keep_duplicates=True), True).tolist() == [3]
    assert kept_indices(scores, choose(scores, top=2, min_tokens=3)).tolist() == [1, 2]


@pytest.mark.parametrize("bad", [0, -1, 10_001, 2.5, "3", True, None])
def test_bad_minimum_lengths_are_refused(tmp_path, bad):
    scores = fake_scores(tmp_path / "s", np.array([1.0, 2.0]), np.zeros(2), False, np.array([3, 3]))
    with pytest.raises(InvalidArgument, match="minimum sentence length must be a whole number of tokens from 1 to 10,000"):
        choose(scores, top=1, min_tokens=bad)


def test_jaccard():
    assert jaccard(np.array([1, 2, 3]), np.array([2, 3, 4])) == pytest.approx(0.5)
    assert jaccard(np.array([1]), np.array([1])) == 1.0




def test_jaccard_takes_lists_and_sets_and_refuses_masks():
    assert jaccard([1, 2, 3], {2, 3, 4}) == pytest.approx(0.5)   # |{2, 3}| / |{1, 2, 3, 4}|
    assert jaccard([], np.zeros(0, dtype=np.int64)) == 1.0
    for bad in (np.array([True, False]), "12", None, np.zeros((2, 2), dtype=int), [0.5], {"a": 1}, [1, "x"]):
        with pytest.raises(InvalidArgument, match="the second selection must be the indices of the kept sentences"):
            jaccard([1], bad)


def test_choosing_refuses_arguments_that_are_not_its_own(tmp_path):
    """Each public function of simcore.selection checks its arguments: InvalidArgument, one line."""
    scores = fake_scores(tmp_path / "s", np.array([3.0, 1.0, 2.0]), np.zeros(3), False)
    cutoff = choose(scores, top=2)
    assert kept_mask(scores, cutoff, False, 0, 3).tolist() == [False, True, True]  # the two lowest kept
    other = fake_scores(tmp_path / "o", np.array([1.0]), np.zeros(1), False)
    cases = [
        (lambda: choose("scores.csv", top=1), "scores must be a ScoreSet (from score_pool), not str"),
        (lambda: choose(scores, top=1, keep_duplicates="no"), "keep_duplicates must be True or False"),
        (lambda: choose(scores, top=1, chunk=0), "chunk must be a whole number of at least 1, not 0"),
        (lambda: kept_indices(scores, "cut"), "cutoff must be a Cutoff (from choose), not str"),
        (lambda: kept_indices(other, cutoff), "chosen on other scores: these have 1 sentences"),
        (lambda: kept_mask(scores, cutoff, False, 2, 1), "stop must be a whole number from 2 to 3"),
        (lambda: kept_mask(scores, cutoff, False, 0, 4), "stop must be a whole number from 0 to 3"),
        (lambda: kept_mask(scores, cutoff, False, None, 3), "start must be a whole number from 0 to 3"),
        (lambda: count_to_keep(-1, top=1), "the number of pool sentences must be a whole number of at least 0, not -1"),
        (lambda: count_to_keep(10, fraction=True), "the fraction must be above 0 and at most 1"),
        (lambda: ScoreSet(tmp_path, "ppl", "yes", 3), "ScoreSet.higher_kept must be True or False"),
        (lambda: ScoreSet(tmp_path, "ppl", False, -1), "ScoreSet.n must be a whole number of at least 0, not -1"),
        (lambda: ScoreSet(None, "ppl", False, 1), "ScoreSet.path must be the folder holding the scores"),
        (lambda: Cutoff(1.0, -1, 1, 1, 0, 0, 1), "Cutoff.index must be a whole number of at least 0, not -1"),
        (lambda: Cutoff("1.0", 0, 1, 1, 0, 0, 1), "Cutoff.key must be a number"),
        (lambda: with_method({"method": "ppl"}, "xent"), "options must be SelectionOptions, not dict"),
        (lambda: with_method(SelectionOptions(), "bm25"), "unknown selection method 'bm25'"),
    ]
    for call, message in cases:
        with pytest.raises(InvalidArgument, match=re.escape(message)) as caught:
            call()
        assert "\n" not in str(caught.value)
    assert ScoreSet(str(tmp_path), "ppl", False, 0).path == tmp_path


def test_scores_whose_files_are_gone_or_short_say_so(tmp_path):
    scores = fake_scores(tmp_path / "s", np.array([3.0, 1.0]), np.zeros(2), False)
    for broken in (ScoreSet(scores.path, "ppl", False, 5), ScoreSet(tmp_path / "gone", "ppl", False, 2)):
        with pytest.raises(SimcoreError, match="missing or incomplete; run the selection again"):
            choose(broken, top=1)
