"""Corpora in any language through the whole matrix: each corpus read in its language, targets tokenized
into characters compared with sources cut alike, the language in the table, the answer and the CLI."""

from __future__ import annotations

import hashlib
import unicodedata

import pytest

from simcore.answer.recommendation import recommend
from simcore.cli.main import main
from simcore.corpora.corpus import Corpus, tokenize_corpus
from simcore.corpora.tokenize import TokenizerOptions
from simcore.matrix.workbench import Workbench
from simcore.utils.store import ArtefactStore, digest

CAPITAL = "北京是中华人民共和国的首都。"
THAI = "ภาษาไทยเป็นภาษาที่สวยงาม"

# Written for this test: German and English news in the same register, a German NER target.
GERMAN_NEWS = [
    "Die Bundesregierung hat am Montag in Berlin einen neuen Haushalt vorgestellt.",
    "Der Finanzminister sagte, die Steuern würden im nächsten Jahr nicht steigen.",
    "In München demonstrierten am Wochenende tausende Menschen gegen die Pläne der Stadt.",
    "Die Polizei meldete in der Nacht zu Sonntag mehrere Unfälle auf der Autobahn.",
    "Der Bürgermeister von Hamburg kündigte an, den Hafen weiter auszubauen.",
    "Nach Angaben des Statistischen Bundesamtes ist die Arbeitslosigkeit leicht gesunken.",
    "Die Kanzlerin reiste am Dienstag zu Gesprächen nach Paris und traf den Präsidenten.",
    "Im Bundestag wurde über das neue Gesetz zur Energie lange und heftig gestritten.",
    "Die Gewerkschaft fordert für die Beschäftigten der Bahn mehr Lohn und kürzere Arbeitszeiten.",
    "Der Verein aus Dortmund gewann das Spiel gegen Bayern mit zwei zu eins.",
    "Wie die Zeitung berichtet, will der Konzern in Stuttgart tausend neue Stellen schaffen.",
    "Die Opposition warf der Regierung vor, die Krise zu spät erkannt zu haben.",
] * 4
ENGLISH_NEWS = [
    "The government presented a new budget in London on Monday.",
    "The finance minister said taxes would not rise next year.",
    "Thousands of people protested in Manchester at the weekend against the city's plans.",
    "Police reported several accidents on the motorway overnight on Sunday.",
    "The mayor of Liverpool announced plans to expand the port further.",
    "According to the statistics office, unemployment fell slightly.",
    "The prime minister travelled to Paris on Tuesday for talks with the president.",
    "Parliament argued long and hard about the new energy law.",
    "The union is demanding higher pay and shorter hours for rail workers.",
    "The club from Leeds won the match against Chelsea by two goals to one.",
    "The newspaper reports that the company plans a thousand new jobs in Birmingham.",
    "The opposition accused the government of recognising the crisis too late.",
] * 4
GERMAN_TARGET = [
    [("Die", "O"), ("Kanzlerin", "O"), ("traf", "O"), ("in", "O"), ("Berlin", "B-LOC"), ("den", "O"),
     ("Präsidenten", "O"), ("von", "O"), ("Frankreich", "B-LOC"), (".", "O")],
    [("Der", "O"), ("Bürgermeister", "O"), ("von", "O"), ("München", "B-LOC"), ("sagte", "O"), (",", "O"),
     ("die", "O"), ("Steuern", "O"), ("würden", "O"), ("nicht", "O"), ("steigen", "O"), (".", "O")],
    [("Die", "O"), ("Polizei", "B-ORG"), ("meldete", "O"), ("mehrere", "O"), ("Unfälle", "O"), ("in", "O"),
     ("Hamburg", "B-LOC"), (".", "O")],
    [("Die", "O"), ("Gewerkschaft", "O"), ("der", "O"), ("Bahn", "B-ORG"), ("fordert", "O"), ("mehr", "O"),
     ("Lohn", "O"), (".", "O")],
] * 3


def conll(sentences: list[list[tuple[str, str]]]) -> str:
    return "\n\n".join("\n".join(f"{w}\t{t}" for w, t in s) for s in sentences) + "\n"


@pytest.fixture
def store(tmp_path):
    return ArtefactStore(tmp_path / "store")


def write_news(folder):
    """The German and the English news sources, as de_news.txt and en_news.txt in ``folder`` (made)."""
    folder.mkdir(exist_ok=True)
    (folder / "de_news.txt").write_text("\n".join(GERMAN_NEWS) + "\n", encoding="utf-8")
    (folder / "en_news.txt").write_text("\n".join(ENGLISH_NEWS) + "\n", encoding="utf-8")


def german_and_english_tvc(folder, store: ArtefactStore):
    """TVC of a German and an English news source for a German NER target."""
    write_news(folder)
    (folder / "de_ner.conll").write_text(conll(GERMAN_TARGET), encoding="utf-8")
    sources = [Corpus.from_path(folder / n) for n in ("de_news.txt", "en_news.txt")]
    return Workbench(store).matrix(sources, [Corpus.from_path(folder / "de_ner.conll")], ["tvc"], sample_tokens=5_000)


def tokens_of(corpus: Corpus, store: ArtefactStore, options: TokenizerOptions = TokenizerOptions()) -> list[list[str]]:
    return list(tokenize_corpus(corpus, store, options).sentences())


def test_chinese_source_is_cut_into_words_not_clauses(tmp_path, store):
    path = tmp_path / "zh_news.txt"
    path.write_text(CAPITAL + "\n", encoding="utf-8")
    corpus = Corpus.from_path(path)
    assert (corpus.language_guess().language, corpus.language_guess().script) == ("zh", "Han")
    [tokens] = tokens_of(corpus, store)
    assert len(tokens) > 2 and tokens[0] == "北京" and tokens[-1] == "。"  # before: one token per clause
    assert "".join(tokens) == CAPITAL


def test_thai_keeps_its_words_whole(tmp_path, store):
    path = tmp_path / "th_news.txt"
    path.write_text(THAI + "\n", encoding="utf-8")
    [tokens] = tokens_of(Corpus.from_path(path), store)
    assert "".join(tokens) == THAI
    assert not any(unicodedata.category(t[0]) in ("Mn", "Mc") for t in tokens)  # no word cut before a vowel mark
    assert {"ภาษา", "ไทย", "สวยงาม"} <= set(tokens)


def test_a_character_target_gets_character_tokens_from_its_sources_and_tvc_one(tmp_path, store):
    (tmp_path / "sources").mkdir()
    (tmp_path / "targets").mkdir()
    (tmp_path / "sources" / "zh_news.txt").write_text(CAPITAL + "\n", encoding="utf-8")
    chars = [(c, "B-LOC" if i == 0 else "I-LOC" if i == 1 else "O") for i, c in enumerate(CAPITAL)]
    (tmp_path / "targets" / "zh_ner.conll").write_text(conll([chars, chars]), encoding="utf-8")
    bench = Workbench(store)
    source = Corpus.from_path(tmp_path / "sources" / "zh_news.txt")
    target = Corpus.from_path(tmp_path / "targets" / "zh_ner.conll")
    table = bench.matrix([source], [target], ["tvc"], sample_tokens=10_000)
    row = table.iloc[0]
    # every character of the target is a character of the source: coverage 1.0, worked by hand
    assert row["value"] == pytest.approx(1.0)
    assert (row["source_language"], row["target_language"]) == ("zh", "zh")
    assert '"chars": true' in row["options"] and table.attrs["character_targets"] == ["zh_ner"]
    # cut into words instead (the target's own tokens ignored), the source's words would cover nothing of it
    words = Workbench(store).cell(Workbench(store).source(source, 10_000, 1), Workbench(store).target(target), "tvc")
    assert words.value < 0.5


def test_german_target_recommends_the_german_source_and_the_reason_names_the_languages(tmp_path, store):
    write_news(tmp_path / "sources")
    (tmp_path / "de_ner").mkdir()
    (tmp_path / "de_ner" / "test.conll").write_text(conll(GERMAN_TARGET), encoding="utf-8")
    sources = [Corpus.from_path(p) for p in sorted((tmp_path / "sources").iterdir())]
    target = Corpus.from_path(tmp_path / "de_ner")
    table = Workbench(store).matrix(sources, [target], ["ppl", "jsd", "tvc"], sample_tokens=5_000)
    languages = dict(zip(table["source"], table["source_language"]))
    assert languages == {"de_news": "de", "en_news": "en"} and set(table["target_language"]) == {"de"}
    [answer] = recommend(table)
    assert answer.recommended[0] == "de_news"
    assert "German (de)" in answer.reason and "en_news (English (en))" in answer.reason
    tvc = table[table["measure"] == "tvc"].set_index("source")["value"]
    assert tvc["de_news"] > tvc["en_news"]


def test_an_english_corpus_keeps_the_fingerprint_it_had_before_languages(tmp_path):
    path = tmp_path / "news.txt"
    path.write_bytes(b"The minister said on Monday that taxes would not rise .\n")
    corpus = Corpus.from_path(path)
    options = TokenizerOptions()
    # the formula used before languages existed: the bytes, the format, the text field, encoding and options
    h = hashlib.sha256(path.read_bytes() + b"\0text")
    assert corpus.segmentation_key() == []
    assert corpus.raw_fingerprint(options) == digest(h.hexdigest(), "text", None, options.as_dict())


def test_cli_language_override_note_and_refusal(tmp_path, capsys):
    write_news(tmp_path / "sources")
    (tmp_path / "targets").mkdir()
    (tmp_path / "targets" / "de_ner.conll").write_text(conll(GERMAN_TARGET), encoding="utf-8")
    base = ["matrix", "--sources", str(tmp_path / "sources"), "--targets", str(tmp_path / "targets"),
            "--measures", "tvc", "--sample-tokens", "5000", "--bootstrap", "0", "--jobs", "1",
            "--cache", str(tmp_path / "cache")]
    assert main([*base, "--out", str(tmp_path / "m.csv"), "--language", "en_news=nl"]) == 0
    err = capsys.readouterr().err
    assert "en_news: Dutch (nl), Latin script, given (--language)" in err
    assert "de_news: German (de), Latin script, detected" in err
    assert "de_ner: in German (de); compared with sources in another language: en_news (Dutch (nl))" in err
    assert main([*base, "--out", str(tmp_path / "m2.csv"), "--language", "xx-not-a-language"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not-a-language" in err[0] and "Traceback" not in err[0]
    assert main([*base, "--out", str(tmp_path / "m3.csv"), "--language", "nosuch=de"]) == 2
    assert "--language names no corpus called 'nosuch'" in capsys.readouterr().err


def test_emb_is_left_empty_for_a_language_its_encoder_does_not_read(tmp_path, store):
    pytest.importorskip("sentence_transformers")
    (tmp_path / "de_news.txt").write_text("\n".join(GERMAN_NEWS) + "\n", encoding="utf-8")
    (tmp_path / "de_ner.conll").write_text(conll(GERMAN_TARGET), encoding="utf-8")
    table = Workbench(store).matrix([Corpus.from_path(tmp_path / "de_news.txt")],
                                    [Corpus.from_path(tmp_path / "de_ner.conll")], ["emb", "tvc"], sample_tokens=5_000)
    emb = table[table["measure"] == "emb"].iloc[0]
    assert emb["value"] != emb["value"]  # NaN: not computed
    assert emb["error"] == ("EMB not computed: its encoder (all-MiniLM-L6-v2) was trained on English text and the "
                            "target is in German (de)")
    assert table[table["measure"] == "tvc"]["value"].notna().all()


def test_the_html_report_lists_each_corpus_language_when_one_is_not_english(tmp_path, store):
    from simcore.analysis.ranking import rank_sources
    from simcore.reporting.report import build_report

    table = german_and_english_tvc(tmp_path, store)
    page = build_report(table, rank_sources(table))
    assert "<h2>Languages</h2>" in page
    for cell in ("<td>de_news</td><td>source</td><td>German (de)</td>",
                 "<td>en_news</td><td>source</td><td>English (en)</td>",
                 "<td>de_ner</td><td>target</td><td>German (de)</td>"):
        assert cell in page.replace("\n", "")
    english = table.assign(source_language="en", target_language="en")
    assert "<h2>Languages</h2>" not in build_report(english, rank_sources(english))


def test_the_heatmap_hover_says_a_cell_compares_across_languages(tmp_path, store):
    from dashboard.charts import heatmap

    table = german_and_english_tvc(tmp_path, store)
    hover = heatmap(table, "tvc").data[0].customdata  # rows: sources in order (de_news, en_news)
    assert "across languages" not in hover[0][0]
    assert "<br>across languages: English (en) source, German (de) target<br>" in hover[1][0] + "<br>"


def test_a_large_chinese_source_is_sampled_by_its_words_not_its_clauses(tmp_path, store):
    from simcore.corpora.sampling import read_candidates, sample_source

    lines = [f"{CAPITAL}第{i}条新闻说北京今天天气很好。" for i in range(3_000)]  # one whitespace word a line
    path = tmp_path / "zh_news.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    corpus = Corpus.from_path(path)
    result = sample_source(corpus, [2_000], 1, 13, store)
    [sample] = result.samples[2_000]
    assert sample.n_tokens == 2_000  # cut at exactly the size asked, in ICU's words
    # sized by characters (at least one token per DENSE_CHARS_PER_TOKEN of them), the pass keeps a few
    # hundred lines; sized by whitespace words (one a line) it would keep 2,000 lines, two thirds of the source
    kept = len(read_candidates(corpus, 2_000, 1, 13).heaps[0])
    assert kept < 1_000
