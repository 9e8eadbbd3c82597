import bz2
import gzip
import json
import lzma

import numpy as np
import pytest

from simcore.corpora.corpus import Corpus, display_name, sample_corpus, save_upload, tokenize_corpus
from simcore.utils.errors import CorpusError


def tokens_of(path, store, **options):
    return list(tokenize_corpus(Corpus.from_path(path, **options), store).sentences())


def test_plain_text_one_unit_per_line(tmp_path, store):
    p = tmp_path / "a.txt"
    p.write_text("The cat sat.\n\nA dog ran!\n")
    assert tokens_of(p, store) == [["the", "cat", "sat", "."], ["a", "dog", "ran", "!"]]


@pytest.mark.parametrize("suffix,opener", [(".gz", gzip.open), (".bz2", bz2.open), (".xz", lzma.open)])
def test_compressed_text(tmp_path, store, suffix, opener):
    p = tmp_path / f"a.txt{suffix}"
    with opener(p, "wt") as f:
        f.write("Hello there\nGeneral Kenobi\n")
    assert tokens_of(p, store) == [["hello", "there"], ["general", "kenobi"]]


def test_jsonl_and_csv_text_fields(tmp_path, store):
    j = tmp_path / "a.jsonl"
    j.write_text(json.dumps({"text": "One two", "id": 1}) + "\n" + json.dumps({"body": "x", "text": "Three"}) + "\n")
    assert tokens_of(j, store) == [["one", "two"], ["three"]]
    c = tmp_path / "a.csv"
    c.write_text('id,text\n1,"Four, five"\n2,Six\n')
    assert tokens_of(c, store) == [["four", ",", "five"], ["six"]]
    c2 = tmp_path / "b.csv"
    c2.write_text("id,body\n1,Seven\n")
    assert tokens_of(c2, store, text_field="body") == [["seven"]]


def test_conll_keeps_tokens_drops_docstart_and_reads_tags(tmp_path, store):
    p = tmp_path / "t.conll"
    p.write_text("-DOCSTART- -X- O O\n\nU.S.\tB-LOC\nofficials\tO\n\nThey\tO\nwon't\tO\n")
    assert tokens_of(p, store) == [["u.s.", "officials"], ["they", "won't"]]
    assert list(Corpus.from_path(p).tagged_sentences()) == [(["U.S.", "officials"], ["B-LOC", "O"]),
                                                            (["They", "won't"], ["O", "O"])]


def test_directory_is_one_corpus_and_unknown_suffix_is_sniffed(tmp_path, store):
    d = tmp_path / "corpus"
    d.mkdir()
    (d / "a.txt").write_text("alpha beta\n")
    (d / "b.data").write_text("Gamma\tO\nDelta\tB-X\n")
    (d / ".hidden").write_text("ignored\n")
    assert tokens_of(d, store) == [["alpha", "beta"], ["gamma", "delta"]]


def test_utf16_with_bom_is_read(tmp_path, store):
    p = tmp_path / "u.txt"
    p.write_bytes("Grüße aus Köln\n".encode("utf-16"))
    assert tokens_of(p, store) == [["grüße", "aus", "köln"]]


@pytest.mark.parametrize("content,message", [
    (b"", "is empty"),
    (b"   \n\t\n", "empty"),
    (b"\x00\x01\x02binary\x00", "binary"),
    ("caf\u00e9 au lait\n".encode("latin-1"), "not valid utf-8"),
])
def test_bad_text_files_give_clear_messages(tmp_path, store, content, message):
    p = tmp_path / "bad.txt"
    p.write_bytes(content)
    with pytest.raises(CorpusError, match=message):
        tokens_of(p, store)


def test_latin1_is_read_when_its_encoding_is_given(tmp_path, store):
    p = tmp_path / "l.txt"
    p.write_bytes("caf\u00e9\n".encode("latin-1"))
    assert tokens_of(p, store, encoding="latin-1") == [["café"]]


def test_malformed_inputs_name_the_line(tmp_path, store):
    conll = tmp_path / "bad.conll"
    conll.write_text("Token\tO\n" + "lonely\n" * 20)
    with pytest.raises(CorpusError, match="20 of 21 lines .*line 2"):
        tokens_of(conll, store)
    jsonl = tmp_path / "bad.jsonl"
    jsonl.write_text('{"body": "x"}\n')
    with pytest.raises(CorpusError, match="no 'text' field"):
        tokens_of(jsonl, store)
    csvf = tmp_path / "bad.csv"
    csvf.write_text("a,b\n1,2\n")
    with pytest.raises(CorpusError, match="no 'text' column"):
        tokens_of(csvf, store)


def test_truncated_gzip_is_reported(tmp_path, store):
    p = tmp_path / "t.txt.gz"
    data = gzip.compress(("word " * 50000 + "\n").encode())
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorpusError, match="truncated or corrupt|not a readable"):
        tokens_of(p, store)


def test_missing_path_and_size_limit(tmp_path):
    with pytest.raises(CorpusError, match="does not exist"):
        Corpus.from_path(tmp_path / "nope.txt")
    p = tmp_path / "big.txt"
    p.write_text("x" * 2000)
    with pytest.raises(CorpusError, match="over the limit"):
        Corpus.from_path(p, max_bytes=1000)


def test_fingerprint_follows_content_not_file_name(tmp_path, store):
    a, b, c = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "c.txt"
    a.write_text("same text\n")
    b.write_text("same text\n")
    c.write_text("other text\n")
    fa, fb, fc = (tokenize_corpus(Corpus.from_path(p), store).fingerprint for p in (a, b, c))
    assert fa == fb != fc


def test_samples_are_random_units_of_the_whole_corpus(tmp_path, store):
    p = tmp_path / "big.txt"
    p.write_text("".join(f"line{i} w w w\n" for i in range(1000)))
    whole = tokenize_corpus(Corpus.from_path(p), store)
    assert whole.n_tokens == 4000
    s0 = sample_corpus(whole, 400, 0, store)
    s0_again = sample_corpus(whole, 400, 0, store)
    s1 = sample_corpus(whole, 400, 1, store)
    lines0 = [" ".join(s) for s in s0.sentences()]
    assert 400 <= s0.n_tokens < 404 and s0.n_units == len(lines0) == 100
    assert lines0 == [" ".join(s) for s in s0_again.sentences()]
    assert lines0 != [" ".join(s) for s in s1.sentences()]
    numbers = [int(line.split()[0][4:]) for line in lines0]
    assert numbers == sorted(numbers) and max(numbers) > 500, "units from across the corpus, in order"
    assert np.array_equal(s0.lengths(), np.full(100, 4))
    assert sample_corpus(whole, 10_000, 0, store) is whole


def test_uploads_are_stored_by_content_and_their_names_choose_nothing(store):
    path = save_upload(b"Hello\tO\n", "../../etc/passwd.conll", store)
    assert path.is_relative_to(store.root) and path.name == "upload.conll"
    other = save_upload(b"x", "evil.sh", store)
    assert other.name == "upload.txt"
    assert display_name("../../etc/passwd.conll") == "passwd"
    assert display_name("<script>.txt") == "_script_"


QUIRKS = ["EU\tB-ORG", "rejects\tO", " \tO", "\tO", "German\tB-MISC", "\u200b\tO", "B-PER", "call\tO",
          "\t\t", "to\tO", "boycott NN\tO", "British\tB-MISC", "lamb\tO", "\xa0\tO", ".\tO", "",
          "Peter\tB-PER", "Blackburn\tI-PER", ""]


def test_conll_quirks_of_real_files_are_read_and_counted(tmp_path, store):
    conll = tmp_path / "dev.conll"
    conll.write_text("\n".join(QUIRKS) + "\n")
    tokenized = tokenize_corpus(Corpus.from_path(conll), store)
    # Worked by hand: lines 3, 4, 6 (blank or invisible token), 7 (tag only), 14 (no-break space) are skipped;
    # line 9 (tabs only) is a sentence break and line 11 (a space, then a tab) keeps its whole first field as the
    # token, as the tab separates the columns (issue 28: "New York<TAB>B-LOC" is one token), and says so.
    assert list(tokenized.sentences()) == [["eu", "rejects", "german", "call"],
                                           ["to", "boycott_nn", "british", "lamb", "."], ["peter", "blackburn"]]
    notes = tokenized.read_notes
    assert (notes.skipped, notes.repaired) == (5, 2)
    assert notes.reasons["an ASCII space inside a tab-separated token kept"] == 1
    assert notes.examples[0] == "dev.conll line 3: the token is blank or invisible"
    assert "5 lines skipped, 2 repaired" in notes.summary()
    tagged = list(Corpus.from_path(conll).tagged_sentences())
    assert tagged[0] == (["EU", "rejects", "German", "call"], ["B-ORG", "O", "B-MISC", "O"])


def test_jsonl_hostile_records_are_repaired_or_refused(tmp_path, store):
    lone = tmp_path / "lone.jsonl"
    lone.write_text('{"text": "a \\ud800 b"}\n{"text": "c d"}\n')
    tokenized = tokenize_corpus(Corpus.from_path(lone), store)
    assert list(tokenized.sentences()) == [["a", "\ufffd", "b"], ["c", "d"]]
    assert tokenized.read_notes.repaired == 1
    for name, line, message in (("deep", "[" * 100_000, "nested too deeply"),
                                ("digits", '{"text": "x", "n": ' + "9" * 5000 + "}", "not readable JSON")):
        p = tmp_path / f"{name}.jsonl"
        p.write_text(line + "\n")
        with pytest.raises(CorpusError, match=message):
            tokens_of(p, store)


@pytest.mark.parametrize("encoding", ["utf-32", "utf-32-le-bom", "utf-32-be-bom"])
def test_utf32_with_bom_is_read_as_utf32(tmp_path, store, encoding):
    """UTF-32's little-endian mark starts with UTF-16's (FF FE): read as UTF-16 it had a NUL between characters."""
    import codecs

    text = "Grüße aus Köln und München, sagte die Bürgermeisterin am Montag.\n" * 20
    data = {"utf-32": text.encode("utf-32"),
            "utf-32-le-bom": codecs.BOM_UTF32_LE + text.encode("utf-32-le"),
            "utf-32-be-bom": codecs.BOM_UTF32_BE + text.encode("utf-32-be")}[encoding]
    p = tmp_path / "c.txt"
    p.write_bytes(data)
    (tmp_path / "u8.txt").write_text(text, encoding="utf-8")
    corpus = Corpus.from_path(p)
    assert list(corpus.units()) == list(Corpus.from_path(tmp_path / "u8.txt").units())
    assert corpus.language_guess().language == "de"


def test_utf32_without_bom_is_refused_by_name(tmp_path):
    p = tmp_path / "c.txt"
    p.write_bytes(("plain words here\n" * 50).encode("utf-32-le"))
    with pytest.raises(CorpusError, match="UTF-32 text without a byte-order mark"):
        list(Corpus.from_path(p).units())
