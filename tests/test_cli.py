import json
import subprocess
import sys

import pandas as pd
import pytest

from simcore.cli.main import main
from simcore.matrix.corpus_cache import corpora_in
from simcore.matrix.workbench import Workbench
from simcore.measures.options import MeasureOptions
from simcore.models.sentence_encoder import encoder_installed
from simcore.utils.store import ArtefactStore

from .conftest import ROOT, SAMPLE_DATA
from .test_measures_kl import dsir_counts, dsir_kl

TABLE3 = SAMPLE_DATA / "results" / "dai2019_table3.csv"


def test_agreement_on_table3_prints_0733(capsys):
    assert main(["agreement", "--matrix", str(TABLE3), "--measures", "ppl,wvv,tvc"]) == 0
    assert "Fleiss' kappa (ppl, wvv, tvc; 60 comparisons): 0.733" in capsys.readouterr().out


@pytest.fixture
def small_dirs(tmp_path):
    sources, targets = tmp_path / "sources", tmp_path / "targets"
    sources.mkdir()
    targets.mkdir()
    for name in ("news.txt", "tweets.jsonl", "lab_protocols.txt"):
        (sources / name).write_bytes((SAMPLE_DATA / "sources" / name).read_bytes())
    for name in ("news_ner.conll", "lab_protocol_ner.conll"):
        (targets / name).write_bytes((SAMPLE_DATA / "targets" / name).read_bytes())
    return sources, targets


def test_matrix_rank_and_agreement_from_the_command_line(tmp_path, small_dirs, capsys):
    sources, targets = small_dirs
    out = tmp_path / "m.csv"
    code = main(["matrix", "--sources", str(sources), "--targets", str(targets), "--out", str(out),
                 "--measures", "tvc,ppl,jsd", "--cache", str(tmp_path / "cache"), "--quiet"])
    assert code == 0
    table = pd.read_csv(out)
    assert {"source", "target", "measure", "value"} <= set(table.columns) and len(table) == 3 * 2 * 3
    assert set(table["source"]) == {"news", "tweets", "lab_protocols"}
    for suffix in ("csv", "json", "html", "md"):
        assert main(["rank", "--matrix", str(out), "--out", str(tmp_path / f"r.{suffix}")]) == 0
    ranking = pd.read_csv(tmp_path / "r.csv")
    first = ranking[(ranking["rank"] == 1) & (ranking["measure"] == "ppl")].set_index("target")["source"]
    assert first["news_ner"] == "news" and first["lab_protocol_ner"] == "lab_protocols"
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["targets"]["news_ner"]["recommended"][0]["source"] == "news"
    recommended = {r["target"]: r for r in data["recommendations"]}
    assert recommended["news_ner"]["recommended"] == ["news"] and recommended["news_ner"]["measures"] == ["ppl", "jsd"]
    assert main(["recommend", "--matrix", str(out), "--out", str(tmp_path / "rec.csv")]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith(("news_ner:", "lab_protocol_ner:"))]
    assert len(lines) == 2 and "pretrain on news" in " ".join(lines)
    rec = pd.read_csv(tmp_path / "rec.csv").set_index("target")
    assert {"recommended", "confidence", "measures", "reason"} <= set(rec.columns)
    assert rec.loc["lab_protocol_ner", "recommended"] == "lab_protocols" and rec.loc["news_ner", "confidence"] > 0.9
    assert "<h2>Recommendation" in (tmp_path / "r.html").read_text()
    # PPL, JSD and TVC below 100k tokens are flagged but not noise: agreement uses them
    assert main(["agreement", "--matrix", str(out), "--measures", "tvc,ppl,jsd"]) == 0
    printed = capsys.readouterr().out
    assert "Fleiss' kappa" in printed and "left out" not in printed


def test_correlate_and_regret_on_table3(capsys):
    args = ["--matrix", str(TABLE3), "--results", str(TABLE3), "--f1", "lm_f1", "--improvement", "lm_delta"]
    assert main(["correlate", *args]) == 0
    assert "pearson_r" in capsys.readouterr().out
    assert main(["regret", *args]) == 0


@pytest.mark.parametrize("argv,message", [
    (["matrix", "--sources", "/nonexistent", "--targets", "/nonexistent", "--out", "x.csv"], "not a directory"),
    (["agreement", "--matrix", "/nonexistent.csv"], "does not exist"),
    (["rank", "--matrix", str(TABLE3), "--out", "r.xlsx"], "use a .csv"),
    (["agreement", "--matrix", str(TABLE3), "--measures", "ppl,bogus"], "unknown measure"),
])
def test_bad_input_exits_2_with_one_line(argv, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = subprocess.run([sys.executable, "-m", "simcore", *argv], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in result.stderr


def test_binary_source_file_is_a_clear_error(tmp_path):
    sources, targets = tmp_path / "s", tmp_path / "t"
    sources.mkdir()
    targets.mkdir()
    (sources / "junk.txt").write_bytes(bytes(range(256)) * 10)
    (targets / "t.conll").write_text("Hello\tO\n")
    result = subprocess.run([sys.executable, "-m", "simcore", "matrix", "--sources", str(sources), "--targets",
                             str(targets), "--out", str(tmp_path / "m.csv"), "--cache", str(tmp_path / "c"), "--quiet"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2 and "binary" in result.stderr and "Traceback" not in result.stderr


KL_SOURCE = "the cat sat on the mat .\nthe dog ran home .\n"
KL_TARGET = "The\tO\ncat\tB-ANIMAL\nran\tO\n\nA\tO\ndog\tB-ANIMAL\nsat\tO\n"


def _one_pair(tmp_path, source: str, target: str, target_name: str = "t.conll"):
    sources, targets = tmp_path / "sources", tmp_path / "targets"
    sources.mkdir()
    targets.mkdir()
    (sources / "s.txt").write_text(source)
    (targets / target_name).write_text(target)
    return sources, targets


def _matrix_value(tmp_path, sources, targets, measure: str, *flags: str) -> tuple[float, dict]:
    out = tmp_path / f"m{len(list(tmp_path.glob('m*.csv')))}.csv"
    code = main(["matrix", "--sources", str(sources), "--targets", str(targets), "--out", str(out),
                 "--measures", measure, "--cache", str(tmp_path / "cache"), "--jobs", "1", "--quiet", *flags])
    assert code == 0
    row = pd.read_csv(out).iloc[0]
    return float(row["value"]), json.loads(row["options"])


def test_kl_buckets_flag_reaches_the_value(tmp_path):
    """--kl-buckets 64 gives DSIR's KL over 64 buckets (worked here with hashlib), as MeasureOptions(kl_buckets=64)."""
    sources, targets = _one_pair(tmp_path, KL_SOURCE, KL_TARGET)
    value_64, options = _matrix_value(tmp_path, sources, targets, "kl", "--kl-buckets", "64")
    value_default, default_options = _matrix_value(tmp_path, sources, targets, "kl")
    source_lines, target_lines = KL_SOURCE.splitlines(), ["the cat ran", "a dog sat"]
    for buckets, value in ((64, value_64), (10_000, value_default)):
        assert value == pytest.approx(dsir_kl(dsir_counts(target_lines, buckets), dsir_counts(source_lines, buckets)))
    assert options["kl_buckets"] == 64 and default_options["kl_buckets"] == 10_000
    assert value_64 != pytest.approx(value_default)
    bench = Workbench(ArtefactStore(tmp_path / "library"), options=MeasureOptions(kl_buckets=64))
    library = bench.matrix(corpora_in(str(sources)), corpora_in(str(targets)), ["kl"])
    assert library["value"].iloc[0] == pytest.approx(value_64)


@pytest.mark.skipif(not encoder_installed(), reason="the encoder is not installed (scripts/install.sh --encoder); "
                                                    "test_hostile_options checks the flag without it")
def test_emb_sentences_flag_reaches_the_value(tmp_path):
    """--emb-sentences 2 embeds two sentences per side: the value MeasureOptions(emb_sentences=2) gives."""
    lines = ["expression of tp53 was increased in hela cells .", "the protein binds dna in the nucleus .",
             "mice were treated with il-2 for three days .", "rovers beat united two nil on saturday ."]
    sources, targets = _one_pair(tmp_path, "\n".join(lines) + "\n",
                                 "the gene is expressed in liver cells .\ncells were washed twice .\n"
                                 "the striker scored twice .\n", "t.txt")
    value_2, options = _matrix_value(tmp_path, sources, targets, "emb", "--emb-sentences", "2")
    value_all, _ = _matrix_value(tmp_path, sources, targets, "emb")
    assert options["emb_sentences"] == 2 and value_2 != pytest.approx(value_all, abs=1e-6)
    bench = Workbench(ArtefactStore(tmp_path / "library"), options=MeasureOptions(emb_sentences=2))
    library = bench.matrix(corpora_in(str(sources)), corpora_in(str(targets)), ["emb"])
    assert library["value"].iloc[0] == pytest.approx(value_2, abs=1e-6)


def test_every_command_prints_its_help() -> None:
    """argparse formats each help text with %: a bare '%' in one breaks that command's --help."""
    from simcore.cli.main import build_parser

    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # noqa: SLF001 (argparse keeps them there)
    for name, command in commands.items():
        assert command.format_help().startswith("usage:"), name


def test_recommend_shows_a_probe_results_file_beside_the_answer(tmp_path, capsys):
    from .test_recommendation import constructed

    matrix = tmp_path / "matrix.csv"
    constructed({"tvc": [0.6, 0.9, 0.5], "tvcc": [0.5, 0.8, 0.4]},
                noise={"tvc": 0.01, "tvcc": 0.01}).to_csv(matrix, index=False)
    probe = tmp_path / "probe.csv"
    # beta (recommended) 48.22 ± 0.72 vs alpha 48.31 ± 1.34: 0.09 < sqrt(0.72² + 1.34²), a tie
    probe.write_text("target,source,f1,f1_std\nt,alpha,48.31,1.34\nt,beta,48.22,0.72\n")
    assert main(["recommend", "--matrix", str(matrix), "--pretraining", "vectors", "--probe-results",
                 str(probe)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("t: pretrain on beta; the measures agree: 100% of the votes (high); ")
    assert "your probe: beta F1 48.22 ± 0.72, best alpha 48.31 ± 1.34: a tie within the seed spread" in out
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    assert main(["recommend", "--matrix", str(matrix), "--probe-results", str(bad)]) != 0
    assert "bad.csv is not a probe results table" in capsys.readouterr().err
