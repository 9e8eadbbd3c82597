"""Nothing the user gave is changed without a note (issue 22, item 7): CoNLL tokens holding a Unicode space,
CSV rows with unquoted commas or an unclosed quote, and single lines far over the line bound, read with
memory bounded by the bound (a small bound here, instead of a gigabyte)."""

import tracemalloc

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from simcore.corpora import text as text_reader
from simcore.corpora.corpus import Corpus, tokenize_corpus
from simcore.corpora.notes import ReadNotes
from simcore.utils.errors import CorpusError


def read(path, store, **options):
    tokenized = tokenize_corpus(Corpus.from_path(path, **options), store)
    return list(tokenized.sentences()), tokenized.read_notes


@pytest.mark.parametrize("space", ["\xa0", "\u2009", "\u3000"])
def test_a_unicode_space_inside_a_conll_token_keeps_the_token_whole(tmp_path, store, space):
    p = tmp_path / "t.conll"
    p.write_text(f"New{space}York\tB-LOC\nis\tO\nbig\tO\n")
    sentences, notes = read(p, store)
    assert sentences == [["new_york", "is", "big"]]
    assert notes.reasons == {"a Unicode space inside the token kept": 1}
    assert list(Corpus.from_path(p).tagged_sentences()) == [([f"New{space}York", "is", "big"], ["B-LOC", "O", "O"])]


def test_csv_unquoted_commas_are_joined_back_and_counted(tmp_path, store):
    p = tmp_path / "a.csv"
    p.write_text("id,text,label\n1,Hello, dear world,POS\n2,Plain,NEG\n")
    sentences, notes = read(p, store)
    assert sentences == [["hello", ",", "dear", "world"], ["plain"]]
    assert notes.reasons == {"unquoted commas in CSV text": 1}
    last = tmp_path / "b.csv"
    last.write_text("id,text\n1,one, two, three\n")
    assert read(last, store)[0] == [["one", ",", "two", ",", "three"]]


def test_csv_with_two_text_columns_is_refused(tmp_path, store):
    p = tmp_path / "two.csv"
    p.write_text("text,id,text\na,1,b\n")
    with pytest.raises(CorpusError, match="2 columns named 'text'"):
        read(p, store)


def test_csv_unclosed_quote_is_refused_not_one_unit(tmp_path, store):
    p = tmp_path / "q.csv"
    p.write_text("id,text\n" + '0,"an unclosed quote\n' + "".join(f"{i},row {i}\n" for i in range(1, 101)))
    with pytest.raises(CorpusError, match="line 2 opens a quote that is never closed"):
        read(p, store)


def test_csv_quoted_text_over_several_lines_is_kept_and_counted(tmp_path, store):
    p = tmp_path / "m.csv"
    p.write_text('id,text\n1,"first line\nsecond line"\n2,next\n')
    sentences, notes = read(p, store)
    assert sentences == [["first", "line", "second", "line"], ["next"]]
    assert notes.reasons == {"CSV text spanning several lines": 1}


WORDS = "alpha beta gamma delta "


@pytest.mark.parametrize("name", ["one.txt", "one.data"])
def test_a_line_over_the_bound_is_split_at_spaces_with_every_word_kept(tmp_path, store, monkeypatch, name):
    monkeypatch.setattr(text_reader, "LINE_BOUND", 1000)
    p = tmp_path / name
    p.write_text("short line\n" + WORDS * 2000 + "\nlast line\n")
    corpus = Corpus.from_path(p)
    notes = ReadNotes()
    units = list(corpus.units(notes=notes))
    assert all(len(u) <= 1000 for u in units) and len(units) > 40
    assert " ".join(" ".join(units).split()) == " ".join(("short line " + WORDS * 2000 + "last line").split())
    assert notes.reasons == {"long line split": 1}


def test_reading_a_huge_single_line_takes_memory_of_the_bound_not_of_the_line(tmp_path, monkeypatch):
    monkeypatch.setattr(text_reader, "LINE_BOUND", 4096)
    p = tmp_path / "huge.txt"
    p.write_text(WORDS * 100_000)  # 2.3 MB, one line
    tracemalloc.start()
    try:
        count = sum(len(u.split()) for u in Corpus.from_path(p).units())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == 400_000
    assert peak < 600_000, f"peak {peak:,} bytes for a 2.3 MB line"


def test_a_conll_line_over_the_bound_is_skipped_and_counted_or_refused_alone(tmp_path, store, monkeypatch):
    monkeypatch.setattr(text_reader, "LINE_BOUND", 500)
    p = tmp_path / "t.conll"
    p.write_text("".join(f"w{i}\tO\n" for i in range(30)) + "x" * 5000 + "\tO\nend\tO\n")
    sentences, notes = read(p, store)
    assert sentences == [[f"w{i}" for i in range(30)] + ["end"]]
    assert notes.reasons == {"line over the bound": 1}
    alone = tmp_path / "alone.conll"
    alone.write_text("y" * 5000 + "\tO\n")
    with pytest.raises(CorpusError, match="not 'token<TAB>tag' on 1 of 1 lines .*over 500 characters"):
        read(alone, store)


def test_a_huge_parquet_cell_is_split_and_counted(tmp_path, store, monkeypatch):
    monkeypatch.setattr(text_reader, "LINE_BOUND", 1000)
    p = tmp_path / "big.parquet"
    pq.write_table(pa.table({"text": ["small cell", WORDS * 500]}), p)
    sentences, notes = read(p, store)
    assert sum(map(len, sentences)) == 2 + 2000 and len(sentences) > 10
    assert notes.reasons == {"long cell split": 1}


def test_jsonl_non_text_and_null_values_are_counted(tmp_path, store):
    p = tmp_path / "a.jsonl"
    p.write_text('{"text": "kept"}\n{"text": null}\n{"text": 5}\n{"text": ["a"]}\n')
    sentences, notes = read(p, store)
    assert sentences == [["kept"]]
    assert notes.reasons == {"null cell": 1, "non-text cell": 2}


def test_an_ascii_space_inside_a_tab_separated_token_keeps_the_token_whole_and_is_counted(tmp_path, store):
    # Issue 28: "New York<TAB>B-LOC" was read as the token "New"; the tab separates the columns, so the token
    # is the whole field, and normalise() joins its words with "_" as it does for any inner space.
    p = tmp_path / "t.conll"
    p.write_text("New York\tB-LOC\nis\tO\nbig\tO\n\nRome\tB-LOC\n")
    sentences, notes = read(p, store)
    assert sentences == [["new_york", "is", "big"], ["rome"]]
    assert notes.reasons == {"an ASCII space inside a tab-separated token kept": 1}
    assert next(Corpus.from_path(p).tagged_sentences()) == (["New York", "is", "big"], ["B-LOC", "O", "O"])
    spaced = tmp_path / "s.conll"  # without a tab, spaces separate the columns as in CoNLL-2003
    spaced.write_text("New NNP B-LOC\nYork NNP I-LOC\n")
    assert read(spaced, store)[0] == [["new", "york"]]


QUIRKY_LINES = ["New York\tB-LOC", "tok\tNN B-LOC", "\xa0\tO", " \tO", "a\tb\tc", "tok\t O",
                "tok\tO ", "Müller\tB-PER", "x y", "only", "O", "tok\t\tO", "\tO", "tok\u200b\tO",
                "#\tO", "1\tThe\tthe", "-DOCSTART-\tO"]


def test_plain_conll_lines_read_at_once_give_what_every_check_gives(tmp_path, monkeypatch,
                                                                   shared_data):
    """The fast path for a plain ``token<TAB>tag`` line (conll.PLAIN_LINE) changes nothing: every
    real
    target and quirky hand-made lines read with it give the same sentences, tags and notes as with
    every line going through all the checks."""
    import re

    from simcore.corpora import conll

    quirky = tmp_path / "quirky.conll"
    quirky.write_text("\n".join(f"w{k}\tO\n{line}\nv{k}\tB-X\n"
                                for k, line in enumerate(QUIRKY_LINES * 2)))
    files = [quirky, *sorted((shared_data / "targets").glob("*/*.conll"))]

    def read_all() -> list:
        out = []
        for path in files:
            notes = ReadNotes()
            corpus = Corpus.from_path(path)
            with open(path, encoding="utf-8") as f:
                read = conll.conll_sentences(f, path.name, with_tags=True, corpus=corpus,
                                             notes=notes)
                out.append((list(read), notes.reasons))
        return out

    fast = read_all()
    assert any(reasons for _, reasons in fast)  # the quirky lines were noted
    monkeypatch.setattr(conll, "PLAIN_LINE", re.compile(r"(?!)"))  # no line takes the fast path
    assert read_all() == fast
