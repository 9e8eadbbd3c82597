"""simcore.corpora.lang.cut: a target's own rows decide how both sides are cut, in every script.

Each kind of NER file is written here by hand (KLUE-style one character a row, with and without its
space rows; Vietnamese words joined by '_'; Arabic words with attached clitics; CoNLL-2002 with
-DOCSTART- and a POS column). Each is compared through the matrix with a source written to hold
exactly the target's words (TVC 1.0) and with one holding a part of them, whose TVC is worked out by
hand in the comments.
"""

from __future__ import annotations

import pytest

from simcore.cli.main import main
from simcore.corpora.corpus import Corpus
from simcore.corpora.lang.cut import (
    CHARACTERS,
    REJOINED,
    SYLLABLES,
    WORDS,
    all_char_tokens,
    describe_cut,
    detect_cut,
    split_joined,
    tokenizer_for_cut,
)
from simcore.corpora.tokenize import TokenizerOptions
from simcore.matrix.workbench import Workbench
from simcore.utils.errors import InvalidArgument

# -- the files ----------------------------------------------------------------------------------

KO_SENTENCES = ["서울시는 오늘 새 정책을 발표했다.", "김철수 씨는 부산에서 태어났다."]
# The words a Korean reader (and spaCy's rule-based Korean tokenizer) cuts them into, lower-cased.
KO_WORDS = [
    ["서울시는", "오늘", "새", "정책을", "발표했다", "."],
    ["김철수", "씨는", "부산에서", "태어났다", "."],
]
KO_TAGS = {"서": "B-LC", "울": "I-LC", "시": "I-LC", "김": "B-PS", "철": "I-PS", "수": "I-PS"}


def klue(sentences: list[str], space_rows: bool) -> str:
    """A KLUE-NER-style file: a '## id<TAB>text' line, then one character a row (a space row "
      "between words)."""
    out = []
    for i, sentence in enumerate(sentences):
        out.append(f"## klue-ner-v1_dev_{i:05d}-wikitree\t{sentence}")
        seen: set[str] = set()
        for char in sentence:
            if char == " " and not space_rows:
                continue
            tag = KO_TAGS.get(char, "O") if char not in seen else "O"
            seen.add(char)
            out.append(f"{char}\t{tag}")
        out.append("")
    return "\n".join(out) + "\n"


VI_TARGET = [  # PhoNER_COVID19 word level: syllables of one word joined by '_'
    [
        ("Bệnh_nhân", "O"),
        ("ở", "O"),
        ("Hà_Nội", "B-LOCATION"),
        ("đã", "O"),
        ("khỏi", "O"),
        ("bệnh", "O"),
        (".", "O"),
    ],
    [
        ("Thành_phố", "O"),
        ("Hồ_Chí_Minh", "B-LOCATION"),
        ("có", "O"),
        ("thêm", "O"),
        ("ca", "O"),
        ("mắc", "O"),
        ("mới", "O"),
        (".", "O"),
    ],
] * 2
VI_TEXT = ["Bệnh nhân ở Hà Nội đã khỏi bệnh.", "Thành phố Hồ Chí Minh có thêm ca mắc mới."]

AR_TARGET = [  # ANERcorp style: words as written, clitics (و, ب, ل, س) attached
    [
        ("وقال", "O"),
        ("الرئيس", "O"),
        ("للصحفيين", "O"),
        ("بالقاهرة", "B-LOC"),
        ("إن", "O"),
        ("الولايات", "B-LOC"),
        ("المتحدة", "I-LOC"),
        ("ستدعم", "O"),
        ("الفلسطينيين", "O"),
        (".", "O"),
    ],
    [("وزار", "O"), ("الوزير", "O"), ("بيروت", "B-LOC"), ("وعمان", "B-LOC"), (".", "O")],
]
AR_TEXT = [
    "وقال الرئيس للصحفيين بالقاهرة إن الولايات المتحدة ستدعم الفلسطينيين.",
    "وزار الوزير بيروت وعمان.",
]

NL_CONLL2002 = """-DOCSTART- -DOCSTART- O
De Art O
minister N O
van Prep O
Financiën N B-MISC
, Punc O
Gerrit N B-PER
Zalm N I-PER
, Punc O
sprak V O
in Prep O
Den N B-LOC
Haag N I-LOC
. Punc O

Ajax N B-ORG
won V O
in Prep O
Amsterdam N B-LOC
van Prep O
PSV N B-ORG
. Punc O

"""
NL_TEXT = [
    "De minister van Financiën, Gerrit Zalm, sprak in Den Haag.",
    "Ajax won in Amsterdam van PSV.",
]


def conll(sentences: list[list[tuple[str, str]]]) -> str:
    return "\n\n".join("\n".join(f"{w}\t{t}" for w, t in s) for s in sentences) + "\n"


def tvc(
    tmp_path,
    store,
    target_text: str,
    target_name: str,
    source_lines: list[str],
    language: str | None = None,
) -> tuple[float, str, Corpus]:
    """TVC of one raw-text source against one target, through the matrix; and the row's "
      "target_cut."""
    source_path = tmp_path / f"source_{abs(hash(tuple(source_lines)))}.txt"
    source_path.write_text("\n".join(source_lines) + "\n", encoding="utf-8")
    target_path = tmp_path / target_name
    target_path.write_text(target_text, encoding="utf-8")
    target = Corpus.from_path(target_path, fmt="conll", language=language)
    table = Workbench(store).matrix(
        [Corpus.from_path(source_path, language=language)], [target], ["tvc"], sample_tokens=10_000
    )
    [row] = table.to_dict("records")
    return row["value"], row["target_cut"], target


def target_tokens(store, target: Corpus, cut: str) -> list[list[str]]:
    bench = Workbench(store, tokenizer_for_cut(TokenizerOptions(), cut))
    return list(bench.tokenize(target).sentences())


# -- KLUE: one Hangul character a row -----------------------------------------------------------


def test_klue_with_space_rows_is_rejoined_into_its_words(tmp_path, store):
    text = klue(KO_SENTENCES, space_rows=True)
    value, cut, target = tvc(tmp_path, store, text, "klue.tsv", KO_SENTENCES)
    assert cut == describe_cut(REJOINED) and cut.startswith("words:")
    assert target_tokens(store, target, REJOINED) == KO_WORDS
    assert value == pytest.approx(1.0)  # the source holds every word of the target
    # 서울시는 오늘 . 발표했다 of the 10 word types (서울시는 오늘 새 정책을 발표했다 . 김철수 씨는 부산에서 태어났다)
    value, _, _ = tvc(tmp_path, store, text, "klue.tsv", ["서울시는 오늘 발표했다."])
    assert value == pytest.approx(4 / 10)


def test_klue_compared_syllable_by_syllable_with_words_covers_almost_nothing(tmp_path, store):
    """The failure the cut removes: the target's 25 character types against the source's words."""
    path = tmp_path / "klue.tsv"
    path.write_text(klue(KO_SENTENCES, space_rows=True), encoding="utf-8")
    (tmp_path / "ko.txt").write_text("\n".join(KO_SENTENCES) + "\n", encoding="utf-8")
    bench = Workbench(store)
    target, source = Corpus.from_path(path, fmt="conll"), Corpus.from_path(tmp_path / "ko.txt")
    cell = bench.cell(bench.source(source, 10_000, 1), bench.target(target), "tvc")
    assert cell.value == pytest.approx(2 / 25)  # only 새 and . are both a character and a word


def test_klue_without_space_rows_is_compared_with_sources_cut_into_characters(tmp_path, store):
    text = klue(KO_SENTENCES, space_rows=False)
    value, cut, target = tvc(tmp_path, store, text, "klue_nospace.tsv", KO_SENTENCES)
    assert cut == describe_cut(CHARACTERS)
    assert cut.startswith("characters: the target is tagged one character a row")
    assert value == pytest.approx(1.0)
    # 서 울 시 는 오 늘 발 표 했 다 . : 11 of the target's 25 character types
    value, _, _ = tvc(tmp_path, store, text, "klue_nospace.tsv", ["서울시는 오늘 발표했다."])
    assert value == pytest.approx(11 / 25)


def test_klue_space_rows_are_read_as_spaces_not_as_bad_lines(tmp_path):
    path = tmp_path / "klue.tsv"
    path.write_text(klue(KO_SENTENCES * 20, space_rows=True), encoding="utf-8")
    corpus = Corpus.from_path(path, fmt="conll")
    first = next(iter(corpus.units(keep_spaces=True)))
    assert "".join(first) == KO_SENTENCES[0]
    assert "".join(next(iter(corpus.units()))) == KO_SENTENCES[0].replace(" ", "")
    tagged = next(iter(corpus.tagged_sentences()))
    assert tagged[1][:3] == ["B-LC", "I-LC", "I-LC"] and " " not in tagged[0]


# -- Vietnamese: syllables joined by '_' ----------------------------------------------------------


def test_vietnamese_joined_words_are_split_into_syllables_like_raw_text(tmp_path, store):
    value, cut, target = tvc(tmp_path, store, conll(VI_TARGET), "phoner_word.conll", VI_TEXT)
    assert cut == describe_cut(SYLLABLES) and target.language_guess().language == "vi"
    assert target_tokens(store, target, SYLLABLES)[0] == [
        "bệnh",
        "nhân",
        "ở",
        "hà",
        "nội",
        "đã",
        "khỏi",
        "bệnh",
        ".",
    ]
    assert value == pytest.approx(1.0)
    # 18 syllable types (bệnh nhân ở hà nội đã khỏi . thành phố hồ chí minh có thêm ca mắc mới);
    # the source has hà nội có thêm ca mới . : 7
    value, _, _ = tvc(
        tmp_path, store, conll(VI_TARGET), "phoner_word.conll", ["Hà Nội có thêm ca mới."]
    )
    assert value == pytest.approx(7 / 18)


# -- Arabic: words with attached clitics ----------------------------------------------------------


def test_arabic_words_keep_their_clitics_on_both_sides(tmp_path, store):
    value, cut, target = tvc(tmp_path, store, conll(AR_TARGET), "anercorp.conll", AR_TEXT)
    assert cut == describe_cut(WORDS) and target.language_guess().language == "ar"
    assert value == pytest.approx(1.0)
    # 14 types; a source with the bare words (قال, القاهرة) covers الرئيس إن الولايات المتحدة ستدعم
    # بيروت . : 7,
    # not وقال or بالقاهرة: a clitic stays part of its word
    value, _, _ = tvc(
        tmp_path,
        store,
        conll(AR_TARGET),
        "anercorp.conll",
        ["قال الرئيس في القاهرة إن الولايات المتحدة ستدعم بيروت."],
    )
    assert value == pytest.approx(7 / 14)


# -- CoNLL-2002 as published ----------------------------------------------------------------------


def test_conll2002_docstart_and_pos_column_are_not_words(tmp_path, store):
    value, cut, target = tvc(tmp_path, store, NL_CONLL2002, "ned.testa", NL_TEXT, language="nl")
    assert cut == describe_cut(WORDS)
    tokens = target_tokens(store, target, WORDS)
    assert tokens == [
        [
            "de",
            "minister",
            "van",
            "financiën",
            ",",
            "gerrit",
            "zalm",
            ",",
            "sprak",
            "in",
            "den",
            "haag",
            ".",
        ],
        ["ajax", "won", "in", "amsterdam", "van", "psv", "."],
    ]
    assert [t for _, t in target.tagged_sentences()][1] == [
        "B-ORG",
        "O",
        "O",
        "B-LOC",
        "O",
        "B-ORG",
        "O",
    ]
    assert value == pytest.approx(1.0)
    # 16 types; "De minister sprak in Amsterdam." has de minister sprak in amsterdam . : 6
    value, _, _ = tvc(
        tmp_path,
        store,
        NL_CONLL2002,
        "ned.testa",
        ["De minister sprak in Amsterdam."],
        language="nl",
    )
    assert value == pytest.approx(6 / 16)


# -- detection and the pieces --------------------------------------------------------------------


def test_detect_cut_from_rows():
    chars = [list("서울시는") + [" "] + list("오늘") + [" "] + list("발표했다")] * 3
    assert detect_cut(chars, "ko") == REJOINED
    assert detect_cut([[t for t in s if t != " "] for s in chars], "ko") == CHARACTERS
    assert detect_cut([["Hà_Nội", "có", "thêm", "ca", "mới"]] * 5, "vi") == SYLLABLES
    assert detect_cut([["Die", "Polizei", "meldete", "Unfälle"]] * 10, "de") == WORDS
    assert detect_cut([list("abcdefg")] * 10, "en") == WORDS  # English targets are never re-cut
    assert detect_cut([list("서울")], "ko") == WORDS  # too few rows to tell


def test_pieces_of_the_cuts():
    assert split_joined(["Hà_Nội", "COVID-19", "_", "a_1", "thành_phố_Hồ_Chí_Minh"]) == [
        "Hà",
        "Nội",
        "COVID-19",
        "_",
        "a_1",
        "thành",
        "phố",
        "Hồ",
        "Chí",
        "Minh",
    ]
    assert all_char_tokens(["서울시는", "2019년", "."]) == [
        "서",
        "울",
        "시",
        "는",
        "2",
        "0",
        "1",
        "9",
        "년",
        ".",
    ]
    assert all_char_tokens(["cafe\u0301"]) == [
        "c",
        "a",
        "f",
        "e\u0301",
    ]  # a letter keeps its combining mark
    with pytest.raises(InvalidArgument):
        TokenizerOptions(cut="bytes")
    assert TokenizerOptions().as_dict() == {"lowercase": True}  # English fingerprints as before
    assert TokenizerOptions(cut=REJOINED).as_dict() == {"lowercase": True, "cut": "rejoined"}


def test_cli_says_how_a_character_target_is_cut(tmp_path, capsys):
    (tmp_path / "sources").mkdir()
    (tmp_path / "targets").mkdir()
    (tmp_path / "sources" / "ko.txt").write_text("\n".join(KO_SENTENCES) + "\n", encoding="utf-8")
    (tmp_path / "targets" / "klue.tsv").write_text(
        klue(KO_SENTENCES, space_rows=True), encoding="utf-8"
    )
    out = tmp_path / "m.csv"
    code = main(
        [
            "matrix",
            "--sources",
            str(tmp_path / "sources"),
            "--targets",
            str(tmp_path / "targets"),
            "--measures",
            "tvc",
            "--out",
            str(out),
            "--cache",
            str(tmp_path / "cache"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 0
    assert (
        "klue: Korean (ko), Hangul script, told by its script; words: the target is tagged one "
        "character a row"
        in " ".join(err.split())
    )
    import csv

    with open(out, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert (
        rows[0]["target_cut"] == describe_cut(REJOINED)
        and '"cut": "rejoined"' in rows[0]["options"]
    )
