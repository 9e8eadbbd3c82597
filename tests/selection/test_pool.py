"""The pool as a selection reads it: long lines cut into bounded units, batches and the sample bounded by
characters, and one index per unit in scoring, the sample, the written selection and the examples."""

from __future__ import annotations

import csv
import random

import numpy as np
import pytest

from simcore.corpora.corpus import Corpus
from simcore.corpora.tokenize import tokenize
from simcore.selection import pool as pool_module
from simcore.selection.driver import select
from simcore.selection.pool import (
    PoolPosition,
    pool_batches,
    pool_sample,
    pool_units,
    read_lines,
    split_text,
    unit_text,
)
from simcore.selection.view import texts_at

from .conftest import biology, options, write_conll, write_lines


def test_split_text_cuts_at_spaces_within_the_limit():
    text = "alpha beta gamma delta epsilon"
    pieces = list(split_text(text, 11))
    assert pieces == ["alpha beta", "gamma delta", "epsilon"] and " ".join(pieces) == text
    assert list(split_text("x" * 25, 10)) == ["x" * 10, "x" * 10, "x" * 5]  # no space: cut where it must
    assert list(split_text("short", 10)) == ["short"]


def _long_pool(tmp_path, limit: int) -> tuple[list[str], list[str]]:
    """Pool lines (two of them far longer than ``limit``) and the units a selection must read from them."""
    rng = random.Random(3)
    words = [w for s in biology(200, seed=9) for w in s.split()]
    long_a = " ".join(rng.choice(words) for _ in range(400))
    long_b = " ".join(rng.choice(words) for _ in range(900))
    lines = biology(30, seed=4)
    lines[7:7] = [long_a]
    lines[20:20] = [long_b]
    units = []
    for line in lines:
        units.extend(split_text(line, limit) if len(line) > limit else [line])
    return lines, units


def test_long_lines_become_bounded_units_counted(tmp_path, monkeypatch):
    monkeypatch.setattr(pool_module, "MAX_UNIT_CHARS", 500)
    lines, expected = _long_pool(tmp_path, 500)
    where = PoolPosition()
    units = list(pool_units(Corpus.from_path(write_lines(tmp_path / "pool.txt", lines)), where))
    assert [unit_text(u) for u in units] == expected and max(map(len, units)) <= 501  # a short line as read
    assert where.long_lines == 2 and where.pieces == len(expected) - (len(lines) - 2)
    # pre-tokenized units (CoNLL) are cut between tokens the same way
    conll = Corpus.from_path(write_conll(tmp_path / "pool.conll", lines))
    token_units = list(pool_units(conll))
    assert [" ".join(u) for u in token_units] == expected


def test_batches_close_by_characters_and_stay_consecutive(tmp_path, monkeypatch):
    monkeypatch.setattr(pool_module, "MAX_UNIT_CHARS", 500)
    monkeypatch.setattr(pool_module, "BATCH_CHARS", 1200)
    lines, expected = _long_pool(tmp_path, 500)
    pool = Corpus.from_path(write_lines(tmp_path / "pool.txt", lines))
    batches = list(pool_batches(pool, options("cosine").tokenizer, 1000))
    assert [t for b in batches for t in b.texts] == expected
    assert [b.start for b in batches] == list(np.cumsum([0] + [len(b.texts) for b in batches[:-1]]))
    assert all(sum(map(len, b.texts)) < 1200 + 500 for b in batches) and len(batches) > 3


def test_scores_sample_selection_and_examples_share_one_index(tmp_path, store, bio_target, monkeypatch):
    monkeypatch.setattr(pool_module, "MAX_UNIT_CHARS", 500)
    lines, units = _long_pool(tmp_path, 500)
    pool = Corpus.from_path(write_lines(tmp_path / "pool.txt", lines))
    out, table = tmp_path / "kept.txt", tmp_path / "scores.csv"
    opts = options("ppl", pool_sample=12)
    result = select(pool, Corpus.from_path(bio_target), opts, store, fraction=0.5, out=out, scores_csv=table,
                    min_tokens=1)
    assert result.scores.n == len(units) and result.scores.meta["long_lines"] == 2
    assert "2 pool lines were longer than 500 characters" in result.summary()
    lengths = result.scores.lengths()
    assert [int(x) for x in lengths] == [len(tokenize(u, opts.tokenizer)) for u in units]
    with open(table, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["text"] for r in rows] == units and [int(r["index"]) for r in rows] == list(range(len(units)))
    kept = [units[int(r["index"])] for r in rows if r["kept"] == "True"]
    assert out.read_text(encoding="utf-8").splitlines() == kept
    assert texts_at(pool, [0, 8, len(units) - 1]) == {i: units[i] for i in (0, 8, len(units) - 1)}
    sample = pool_sample(pool, _pool_fp(pool, opts), store, 12, opts.seed)
    index = np.load(sample.parent / "index.npy")
    assert read_lines(sample) == [units[i] for i in index]


def _pool_fp(pool: Corpus, opts) -> str:
    from simcore.selection.pool import pool_fingerprint

    return pool_fingerprint(pool, opts.tokenizer)


def test_the_pool_sample_keeps_to_its_character_budget(tmp_path, store, monkeypatch):
    monkeypatch.setattr(pool_module, "MAX_UNIT_CHARS", 500)
    monkeypatch.setattr(pool_module, "SAMPLE_CHARS", 3000)
    lines, units = _long_pool(tmp_path, 500)
    pool = Corpus.from_path(write_lines(tmp_path / "pool.txt", lines))
    path = pool_sample(pool, _pool_fp(pool, options("ppl")), store, 40, seed=5)
    meta = store.meta(path.parent)
    index = np.load(path.parent / "index.npy")
    texts = read_lines(path)
    assert texts == [units[i] for i in index] and list(index) == sorted(index)  # the second pass read the right ones
    assert sum(map(len, texts)) <= 3000 == meta["character_budget"] and meta["characters"] == sum(map(len, texts))
    assert meta["drawn"] == 40 and meta["left_out_for_characters"] == 40 - len(texts) > 0
    # within the budget the sample is every drawn unit, read in one pass
    monkeypatch.setattr(pool_module, "SAMPLE_CHARS", 10**9)
    whole = pool_sample(pool, _pool_fp(pool, options("ppl")), store, 40, seed=5)
    assert store.meta(whole.parent)["left_out_for_characters"] == 0 and len(read_lines(whole)) == 40


def test_the_entities_tagger_gets_bounded_pieces_in_bounded_groups(monkeypatch):
    from simcore.selection.methods import entities

    monkeypatch.setattr(entities, "_PIPE_CHARS", 100)
    texts = ["Paris " * 30, "short", "x" * 45, "Rome and Paris"]
    groups = list(entities._groups(texts, 40))
    pieces = [p for _, g in groups for p in g]
    assert all(len(p) <= 40 for p in pieces) and all(sum(map(len, g)) <= 100 for _, g in groups)
    owners = [r for o, _ in groups for r in o]
    assert owners == sorted(owners) and set(owners) == {0, 1, 2, 3}
    assert "".join(p for p, r in zip(pieces, owners) if r == 0).replace(" ", "") == "Paris" * 30
    assert entities.MAX_TAG_CHARS == 10_000



ZH = ["北京是中华人民共和国的首都。", "上海是中国最大的城市之一。", "今天的天气非常好，我们去公园散步。",
      "他在大学里学习计算机科学。", "这家餐厅的菜很好吃，价格也不贵。", "政府宣布了新的经济政策。"]
JA = ["東京は日本の首都です。", "今日はとても良い天気ですね。", "私は毎朝コーヒーを飲みます。",
      "新しい駅が来年開業する予定です。"]


@pytest.mark.parametrize("lines", [ZH * 5, JA * 5, ["Die Polizei meldete in der Nacht mehrere Unfälle."] * 10],
                         ids=["chinese", "japanese", "german"])
def test_the_pool_is_cut_into_words_as_matrix_cuts_it(tmp_path, store, lines):
    """select's pool tokens are matrix's (tokenize_corpus, the language's segmenter): a Chinese line is
    words, not one token per line."""
    from simcore.corpora.corpus import tokenize_corpus
    from simcore.corpora.tokenize import TokenizerOptions
    from simcore.selection.pool import pool_batches

    path = write_lines(tmp_path / "pool.txt", lines)
    corpus = Corpus.from_path(path)
    selected = [t for batch in pool_batches(corpus, TokenizerOptions(), 7) for t in batch.tokens]
    assert selected == list(tokenize_corpus(corpus, store, TokenizerOptions()).sentences())
    assert all(len(t) > 1 for t in selected)
