"""The recommendation: constructed matrices whose answer is known by hand, ties and confidence computed
directly from the replicates, and the real corpora (Table 3's winners; a source's own held-out text)."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from simcore.analysis import read_matrix
from simcore.corpus import Corpus, sample_corpus
from simcore.errors import SimcoreError
from simcore.ladder import SIZE_DIRECTION, size_bias
from simcore.matrix import Workbench, corpora_in, encode_replicates
from simcore.measures import get_measure
from simcore.recommendation import pairwise_table, recommend, recommendation_table
from simcore.store import ArtefactStore

from .conftest import SAMPLE_DATA

SOURCES = ["alpha", "beta", "gamma"]


def constructed(values: dict[str, list[float]], noise: dict[str, float] | None = None, target: str = "t",
                **columns) -> pd.DataFrame:
    """A long table: measure -> values for SOURCES, with paired normal replicates of the given noise."""
    rng = np.random.default_rng(0)
    rows = []
    for measure, vals in values.items():
        shared = rng.standard_normal(200)  # the target-side part every source shares in a replicate
        for source, value in zip(SOURCES, vals):
            sd = (noise or {}).get(measure, 0.0)
            reps = value + sd * (0.5 * shared + rng.standard_normal(200)) if sd else None
            rows.append({"source": source, "target": target, "measure": measure, "value": value,
                         "direction": get_measure(measure).direction,
                         "replicates": encode_replicates(reps.tolist()) if reps is not None else None, **columns})
    return pd.DataFrame(rows)


def test_the_pretraining_decides_which_measures_carry_it():
    # PPL and JSD agree on alpha; TVC, TVcC and WVV all favour beta
    table = constructed({"ppl": [100, 300, 400], "jsd": [0.3, 0.5, 0.6], "tvc": [0.6, 0.9, 0.5],
                         "tvcc": [0.5, 0.8, 0.4], "wvv": [3e-4, 1e-4, 5e-4]},
                        noise={"ppl": 5, "jsd": 0.01, "tvc": 0.01, "tvcc": 0.01, "wvv": 1e-5})
    lm = recommend(table, "lm")[0]
    vectors = recommend(table, "vectors")[0]
    assert lm.recommended == ["alpha"] and lm.level == "high" and lm.measures == ["ppl", "jsd"]
    assert vectors.recommended == ["beta"] and vectors.level == "high" and vectors.measures == ["tvcc", "tvc", "wvv"]
    assert "PPL and JSD both rank alpha first" in lm.reason and "TVC prefers beta" in lm.reason


def test_one_outlier_measure_cannot_flip_the_answer():
    # the bundled-sample failure: every measure but WVV puts alpha first; WVV puts it last
    table = constructed({"ppl": [100, 120, 130], "jsd": [0.30, 0.35, 0.36], "tvc": [0.9, 0.8, 0.7],
                         "tvcc": [0.9, 0.8, 0.7], "wvv": [9e-4, 1e-4, 2e-4]},
                        noise={"ppl": 2, "jsd": 0.005, "tvc": 0.01, "tvcc": 0.01, "wvv": 1e-5})
    assert recommend(table, "lm")[0].recommended == ["alpha"]
    assert recommend(table, "vectors")[0].recommended == ["alpha"]


def test_sources_within_noise_are_an_honest_tie_and_confidence_is_the_replicate_share():
    table = constructed({"ppl": [100.0, 100.5, 300.0]}, noise={"ppl": 4.0})
    rec = recommend(table, "lm")[0]
    reps = {r.source: np.array([float(v) for v in r.replicates.split()]) for r in table.itertuples()}
    alpha_wins = np.mean(reps["alpha"] < reps["beta"])  # gamma never wins
    assert 0.2 < alpha_wins < 0.8
    assert rec.level == "tie" and sorted(rec.recommended) == ["alpha", "beta"]
    # each source's share of the votes is the share of replicates it is first in; no single 100% for a tie
    assert rec.shares["alpha"] == pytest.approx(alpha_wins) and rec.shares["beta"] == pytest.approx(1 - alpha_wins)
    assert rec.confidence == pytest.approx(max(alpha_wins, 1 - alpha_wins)) and rec.confidence < 1
    assert f"alpha {alpha_wins:.0%}" in rec.confidence_text() and "100%" not in rec.confidence_text()
    assert recommendation_table([rec]).loc[0, "recommended"] in ("alpha|beta", "beta|alpha")


def test_measures_that_disagree_by_a_wide_margin_are_a_disagreement_never_high():
    # PPL puts alpha first, JSD beta, each far beyond its noise: every replicate is the same split
    table = constructed({"ppl": [100, 200, 300], "jsd": [0.5, 0.3, 0.6]}, noise={"ppl": 1, "jsd": 0.001})
    rec = recommend(table, "lm")[0]
    assert rec.level == "disagree" and sorted(rec.recommended) == ["alpha", "beta"]
    assert rec.firsts == {"ppl": "alpha", "jsd": "beta"}
    assert max(rec.shares.values()) <= 0.5 and rec.confidence <= 0.5
    assert "PPL ranks alpha first" in rec.reason and "JSD ranks beta first" in rec.reason
    assert "disagree" in rec.headline() and "100%" not in rec.confidence_text()


def test_a_measure_that_separates_another_source_keeps_the_answer_below_high():
    # three measures for word vectors: TVcC and TVC put alpha first, WVV puts beta first by far
    table = constructed({"tvcc": [0.9, 0.8, 0.7], "tvc": [0.9, 0.8, 0.7], "wvv": [5e-4, 1e-4, 6e-4]},
                        noise={"tvcc": 0.005, "tvc": 0.005, "wvv": 1e-6})
    rec = recommend(table, "vectors")[0]
    assert rec.recommended == ["alpha"] and rec.level == "moderate"
    assert rec.confidence == pytest.approx(2 / 3, abs=0.02)  # two of the three measures' votes
    assert "WVV puts beta ahead" in rec.reason


def test_a_tie_names_each_carrying_measures_first_choice():
    # TVcC puts alpha first, TVC gamma first, each within a hair; beta second for both
    table = constructed({"tvcc": [0.80, 0.79, 0.5], "tvc": [0.5, 0.79, 0.80]}, noise={"tvcc": 0.02, "tvc": 0.02})
    rec = recommend(table, "vectors")[0]
    assert rec.level in ("tie", "disagree")
    assert {"alpha", "gamma"} <= set(rec.recommended)
    for source in rec.recommended:
        assert f"{source} {rec.shares[source]:.0%}" in rec.reason


def ladder_table(small_at_small: float, big_at_small: float, big_at_big: float, other_at_big: float) -> pd.DataFrame:
    """PPL for three sources: 'small' has 10k tokens, 'big' and 'other' 1M; the table is at 10k tokens
    and 'big' and 'other' also meet at 1M (their ladder)."""
    rng = np.random.default_rng(1)

    def reps(v):
        return encode_replicates((v * (1 + 0.002 * rng.standard_normal(200))).tolist())

    rows = []
    for source, at_small, at_big in (("small", small_at_small, None), ("big", big_at_small, big_at_big),
                                     ("other", big_at_small * 1.5, other_at_big)):
        ladder = None if at_big is None else json.dumps({"1000000": {"value": at_big, "replicates": reps(at_big)}})
        rows.append({"source": source, "target": "t", "measure": "ppl", "value": at_small,
                     "replicates": reps(at_small), "sample_tokens": 10_000,
                     "source_tokens": 10_000 if source == "small" else 1_000_000, "ladder": ladder})
    return pd.DataFrame(rows)


def test_pairs_of_sources_meet_at_the_largest_size_both_have():
    # at 10k tokens big beats small (900 < 1000); at 1M big beats other (1400 < 2000): big wins
    rec = recommend(ladder_table(1000, 900, 1400, 2000))[0]
    assert rec.recommended == ["big"] and "10,000 to 1,000,000 tokens" in rec.reason
    pairs = pairwise_table(ladder_table(1000, 900, 1400, 2000), "t")
    row = pairs[(pairs.source_a == "big") & (pairs.source_b == "other")].iloc[0]
    assert (row.tokens, row.value_a, row.value_b, row.better) == (1_000_000, 1400, 2000, "big")
    row = pairs[(pairs.source_a == "big") & (pairs.source_b == "small")].iloc[0]
    assert (row.tokens, row.value_a, row.value_b, row.better) == (10_000, 900, 1000, "big")
    # at 1M, big's PPL (1400) is worse than small's at 10k (1000), which a comparison across sizes would
    # count against big; compared at 10k the small source loses
    assert recommend(ladder_table(1000, 1100, 1400, 2000))[0].recommended == ["small"]


def test_without_uncertainty_the_confidence_is_unknown():
    rec = recommend(constructed({"ppl": [100, 200, 300]}), "lm")[0]
    assert rec.recommended == ["alpha"] and rec.level == "unknown" and np.isnan(rec.confidence)


def test_wvv_below_its_reliable_size_is_left_out():
    table = constructed({"tvc": [0.5, 0.9, 0.4], "wvv": [1e-4, 9e-4, 9e-4]}, noise={"tvc": 0.01, "wvv": 1e-5},
                        reliable=False, sample_tokens=8419)
    rec = recommend(table, "vectors")[0]
    assert rec.measures == ["tvc"] and rec.recommended == ["beta"] and "WVV left out" in rec.reason


def test_bad_arguments_give_simcore_errors():
    with pytest.raises(SimcoreError, match="pretraining"):
        recommend(constructed({"ppl": [1, 2, 3]}), "bert")
    with pytest.raises(SimcoreError, match="similarity table"):
        recommend(pd.DataFrame({"x": [1]}))


def test_the_bundled_sample_read_back_from_csv_gives_the_same_answer(store, tmp_path):
    table = Workbench(store).matrix(corpora_in(SAMPLE_DATA / "sources"), corpora_in(SAMPLE_DATA / "targets"),
                                    ["ppl", "jsd", "tvc"])
    table.to_csv(tmp_path / "m.csv", index=False)
    direct = {r.target: (r.recommended, r.confidence) for r in recommend(table)}
    assert {r.target: (r.recommended, r.confidence) for r in recommend(read_matrix(tmp_path / "m.csv"))} == direct
    assert direct["news_ner"][0] == ["news"] and direct["lab_protocol_ner"][0] == ["lab_protocols"]
    # every source in the table at the smallest one's size; the larger ones also at 10k tokens, where pairs meet
    assert table["sample_tokens"].nunique() == 1 and table["sample_tokens"].iloc[0] == table["source_tokens"].min()
    assert not table["used_whole"].any()
    # 10k tokens is not 3x the table's 8,419: every pair meets at the table's size, no ladder sample
    assert table["ladder"].isna().all()
    # below the 100k tokens at which PPL's rankings settle: said, and not "high" where a close call rests on it
    for r in recommend(table):
        assert "below the 100,000" in r.reason
        assert r.level != "high" or "within noise" not in r.reason


TABLE3_WINNERS = {"conll2003": "news_1bwb", "craft": "biomed_ohsumed_medline", "jnlpba": "biomed_ohsumed_medline",
                  "scienceie": "biomed_ohsumed_medline", "wetlab_wlp": "biomed_ohsumed_medline"}


@pytest.mark.shared_data
def test_table3_winners_on_the_real_corpora(shared_data, store):
    sources = corpora_in(shared_data / "sources")
    targets = [Corpus.from_path(shared_data / "targets" / t / "test.conll", name=t) for t in TABLE3_WINNERS]
    table = Workbench(store).matrix(sources, targets, ["ppl", "jsd"])
    for rec in recommend(table, "lm"):
        assert rec.recommended == [TABLE3_WINNERS[rec.target]], rec.reason
        assert rec.level == "high", rec.reason


@pytest.mark.shared_data
def test_a_held_out_part_of_each_source_gets_its_own_source(shared_data, store, tmp_path):
    for kind in ("sources", "targets"):
        (tmp_path / kind).mkdir()
    for path in sorted((shared_data / "sources").glob("*.txt.gz")):
        name = path.name.removesuffix(".txt.gz")
        with gzip.open(path, "rt", encoding="utf-8") as f:
            units = [line for _, line in zip(range(6000), f) if line.strip()]
        held = set(random.Random(3).sample(range(len(units)), 300))
        (tmp_path / "sources" / f"{name}.txt").write_text("".join(u for i, u in enumerate(units) if i not in held))
        (tmp_path / "targets" / f"{name}.txt").write_text("".join(units[i] for i in sorted(held)))
    table = Workbench(store).matrix(corpora_in(tmp_path / "sources"), corpora_in(tmp_path / "targets"), ["ppl", "jsd"])
    for rec in recommend(table, "lm"):
        assert rec.recommended == [rec.target], rec.reason


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory) -> ArtefactStore:
    """One store for the size checks below, so that their common samples are built once."""
    return ArtefactStore(tmp_path_factory.mktemp("size-store"))


def cut_copy(source: Path, tokens: int, out: Path) -> Corpus:
    """A random cut of about ``tokens`` whitespace tokens of a shared source."""
    with gzip.open(source, "rt", encoding="utf-8") as f:
        units = [line for line in f if line.strip()]
    random.Random(5).shuffle(units)
    kept, count = [], 0
    for unit in units:
        if count >= tokens:
            break
        kept.append(unit)
        count += len(unit.split())
    out.write_text("".join(kept))
    return Corpus.from_path(out)


@pytest.mark.shared_data
def test_the_size_bias_is_worded_the_way_it_was_measured(shared_data, shared_store):
    bench = Workbench(shared_store)
    tokenized = bench.tokenize(Corpus.from_path(shared_data / "sources" / "news_1bwb.txt.gz"))
    target = bench.target(Corpus.from_path(shared_data / "targets" / "conll2003" / "test.conll", name="conll2003"))
    small = [sample_corpus(tokenized, 10_000, 0, shared_store)]
    large = [sample_corpus(tokenized, 100_000, 0, shared_store)]
    from simcore.measures import PreparedSource

    for name in ("ppl", "jsd", "tvc"):
        value = {label: bench.cell([PreparedSource(s, shared_store, bench.options) for s in samples], target,
                                   name).value for label, samples in (("small", small), ("large", large))}
        looks_more_similar = get_measure(name).direction * (value["small"] - value["large"]) > 0
        assert SIZE_DIRECTION[name] == (1 if looks_more_similar else -1), (name, value)
        assert f"look {'more' if looks_more_similar else 'less'} similar" in size_bias(name)


@pytest.mark.shared_data
def test_a_small_cut_of_a_wrong_register_source_never_wins_because_it_is_small(shared_data, shared_store, tmp_path):
    # the case: a 10k-token cut of Yelp had the lowest PPL on CoNLL2003 beside the full sources
    names = ["news_1bwb", "reviews_yelp"]
    sources = [Corpus.from_path(shared_data / "sources" / f"{n}.txt.gz") for n in names]
    sources.append(cut_copy(shared_data / "sources" / "reviews_yelp.txt.gz", 10_000, tmp_path / "yelp_cut10k.txt"))
    targets = [Corpus.from_path(shared_data / "targets" / "conll2003" / "test.conll", name="conll2003")]
    table = Workbench(shared_store).matrix(sources, targets, ["ppl", "jsd"])
    answer = recommend(table, "lm")[0]
    assert answer.recommended == ["news_1bwb"], answer.reason
    pairs = pairwise_table(table, "conll2003")
    big = pairs[(pairs.source_a == "news_1bwb") & (pairs.source_b == "reviews_yelp") & (pairs.measure == "ppl")]
    assert big.tokens.iloc[0] == 300_000  # the two full sources meet at their common rung
    with_cut = pairs[(pairs.source_a == "news_1bwb") & (pairs.source_b == "yelp_cut10k")]
    assert (with_cut.tokens == table.loc[table.source == "yelp_cut10k", "sample_tokens"].iloc[0]).all()
    assert (with_cut.better == "news_1bwb").all()


@pytest.mark.shared_data
def test_mixed_sizes_the_bundled_sample_beside_two_real_sources(shared_data, shared_store):
    sources = corpora_in(SAMPLE_DATA / "sources")
    sources += [Corpus.from_path(shared_data / "sources" / f"{n}.txt.gz")
                for n in ("news_1bwb", "biomed_ohsumed_medline")]
    targets = [Corpus.from_path(shared_data / "targets" / t / "test.conll", name=t) for t in ("conll2003", "wetlab_wlp")]
    table = Workbench(shared_store).matrix(sources, targets, ["ppl", "jsd"])
    answers = {r.target: r for r in recommend(table, "lm")}
    assert answers["conll2003"].recommended[0] in ("news", "news_1bwb"), answers["conll2003"].reason
    assert answers["wetlab_wlp"].recommended[0] in ("lab_protocols", "biomed_abstracts", "biomed_ohsumed_medline"), \
        answers["wetlab_wlp"].reason
    for answer in answers.values():
        if answer.level in ("tie", "disagree"):
            assert max(answer.shares.values()) < 1


def test_a_close_call_below_the_settled_size_is_not_high_but_a_clear_one_can_be():
    clear = constructed({"ppl": [100, 300, 400]}, noise={"ppl": 2}, sample_tokens=10_000, reliable=False)
    close = constructed({"ppl": [100, 101, 400]}, noise={"ppl": 0.6}, sample_tokens=10_000, reliable=False)
    assert recommend(clear)[0].level == "high"
    rec = recommend(close)[0]
    assert rec.recommended == ["alpha"] or rec.level == "tie"
    if rec.recommended == ["alpha"]:
        assert rec.level == "moderate" and "within noise of beta under PPL at 10,000 tokens" in rec.reason


def test_many_targets_at_once_give_the_answers_of_one_target_at_a_time():
    from simcore import recommendation as module
    from simcore.pairwise import TargetRows

    rng = np.random.default_rng(4)
    rows = []
    for t in range(40):  # close values and small noise: ties, disagreements and clear winners all occur
        for measure, base, sd in (("ppl", 500, 8), ("jsd", 0.5, 0.004)):
            for s in range(6):
                value = base * (0.8 if t < 10 and s == 0 else 1 + 0.03 * rng.random())
                reps = value + sd * rng.standard_normal(50)
                rows.append({"source": f"s{s}", "target": f"t{t:02d}", "measure": measure, "value": value,
                             "replicates": encode_replicates(reps.tolist()), "sample_tokens": 100_000})
    table = pd.DataFrame(rows)
    parts = TargetRows.split(table)
    batch = module._recommend_batch(parts, "lm")
    one_by_one = [module._recommend_target(t, p, "lm") for t, p in parts]
    assert batch is not None and [b.as_dict() for b in batch] == [o.as_dict() for o in one_by_one]
    assert {b.level for b in batch} >= {"tie", "high"}
    # a target of another shape (a ladder) is answered one at a time, the same way
    odd = table[table.target == "t00"].assign(target="zz_odd", ladder=None)
    assert module._recommend_batch(TargetRows.split(odd.assign(
        ladder=json.dumps({"1": {"value": 1, "replicates": "1"}}))), "lm") is None
    assert [r.as_dict() for r in recommend(pd.concat([table, odd]))][:-1] == [o.as_dict() for o in one_by_one]
