"""simcore.analysis.audit: decision accuracy, top-1 regret and NDCG@k against hand computations, ties,
Table 3 against an independent computation (itertools, scikit-learn's ndcg_score), the CLI's exit codes."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import ndcg_score

from simcore.analysis.audit import audit, audit_markdown, display_table, write_audit
from simcore.analysis.correlation import read_results, results_frame
from simcore.analysis.tables import read_matrix
from simcore.answer.recommendation import recommend
from simcore.cli.main import main
from simcore.utils.errors import InvalidArgument, SimcoreError

from .conftest import SAMPLE_DATA, SHARED_DATA

TABLE3 = SAMPLE_DATA / "results" / "dai2019_table3.csv"
L3 = math.log2(3)

# Three targets x three sources A, B, C. PPL: lower is more similar; TVC: higher is.
#         F1 (A, B, C)    PPL (A, B, C)     TVC (A, B, C)
# T1      80, 70, 60      100, 200, 300     10, 30, 20
# T2      50, 50, 40      300, 100, 200     20, 20, 10
# T3      60, 62, 70      100, 100, 300      5, 15, 25
TINY = {"T1": ((80, 70, 60), (100, 200, 300), (10, 30, 20)),
        "T2": ((50, 50, 40), (300, 100, 200), (20, 20, 10)),
        "T3": ((60, 62, 70), (100, 100, 300), (5, 15, 25))}
# Worked by hand (gain = F1 - the target's lowest F1; discount 1/log2(1 + position); k = 3):
# T1 PPL orders A, B, C as F1 does: 3 of 3 pairs, regret 0, NDCG 1.
# T1 TVC orders B, C, A: (A,B) wrong, (A,C) wrong, (B,C) right: 1/3; chooses B: regret 80 - 70 = 10;
#    DCG = 10 + 0/log2 3 + 20/2 = 20, ideal = 20 + 10/log2 3 + 0  ->  20 / (20 + 10/log2 3).
# T2 F1 ties A and B (equal F1): that pair is left out, 2 pairs counted.
#    PPL orders B, C, A: (A,C) wrong, (B,C) right: 1/2; chooses B (50 = best): regret 0;
#    gains A 10, B 10, C 0: DCG = 10 + 0 + 10/2 = 15, ideal = 10 + 10/log2 3  ->  15 / (10 + 10/log2 3).
#    TVC ties A, B first, C last: both pairs right: 1; regret 0; the tied pair shares positions 1-2 with
#    its mean gain 10: DCG = ideal: 1.
# T3 PPL ties A, B first, C last: (A,B) undecided 1/2, (A,C) wrong, (B,C) wrong: 0.5/3; chooses the worse
#    of the tied first, A: regret 70 - 60 = 10; gains 0, 2, 10: DCG = 1 * (1 + 1/log2 3) + 10/2,
#    ideal = 10 + 2/log2 3.
#    TVC orders C, B, A as F1 does: 1, regret 0, NDCG 1.
# Pooled: PPL accuracy (3 + 1 + 0.5) / (3 + 2 + 3) = 4.5/8, regret (0 + 0 + 10)/3, NDCG the mean of the three;
#         TVC accuracy (1 + 2 + 3) / 8 = 6/8, regret 10/3.
PPL_NDCG = {"T1": 1.0, "T2": 15 / (10 + 10 / L3), "T3": (1 + 1 / L3 + 5) / (10 + 2 / L3)}
TVC_NDCG = {"T1": 20 / (20 + 10 / L3), "T2": 1.0, "T3": 1.0}


def tiny_tables(std: float | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows, results = [], []
    for target, (f1s, ppls, tvcs) in TINY.items():
        for source, f1, ppl, tvc in zip("ABC", f1s, ppls, tvcs):
            rows += [{"source": source, "target": target, "measure": "ppl", "value": float(ppl)},
                     {"source": source, "target": target, "measure": "tvc", "value": float(tvc)}]
            results.append({"target": target, "source": source, "f1": float(f1),
                            **({"f1_std": std} if std is not None else {})})
    return pd.DataFrame(rows), results_frame(pd.DataFrame(results))


def rows(table: pd.DataFrame, measure: str) -> pd.DataFrame:
    return table[table["measure"] == measure].set_index("scope")


def test_tiny_matrix_matches_the_hand_computation():
    long, results = tiny_tables()
    table = audit(long, results, pretraining=(), bootstrap=0)
    ppl, tvc = rows(table, "ppl"), rows(table, "tvc")
    assert ppl.loc[["T1", "T2", "T3"], "accuracy"].tolist() == pytest.approx([1.0, 0.5, 0.5 / 3])
    assert tvc.loc[["T1", "T2", "T3"], "accuracy"].tolist() == pytest.approx([1 / 3, 1.0, 1.0])
    assert ppl.loc[["T1", "T2", "T3"], "regret"].tolist() == pytest.approx([0, 0, 10])
    assert tvc.loc[["T1", "T2", "T3"], "regret"].tolist() == pytest.approx([10, 0, 0])
    assert ppl.loc["T3", "chosen"] == "A" and tvc.loc["T1", "chosen"] == "B"
    for target in TINY:
        assert ppl.loc[target, "ndcg"] == pytest.approx(PPL_NDCG[target])
        assert tvc.loc[target, "ndcg"] == pytest.approx(TVC_NDCG[target])
    assert ppl.loc["T2", "f1_ties"] == 1 and ppl.loc["T2", "pairs"] == 2
    assert ppl.loc["all", "accuracy"] == pytest.approx(4.5 / 8)
    assert tvc.loc["all", "accuracy"] == pytest.approx(6 / 8)
    assert ppl.loc["all", "regret"] == pytest.approx(10 / 3) and tvc.loc["all", "regret"] == pytest.approx(10 / 3)
    assert ppl.loc["all", "ndcg"] == pytest.approx(np.mean(list(PPL_NDCG.values())))
    assert ppl.loc["all", "pairs"] == 8 and ppl.loc["all", "f1_ties"] == 1
    assert math.isnan(ppl.loc["all", "accuracy_low"])  # no resamples asked for


def test_tie_threshold_turns_close_pairs_into_ties():
    long, results = tiny_tables()
    table = audit(long, results, pretraining=(), bootstrap=0, tie_f1=2.5)
    ppl, tvc = rows(table, "ppl"), rows(table, "tvc")
    # T3's A and B (62 - 60 = 2 < 2.5) now tie: PPL's undecided half-point goes, 0 of 2 left; TVC 2 of 2
    assert ppl.loc["T3", ["pairs", "f1_ties", "accuracy"]].tolist() == [2, 1, 0.0]
    assert ppl.loc["all", "accuracy"] == pytest.approx(4 / 7) and tvc.loc["all", "accuracy"] == pytest.approx(5 / 7)
    assert ppl.loc["T3", "regret"] == 10  # 70 - 60 is more than the threshold: still lost


def test_spread_over_seeds_sets_the_margin():
    long, results = tiny_tables(std=8.0)  # margin sqrt(8² + 8²) = 11.3 F1: only pairs 20 apart count
    table = audit(long, results, pretraining=(), bootstrap=0, tie_f1=1.0)
    tvc = rows(table, "tvc")
    # T1: only (A, C) (80 vs 60) is counted, and TVC puts C (20) above A (10): 0 of 1
    assert tvc.loc["T1", ["pairs", "f1_ties", "accuracy"]].tolist() == [1, 2, 0.0]
    assert tvc.loc["T1", "regret"] == 0  # B (70) is within 11.3 of A (80): a tie with the best, nothing lost
    assert table.attrs["spread"] is True


def test_every_f1_equal_has_no_ndcg_and_no_counted_pair():
    long, results = tiny_tables()
    results["f1"] = 50.0
    table = audit(long, results, pretraining=(), bootstrap=100)
    ppl = rows(table, "ppl")
    assert math.isnan(ppl.loc["all", "accuracy"]) and math.isnan(ppl.loc["all", "ndcg"])
    assert ppl.loc["all", "f1_ties"] == 9 and ppl.loc["all", "regret"] == 0


def test_intervals_resample_targets_and_are_seeded():
    long, results = tiny_tables()
    a = audit(long, results, pretraining=(), bootstrap=500, seed=7)
    b = audit(long, results, pretraining=(), bootstrap=500, seed=7)
    pd.testing.assert_frame_equal(a, b)
    ppl = rows(a, "ppl")
    # every resample is made of these targets, so the interval lies within their per-target extremes
    assert ppl.loc["all", "regret_low"] >= 0 and ppl.loc["all", "regret_high"] <= 10
    assert ppl.loc["all", "regret_low"] <= ppl.loc["all", "regret"] <= ppl.loc["all", "regret_high"]
    assert ppl.loc["all", "accuracy_low"] >= 0.5 / 3 and ppl.loc["all", "accuracy_high"] <= 1.0
    assert ppl.loc["all", "accuracy_high"] > ppl.loc["all", "accuracy_low"]


@pytest.mark.parametrize("bad", [{"k": 0}, {"tie_f1": -1.0}, {"tie_f1": math.inf}, {"bootstrap": -1},
                                 {"pretraining": ("bert",)}, {"seed": True}])
def test_bad_options_are_refused_in_one_line(bad):
    long, results = tiny_tables()
    with pytest.raises(InvalidArgument):
        audit(long, results, **bad)


def _table3_paths() -> list:
    shared = SHARED_DATA / "results" / "dai2019_table3.csv"
    return [pytest.param(TABLE3, id="bundled"),
            pytest.param(shared, id="shared", marks=pytest.mark.skipif(not shared.is_file(),
                                                                       reason="../shared/data/results is not present"))]


LOWER_IS_BETTER = {"ppl": True, "wvv": True, "tvc": False, "tvcc": False}  # as the paper states


@pytest.mark.parametrize("path", _table3_paths())
@pytest.mark.parametrize("outcome", ["lm_f1", "wv_f1"])
def test_table3_figures_match_an_independent_computation(path, outcome):
    raw = pd.read_csv(path)
    table = audit(read_matrix(path), read_results(path, f1=outcome), bootstrap=0)
    for measure, lower in LOWER_IS_BETTER.items():
        score = counted = 0.0
        regrets, gains = [], []
        for _, group in raw.groupby("target"):
            f1 = group[outcome].to_numpy()
            key = -group[measure].to_numpy() if lower else group[measure].to_numpy()  # higher key = chosen first
            for i, j in itertools.combinations(range(len(group)), 2):
                if f1[i] == f1[j]:
                    continue
                counted += 1
                score += 0.5 if key[i] == key[j] else float((key[i] > key[j]) == (f1[i] > f1[j]))
            regrets.append(f1.max() - f1[np.argmax(key)])
            gains.append(ndcg_score([f1 - f1.min()], [key], k=3))
        row = rows(table, measure).loc["all"]
        assert row["accuracy"] == pytest.approx(score / counted)
        assert row["regret"] == pytest.approx(np.mean(regrets))
        assert row["ndcg"] == pytest.approx(np.mean(gains))
    # Table 3 has PPL but no JSD and no replicates: the language-model rule chooses PPL's first source
    chosen = {r.target: r.recommended for r in recommend(read_matrix(path), "lm")}
    rule = rows(table, "recommended:lm")
    for target, group in raw.groupby("target"):
        assert chosen[target] == [rule.loc[target, "chosen"]]
        lost = group[outcome].max() - group.loc[group["source"] == chosen[target][0], outcome].iloc[0]
        assert rule.loc[target, "regret"] == pytest.approx(lost)


def test_table3_figures_in_the_readme_are_the_commands_output(capsys):
    section = (SAMPLE_DATA.parent / "docs" / "audit.md").read_text()
    blocks = [b.split("```")[0] for b in section.split("```\n")[1::2]]
    assert len(blocks) == 2
    for block, outcome in zip(blocks, ("lm_f1", "wv_f1")):
        code, out, _ = _cli(capsys, "--f1", outcome)
        assert code == 0
        printed = [line for line in block.splitlines() if line and not line.startswith("$")]
        assert printed == out.splitlines()[1:]
    shown = display_table(audit(read_matrix(TABLE3), read_results(TABLE3, f1="lm_f1"))).set_index("measure")
    assert shown.loc["WVV", "decision accuracy"] == "0.85 [0.73, 0.93]"  # the "WVV alone 0.85"


def _cli(capsys, *args):
    code = main(["audit", "--matrix", str(TABLE3), "--results", str(TABLE3), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_prints_and_writes_every_format(tmp_path, capsys):
    code, out, err = _cli(capsys, "--f1", "lm_f1", "--per-target")
    assert code == 0 and "recommended (lm)" in out and "CoNLL2003:" in out and "0.85 [0.73, 0.93]" in out
    expected = audit(read_matrix(TABLE3), read_results(TABLE3, f1="lm_f1"))
    for suffix in (".csv", ".json", ".md", ".html"):
        path = tmp_path / f"audit{suffix}"
        code, _, err = _cli(capsys, "--f1", "lm_f1", "--out", str(path))
        assert code == 0 and "wrote" in err
        text = path.read_text()
        if suffix == ".csv":
            written = pd.read_csv(path, keep_default_na=True)
            assert written["accuracy"].tolist() == pytest.approx(expected["accuracy"].tolist(), nan_ok=True)
        elif suffix == ".json":
            data = json.loads(text)
            assert data["options"]["k"] == 3 and len(data["rows"]) == len(expected)
        else:
            assert "CoNLL2003" in text and "Definitions" in text


def test_markdown_and_html_escape_names(tmp_path):
    long, results = tiny_tables()
    long["target"] = long["target"].replace("T1", "<b>|x")
    results["target"] = results["target"].replace("T1", "<b>|x")
    table = audit(long, results, pretraining=(), bootstrap=0)
    assert "<b>" not in audit_markdown(table)
    write_audit(table, tmp_path / "a.html")
    assert "<b>|x" not in (tmp_path / "a.html").read_text() and "&lt;b&gt;|x" in (tmp_path / "a.html").read_text()
    with pytest.raises(SimcoreError, match="use a .csv"):
        write_audit(table, tmp_path / "a.xlsx")


@pytest.mark.parametrize("content, message", [
    ("target,source,score\nCADEC,1BWB,70\n", "lacks column(s) f1"),
    ("target,source,f1\nnowhere,nothing,70\n", "no (target, source) pair"),
    ("", "not a readable CSV"),
])
def test_cli_malformed_results_is_one_line_and_status_2(tmp_path, capsys, content, message):
    bad = tmp_path / "results.csv"
    bad.write_text(content)
    code = main(["audit", "--matrix", str(TABLE3), "--results", str(bad)])
    _, err = capsys.readouterr()
    assert code == 2 and message in err
    assert err.startswith("simcore: error:") and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("args, message", [(["--tie-f1", "-1"], "at least 0"), (["--tie-f1", "nan"], "at least 0"),
                                           (["--k", "0"], "must be from 1"), (["--out", "a.xlsx"], "use a .csv")])
def test_cli_bad_options_are_status_2(capsys, args, message):
    code, _, err = _cli(capsys, "--f1", "lm_f1", *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


UNREADABLE_F1 = ["abc", "", "50%", "0,5", "=1+1", "NaN", "n/a", "--"]


def test_cli_names_the_results_rows_it_drops_and_counts_as_without_them(tmp_path, capsys):
    """Rows whose F1 is not a number are left out and named, and the audit is the audit of the table
    without them (the rows removed by hand)."""
    table = pd.read_csv(TABLE3, dtype=str, keep_default_na=False)
    chosen = list(range(0, 3 * len(UNREADABLE_F1), 3))
    hostile = table.copy()
    hostile.loc[chosen, "lm_f1"] = UNREADABLE_F1
    hostile.to_csv(tmp_path / "hostile.csv", index=False)
    table.drop(index=chosen).to_csv(tmp_path / "removed.csv", index=False)
    base = ["audit", "--matrix", str(TABLE3), "--f1", "lm_f1", "--bootstrap", "0"]
    assert main([*base, "--results", str(tmp_path / "removed.csv"), "--out", str(tmp_path / "a.csv")]) == 0
    capsys.readouterr()
    assert main([*base, "--results", str(tmp_path / "hostile.csv"), "--out", str(tmp_path / "b.csv")]) == 0
    _, err = capsys.readouterr()
    assert f"{len(chosen)} results row(s) left out, their F1 is not a number" in err
    first = table.loc[chosen[0]]
    assert f"{first['target']} / {first['source']} ('abc')" in err
    expected, got = pd.read_csv(tmp_path / "a.csv"), pd.read_csv(tmp_path / "b.csv")
    pd.testing.assert_frame_equal(expected, got)


@pytest.mark.parametrize("value", ["inf", "-inf", "1e400", "1e308", "-5", "100.5"])
def test_cli_refuses_an_f1_no_run_can_have(tmp_path, capsys, value):
    table = pd.read_csv(TABLE3, dtype=str, keep_default_na=False)
    table.loc[4, "lm_f1"] = value
    table.to_csv(tmp_path / "r.csv", index=False)
    code = main(["audit", "--matrix", str(TABLE3), "--results", str(tmp_path / "r.csv"), "--f1", "lm_f1"])
    _, err = capsys.readouterr()
    assert code == 2 and err.startswith("simcore: error:") and len(err.strip().splitlines()) == 1
    assert f"{table.loc[4, 'target']} / {table.loc[4, 'source']}" in err and "from 0 to 100" in err
