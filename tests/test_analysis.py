"""Analyses against independent computations: statsmodels for kappa, scipy for correlation,
the paper's Table 3 for published figures, and hand-worked regret."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from simcore.analysis.agreement import agreement, cohen_kappa
from simcore.analysis.correlation import correlate, correlation_row, results_frame, simulated_interval
from simcore.analysis.ranking import rank_sources
from simcore.analysis.regret import regret
from simcore.analysis.tables import to_long
from simcore.utils.errors import SimcoreError

from .conftest import SAMPLE_DATA

TABLE3 = SAMPLE_DATA / "results" / "dai2019_table3.csv"


@pytest.fixture
def table3():
    return pd.read_csv(TABLE3)


def test_fleiss_kappa_on_table3_is_the_published_0733(table3):
    result = agreement(to_long(table3), ["ppl", "wvv", "tvc"])
    assert len(result.items) == 60
    assert round(result.fleiss, 3) == 0.733
    answers = result.items[["ppl", "wvv", "tvc"]].astype(int).to_numpy()
    assert result.fleiss == pytest.approx(sm_fleiss_kappa(aggregate_raters(answers)[0]))


def test_cohen_kappa_matches_statsmodels(table3):
    result = agreement(to_long(table3), ["ppl", "wvv", "tvc", "tvcc"])
    for row in result.cohen.itertuples():
        a, b = result.items[row.measure_a].astype(int), result.items[row.measure_b].astype(int)
        table = pd.crosstab(a, b).reindex(index=[0, 1], columns=[0, 1], fill_value=0).to_numpy()
        assert row.kappa == pytest.approx(sm_cohens_kappa(table).kappa)
    assert cohen_kappa(np.array([1, 1, 0, 0]), np.array([1, 1, 0, 0])) == 1.0


def test_disagreements_are_the_items_where_answers_differ(table3):
    result = agreement(to_long(table3), ["ppl", "wvv", "tvc"])
    d = result.disagreements
    assert len(d) == 12
    wetlab = d[(d["target"] == "WetLab") & (d["first"] == "1BWB") & (d["second"] == "Wiki")]
    assert len(wetlab) == 1, "the paper's example: PPL says 1BWB, WVV says Wiki"
    assert bool(wetlab["ppl"].iloc[0]) and not bool(wetlab["wvv"].iloc[0])


def test_pearson_and_spearman_equal_scipy_on_table3(table3):
    results = results_frame(table3, f1="lm_f1", improvement="lm_delta")
    table = correlate(to_long(table3), results, per_target=True)
    for name in ["ppl", "wvv", "tvc", "tvcc"]:
        row = table[(table["measure"] == name) & (table["scope"] == "all")].iloc[0]
        expected = stats.pearsonr(table3[name], table3["lm_delta"])
        assert row["pearson_r"] == pytest.approx(expected.statistic)
        assert row["pearson_p"] == pytest.approx(expected.pvalue)
        ci = expected.confidence_interval(0.95)
        assert (row["pearson_low"], row["pearson_high"]) == pytest.approx((ci.low, ci.high))
        rho = stats.spearmanr(table3[name], table3["lm_delta"])
        assert row["spearman_r"] == pytest.approx(rho.statistic)
        z = np.arctanh(rho.statistic)
        half = 1.959964 * np.sqrt(1.06 / 27)
        assert (row["spearman_low"], row["spearman_high"]) == pytest.approx((np.tanh(z - half), np.tanh(z + half)), rel=1e-5)
        assert row["n"] == 30
    per_target = table[(table["measure"] == "ppl") & (table["scope"] == "CRAFT")].iloc[0]
    craft = table3[table3["target"] == "CRAFT"]
    assert per_target["pearson_r"] == pytest.approx(stats.pearsonr(craft["ppl"], craft["lm_delta"]).statistic)


def test_improvement_is_f1_minus_baseline_when_given():
    table = pd.DataFrame({"target": ["t", "t"], "source": ["a", "b"], "f1": [80.0, 85.0], "baseline": [70.0, 70.0]})
    assert results_frame(table)["improvement"].tolist() == [10.0, 15.0]
    with pytest.raises(SimcoreError, match="lacks column"):
        results_frame(table.drop(columns=["f1"]))


def test_rankings_follow_each_measures_direction(table3):
    ranking = rank_sources(to_long(table3))
    first = ranking[ranking["rank"] == 1].set_index(["target", "measure"])["source"]
    assert first[("CoNLL2003", "ppl")] == "1BWB"       # lowest perplexity
    assert first[("CoNLL2003", "tvc")] == "1BWB"       # highest coverage
    assert first[("CADEC", "ppl")] == "Yelp"
    # Table 3 has no JSD: the language-model recommendation follows PPL alone, whatever TVC or WVV say
    assert first[("CRAFT", "recommended")] == first[("CRAFT", "ppl")] == "PubMed"
    assert first[("CADEC", "recommended")] == "Yelp"
    vectors = rank_sources(to_long(table3), pretraining="vectors")
    vector_first = vectors[vectors["rank"] == 1].set_index(["target", "measure"])["source"]
    assert vector_first[("CoNLL2003", "recommended")] == "1BWB"  # TVcC, TVC and WVV all put 1BWB first


def test_regret_by_hand(table3):
    results = results_frame(table3, f1="lm_f1", improvement="lm_delta")
    table = regret(to_long(table3), results, ["ppl", "tvc"])
    cadec_tvc = table[(table["target"] == "CADEC") & (table["measure"] == "tvc")].iloc[0]
    # TVC picks 1BWB (81.73) whose LM F1 is 70.08; the best source is Yelp at 70.46
    assert cadec_tvc["chosen"] == "1BWB" and cadec_tvc["regret"] == pytest.approx(70.46 - 70.08)
    mean = table[(table["target"] == "mean") & (table["measure"] == "tvc")]["regret"].iloc[0]
    assert mean == pytest.approx((70.46 - 70.08) / 6)
    assert table[(table["target"] == "mean") & (table["measure"] == "ppl")]["regret"].iloc[0] == pytest.approx(0)
    # an infinite F1 (a hostile results file) is left out like a missing one, not turned into a NaN regret
    odd = results.copy()
    odd.loc[(odd["target"] == "CADEC") & (odd["source"] == "Yelp"), "f1"] = np.inf
    table = regret(to_long(table3), odd, ["tvc"])
    cadec = table[(table["target"] == "CADEC") & (table["measure"] == "tvc")].iloc[0]
    rest = results[(results["target"] == "CADEC") & (results["source"] != "Yelp")]
    assert cadec["best_f1"] == pytest.approx(rest["f1"].max()) and np.isfinite(cadec["regret"])


def test_wide_and_long_tables_agree(table3):
    long = to_long(table3)
    assert set(long["measure"]) == {"ppl", "wvv", "tvc", "tvcc"}
    assert len(long) == 120
    with pytest.raises(SimcoreError, match="source and target"):
        to_long(pd.DataFrame({"x": [1]}))


def test_small_n_p_values_are_exact_and_intervals_do_not_collapse():
    x, y = np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([10.0, 8.0, 6.0, 4.0, 2.0])
    row = correlation_row(x, y)
    exact = stats.permutation_test((x,), lambda a: stats.spearmanr(a, y).statistic,
                                   permutation_type="pairings", n_resamples=np.inf)
    assert row["spearman_p"] == pytest.approx(exact.pvalue) == pytest.approx(2 / 120)
    assert row["spearman_low"] == -1.0 and -0.9 < row["spearman_high"] < 0  # not [-1.00, -1.00]
    rng = np.random.default_rng(3)
    a = rng.normal(size=7)
    b = 0.5 * a + rng.normal(size=7)
    exact = stats.permutation_test((a,), lambda u: stats.pearsonr(u, b).statistic,
                                   permutation_type="pairings", n_resamples=np.inf)
    assert correlation_row(a, b)["pearson_p"] == pytest.approx(exact.pvalue)


def test_simulated_interval_agrees_with_fisher_where_both_hold():
    rng = np.random.default_rng(1)
    a = rng.normal(size=9)
    b = 0.6 * a + 0.8 * rng.normal(size=9)
    r = stats.pearsonr(a, b)
    low, high = simulated_interval(r.statistic, 9, "pearson")
    fisher = r.confidence_interval(0.95)
    assert low == pytest.approx(fisher.low, abs=0.05) and high == pytest.approx(fisher.high, abs=0.05)


def test_names_match_exactly_and_conflicting_results_are_refused():
    from simcore.analysis.correlation import join

    long = pd.DataFrame({"source": ["news", "NEWS", "wiki"], "target": ["t", "t", "t"], "measure": ["tvc"] * 3,
                         "value": [0.1, 0.2, 0.3]})
    results = pd.DataFrame({"target": ["t", "t", "t"], "source": ["news", "NEWS", "wiki"], "f1": [70.0, 80.0, 75.0],
                            "improvement": [1.0, 2.0, 1.5]})
    joined = join(long, results)
    assert len(joined) == 3  # no cross join of news and NEWS
    assert dict(zip(joined["source"], joined["f1"])) == {"news": 70.0, "NEWS": 80.0, "wiki": 75.0}
    with pytest.raises(SimcoreError, match="differ only in case"):
        join(long.assign(source=["a", "b", "c"], target="T"), results.assign(source=["A", "B", "C"]))
    same = pd.concat([results, results.iloc[:1]])
    assert len(join(long, same)) == 3
    with pytest.raises(SimcoreError, match="twice with different values"):
        join(long, pd.concat([results, results.iloc[:1].assign(f1=10.0)]))


def _hand_matrix(reliable: dict[str, bool]) -> pd.DataFrame:
    """Four sources, two targets, three measures; ``reliable`` marks each source's WVV cells."""
    values = {  # (source, target) -> (ppl, wvv, tvc); ppl and wvv lower is more similar, tvc higher
        ("a", "t1"): (100, 0.9, 0.80), ("b", "t1"): (200, 0.1, 0.70), ("c", "t1"): (300, 0.5, 0.60),
        ("d", "t1"): (400, 0.7, 0.20), ("a", "t2"): (350, 0.2, 0.30), ("b", "t2"): (250, 0.6, 0.50),
        ("c", "t2"): (150, 0.4, 0.55), ("d", "t2"): (120, 0.8, 0.90),
    }
    rows = []
    for (source, target), triple in values.items():
        for measure, value in zip(("ppl", "wvv", "tvc"), triple):
            ok = reliable.get(source, True) if measure == "wvv" else True
            rows.append({"source": source, "target": target, "measure": measure, "value": value,
                         "reliable": ok, "flag": "" if ok else "WVV is unreliable below 1,000,000 tokens"})
    return to_long(pd.DataFrame(rows))


def test_agreement_leaves_unreliable_cells_out_by_default_and_says_how_many():
    long = _hand_matrix({"b": False})  # b's WVV (the most similar for t1) is unreliable
    result = agreement(long, ["ppl", "wvv", "tvc"])
    # 2 targets x C(4,2) = 12 comparisons; those with b: 3 per target
    assert result.left_out == 6 and len(result.items) == 6 and result.unreliable_cells == 2
    assert "6 comparison(s) left out" in result.left_out_note
    assert "b" not in set(result.items["first"]) | set(result.items["second"])
    answers = result.items[["ppl", "wvv", "tvc"]].astype(int).to_numpy()
    assert result.fleiss == pytest.approx(sm_fleiss_kappa(aggregate_raters(answers)[0]))
    everything = agreement(long, ["ppl", "wvv", "tvc"], include_unreliable=True)
    assert len(everything.items) == 12 and everything.left_out == 0 and everything.included_unreliable
    answers = everything.items[["ppl", "wvv", "tvc"]].astype(int).to_numpy()
    assert everything.fleiss == pytest.approx(sm_fleiss_kappa(aggregate_raters(answers)[0]))
    assert everything.fleiss != pytest.approx(result.fleiss)
    # a measure unreliable for every source is left out whole, and said; with nothing else, a clear message
    whole = agreement(_hand_matrix(dict.fromkeys("abcd", False)), ["ppl", "wvv", "tvc"])
    assert whole.measures == ["ppl", "tvc"] and whole.dropped == ["wvv"] and "wvv left out" in whole.left_out_note
    assert whole.fleiss == pytest.approx(agreement(_hand_matrix({}), ["ppl", "tvc"]).fleiss)
    with pytest.raises(SimcoreError, match="wvv: 4 source.*include_unreliable"):
        agreement(_hand_matrix(dict.fromkeys("abcd", False)), ["ppl", "wvv"])
    assert agreement(_hand_matrix(dict.fromkeys("abcd", False)), ["ppl", "tvc"]).left_out == 0
    # a CSV read back gives the text "False"
    as_text = long.assign(reliable=long["reliable"].map(str))
    assert agreement(as_text, ["ppl", "wvv", "tvc"]).left_out == 6


def _probe_results(rows: list[tuple[str, str, float, float, int]]) -> pd.DataFrame:
    table = pd.DataFrame(rows, columns=["target", "source", "f1", "f1_std", "time_capped"])
    return results_frame(table.assign(baseline=50.0, seeds=3))


def test_regret_counts_f1_within_the_seed_spread_as_a_tie():
    long = _hand_matrix({})
    # t1: PPL and WVV choose a/b. Best is c at 71.0 (std 0.6); a at 70.4 (std 0.3):
    # |71.0 - 70.4| = 0.6 < sqrt(0.6² + 0.3²) = 0.671 → tied; b at 69.0 (std 0.5): 2.0 > 0.781 → not.
    results = _probe_results([("t1", "a", 70.4, 0.3, 0), ("t1", "b", 69.0, 0.5, 0), ("t1", "c", 71.0, 0.6, 0),
                              ("t1", "d", 60.0, 0.4, 0), ("t2", "a", 50.0, 0.1, 0), ("t2", "b", 55.0, 0.1, 0),
                              ("t2", "c", 56.0, 0.1, 0), ("t2", "d", 58.0, 0.1, 0)])
    table = regret(long, results, ["ppl", "wvv", "tvc"]).set_index(["target", "measure"])
    assert table.loc[("t1", "ppl"), "chosen"] == "a" and table.loc[("t1", "ppl"), "regret"] == 0
    assert table.loc[("t1", "ppl"), "tied_best"] == "a, c"
    assert "within the spread over seeds of c" in table.loc[("t1", "ppl"), "note"]
    assert table.loc[("t1", "wvv"), "chosen"] == "b"
    assert table.loc[("t1", "wvv"), "regret"] == pytest.approx(71.0 - 69.0)
    assert table.loc[("t2", "tvc"), "regret"] == 0 and table.loc[("t2", "ppl"), "regret"] == 0  # d chosen, d best
    # without the spread the same F1 are compared exactly
    exact = regret(long, results.drop(columns=["f1_std"]), ["ppl"]).set_index(["target", "measure"])
    assert exact.loc[("t1", "ppl"), "regret"] == pytest.approx(71.0 - 70.4)


def test_capped_probe_runs_are_left_out_by_default(capsys, tmp_path):
    long = _hand_matrix({})
    rows = [("t1", "a", 70.0, 0.1, 0), ("t1", "b", 65.0, 0.1, 0), ("t1", "c", 0.0, 0.0, 2),  # c: cut by the cap
            ("t1", "d", 60.0, 0.1, 0), ("t2", "a", 50.0, 0.1, 0), ("t2", "b", 55.0, 0.1, 0),
            ("t2", "c", 56.0, 0.1, 0), ("t2", "d", 58.0, 0.1, 0)]
    results = _probe_results(rows)
    table = regret(long, results, ["tvc"])
    assert list(table.attrs["left_out"][["target", "source"]].itertuples(index=False, name=None)) == [("t1", "c")]
    kept = correlate(long, results, ["tvc"], per_target=False)
    assert kept.iloc[0]["n"] == 7 and len(kept.attrs["left_out"]) == 1
    expected = stats.pearsonr([0.80, 0.70, 0.20, 0.30, 0.50, 0.55, 0.90], [20, 15, 10, 0, 5, 6, 8])
    assert kept.iloc[0]["pearson_r"] == pytest.approx(expected.statistic)
    everything = correlate(long, results, ["tvc"], per_target=False, include_capped=True)
    assert everything.iloc[0]["n"] == 8 and everything.attrs["left_out"].empty
    with pytest.raises(SimcoreError, match="include_capped"):
        regret(long, _probe_results([(t, s, 0.0, 0.0, 1) for t, s, *_ in rows]), ["tvc"])
    # the command line says how many were left out and why
    from simcore.cli.main import main
    matrix, probe = tmp_path / "m.csv", tmp_path / "probe.csv"
    long.to_csv(matrix, index=False)
    pd.DataFrame(rows, columns=["target", "source", "f1", "f1_std", "time_capped"]).assign(baseline=50.0).to_csv(
        probe, index=False)
    for command in ("correlate", "regret"):
        assert main([command, "--matrix", str(matrix), "--results", str(probe), "--measures", "tvc"]) == 0
        assert "1 result(s) left out, cut short by the probe's time cap (column time_capped): t1/c" in \
            capsys.readouterr().out
    assert main(["regret", "--matrix", str(matrix), "--results", str(probe), "--include-capped"]) == 0
    assert "left out" not in capsys.readouterr().out
