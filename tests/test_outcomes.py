"""simcore.outcomes: measured outcome tables summarised by hand (statistics.stdev), ties within the seed
spread, what an answer says beside its level, a user's probe result beside the answer."""

from __future__ import annotations

import math
import statistics

import pandas as pd

from simcore.answer.recommendation import recommend
from simcore.outcomes import (
    BASELINE,
    MEASURED,
    NOT_A_PROMISE,
    kind_outcome,
    load_measured,
    probe_note,
    shipped_outcome,
    summarize,
    with_outcomes,
)

from .test_recommendation import constructed


def _row(kind: str, target: str, source: str, f1: float, std: float) -> dict:
    return {
        "kind": kind,
        "target": target,
        "source": source,
        "seeds": 5,
        "f1": f1,
        "f1_std": std,
        "source_tokens": 400_000,
        "train_sentences": 500,
        "test_sentences": 500,
        "device": "2-core CPU",
        "caps": "",
    }


# A hand-made outcome table, word vectors, three targets (margin of a pair = sqrt(std_a² + std_b²)):
# T1: best a 50.0 ± 0.6, worst c 49.5 ± 0.8: 0.5 < 1.0 -> the choice ties; best vs (none) 49.0 ± 0.8: 1.0 = 1.0,
#     not more than the margin -> not above the baseline
# T2: best a 60.0 ± 0.3, worst b 58.0 ± 0.4: 2.0 > 0.5 -> separated; a vs (none) 57.0 ± 0.4: 3.0 > 0.5 -> above
# T3: b 40.2 ± 1.0, c 40.0 ± 1.0, a 39.9 ± 0.5: 0.3 < sqrt(1.25) -> tie; no baseline row
HAND = pd.DataFrame(
    [
        _row("vectors", "T1", "a", 50.0, 0.6),
        _row("vectors", "T1", "b", 49.8, 0.7),
        _row("vectors", "T1", "c", 49.5, 0.8),
        _row("vectors", "T1", BASELINE, 49.0, 0.8),
        _row("vectors", "T2", "a", 60.0, 0.3),
        _row("vectors", "T2", "b", 58.0, 0.4),
        _row("vectors", "T2", BASELINE, 57.0, 0.4),
        _row("vectors", "T3", "a", 39.9, 0.5),
        _row("vectors", "T3", "b", 40.2, 1.0),
        _row("vectors", "T3", "c", 40.0, 1.0),
        # the LM runs: both targets separated
        _row("lm", "T1", "a", 70.0, 0.2),
        _row("lm", "T1", "b", 65.0, 0.2),
        _row("lm", "T2", "a", 80.0, 0.5),
        _row("lm", "T2", "b", 75.0, 0.5),
    ]
)


def test_summarize_gives_the_mean_and_the_sample_spread_over_seeds():
    runs = pd.DataFrame(
        {
            "target": ["t"] * 5 + ["t"] * 3,
            "source": ["x"] * 5 + [BASELINE] * 3,
            "seed": [0, 1, 2, 3, 4, 0, 1, 2],
            "f1": [50.0, 51.5, 49.0, 52.0, 50.5, 40.0, 41.0, 45.0],
        }
    )
    table = summarize(runs, "vectors", source_tokens=1000, device="cpu").set_index("source")
    assert table.loc["x", "seeds"] == 5 and table.loc[BASELINE, "seeds"] == 3
    assert math.isclose(table.loc["x", "f1"], statistics.mean([50.0, 51.5, 49.0, 52.0, 50.5]))
    assert math.isclose(table.loc["x", "f1_std"], statistics.stdev([50.0, 51.5, 49.0, 52.0, 50.5]))
    assert math.isclose(table.loc[BASELINE, "f1_std"], statistics.stdev([40.0, 41.0, 45.0]))
    assert set(table["kind"]) == {"vectors"} and set(table["source_tokens"]) == {1000}


def test_kind_outcome_counts_targets_whose_sources_differ_beyond_the_seed_spread():
    vectors = kind_outcome(HAND, "vectors")
    assert vectors.targets == 3 and vectors.separated == ["T2"] and vectors.above_baseline == 1
    assert vectors.matters_little  # 1 of 3 separated
    assert (
        "differed by less than the seed spread for 2 of 3 targets (400,000 tokens per source, 5 seeds)"
        in vectors.short()
    )
    assert vectors.short().endswith("the choice matters little here")
    lm = kind_outcome(HAND, "lm")
    assert lm.separated == ["T1", "T2"] and not lm.matters_little
    assert "for 0 of 2 targets" in lm.short() and lm.short().endswith(
        "the choice mattered for most targets"
    )
    assert kind_outcome(HAND, "other") is None


def _high_vectors_answer():
    table = constructed(
        {"tvc": [0.6, 0.9, 0.5], "tvcc": [0.5, 0.8, 0.4]}, noise={"tvc": 0.01, "tvcc": 0.01}
    )
    plain = recommend(table, "vectors", outcomes=False)[0]
    assert plain.level == "high" and plain.outcome == ""
    return table, plain


def test_the_answer_names_its_level_as_agreement_and_adds_the_measured_outcomes():
    table, plain = _high_vectors_answer()
    told = with_outcomes([plain], measured=HAND)[0]
    line = told.headline()
    assert line.startswith("t: pretrain on beta; the measures agree: 100% of the votes (high); ")
    assert (
        "measured outcomes: word-vector sources differed by less than the seed spread for 2 of 3 targets"
        in line
    )
    assert NOT_A_PROMISE in line  # the outcomes do not support a promise of a better tagger
    assert told.level == plain.level and told.recommended == plain.recommended
    assert (
        "the best source beat no pretraining by more than the seed spread for 1 of 3" in told.reason
    )
    # where the measured choice mattered, the answer says so and makes no disclaimer
    lm_like = HAND[HAND["kind"] == "lm"].assign(kind="vectors")
    mattered = with_outcomes([plain], measured=lm_like)[0].headline()
    assert "the choice mattered for most targets" in mattered and NOT_A_PROMISE not in mattered
    # nothing measured for the kind: the answer is unchanged
    assert with_outcomes([plain], measured=HAND[HAND["kind"] == "lm"])[0] == plain


def test_the_committed_table_is_read_by_default():
    measured = load_measured()
    assert MEASURED.is_file() and {"vectors", "lm"} <= set(measured["kind"])
    assert (measured["seeds"] >= 5).all() and measured["f1_std"].notna().all()
    table, plain = _high_vectors_answer()
    assert (
        recommend(table, "vectors")[0].outcome
        == with_outcomes([plain], measured=measured)[0].outcome
        != ""
    )


def test_the_committed_tables_summary_is_worked_out_once_per_version_of_the_file(tmp_path, monkeypatch):
    measured = load_measured()
    for kind in ("vectors", "lm", "bert"):
        assert shipped_outcome(kind) == kind_outcome(measured, kind)
    assert shipped_outcome("lm") is shipped_outcome("lm")  # kept, not summed again
    edited = tmp_path / "measured.csv"
    measured[measured["kind"] != "lm"].to_csv(edited, index=False)
    monkeypatch.setattr("simcore.outcomes.MEASURED", edited)
    assert shipped_outcome("lm") is None and shipped_outcome("vectors") == kind_outcome(measured, "vectors")
    monkeypatch.setattr("simcore.outcomes.MEASURED", tmp_path / "missing.csv")
    assert shipped_outcome("vectors") is None


def test_a_users_probe_result_stands_beside_the_answer_and_a_tie_is_said():
    table, plain = _high_vectors_answer()
    # the crossner_politics figures: beta (recommended) 48.22 ± 0.72, alpha 48.31 ± 1.34, none 47.88 ± 1.59
    probe = pd.DataFrame(
        {
            "target": ["t", "t", "t"],
            "source": ["alpha", "beta", "gamma"],
            "f1": [48.31, 48.22, 46.0],
            "f1_std": [1.34, 0.72, 0.5],
            "seeds": [5, 5, 5],
            "baseline": [47.88] * 3,
            "baseline_std": [1.59] * 3,
        }
    )
    text, tie = probe_note(probe, plain)
    assert tie
    assert text == (
        "your probe, 5 seeds: beta F1 48.22 ± 0.72, best alpha 48.31 ± 1.34: a tie within the seed "
        "spread; no pretraining 47.88 ± 1.59 (a tie with beta)"
    )
    told = recommend(table, "vectors", outcomes=False, probe_results=probe)[0]
    assert text in told.headline() and NOT_A_PROMISE in told.headline() and text in told.reason
    # a clear loss: alpha 52.0 ± 0.5 vs beta 48.22 ± 0.72 (3.78 > 0.88), beta above the baseline 45 ± 0.5
    clear = probe.assign(
        f1=[52.0, 48.22, 46.0], f1_std=[0.5, 0.72, 0.5], baseline=45.0, baseline_std=0.5
    )
    text, tie = probe_note(clear, plain)
    assert (
        not tie and "alpha did better by more than the seed spread" in text and "(a tie" not in text
    )
    # another target's results say nothing about this one
    assert probe_note(probe.assign(target="other"), plain) is None


def test_the_rules_own_choices_decide_whether_the_outcomes_back_the_level():
    # LM runs of HAND: sources apart for both targets (the choice mattered). The rule chose
    # T1: b (65.0 ± 0.2, 5.0 below a's 70.0: beyond sqrt(0.2² + 0.2²)) and T2: a (the best).
    chosen = {("lm", "T1", "b"), ("lm", "T2", "a")}
    table = HAND.assign(rule_choice=[int((k, t, s) in chosen) for k, t, s in
                                     zip(HAND["kind"], HAND["target"], HAND["source"])])
    lm = kind_outcome(table, "lm")
    assert (lm.picks, lm.picks_best, lm.picks_based) == (2, 1, 0) and not lm.matters_little
    assert lm.unsupported  # best (or tied with it) for only 1 of 2: no more than half
    assert "this rule's choice was the best or within the seed spread of it for 1 of 2" in lm.short()
    assert "above no pretraining" not in lm.short()  # no baseline measured for these targets
    # the rule chose the best for both: the outcomes back it
    right = {("lm", "T1", "a"), ("lm", "T2", "a")}
    table = HAND.assign(rule_choice=[int((k, t, s) in right) for k, t, s in
                                     zip(HAND["kind"], HAND["target"], HAND["source"])])
    assert not kind_outcome(table, "lm").unsupported
    # word vectors, the rule choosing a each time: T1 a vs (none) 1.0 = margin 1.0 (not above),
    # T2 a vs (none) 3.0 > 0.5 (above), T3 no baseline; a is the best of T1, T2 and tied in T3
    vectors = kind_outcome(HAND.assign(rule_choice=(HAND["source"] == "a").astype(int)), "vectors")
    assert (vectors.picks, vectors.picks_best, vectors.picks_based, vectors.picks_above) == (3, 3, 2, 1)
    assert vectors.unsupported  # the sources tie for 2 of 3 targets, and a beat no pretraining for 1 of 2
