"""Hostile and malformed input: each gets a clear message or a defined value, never a crash."""

import bz2
import gzip
import lzma
import math
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simcore.corpus import Corpus, tokenize_corpus
from simcore.errors import CorpusError, SimcoreError
from simcore.matrix import Workbench
from simcore.store import ArtefactStore
from simcore.tokenize import tokenize

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
    assert result.stderr.startswith("simcore: error: ")


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
