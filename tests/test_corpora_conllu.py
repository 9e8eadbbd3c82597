"""CoNLL-U (Universal Dependencies, Universal NER, GermEval-style numbered files): the word from FORM, the
tags from MISC's NER= key or a named column, comments, multiword ranges and empty nodes skipped and counted
(issue 27, item 1). Every file is written here by hand, the expected words and tags read off it by eye."""

import pytest

from simcore.corpora.corpus import Corpus, tokenize_corpus
from simcore.corpora.formats import format_of
from simcore.corpora.notes import ReadNotes
from simcore.matrix.workbench import Workbench
from simcore.utils.errors import CorpusError


def conllu_line(index, form, misc="_", lemma="_", upos="X"):
    return "\t".join([str(index), form, lemma, upos, "_", "_", "0", "dep", "_", misc])


# A German UNER-style sentence: comments, a multiword token ("zum" = "zu dem") and an empty node beside it.
GERMAN = "\n".join([
    "# newdoc id = de-news-1",
    "# sent_id = 1",
    "# text = Angela Merkel besuchte Paris.",
    conllu_line(1, "Angela", "NER=B-PER"),
    conllu_line(2, "Merkel", "NER=I-PER"),
    conllu_line(3, "besuchte", "NER=O"),
    conllu_line(4, "Paris", "NER=B-LOC|SpaceAfter=No"),
    conllu_line("4.1", "_", "_"),
    conllu_line(5, ".", "NER=O"),
    "",
    "# sent_id = 2",
    "# text = Sie ging zum Markt.",
    conllu_line(1, "Sie", "NER=O"),
    conllu_line(2, "ging", "NER=O"),
    conllu_line("3-4", "zum", "_"),
    conllu_line(3, "zu", "NER=O"),
    conllu_line(4, "dem", "NER=O"),
    conllu_line(5, "Markt", "NER=O|SpaceAfter=No"),
    conllu_line(6, ".", "NER=O"),
    "", "",
])
FIRST = (["Angela", "Merkel", "besuchte", "Paris", "."], ["B-PER", "I-PER", "O", "B-LOC", "O"])
SECOND = (["Sie", "ging", "zu", "dem", "Markt", "."], ["O"] * 6)


def test_conllu_suffix_and_format():
    assert format_of("de_gsd-ud-train.conllu") == "conllu" and format_of("x.conllu.gz") == "conllu"


def test_the_german_uner_file_reads_as_words_and_tags_with_every_skip_counted(tmp_path, store):
    p = tmp_path / "de.conllu"
    p.write_text(GERMAN)
    notes = ReadNotes()
    assert list(Corpus.from_path(p).tagged_sentences(notes)) == [FIRST, SECOND]
    assert notes.reasons == {"comment line": 5, "multiword token range": 1, "empty node": 1}
    assert notes.facts == {"tag scheme": "IOB2"}
    tokenized = tokenize_corpus(Corpus.from_path(p), store)
    assert list(tokenized.sentences()) == [["angela", "merkel", "besuchte", "paris", "."],
                                           ["sie", "ging", "zu", "dem", "markt", "."]]
    assert tokenized.read_notes.skipped == 7


def test_tvc_of_the_german_file_against_a_source_holding_its_words_is_one(tmp_path, store):
    target = tmp_path / "de.conllu"
    target.write_text(GERMAN)
    source = tmp_path / "news.txt"
    source.write_text("Angela Merkel besuchte Paris. Sie ging zu dem Markt.\n" * 3)
    table = Workbench(store).matrix([Corpus.from_path(source)], [Corpus.from_path(target)], ["tvc"])
    assert table.set_index("measure").loc["tvc", "value"] == pytest.approx(1.0)


@pytest.mark.parametrize("name", ["de.conll", "de.data", "de"])
def test_conllu_under_another_name_is_read_as_conllu_and_said(tmp_path, name):
    p = tmp_path / name
    p.write_text(GERMAN)
    notes = ReadNotes()
    assert list(Corpus.from_path(p).tagged_sentences(notes))[0] == FIRST
    if name == "de.conll":  # read as CoNLL by its name, its shape found by the CoNLL reader
        assert notes.facts["format"].startswith("CoNLL-U")
    assert list(Corpus.from_path(p).units()) == [FIRST[0], SECOND[0]]


@pytest.mark.parametrize("key", ["ner", "Entity"])
def test_other_misc_keys(tmp_path, key):
    p = tmp_path / "k.conllu"
    p.write_text("\n".join([conllu_line(1, "Paris", f"{key}=B-LOC"), conllu_line(2, "liegt", f"{key}=O"), ""]))
    assert list(Corpus.from_path(p).tagged_sentences()) == [(["Paris", "liegt"], ["B-LOC", "O"])]


def test_coreference_entity_brackets_and_untagged_treebanks_have_no_tags(tmp_path, store):
    coref = tmp_path / "coref.conllu"
    coref.write_text("\n".join([conllu_line(1, "Sie", "Entity=(e1-person-1)"), conllu_line(2, "kam", "_"), ""]))
    assert list(Corpus.from_path(coref).tagged_sentences()) == []
    assert list(tokenize_corpus(Corpus.from_path(coref), store).sentences()) == [["sie", "kam"]]


def test_a_tagged_sentence_missing_one_tag_reads_it_as_o_and_counts_it(tmp_path):
    p = tmp_path / "gap.conllu"
    p.write_text("\n".join([conllu_line(1, "Paris", "NER=B-LOC"), conllu_line(2, "liegt", "SpaceAfter=No"), ""]))
    notes = ReadNotes()
    assert list(Corpus.from_path(p).tagged_sentences(notes)) == [(["Paris", "liegt"], ["B-LOC", "O"])]
    assert notes.reasons == {"word without a tag in a tagged sentence, read as O": 1}


def test_conllu_plus_named_column(tmp_path):
    p = tmp_path / "plus.conllup"
    p.write_text("# global.columns = ID FORM UPOS NER\n# sent_id = 1\n"
                 "1\tNew York\tPROPN\tB-LOC\n2\tschläft\tVERB\tO\n3\tnie\tADV\t_\n\n")
    # FORM may hold a space in CoNLL-U: the word is kept whole; a "_" tag cell is no tag (read as O, counted).
    notes = ReadNotes()
    assert list(Corpus.from_path(p).tagged_sentences(notes)) == [
        (["New York", "schläft", "nie"], ["B-LOC", "O", "O"])]
    assert notes.reasons["word without a tag in a tagged sentence, read as O"] == 1


def test_universal_ner_five_column_iob2_files(tmp_path):
    # Universal NER v1 ships "ID FORM TAG - -" lines under "# sent_id" / "# text" comments, named .iob2.
    p = tmp_path / "de_pud-ud-test.iob2"
    p.write_text("# sent_id = 1\n# text = Angela Merkel besuchte Paris .\n"
                 + "".join(f"{i}\t{w}\t{t}\t-\t-\n" for i, (w, t) in enumerate(zip(*FIRST), 1)) + "\n")
    assert list(Corpus.from_path(p).tagged_sentences()) == [FIRST]


def test_germeval_style_numbered_file_with_comment_lines(tmp_path):
    # GermEval 2014: "#<TAB>source [date]" comments, then "ID TOKEN OUTER INNER".
    p = tmp_path / "germeval.tsv"
    p.write_text("#\thttp://de.wikipedia.org/wiki/X [2009-10-17]\n"
                 "1\tSchartau\tB-PER\tO\n2\tsagte\tO\tO\n3\tin\tO\tO\n4\tBerlin\tB-LOC\tO\n\n")
    assert list(Corpus.from_path(p).tagged_sentences()) == [
        (["Schartau", "sagte", "in", "Berlin"], ["B-PER", "O", "O", "B-LOC"])]


def test_space_separated_numbered_words_are_refused_never_read_as_numbers(tmp_path, store):
    p = tmp_path / "numbered.conll"
    p.write_text("1 Angela B-PER\n2 Merkel I-PER\n3 besuchte O\n4 Paris B-LOC\n\n1 Sie O\n2 ging O\n\n")
    with pytest.raises(CorpusError, match="numbers its words in the first column"):
        tokenize_corpus(Corpus.from_path(p), store)


def test_comment_lines_in_a_conll_file_are_skipped_and_counted_a_hash_token_kept(tmp_path, store):
    p = tmp_path / "c.conll"
    p.write_text("# sent_id = 1\n# text = Love # fun\nLove\tO\n#\tO\nfun\tO\n\n")
    tokenized = tokenize_corpus(Corpus.from_path(p), store)
    assert list(tokenized.sentences()) == [["love", "#", "fun"]]
    assert tokenized.read_notes.reasons == {"comment line": 2}


def test_a_file_that_is_not_conllu_is_refused_in_one_line(tmp_path, store):
    p = tmp_path / "bad.conllu"
    p.write_text("".join(f"word{i} and more words\n" for i in range(30)))
    with pytest.raises(CorpusError, match="is not CoNLL-U on 30 of 30 lines"):
        tokenize_corpus(Corpus.from_path(p), store)
