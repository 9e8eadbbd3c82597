"""simcore decontaminate: the clean copy is the source byte for byte without the overlapping units, for
plain text, gzip, JSONL and folders; the counts printed are those injected; inputs are never overwritten."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from simcore.cli.main import main
from simcore.contamination.decontaminate import decontaminate
from simcore.contamination.scan import source_overlaps
from simcore.corpora.corpus import Corpus
from simcore.corpora.tokenize import tokenize
from simcore.matrix.workbench import Workbench
from simcore.utils.errors import CorpusError, InvalidArgument, SimcoreError
from simcore.utils.store import ArtefactStore

from .test_overlap import ALNUM, conll_sentences, news_lines


@pytest.fixture
def dirty(shared_data, tmp_path):
    """3,000 lines of news_1bwb with 40 long conll2003 test sentences in place of 40 lines (some
    upper-cased, some with their spaces doubled), written as gzip; the positions replaced."""
    test = conll_sentences(shared_data / "targets" / "conll2003" / "test.conll")
    long = [s for s in test if sum(bool(ALNUM.search(t)) for t in s) >= 13][::11][:40]
    lines = news_lines(shared_data, 3000)
    positions = [i * 70 + 3 for i in range(len(long))]
    for k, (i, sentence) in enumerate(zip(positions, long)):
        text = " ".join(sentence)
        lines[i] = text.upper() if k % 3 == 0 else text.replace(" ", "  ") if k % 3 == 1 else text
    raw = ("\n".join(lines) + "\n").encode("utf-8")
    path = tmp_path / "src" / "news.txt.gz"
    path.parent.mkdir()
    path.write_bytes(gzip.compress(raw))
    return path, raw, positions


def kept_bytes(raw: bytes, dropped: list[int]) -> bytes:
    lines = raw.splitlines(keepends=True)
    return b"".join(line for i, line in enumerate(lines) if i not in set(dropped))


def test_the_clean_copy_is_the_source_without_the_injected_lines(dirty, shared_data, tmp_path):
    path, raw, positions = dirty
    target = Corpus.from_path(shared_data / "targets" / "conll2003")
    out = tmp_path / "clean.txt.gz"
    report = decontaminate(Corpus.from_path(path), target, out)
    assert gzip.decompress(out.read_bytes()) == kept_bytes(raw, positions)
    lines = raw.decode("utf-8").splitlines()
    assert (report.units, report.units_dropped) == (len(lines), len(positions))
    assert report.tokens_dropped == sum(len(tokenize(lines[i])) for i in positions)
    # and the clean copy holds none of the target's sentences any more
    bench = Workbench(ArtefactStore(tmp_path / "store"))
    assert source_overlaps(bench, Corpus.from_path(out), [target])["conll2003"].held == 0


def test_jsonl_records_are_dropped_whole_and_the_rest_kept_byte_for_byte(shared_data, tmp_path):
    test = conll_sentences(shared_data / "targets" / "conll2003" / "test.conll")
    long = [s for s in test if sum(bool(ALNUM.search(t)) for t in s) >= 13][:5]
    records = [json.dumps({"id": k, "text": line}, ensure_ascii=k % 2 == 0) + ("\r\n" if k % 5 == 0 else "\n")
               for k, line in enumerate(news_lines(shared_data, 200))]
    records.insert(10, '{"id": "x",   "text": ' + json.dumps(" ".join(long[0])) + '}\n')
    records.insert(50, json.dumps({"text": " ".join(long[1]), "meta": {"a": [1, 2]}}) + "\n")
    records.insert(60, json.dumps({"text": None}) + "\n")  # kept as it is: it holds no unit
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_text("".join(records), encoding="utf-8", newline="")
    (tmp_path / "in" / "sub").mkdir()
    (tmp_path / "in" / "sub" / "b.jsonl").write_text(json.dumps({"text": " ".join(long[2])}) + "\n", encoding="utf-8")
    report = decontaminate(Corpus.from_path(tmp_path / "in"), Corpus.from_path(shared_data / "targets" / "conll2003"),
                           tmp_path / "out")
    expected = "".join(r for k, r in enumerate(records) if k not in (10, 50))
    assert (tmp_path / "out" / "a.jsonl").read_bytes() == expected.encode("utf-8")
    assert (tmp_path / "out" / "sub" / "b.jsonl").read_bytes() == b""
    assert (report.units_dropped, report.files) == (3, 2)


def test_only_the_test_split_when_asked(tmp_path):
    train = "Engineers tested the new pump for six hours before the plant was allowed to restart work".split()
    test = "A small bakery on the corner sells bread that people queue for before the sun comes up".split()
    for name, sentence in (("train", train), ("test", test)):
        (tmp_path / "t").mkdir(exist_ok=True)
        (tmp_path / "t" / f"{name}.conll").write_text("\n".join(f"{w}\tO" for w in sentence) + "\n")
    (tmp_path / "s.txt").write_text(" ".join(train) + "\n" + " ".join(test) + "\nsomething else\n")
    report = decontaminate(Corpus.from_path(tmp_path / "s.txt"), Corpus.from_path(tmp_path / "t"),
                           tmp_path / "c.txt", test_only=True)
    assert (tmp_path / "c.txt").read_text() == " ".join(train) + "\nsomething else\n"
    assert report.units_dropped == 1
    # a target without a test file cannot be cleaned against its test split
    with pytest.raises(CorpusError, match="no file of the target is named test"):
        decontaminate(Corpus.from_path(tmp_path / "s.txt"), Corpus.from_path(tmp_path / "t" / "train.conll"),
                      tmp_path / "d.txt", test_only=True)


def test_the_command_prints_the_counts_and_refuses_to_overwrite_an_input(dirty, shared_data, tmp_path, capsys):
    path, raw, positions = dirty
    target = str(shared_data / "targets" / "conll2003")
    assert main(["decontaminate", "--source", str(path), "--target", target, "--out",
                 str(tmp_path / "c.txt.gz"), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert f"dropped {len(positions)} of 3,000 units" in printed and "13-word n-gram with conll2003" in printed
    before = path.read_bytes()
    assert main(["decontaminate", "--source", str(path), "--target", target, "--out", str(path), "--quiet"]) == 2
    error = capsys.readouterr().err
    assert "would destroy the input" in error and "Traceback" not in error and len(error.strip().splitlines()) == 1
    assert path.read_bytes() == before


def test_a_source_of_another_format_is_refused_in_one_line(tmp_path):
    (tmp_path / "s.csv").write_text("text\nhello there\n")
    (tmp_path / "t.conll").write_text("hello\tO\n")
    with pytest.raises(SimcoreError, match="convert it to one of those first"):
        decontaminate(Corpus.from_path(tmp_path / "s.csv"), Corpus.from_path(tmp_path / "t.conll"), tmp_path / "o.csv")


def test_an_upper_case_source_keeps_its_case_in_the_copy(tmp_path):
    sentence = "The weather in the city stayed cold all week and the trains ran late every single morning"
    (tmp_path / "t.conll").write_text("\n".join(f"{w}\tO" for w in sentence.split()) + "\n")
    source = "KEEP THIS LINE AS IT IS\n" + sentence.upper() + "!!\nAnd This One\n"
    Path(tmp_path / "s.txt").write_text(source)
    decontaminate(Corpus.from_path(tmp_path / "s.txt"), Corpus.from_path(tmp_path / "t.conll"), tmp_path / "c.txt")
    assert (tmp_path / "c.txt").read_text() == "KEEP THIS LINE AS IT IS\nAnd This One\n"


def test_the_api_is_public(tmp_path):
    """``decontaminate`` and its options are importable from ``simcore`` and refuse what is not a corpus."""
    import simcore
    from simcore.contamination.decontaminate import Decontamination
    from simcore.contamination.decontaminate import decontaminate as public
    from simcore.contamination.scan import OverlapOptions

    assert {"decontaminate", "Decontamination", "OverlapOptions"} <= set(simcore.__all__)
    assert public is decontaminate and Decontamination().units_dropped == 0 and OverlapOptions().ngram == 13
    with pytest.raises(InvalidArgument, match="the source must be a Corpus"):
        public("news.txt", "conll2003", tmp_path / "clean.txt")
