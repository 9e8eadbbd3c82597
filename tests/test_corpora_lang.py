"""simcore.corpora.lang: scripts, language detection, segmentation per language, character tokens,
content words per language, and TVcC on a German target without the English tagger.

Expected segmentations are written out by hand (a reading of the sentence), not taken from the
segmenter; where ICU's dictionary cuts finer than the hand reading, the test asserts that every
word boundary of the hand reading is one of its boundaries."""

from __future__ import annotations

import itertools
import pickle
import unicodedata

import pytest

from simcore.corpora.corpus import Corpus
from simcore.corpora.lang import detect, scripts
from simcore.corpora.lang.content import content_words_method
from simcore.corpora.lang.detect import LanguageGuess, detect_language, validate_language
from simcore.corpora.lang.scripts import script_of, script_of_tokens
from simcore.corpora.lang.segment import (
    Segmenter,
    char_tokens,
    is_char_tokenized,
    segmentation_fingerprint,
    segmenter_for,
)
from simcore.corpora.tokenize import split_text
from simcore.matrix.workbench import Workbench
from simcore.measures.lookup import get_measure
from simcore.measures.options import MeasureOptions
from simcore.measures.prepared import PreparedSource, PreparedTarget
from simcore.utils.errors import InvalidArgument, SimcoreError

ZH = "北京是中华人民共和国的首都。"
JA = "東京都は日本の首都です。"
TH = "ภาษาไทยเป็นภาษาที่สวยงาม"


def boundaries(tokens: list[str]) -> set[int]:
    return set(itertools.accumulate(len(t) for t in tokens))


# -- scripts -----------------------------------------------------------------------------------

def test_script_table_is_sorted_and_its_blocks_do_not_overlap():
    ranges = scripts._RANGES
    assert all(a[1] < b[0] for a, b in zip(ranges, ranges[1:]))
    assert all(first <= last for first, last, _ in ranges)


@pytest.mark.parametrize("text, script", [
    ("Angela Merkel besuchte Paris.", "Latin"),
    ("Москва — столица России.", "Cyrillic"),
    ("Η Αθήνα είναι η πρωτεύουσα.", "Greek"),
    ("القاهرة عاصمة مصر.", "Arabic"),
    ("ירושלים היא עיר.", "Hebrew"),
    ("दिल्ली भारत की राजधानी है।", "Devanagari"),
    ("ঢাকা বাংলাদেশের রাজধানী।", "Bengali"),
    ("சென்னை ஒரு நகரம்.", "Tamil"),
    (ZH, "Han"),
    (JA, "Japanese"),
    ("カタカナ", "Japanese"),
    ("서울은 한국의 수도입니다.", "Hangul"),
    (TH, "Thai"),
    ("ວຽງຈັນ", "Lao"),
    ("ភ្នំពេញ", "Khmer"),
    ("ရန်ကုန်", "Myanmar"),
    ("12, 3.5 !?", "Unknown"),
])
def test_dominant_script(text, script):
    assert script_of(text) == script


def test_a_stray_kana_does_not_make_chinese_japanese():
    # 1 kana of 14 Han + kana letters: under the 10% that Japanese text always passes
    assert script_of("我の北京是中华人民共和国的首都") == "Han"
    assert script_of_tokens([["北", "京"], ["是", "の", "首", "都"]]) == "Japanese"  # 1 kana of 6


# -- language detection ------------------------------------------------------------------------

@pytest.mark.parametrize("lines, language, method", [
    (["Der Hund läuft jeden Morgen schnell über die Straße.", "Wir haben gestern im Garten gearbeitet."], "de", "detector"),
    (["El perro corre todas las mañanas por la calle.", "Ayer trabajamos en el jardín con mi hermana."], "es", "detector"),
    (["De hond loopt elke ochtend snel over de straat.", "Gisteren hebben wij in de tuin gewerkt."], "nl", "detector"),
    (["The dog runs quickly down the street every morning.", "We worked in the garden yesterday."], "en", "detector"),
    (["الكلب يجري بسرعة في الشارع كل صباح.", "عملنا في الحديقة أمس."], "ar", "detector"),
    (["कुत्ता हर सुबह सड़क पर तेज़ी से दौड़ता है।", "हमने कल बगीचे में काम किया।"], "hi", "detector"),
    ([ZH, "我们昨天在花园里工作。"], "zh", "script"),
    ([JA, "昨日は庭で働きました。"], "ja", "script"),
    ([TH, "เมื่อวานเราทำงานในสวน"], "th", "script"),
])
def test_detects_the_language_of_short_real_sentences(lines, language, method):
    guess = detect_language(lines)
    assert (guess.language, guess.method) == (language, method)
    assert 0.5 <= guess.confidence <= 1.0


def test_token_lists_are_detected_like_their_text():
    guess = detect_language([["Der", "Hund", "läuft", "jeden", "Morgen", "schnell", "über", "die", "Straße", "."]])
    assert guess.language == "de" and guess.script == "Latin"
    assert detect_language([list(ZH)]).language == "zh"  # a character-tokenized Chinese target


def test_detection_reads_a_bounded_sample_whatever_the_corpus_size():
    def endless():
        for i in itertools.count():
            if i > detect.SAMPLE_UNITS:
                raise AssertionError("read past the sample")
            yield "Der Hund läuft jeden Morgen schnell über die Straße."
    assert detect_language(endless()).language == "de"


def test_text_without_letters_is_undetermined():
    assert detect_language(["12 3.5 !!", "--"]) == LanguageGuess("und", "Unknown", 0.0, "script")


def test_a_given_language_wins_and_is_validated():
    guess = detect_language(["The dog runs quickly down the street."], given="DE")
    assert guess == LanguageGuess("de", "Latin", 1.0, "given")
    assert validate_language("pt-BR") == "pt" and validate_language("zh_Hant") == "zh"
    assert validate_language("und") == "und"
    for bad in ("klingon", "", "e", "../de", 3):
        with pytest.raises(InvalidArgument) as err:
            validate_language(bad)
        assert "\n" not in str(err.value)


# -- segmentation ------------------------------------------------------------------------------

def test_chinese_is_cut_into_dictionary_words():
    seg = segmenter_for("zh", "Han")
    tokens = seg.split(ZH)
    assert seg.name == "icu-zh" and "".join(tokens) == ZH
    hand = ["北京", "是", "中华人民共和国", "的", "首都", "。"]  # Beijing / is / PRC / 's / capital / .
    assert boundaries(hand) <= boundaries(tokens)  # no token crosses a word of the hand reading
    for word in ("北京", "是", "的", "首都", "。"):
        assert word in tokens
    inside = tokens[tokens.index("是") + 1:tokens.index("的")]
    assert "".join(inside) == "中华人民共和国" and len(inside) <= 3  # the compound, whole or in its parts


def test_japanese_is_segmented():
    tokens = segmenter_for("ja", "Japanese").split(JA)
    hand = ["東京都", "は", "日本", "の", "首都", "です", "。"]  # Tokyo-metropolis / TOPIC / Japan / 's / capital / is
    assert "".join(tokens) == JA and boundaries(hand) <= boundaries(tokens)
    assert {"は", "日本", "の", "首都", "です", "。"} <= set(tokens)


def test_thai_keeps_its_words_whole():
    tokens = segmenter_for("th", "Thai").split(TH)
    assert tokens == ["ภาษา", "ไทย", "เป็น", "ภาษา", "ที่", "สวยงาม"]  # language Thai is language that beautiful
    assert not any(unicodedata.category(t[0]).startswith("M") for t in tokens)
    assert any(unicodedata.category(t[0]).startswith("M") for t in split_text(TH))  # what the regex did


def test_no_space_segmenters_drop_spaces_and_keep_punctuation_and_latin_words():
    assert segmenter_for("zh", "Han").split("我 爱 Python 3 ！") == ["我", "爱", "Python", "3", "！"]
    assert segmenter_for("und", "Thai").name == "icu-th"


@pytest.mark.parametrize("language, text, expected, name", [
    ("hi", "कुत्ता सड़क पर  तेज़ी से दौड़ता है।", ["कुत्ता", "सड़क", "पर", "तेज़ी", "से", "दौड़ता", "है", "।"], "spacy-hi"),
    ("de", "Angela Merkel besuchte Paris.", ["Angela", "Merkel", "besuchte", "Paris", "."], "spacy-de"),
    ("ar", "الكلب يجري في الشارع.", ["الكلب", "يجري", "في", "الشارع", "."], "spacy-ar"),
    ("ko", "서울은 한국의 수도입니다.", ["서울은", "한국의", "수도입니다", "."], "spacy-ko"),
    ("sw", "Habari ya asubuhi, rafiki.", ["Habari", "ya", "asubuhi", ",", "rafiki", "."], "spacy-xx"),
])
def test_languages_with_spaces_use_spacys_tokenizer(language, text, expected, name):
    script = script_of(text)
    seg = segmenter_for(language, script)
    assert seg.name == name and seg.split(text) == expected
    assert seg.fingerprint()["segmenter"] == name


def test_devanagari_is_not_cut_at_its_vowel_signs():
    tokens = segmenter_for("hi", "Devanagari").split("हमने कल बगीचे में काम किया।")
    assert not any(unicodedata.category(t[0]).startswith("M") for t in tokens)
    assert any(unicodedata.category(t[0]).startswith("M") for t in split_text("हमने कल बगीचे में काम किया।"))


@pytest.mark.parametrize("text", ["Mr. Smith didn't pay $1,000 to the U.S. firm (e.g. AT&T) at 12:30.",
                                  "It's well-known: o'clock <unk> https://example.org/a."])
def test_english_and_unknown_latin_text_keep_the_existing_tokenizer(text):
    for language in ("en", "und"):
        seg = segmenter_for(language, "Latin")
        assert seg == Segmenter("en-regex") and seg.split(text) == split_text(text)
        assert seg.fingerprint() == {} and segmentation_fingerprint(seg) == {}


def test_segmenters_are_small_picklable_values():
    for seg in (segmenter_for("zh", "Han"), segmenter_for("de", "Latin"), segmenter_for("en", "Latin")):
        assert pickle.loads(pickle.dumps(seg)).split(ZH + " Paris.") == seg.split(ZH + " Paris.")


# -- characters --------------------------------------------------------------------------------

def test_char_tokens_cut_no_space_tokens_into_characters():
    assert char_tokens(["北京", "是", "iPhone", "12", "。"]) == ["北", "京", "是", "iPhone", "12", "。"]
    assert char_tokens(["เป็น"]) == ["เ", "ป็", "น"]  # the vowel mark stays on its consonant
    assert char_tokens(["ทำ"]) == ["ทำ"]  # SARA AM is a spacing mark of its consonant


def test_the_issue_check_a_source_line_covers_a_character_tokenized_target():
    target = [list("北京是中华人民共和国的首都。")]  # as MSRA-style data gives it
    assert is_char_tokenized(target * 3)  # 42 tokens, all single characters
    source = char_tokens(segmenter_for("zh", "Han").split(ZH))
    target_types = {t for s in target for t in s}
    assert len(target_types & set(source)) / len(target_types) == 1.0  # TVC on the shared words


def test_is_char_tokenized():
    words = [["北京", "是", "中华人民共和国", "的", "首都", "。"]] * 10  # 3 of 5 word tokens single
    assert not is_char_tokenized(words)
    assert not is_char_tokenized([list("北京是首都")])  # 5 tokens: too few to tell
    assert not is_char_tokenized([["The", "dog", "runs", "."]] * 20)
    assert is_char_tokenized([["เ", "ป็", "น", "ภ", "า"]] * 5)
    assert segmentation_fingerprint(segmenter_for("zh", "Han"), chars=True) == {
        "segmenter": "icu-zh", "segmenter_version": segmenter_for("zh", "Han").version, "chars": True}


# -- content words -----------------------------------------------------------------------------

def test_content_word_methods_per_language():
    en = content_words_method("en")
    assert (en.kind, en.name, en.fingerprint()) == ("tagger", "en_core_web_sm", {})
    de = content_words_method("de")
    assert (de.kind, de.name) == ("stop-words", "spacy-stop-words-de")
    assert de.fingerprint() == {"content_words": "spacy-stop-words-de"}
    sentence = "Die Kanzlerin besuchte am Montag zwei Städte in Frankreich , 2021 ."
    # die, am, in: articles and prepositions; zwei: a number word; "," "." 2021: no letter
    assert [w for w in sentence.split() if de.is_content(w)] == ["Kanzlerin", "besuchte", "Montag", "Städte",
                                                                  "Frankreich"]
    for language in ("nn", "sw", "und"):
        none = content_words_method(language)
        assert none.kind is None and none.reason.startswith("no tagger or stop-word list for")
    assert "nn" in content_words_method("nn").reason


def _german(tmp_path, store, options=MeasureOptions(), language="de"):
    source = tmp_path / "s.txt"
    source.write_text("die kanzlerin besuchte gestern frankreich und paris .\n")
    target = tmp_path / "t.conll"
    words = "Die Kanzlerin besuchte am Montag zwei Städte in Frankreich .".split()
    target.write_text("".join(f"{w}\tO\n" for w in words))
    bench = Workbench(store, options=options)
    src, tgt = bench.source(Corpus.from_path(source), 10**9, 1)[0], bench.target(Corpus.from_path(target))
    return (PreparedSource(src.sample, store, options, language=language),
            PreparedTarget(tgt.tokenized, store, options, raw=tgt.raw, language=language))


@pytest.mark.parametrize("tag_source", [False, True])
def test_tvcc_on_a_german_target_uses_the_german_stop_words_not_the_english_tagger(tmp_path, store, monkeypatch,
                                                                                    tag_source):
    def no_english_tagger(*args, **kwargs):
        raise AssertionError("the English tagger was used on German")
    monkeypatch.setattr("simcore.models.tagging.load_pipeline", no_english_tagger)
    source, target = _german(tmp_path, store, MeasureOptions(tvcc_tag_source=tag_source))
    measure = get_measure("tvcc")
    measure.prepare(source)
    result = measure.score(source, target)
    # target content words: kanzlerin besuchte montag städte frankreich; the source has kanzlerin, besuchte, frankreich
    assert result.details["target_types"] == 5
    assert result.value == pytest.approx(3 / 5)
    assert result.details["content_words"] == "spacy-stop-words-de"
    assert measure.background_work(target, 4) == []


def test_tvcc_is_left_empty_with_the_reason_for_a_language_without_a_list(tmp_path, store):
    source, target = _german(tmp_path, store, language="nn")
    with pytest.raises(SimcoreError, match=r"^TVcC not computed: no tagger or stop-word list for nn$"):
        get_measure("tvcc").score(source, target)


def test_tvcc_on_an_english_target_keeps_its_details(tmp_path, store):
    source, target = _german(tmp_path, store, language="en")  # tagged with en_core_web_sm, as before
    result = get_measure("tvcc").score(source, target)
    assert set(result.details) == {"target_types", "covered"}
