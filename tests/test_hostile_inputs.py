"""Hostile and malformed input: each gets a clear message or a defined value, never a crash."""

import bz2
import gzip
import lzma
import math
import os
import subprocess
import sys

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simcore.corpora.corpus import Corpus, tokenize_corpus
from simcore.corpora.tokenize import tokenize
from simcore.matrix.workbench import Workbench
from simcore.utils.errors import CorpusError, SimcoreError
from simcore.utils.store import ArtefactStore

from .conftest import ROOT, SAMPLE_DATA

VARIED = " ".join(f"w{i}" for i in range(60000)).encode()


def truncated(compress):
    data = compress(VARIED)
    return data[: len(data) // 2]


def write(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return p


HOSTILE = {
    "random.txt": (os.urandom(8192), "binary|not valid"),
    "nul.txt": (b"hello\x00world\x00" * 100, "binary"),
    "utf16_no_bom.txt": ("plain words here\n" * 50).encode("utf-16-le"),
    "latin1.txt": ("na\u00efve caf\u00e9\n".encode("latin-1"), "not valid utf-8"),
    "empty.txt": (b"", "empty"),
    "whitespace.txt": (b" \n\t\n\r\n" * 100, "empty"),
    "one_column.conll": (b"Token\tO\n" + b"lonely\n" * 20, "line 2"),
    "no_text.jsonl": (b'{"body": "x"}\n', "no 'text' field"),
    "not_json.jsonl": (b"{oops\n", "not JSON"),
    "no_text.csv": (b"a,b\n1,2\n", "no 'text' column"),
    "truncated.txt.gz": (truncated(gzip.compress), "truncated or corrupt|not a readable"),
    "truncated.txt.bz2": (truncated(bz2.compress), "truncated or corrupt|not a readable"),
    "truncated.txt.xz": (truncated(lzma.compress), "truncated or corrupt|not a readable"),
    "not_gzip.txt.gz": (b"this is not gzip at all", "not a readable|truncated or corrupt"),
}
HOSTILE["utf16_no_bom.txt"] = (HOSTILE["utf16_no_bom.txt"], "UTF-16")


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_files_give_clear_messages(tmp_path, store, name):
    data, message = HOSTILE[name]
    p = write(tmp_path, name, data)
    with pytest.raises(CorpusError, match=f"(?i){message}"):
        tokenize_corpus(Corpus.from_path(p), store)


@pytest.mark.parametrize("name", ["random.txt", "latin1.txt", "one_column.conll", "truncated.txt.gz"])
def test_hostile_files_on_the_command_line_exit_2(tmp_path, name):
    sources, targets = tmp_path / "s", tmp_path / "t"
    sources.mkdir()
    targets.mkdir()
    write(sources, name, HOSTILE[name][0])
    (targets / "t.conll").write_bytes((SAMPLE_DATA / "targets" / "news_ner.conll").read_bytes())
    result = subprocess.run([sys.executable, "-m", "simcore", "matrix", "--sources", str(sources), "--targets",
                             str(targets), "--out", str(tmp_path / "m.csv"), "--cache", str(tmp_path / "c"), "--quiet"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    # The one bad source fails only its own cells: the table is written and the failure listed.
    assert result.stderr.splitlines()[-1].startswith("simcore: error: 1 corpus(es) could not be read")
    assert name in result.stderr and (tmp_path / "m.csv").is_file()


def test_ragged_conll_uses_first_and_last_columns(tmp_path, store):
    p = write(tmp_path, "ragged.conll", "EU NNP B-ORG\nrejects\tO\nGerman JJ B-NP B-MISC\n")
    assert list(tokenize_corpus(Corpus.from_path(p), store).sentences()) == [["eu", "rejects", "german"]]


def test_conll_without_blank_lines(tmp_path, store):
    short = write(tmp_path, "short.conll", "a\tO\nb\tO\n")
    assert list(tokenize_corpus(Corpus.from_path(short), store).sentences()) == [["a", "b"]]
    runaway = write(tmp_path, "runaway.conll", "word\tO\n" * 12000)
    with pytest.raises(CorpusError, match="blank line between sentences"):
        tokenize_corpus(Corpus.from_path(runaway), store)


def test_punctuation_only_is_a_corpus_with_defined_values(tmp_path, store):
    source = Corpus.from_path(write(tmp_path, "punct.txt", "!!! ??? ... ;; . ,\n" * 30))
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    table = Workbench(store).matrix([source], [target], ["tvc", "jsd", "ttr"]).set_index("measure")["value"]
    assert 0 <= table["tvc"] < 0.05 and 0.9 < table["jsd"] <= 1 and table["ttr"] > 0


def test_a_50mb_single_line_is_read_in_pieces(tmp_path, store):
    words = ("x" * 4999 + " ") * (10 * 1024 * 1024 // 1000)
    assert len(words) >= 50_000_000 and "\n" not in words
    p = write(tmp_path, "oneline.txt", words)
    tokenized = tokenize_corpus(Corpus.from_path(p), store)
    assert tokenized.n_units >= 50 and tokenized.n_tokens == len(words.split())
    assert max(tokenized.lengths()) <= 1024 * 1024 // 5000 + 1, "no unit much longer than 1 MB"


def test_decompression_bomb_is_refused(tmp_path, store):
    p = write(tmp_path, "bomb.txt.gz", gzip.compress(b"a " * (20 * 1024 * 1024), 9))
    assert p.stat().st_size < 100_000
    with pytest.raises(CorpusError, match="decompression bomb"):
        tokenize_corpus(Corpus.from_path(p, max_decompressed_bytes=10 * 1024 * 1024), store)


def test_target_with_nothing_in_common(tmp_path, store):
    source = Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")
    target = Corpus.from_path(write(tmp_path, "alien.conll", "".join(f"zqx{i}\tO\n" for i in range(40))))
    table = Workbench(store).matrix([source], [target], ["tvc", "jsd", "ppl", "wvv"]).set_index("measure")
    assert table.loc["tvc", "value"] == 0
    assert table.loc["jsd", "value"] == pytest.approx(1.0)
    assert table.loc["ppl", "oov_rate"] == 1.0 and math.isfinite(table.loc["ppl", "value"])
    assert math.isnan(table.loc["wvv", "value"])
    assert table["error"].isna().all()


def test_source_too_small_for_an_order_5_model(tmp_path, store):
    source = Corpus.from_path(write(tmp_path, "tiny.txt", "a b\nc\n"))
    target = Corpus.from_path(SAMPLE_DATA / "targets" / "news_ner.conll")
    table = Workbench(store).matrix([source], [target], ["ppl", "tvc"]).set_index("measure")
    assert "too small for an order-5" in table.loc["ppl", "error"] and "--ppl-order" in table.loc["ppl", "error"]
    assert math.isnan(table.loc["ppl", "value"]) and table.loc["tvc", "value"] > 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=3000), suffix=st.sampled_from([".txt", ".conll", ".jsonl", ".csv", ".data", ".txt.gz"]))
def test_any_bytes_give_tokens_or_a_corpus_error(tmp_path_factory, data, suffix):
    tmp = tmp_path_factory.mktemp("fuzz")
    p = tmp / f"f{suffix}"
    p.write_bytes(data)
    try:
        tokenized = tokenize_corpus(Corpus.from_path(p), ArtefactStore(tmp / "store"))
    except CorpusError as exc:
        assert str(exc)
    else:
        assert tokenized.n_tokens > 0
        assert all(t and not any(c.isspace() for c in t) for s in tokenized.sentences() for t in s)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=500))
def test_tokens_never_contain_whitespace_or_kenlm_specials(text):
    for token in tokenize(text):
        assert token and not any(c.isspace() for c in token)
        assert token not in {"<s>", "</s>", "<unk>"}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.tuples(st.text(alphabet="abcXYZ.,-'", min_size=1, max_size=8),
                                   st.sampled_from(["O", "B-PER", "I-PER", "B-LOC"])), max_size=12), max_size=12))
def test_well_formed_conll_round_trips(tmp_path_factory, sentences):
    tmp = tmp_path_factory.mktemp("conll")
    p = tmp / "t.conll"
    p.write_text("\n\n".join("\n".join(f"{tok}\t{tag}" for tok, tag in s) for s in sentences if s) + "\n")
    expected = [[tok.lower() for tok, _ in s] for s in sentences if s]
    try:
        got = list(tokenize_corpus(Corpus.from_path(p), ArtefactStore(tmp / "store")).sentences())
    except SimcoreError as exc:
        assert not expected and "empty" in str(exc)
    else:
        assert got == expected


def _dirs(tmp_path, targets: dict[str, bytes], sources=("news.txt", "tweets.jsonl")):
    s, t = tmp_path / "s", tmp_path / "t"
    s.mkdir()
    t.mkdir()
    for name in sources:
        (s / name).write_bytes((SAMPLE_DATA / "sources" / name).read_bytes())
    for name, data in targets.items():
        (t / name).write_bytes(data)
    return s, t


NEWS_NER = (SAMPLE_DATA / "targets" / "news_ner.conll").read_bytes()
LAB_NER = (SAMPLE_DATA / "targets" / "lab_protocol_ner.conll").read_bytes()


def test_two_targets_with_equal_bytes_stay_two(tmp_path, store):
    _, targets = _dirs(tmp_path, {"alpha.conll": NEWS_NER, "beta.conll": NEWS_NER, "gamma.conll": LAB_NER})
    sources = [Corpus.from_path(SAMPLE_DATA / "sources" / "news.txt")]
    from simcore.matrix.corpus_cache import corpora_in

    table = Workbench(store).matrix(sources, corpora_in(targets), ["tvc", "jsd"])
    assert sorted(table["target"]) == ["alpha", "alpha", "beta", "beta", "gamma", "gamma"]
    values = table.set_index(["target", "measure"])["value"]
    assert values["alpha", "tvc"] == values["beta", "tvc"] and values["alpha", "tvc"] != values["gamma", "tvc"]


def test_one_unreadable_target_costs_only_its_own_cells(tmp_path, capsys):
    from simcore.cli.main import main

    sources, targets = _dirs(tmp_path, {"good.conll": NEWS_NER, "empty.conll": b"",
                                        "binary.conll": b"\x00\x01\x02" * 100,
                                        "quirky.conll": b"a\tO\n \tO\n\tO\nb\tB-X\n\n"})
    out = tmp_path / "out" / "m.csv"
    code = main(["matrix", "--sources", str(sources), "--targets", str(targets), "--out", str(out),
                 "--measures", "tvc,ttr", "--cache", str(tmp_path / "c"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "2 corpus(es) could not be read" in err and "target empty" in err and "target binary" in err
    assert "quirky: 2 lines skipped" in err
    table = pd.read_csv(out, keep_default_na=False)
    assert len(table) == 2 * 4 * 2, "every cell has a row"
    broken = table[table["target"].isin(["empty", "binary"])]
    assert (broken["value"] == "").all() and broken["error"].str.contains("empty|binary").all()
    good = table[table["target"].isin(["good", "quirky"])]
    assert (good["error"] == "").all() and pd.to_numeric(good["value"]).notna().all()


MISSING_LOOKING = ["nan", "None", "NA", "null", "", "-2+3", "=cmd|' /C calc'!A0", "<script>alert(1)</script>",
                   "<img src=x onerror=alert(1)>", "'+1+1", "a|b"]


def _hostile_matrix(tmp_path):
    rows = []
    for i, target in enumerate(MISSING_LOOKING):
        for j, source in enumerate(["s1", "+s2", "s3"]):
            for measure, direction in (("tvc", 1), ("ppl", -1)):
                rows.append({"source": source, "target": target, "measure": measure,
                             "value": (i + 1) * (j + 2) + (0.5 if measure == "ppl" else 0), "direction": direction,
                             "error": None, "options": '{"seed": 13}'})
    from simcore.reporting.export import escape_formulas

    path = tmp_path / "m.csv"
    escape_formulas(pd.DataFrame(rows)).to_csv(path, index=False)
    return path, pd.DataFrame(rows)


def test_names_that_look_missing_or_like_formulas_stay_names(tmp_path, capsys):
    from simcore.analysis.ranking import rank_sources
    from simcore.analysis.tables import read_matrix
    from simcore.cli.main import main

    path, original = _hostile_matrix(tmp_path)
    long = read_matrix(path)
    assert sorted(set(long["target"])) == sorted(MISSING_LOOKING), "read back as written, escapes undone"
    assert sorted(set(long["source"])) == ["+s2", "s1", "s3"]
    ranking = rank_sources(long, ["tvc"])
    assert len(ranking[ranking["measure"] == "tvc"]) == 3 * len(MISSING_LOOKING)
    for suffix in (".csv", ".md", ".html", ".json"):
        assert main(["rank", "--matrix", str(path), "--out", str(tmp_path / f"r{suffix}")]) == 0
    md, page = (tmp_path / "r.md").read_text(), (tmp_path / "r.html").read_text()
    for text in (md, page):
        assert "<script>" not in text and "<img" not in text
    assert "&lt;script&gt;alert\\(1\\)&lt;/script&gt;" in md and "a\\|b" in md
    csv_back = pd.read_csv(tmp_path / "r.csv", keep_default_na=False, dtype=str)
    assert "'-2+3" in set(csv_back["target"]) and "-2+3" not in set(csv_back["target"])
    results = pd.DataFrame([{"target": t, "source": s, "f1": 50 + 3 * i + j, "baseline": 50}
                            for i, t in enumerate(MISSING_LOOKING) for j, s in enumerate(["s1", "+s2", "s3"])])
    results.loc[0, "f1"] = None  # one blank F1
    results.to_csv(tmp_path / "res.csv", index=False)
    for command in ("correlate", "regret"):
        out = tmp_path / f"{command}.csv"
        extra = ["--per-target"] if command == "correlate" else []
        code = main([command, "--matrix", str(path), "--results", str(tmp_path / "res.csv"), "--out", str(out), *extra])
        assert code == 0, capsys.readouterr().err
    corr = pd.read_csv(tmp_path / "correlate.csv", keep_default_na=False, dtype=str)
    from simcore.reporting.export import escape_formula

    assert set(corr["scope"]) == {"all", *map(escape_formula, MISSING_LOOKING)}
    assert "'-2+3" in set(corr["scope"]) and "''+1+1" in set(corr["scope"])
    assert corr[corr["scope"] == "all"]["n"].astype(int).max() == 3 * len(MISSING_LOOKING) - 1, "every pair joins"


@pytest.mark.parametrize("suffix", [".zst", ".gz"])
def test_a_bomb_of_short_lines_is_refused_before_the_first_unit(tmp_path, suffix):
    """Counted in decompressed bytes before any line is tokenized (no unit comes out first)."""
    import zstandard

    data = b"a b\n" * (8 * 1024 * 1024)  # 32 MB of short lines
    packed = zstandard.ZstdCompressor(level=19).compress(data) if suffix == ".zst" else gzip.compress(data, 9)
    p = write(tmp_path, f"bomb.txt{suffix}", packed)
    assert p.stat().st_size < 200_000
    units = Corpus.from_path(p, max_decompressed_bytes=16 * 1024 * 1024).units()
    with pytest.raises(CorpusError, match="decompression bomb"):
        next(units)


def test_a_parquet_bomb_is_refused_from_its_footer(tmp_path):
    """Text that compresses a thousandfold in one row group: refused before a row is decoded, like gz/zst."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = tmp_path / "bomb.parquet"
    pq.write_table(pa.table({"text": ["a " * 1_000_000] * 20}), p, compression="zstd", row_group_size=20,
                   use_dictionary=False)
    assert p.stat().st_size < 100_000
    metadata = pq.ParquetFile(p).metadata
    expanded = metadata.row_group(0).column(0).total_uncompressed_size
    assert expanded > 40_000_000  # the footer says what decoding would cost
    with pytest.raises(CorpusError, match="decodes to more than 10 MB"):
        next(Corpus.from_path(p, max_decompressed_bytes=10_000_000).units())
    assert sum(1 for _ in Corpus.from_path(p, max_decompressed_bytes=expanded + 1).units()) >= 20
