"""Scoring, caching, duplicates and counts through the driver; bad input raises SimcoreError."""

from __future__ import annotations

import numpy as np
import pytest

from simcore.corpora.corpus import Corpus
from simcore.selection.choosing import choose, count_to_keep, kept_indices
from simcore.selection.driver import score_pool, select
from simcore.selection.options import SelectionOptions
from simcore.utils.errors import InvalidArgument, SimcoreError

from .conftest import biology, football, mixed_pool, options, write_conll, write_lines

# --------------------------------------------------------------------------- duplicates, counts, outputs

def test_duplicates_of_target_are_flagged_and_excluded(tmp_path, store, bio_target):
    target_lines = [line.replace("\t", " ") for line in bio_target.read_text().split("\n\n")]
    copies = [" ".join(t.split()[0] for t in block.splitlines()).upper() for block in target_lines[:5]]
    pool_lines = biology(20, seed=10) + copies + football(20, seed=11)
    pool = write_lines(tmp_path / "pool.txt", pool_lines)
    scores = score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target), options("ppl"), store)
    flagged = np.flatnonzero(scores.duplicates())
    assert flagged.tolist() == list(range(20, 25))
    # The copies are among the best-scored sentences, yet never kept by default ...
    kept = kept_indices(scores, choose(scores, top=10))
    assert not set(kept) & set(range(20, 25))
    # ... unless asked for.
    kept_all = kept_indices(scores, choose(scores, top=25, keep_duplicates=True), keep_duplicates=True)
    assert set(range(20, 25)) <= set(kept_all)


def test_top_and_fraction_counts(tmp_path, store, bio_target):
    pool, _ = mixed_pool(tmp_path, biology(50, seed=12), football(70, seed=13))
    scores = score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target), options("xent"), store)
    assert choose(scores, top=17).n_kept == 17
    assert choose(scores, fraction=0.25).n_kept == 30          # 25% of 120
    dups = int(scores.duplicates().sum())                      # templates can repeat a target sentence
    assert choose(scores, fraction=1.0).n_kept == 120 - dups
    assert choose(scores, fraction=1.0, keep_duplicates=True).n_kept == 120
    assert choose(scores, top=500).n_kept == 120 - dups        # more than the pool: all of it
    assert count_to_keep(120, fraction=0.001) == 1


def test_scores_are_cached_and_reused(tmp_path, store, bio_target, monkeypatch):
    pool, _ = mixed_pool(tmp_path, biology(10, seed=16), football(10, seed=17))
    first = score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target), options("ppl"), store)
    monkeypatch.setattr("simcore.selection.driver.make_scorer", lambda *a, **k: pytest.fail("scored again"))
    second = score_pool(Corpus.from_path(pool), Corpus.from_path(bio_target), options("ppl"), store)
    assert second.path == first.path
    assert np.array_equal(second.scores(), first.scores())


# --------------------------------------------------------------------------- bounded-memory cut-off
# --------------------------------------------------------------------------- bad input

def test_bad_inputs_raise_simcore_errors(tmp_path, store, bio_target):
    pool = write_lines(tmp_path / "pool.txt", biology(10, seed=18))
    target = Corpus.from_path(bio_target)
    with pytest.raises(SimcoreError, match="unknown selection method"):
        SelectionOptions(method="bm25")
    with pytest.raises(SimcoreError, match="at least 1"):
        SelectionOptions(method="ppl", order=0)
    with pytest.raises(SimcoreError, match="fraction"):
        count_to_keep(10, fraction=0)
    with pytest.raises(SimcoreError, match="give 0.1"):
        count_to_keep(10, fraction=10)
    with pytest.raises(SimcoreError, match="top K"):
        count_to_keep(10, top=0)
    with pytest.raises(SimcoreError, match="either"):
        count_to_keep(10, top=3, fraction=0.5)
    with pytest.raises(SimcoreError, match="does not exist"):
        Corpus.from_path(tmp_path / "missing.txt")
    (tmp_path / "empty.txt").write_text("")
    with pytest.raises(SimcoreError, match="empty"):
        Corpus.from_path(tmp_path / "empty.txt")
    with pytest.raises(SimcoreError, match="not a spaCy pipeline directory"):
        score_pool(Corpus.from_path(pool), target, options("entities", pipeline=str(tmp_path)), store)
    with pytest.raises(SimcoreError, match="no entity label NOPE"):
        score_pool(Corpus.from_path(pool), target, options("entities", entity_labels="NOPE"), store)




# --------------------------------------------------------------------------- a minimum sentence length
# A wet-lab target with short protocol steps: under ppl the pool's one-liners score best.
STEPS = ["Mix well .", "Spin down briefly .", "Incubate overnight .", "Discard the supernatant ."]
WASHED = "The cells were washed twice with cold buffer and lysed on ice for ten minutes ."
SHORT_POOL = [  # (text, its tokens counted by hand)
    (WASHED, 16), ("Mix well .", 3), ("Spin down .", 3),
    ("Okafor scored twice as United beat Villa on Sunday to climb the table .", 14), ("Mix briefly .", 3),
    ("honestly the coffee was pretty good but way too expensive lol", 11), ("Discard well .", 3),
    ("do not waste your money .", 6), ("Incubate .", 2), (WASHED, 16), ("Spin down briefly .", 4),
    ("Protein samples were separated by gel electrophoresis and transferred to membranes .", 12), ("Mix .", 2),
    ("Incubate the supernatant overnight .", 5), ("my laptop broke again and customer service was useless", 9),
]


def top_k_by_numpy(values: np.ndarray, dups: np.ndarray, lengths: np.ndarray, k: int, min_tokens: int) -> list[int]:
    """Lowest k scores among scored, non-duplicate units of at least min_tokens tokens; ties by pool order."""
    index = np.flatnonzero(np.isfinite(values) & (dups == 0) & (lengths >= min_tokens))
    return sorted(index[np.lexsort((index, values[index]))][:k].tolist())


@pytest.fixture
def short_pool_scores(tmp_path, store):
    target = write_conll(tmp_path / "steps.conll", biology(60, seed=1) + STEPS * 10)
    pool = write_lines(tmp_path / "short_pool.txt", [text for text, _ in SHORT_POOL])
    return score_pool(Corpus.from_path(pool), Corpus.from_path(target), options("ppl"), store)


def test_lengths_are_stored_and_a_minimum_leaves_short_sentences_out(short_pool_scores):
    scores = short_pool_scores
    lengths = np.array([n for _, n in SHORT_POOL])
    assert (scores.path / "lens.u32").stat().st_size == 4 * len(SHORT_POOL)
    assert scores.lengths().dtype == np.uint32 and scores.lengths().tolist() == lengths.tolist()
    values, dups = np.asarray(scores.scores()), np.asarray(scores.duplicates())
    assert np.flatnonzero(dups).tolist() == [1, 10]  # copies of target steps
    # the premise: without a minimum the best-scored sentences are the one-liners
    assert all(lengths[i] <= 3 for i in kept_indices(scores, choose(scores, top=4)))
    for min_tokens in (1, 3, 4, 6, 12):
        for k in (1, 3, 5, 20):
            cutoff = choose(scores, top=k, min_tokens=min_tokens)
            expected = top_k_by_numpy(values, dups, lengths, k, min_tokens)
            assert kept_indices(scores, cutoff).tolist() == expected
            assert cutoff.n_kept == len(expected)
            assert cutoff.n_short == (int((lengths < min_tokens).sum()) if min_tokens > 1 else 0)
        by_fraction = choose(scores, fraction=0.2, min_tokens=min_tokens)   # 3 of 15, by the score file
        assert kept_indices(scores, by_fraction).tolist() == top_k_by_numpy(values, dups, lengths, 3, min_tokens)
    # a tie: both copies of WASHED score alike; with one place left the earlier is kept
    assert values[0] == values[9]
    at_least_14 = choose(scores, top=2, min_tokens=14)
    assert kept_indices(scores, at_least_14).tolist() == [0, 9] and at_least_14.n_short == 12
    assert kept_indices(scores, choose(scores, top=1, min_tokens=16)).tolist() == [0]


def test_select_writes_only_long_enough_sentences(tmp_path, short_pool_scores, store):
    target = Corpus.from_path(tmp_path / "steps.conll")
    pool = Corpus.from_path(tmp_path / "short_pool.txt")
    out = tmp_path / "SELECTED.txt"
    result = select(pool, target, options("ppl"), store, top=3, out=out, min_tokens=6)
    values, dups = np.asarray(short_pool_scores.scores()), np.asarray(short_pool_scores.duplicates())
    expected = top_k_by_numpy(values, dups, np.array([n for _, n in SHORT_POOL]), 3, 6)
    assert out.read_text(encoding="utf-8").splitlines() == [SHORT_POOL[i][0] for i in expected]
    assert result.cutoff.min_tokens == 6 and result.cutoff.n_short == 8
    assert "8 scored pool sentences have fewer than 6 tokens (excluded as too short)" in result.summary()
    with pytest.raises(SimcoreError, match="fewer than 17 tokens \\(the longest has 16\\); give a smaller minimum"):
        select(pool, target, options("ppl"), store, top=3, min_tokens=17)
    for bad in (0, -1, 10_001, 2.0, True, "5"):
        with pytest.raises(InvalidArgument, match="minimum sentence length"):
            select(pool, target, options("ppl"), store, top=3, min_tokens=bad)


def test_the_example_tables_say_why_a_sentence_was_left_out(tmp_path, short_pool_scores):
    from simcore.selection.view import examples_table

    scores, lengths = short_pool_scores, [n for _, n in SHORT_POOL]
    cutoff = choose(scores, top=3, min_tokens=4)
    kept = set(kept_indices(scores, cutoff).tolist())
    table = examples_table(Corpus.from_path(tmp_path / "short_pool.txt"), scores, cutoff, keep_duplicates=False, n=20)
    dups = np.asarray(scores.duplicates())
    for row in table.itertuples():
        assert row.text == SHORT_POOL[row.index][0] and row.tokens == lengths[row.index]
        expected = ("" if row.index in kept else "duplicate of the target" if dups[row.index]
                    else "under 4 tokens" if lengths[row.index] < 4 else "score")
        assert row.left_out == expected
    dropped = table[table["group"] == "first dropped"]
    assert set(dropped["left_out"]) == {"duplicate of the target", "under 4 tokens", "score"}
    assert set(table.loc[table["group"] == "best kept", "index"]) == kept


def test_null_hub_rows_are_counted_and_said(tmp_path, store):
    """A Hub-style target (and a Parquet pool) with null rows: the rows are skipped, counted in the stored
    scores' notes and said in the summary (they were dropped unsaid)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from simcore.selection.driver import select
    from simcore.selection.options import SelectionOptions

    lines = biology(120, seed=9)
    tokens = [None if i % 5 == 0 else line.split() for i, line in enumerate(lines)]  # 24 null rows
    tags = [None if t is None else [0] * len(t) for t in tokens]
    (tmp_path / "hub").mkdir()
    pq.write_table(pa.table({"tokens": tokens, "ner_tags": tags}), tmp_path / "hub" / "test.parquet")
    (tmp_path / "hub" / "dataset_info.json").write_text('{"features": {"ner_tags": {"feature": {"names": ["O"]}}}}')
    pool_lines = football(60, seed=10) + biology(60, seed=11)
    texts = [None if i % 6 == 0 else t for i, t in enumerate(pool_lines)]  # 20 null cells
    pq.write_table(pa.table({"text": texts}), tmp_path / "pool.parquet")
    result = select(Corpus.from_path(tmp_path / "pool.parquet"), Corpus.from_path(tmp_path / "hub"),
                    SelectionOptions(method="ppl", batch=37), store, top=5)
    meta = result.scores.meta
    assert meta["target_notes"]["skipped"] == 24 and meta["pool_notes"]["skipped"] == 20
    assert result.scores.n == 100
    summary = result.summary()
    assert "pool pool: 20 lines skipped" in summary and "target hub: 24 lines skipped" in summary
