"""Overlap of sources with targets (simcore.contamination.ngrams, simcore.contamination.scan): sentences injected at known
counts into a real source, near-duplicates, character n-grams, targets without a test split, a source
holding a whole target; the cheap test checked against a brute-force scan; the streaming pass, the
whole-tokenized path and a matrix all give the same numbers; the answer's contamination clause."""

from __future__ import annotations

import gzip
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import simcore.contamination.ngrams as ngrams
import simcore.matrix.corpus_cache as corpus_cache
from simcore.answer.public import recommend
from simcore.contamination.ngrams import (
    Scanner,
    TargetIndex,
    fold,
    fold_unit,
    gram_hash,
    scan_path,
    target_sentences,
    words_of,
)
from simcore.contamination.scan import OverlapOptions, source_overlaps
from simcore.corpora.corpus import Corpus, unit_tokenizer
from simcore.corpora.tokenize import TokenizerOptions
from simcore.matrix.rows import encode_replicates
from simcore.matrix.workbench import Workbench
from simcore.measures.lookup import get_measure
from simcore.utils.errors import InvalidArgument
from simcore.utils.store import ArtefactStore

from .conftest import SHARED_DATA

ALNUM = re.compile(r"\w")


def conll_sentences(path: Path) -> list[list[str]]:
    """The tokens of each sentence of a CoNLL file, read here without simcore."""
    out, current = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            if current:
                out.append(current)
            current = []
            continue
        token = line.split()[0]
        if token != "-DOCSTART-":
            current.append(token)
    if current:
        out.append(current)
    return out


def write_conll(path: Path, sentences: list[list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n\n".join("\n".join(f"{t}\tO" for t in s) for s in sentences) + "\n", encoding="utf-8")


def news_lines(shared: Path, count: int) -> list[str]:
    with gzip.open(shared / "sources" / "news_1bwb.txt.gz", "rt", encoding="utf-8") as f:
        return [next(f).rstrip("\n") for _ in range(count)]


@pytest.fixture(params=["compiled", "numpy"])
def cheap_test(request, monkeypatch) -> str:
    """The scan with its cheap test compiled (kernel.c), then with the extension hidden (the numpy
    path a machine without it runs)."""
    if request.param == "numpy":
        monkeypatch.setattr(ngrams, "compiled", None)
    elif ngrams.compiled is None:
        pytest.skip("the compiled scan is not built here (scripts/install.sh builds it)")
    assert scan_path() == request.param
    return request.param


@pytest.fixture(scope="module")
def injected(tmp_path_factory):
    """news_1bwb's first 8,000 lines, and a copy with 120 of conll2003's long test sentences in place of
    120 lines; the count that must be found is the number of distinct injected sentences."""
    if not (SHARED_DATA / "sources").is_dir():
        pytest.skip("../shared/data is not present")
    shared_data = SHARED_DATA
    root = tmp_path_factory.mktemp("overlap")
    test = conll_sentences(shared_data / "targets" / "conll2003" / "test.conll")
    # 13 or more tokens holding a letter or digit, counted here by a plain regex
    long = [s for s in test if sum(bool(ALNUM.search(t)) for t in s) >= 13]
    chosen = long[::7][:120]
    lines = news_lines(shared_data, 8000)
    dirty = list(lines)
    for i, sentence in enumerate(chosen):
        dirty[i * 60 + 5] = " ".join(sentence)
    (root / "clean.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "dirty.txt").write_text("\n".join(dirty) + "\n", encoding="utf-8")
    expected = sum(1 for s in test if s in chosen)  # a sentence that occurs twice in the test split counts twice
    return root, len(test), expected


def test_injected_test_sentences_are_counted_exactly(injected, shared_data, tmp_path):
    root, n_test, expected = injected
    bench = Workbench(ArtefactStore(tmp_path / "store"))
    target = Corpus.from_path(shared_data / "targets" / "conll2003")
    clean = source_overlaps(bench, Corpus.from_path(root / "clean.txt"), [target])["conll2003"]
    dirty = source_overlaps(bench, Corpus.from_path(root / "dirty.txt"), [target])["conll2003"]
    assert clean.test_held == 0  # 1BWB (2011 news) holds no 1996 Reuters test sentence of 13+ words
    assert dirty.test_held - clean.test_held == expected
    assert dirty.test_sentences == n_test
    assert dirty.overlap_test == pytest.approx(dirty.test_held / n_test)
    # every injected sentence is a test sentence: the whole target holds exactly the same ones more
    n_all = sum(len(conll_sentences(shared_data / "targets" / "conll2003" / f"{s}.conll"))
                for s in ("train", "dev", "test"))
    assert dirty.sentences == n_all
    assert dirty.held - clean.held >= expected


def test_the_streaming_pass_and_the_stored_tokens_give_the_same_overlap(injected, shared_data, tmp_path,
                                                                       monkeypatch):
    root, _, _ = injected
    target = Corpus.from_path(shared_data / "targets" / "conll2003")
    whole = source_overlaps(Workbench(ArtefactStore(tmp_path / "a")), Corpus.from_path(root / "dirty.txt"),
                            [target])["conll2003"]
    monkeypatch.setattr(corpus_cache, "STREAM_MIN_BYTES", 1)  # every source sampled in one streaming pass
    bench = Workbench(ArtefactStore(tmp_path / "b"))
    source = Corpus.from_path(root / "dirty.txt")
    assert bench.streams(source)
    streamed = source_overlaps(bench, source, [target])["conll2003"]
    assert streamed == whole
    # the pass is remembered: a later size costs no read, and a new target is scanned on its own
    assert bench.size(source) > 0
    again = source_overlaps(Workbench(ArtefactStore(tmp_path / "b")), source, [target])["conll2003"]
    assert again == whole


def conll_and_dirty_lines(injected, shared_data) -> tuple[TargetIndex, object, list[str]]:
    """conll2003's index, the dirty source's tokenizer and its lines (the injected fixture's)."""
    root, _, _ = injected
    options = TokenizerOptions()
    index = TargetIndex.build("conll2003", target_sentences(
        Corpus.from_path(shared_data / "targets" / "conll2003"), options))
    tokens_of = unit_tokenizer(Corpus.from_path(root / "dirty.txt").segmenter(), options)
    return index, tokens_of, (root / "dirty.txt").read_text(encoding="utf-8").splitlines()


def test_the_cheap_test_never_loses_an_overlap(injected, shared_data, cheap_test):
    """Every n-gram a brute-force scan (each unit tokenized, every n-gram hashed) finds, the scanner finds."""
    index, tokens_of, lines = conll_and_dirty_lines(injected, shared_data)
    # near-duplicates: upper case, punctuation changed, spaces doubled
    lines += [" ".join(line.upper().replace(",", ";").split()).replace(" ", "  ") for line in lines[5::60][:40]]
    brute: set[int] = set()
    lengths = {index.n, *index.short_lengths}
    for line in lines:
        words = words_of(tokens_of(line))
        for n in lengths:
            brute.update(h for h in (gram_hash(words[i:i + n]) for i in range(len(words) - n + 1))
                         if h in index.keys)
    scanner = Scanner([index], tokens_of)
    for _ in scanner.watch(lines):
        pass
    assert brute and scanner.result() == brute
    assert scanner.tested < len(lines) / 5  # and it tokenized few of the units


def test_units_keyed_in_groups_while_watching_find_what_each_batch_finds(injected, shared_data,
                                                                          monkeypatch):
    """Watching keys the units that pass the cheap test in groups across batches: the same hits and
    units tested as keying each batch at once (:meth:`Scanner.scan`), whatever the group's size, and
    a pass that stops early still has its units keyed once the result is asked for."""
    index, tokens_of, lines = conll_and_dirty_lines(injected, shared_data)
    monkeypatch.setattr(ngrams, "BATCH_UNITS", 50)
    each = Scanner([index], tokens_of)
    held = [each.scan(lines[i:i + 50]) for i in range(0, len(lines), 50)]
    assert sum(map(len, held)) > 0
    for group in (1, 7, 10 ** 9):
        monkeypatch.setattr(ngrams, "CHECK_UNITS", group)
        scanner = Scanner([index], tokens_of)
        assert list(scanner.watch(lines)) == lines
        assert scanner.result() == each.hits and scanner.tested == each.tested
    early = Scanner([index], tokens_of)
    read = 0
    for read, _ in enumerate(early.watch(lines), 1):
        if read == 120:
            break
    brute = Scanner([index], tokens_of)
    brute.scan(lines[:150])  # the batches the pass had drawn (three of 50)
    assert sum(index.held(brute.hits)) >= 3  # lines 5, 65 and 125 hold injected test sentences
    assert early.result() == brute.hits


def test_near_duplicates_in_case_punctuation_and_spacing(tmp_path):
    sentences = [
        "The committee approved the new budget for the northern district after a long debate on Tuesday".split(),
        "Officials said the bridge would reopen to traffic next spring , once repairs to its deck are done .".split(),
        "Heavy rain flooded several streets in the old town and closed two schools for the day".split(),
        "A new library opened near the station .".split(),  # 7 words: too short to count, even held whole
        "Farmers in the valley expect a smaller harvest this autumn after the dry summer months".split(),
    ]
    write_conll(tmp_path / "t" / "test.conll", sentences)
    write_conll(tmp_path / "t" / "train.conll", [["Nothing", "here", "."]])
    source = [
        "Intro line. THE COMMITTEE APPROVED THE NEW BUDGET FOR THE NORTHERN DISTRICT AFTER A LONG DEBATE!",  # case
        "officials said: the bridge would reopen to traffic next spring; once repairs to its deck are done",  # punct
        "Heavy   rain flooded\tseveral streets in the old town and closed two schools for the day.",  # spacing
        "A new library opened near the station.",
        # one word changed in the middle of a 15-word sentence: no 13-word run is shared
        "Farmers in the valley expect a larger harvest this autumn after the dry summer months",
    ]
    (tmp_path / "s.txt").write_text("\n".join(source) + "\n", encoding="utf-8")
    bench = Workbench(ArtefactStore(tmp_path / "store"))
    found = source_overlaps(bench, Corpus.from_path(tmp_path / "s.txt"), [Corpus.from_path(tmp_path / "t")])["t"]
    assert (found.test_held, found.test_sentences) == (3, 5)
    assert found.overlap_test == pytest.approx(3 / 5) and found.overlap_all == pytest.approx(3 / 6)
    # with 10-word n-grams the changed word leaves "this autumn after the dry summer months" + 3 before: 7 words
    ten = source_overlaps(Workbench(ArtefactStore(tmp_path / "store2")), Corpus.from_path(tmp_path / "s.txt"),
                          [Corpus.from_path(tmp_path / "t")], OverlapOptions(ngram=10))["t"]
    assert ten.test_held == 3


def test_a_target_without_a_test_split_and_a_source_holding_all_of_it(tmp_path):
    sentences = [s.split() for s in (
        "The weather in the city stayed cold all week and the trains ran late every single morning",
        "A small bakery on the corner sells bread that people queue for before the sun comes up",
        "Three teams reached the final round of the regional chess cup held in the old town hall",
        "Engineers tested the new pump for six hours before the plant was allowed to restart work")]
    sentences.append("Too short to count .".split())
    write_conll(tmp_path / "ner.conll", sentences)
    (tmp_path / "all.txt").write_text("\n".join(" ".join(s) for s in sentences) + "\n", encoding="utf-8")
    (tmp_path / "half.txt").write_text("\n".join(" ".join(s) for s in sentences[:2]) + "\nother text\n",
                                       encoding="utf-8")
    bench = Workbench(ArtefactStore(tmp_path / "store"))
    target = Corpus.from_path(tmp_path / "ner.conll")
    whole = source_overlaps(bench, Corpus.from_path(tmp_path / "all.txt"), [target])["ner"]
    half = source_overlaps(bench, Corpus.from_path(tmp_path / "half.txt"), [target])["ner"]
    assert math.isnan(whole.overlap_test) and whole.test_sentences == 0
    # the four long sentences; the fifth (4 words) never counts
    assert (whole.held, whole.sentences, whole.overlap_all) == (4, 5, pytest.approx(0.8))
    assert (half.held, half.overlap_all) == (2, pytest.approx(0.4))


CHINESE = ["今天上午北京市政府召开新闻发布会介绍了城市交通建设的最新进展情况和明年的工作计划",
           "上海博物馆将在下个月举办古代书画特展",  # 18 characters: shorter than 25, held whole
           "他们在长江边散步",  # 8 characters
           "天气很好"]  # 4 characters: never counted
JAPANESE = ["東京都は来年の春から新しい自転車の貸し出しサービスを市内の全ての駅で始めると発表しました",
            "大阪の小さな喫茶店が五十年の歴史を閉じる"]


@pytest.mark.parametrize("lines, held", [(CHINESE, 3), (JAPANESE, 2)])
def test_character_targets_count_character_ngrams(tmp_path, lines, held):
    write_conll(tmp_path / "targets" / "t" / "test.conll", [list(s) for s in lines])
    # the source holds each sentence inside other text, with spaces and punctuation around it
    text = "\n".join(f"新闻：{s}。另外 some English words" if k % 2 else f"（{s}）" for k, s in enumerate(lines))
    text += "\n" + lines[0][:20] + "\n"  # 20 characters of the long one alone: no 25-character n-gram
    (tmp_path / "sources").mkdir()
    (tmp_path / "sources" / "s.txt").write_text(text + "\n", encoding="utf-8")
    # a source with none of it, but the same characters shuffled
    rng = np.random.default_rng(0)
    (tmp_path / "sources" / "shuffled.txt").write_text(
        "\n".join("".join(rng.permutation(list(s))) for s in lines) + "\n", encoding="utf-8")
    bench = Workbench(ArtefactStore(tmp_path / "store"))
    table = bench.matrix([Corpus.from_path(tmp_path / "sources" / n) for n in ("s.txt", "shuffled.txt")],
                         [Corpus.from_path(tmp_path / "targets" / "t")], ["tvc"])
    assert table.attrs.get("character_targets") == ["t"]
    row = table.set_index("source").loc["s"]
    assert row["overlap_ngram"] == "25 characters"
    assert row["overlap_test"] == pytest.approx(held / len(lines))
    assert table.set_index("source").loc["shuffled", "overlap_test"] == 0


def test_a_matrix_carries_the_overlap_and_one_process_equals_two(injected, shared_data, tmp_path):
    root, n_test, expected = injected
    sources = [Corpus.from_path(root / "clean.txt"), Corpus.from_path(root / "dirty.txt")]
    target = [Corpus.from_path(shared_data / "targets" / "conll2003")]
    one = Workbench(ArtefactStore(tmp_path / "one")).matrix(sources, target, ["jsd"], jobs=1)
    two = Workbench(ArtefactStore(tmp_path / "two")).matrix(sources, target, ["jsd"], jobs=2)
    columns = ["source", "overlap_test", "overlap_all", "overlap_ngram"]
    pd.testing.assert_frame_equal(one[columns], two[columns])
    dirty = one.set_index("source").loc["dirty"]
    assert dirty["overlap_test"] == pytest.approx(expected / n_test) and dirty["overlap_ngram"] == "13 words"
    assert one.set_index("source").loc["clean", "overlap_test"] == 0


def test_the_index_refuses_a_bad_ngram():
    with pytest.raises(InvalidArgument):
        TargetIndex.build("t", [], n=0)


def answer_table(overlap_alpha: float | None, test_split: bool = True) -> pd.DataFrame:
    """PPL and JSD both clearly for alpha (a high answer), with alpha's overlap as given."""
    rng = np.random.default_rng(0)
    rows = []
    for measure, values in (("ppl", (100, 300)), ("jsd", (0.3, 0.5))):
        for source, value in zip(("alpha", "beta"), values):
            reps = value * (1 + 0.01 * rng.standard_normal(200))
            share = overlap_alpha if source == "alpha" else 0.0
            rows.append({"source": source, "target": "t", "measure": measure, "value": value,
                         "direction": get_measure(measure).direction, "replicates": encode_replicates(reps.tolist()),
                         "overlap_test": share if test_split else math.nan, "overlap_all": share,
                         "overlap_ngram": "13 words"})
    return pd.DataFrame(rows)


def test_the_answer_names_a_contaminated_source_and_is_not_high():
    clean = recommend(answer_table(0.0))[0]
    assert clean.recommended == ["alpha"] and clean.level == "high"
    dirty = recommend(answer_table(0.093))[0]
    assert dirty.recommended == ["alpha"] and dirty.level == "moderate"
    assert dirty.reason.startswith(
        "alpha holds 9.3% of your test sentences (13-word overlap): pretraining on it would inflate your test F1; "
        "decontaminate it first (`simcore decontaminate`).")
    assert "capped at moderate" in dirty.reason
    # below the threshold nothing is said; the threshold is an option
    assert recommend(answer_table(0.005))[0].level == "high"
    assert recommend(answer_table(0.005), overlap_threshold=0.004)[0].level == "moderate"
    # a target without a test split: the share of all its sentences, said so
    whole = recommend(answer_table(0.2, test_split=False))[0]
    assert whole.reason.startswith("alpha holds 20.0% of your sentences (the target has no test split)")
    with pytest.raises(InvalidArgument):
        recommend(answer_table(0.1), overlap_threshold=2)


def test_a_contaminated_source_that_is_not_chosen_is_flagged():
    table = answer_table(0.0)
    table.loc[table["source"] == "beta", "overlap_test"] = 0.5
    rec = recommend(table)[0]
    assert rec.level == "high" and rec.recommended == ["alpha"]
    assert any(f.startswith("beta holds 50.0% of your test sentences") for f in rec.flags)


def test_the_matrix_command_writes_the_columns_and_warns(tmp_path, capsys):
    from simcore.cli.main import main

    from .conftest import SAMPLE_DATA

    news = (SAMPLE_DATA / "sources" / "news.txt").read_text(encoding="utf-8").splitlines()
    held = [line.split() for line in news if len(line.split()) >= 13][:4]
    other = "A small bakery on the corner sells bread that people queue for before the sun comes up".split()
    write_conll(tmp_path / "targets" / "t" / "test.conll", [*held, other])
    write_conll(tmp_path / "targets" / "t" / "train.conll", [other])
    (tmp_path / "sources").mkdir()
    for name in ("news.txt", "biomed_abstracts.txt"):
        (tmp_path / "sources" / name).write_bytes((SAMPLE_DATA / "sources" / name).read_bytes())
    out = tmp_path / "m.csv"
    assert main(["matrix", "--sources", str(tmp_path / "sources"), "--targets", str(tmp_path / "targets"),
                 "--measures", "jsd", "--out", str(out), "--cache", str(tmp_path / "cache"), "--jobs", "1"]) == 0
    err = capsys.readouterr().err
    assert "warning: t: news holds 80.0% of your test sentences (13-word overlap)" in err
    table = pd.read_csv(out).set_index("source")
    assert table.loc["news", "overlap_test"] == pytest.approx(4 / 5)
    assert table.loc["news", "overlap_all"] == pytest.approx(4 / 6)
    assert table.loc["biomed_abstracts", "overlap_test"] == 0
    assert main(["recommend", "--matrix", str(out), "--overlap-threshold", "90%"]) == 0
    assert "holds" not in capsys.readouterr().out
    assert main(["recommend", "--matrix", str(out)]) == 0
    assert "news holds 80.0% of your test sentences" in capsys.readouterr().out
    assert main(["recommend", "--matrix", str(out), "--overlap-threshold", "2"]) == 2
    # rank: the warning and the answer's reason follow the threshold
    for threshold, said in (("1%", True), ("90%", False)):
        ranked = tmp_path / f"rank{threshold.rstrip('%')}.md"
        assert main(["rank", "--matrix", str(out), "--overlap-threshold", threshold, "--out", str(ranked)]) == 0
        assert ("warning: t: news holds 80.0% of your test sentences" in capsys.readouterr().err) == said
        assert ("news holds 80\\.0% of your test sentences" in ranked.read_text(encoding="utf-8")) == said
    assert main(["rank", "--matrix", str(out), "--overlap-threshold", "150%"]) == 2


def test_the_cheap_test_finds_runs_of_every_length_at_every_alignment(cheap_test):
    """Runs of 8 to 174 letters (tables of scores, numbers, long n-grams), each put in a unit after 0
    to 15 other letters, with punctuation between its words, are all found, as a brute-force scan finds
    them; half of each with one word changed next to it adds no other."""
    rng = np.random.default_rng(7)
    letters = list("abcdefghijklmnopqrstuvwxyz0123456789")
    sentences = []
    for size in range(8, 30):  # 8 to 29 words of 1 letter, 1 or 2, 1 to 6: 8 to 174 letters
        for longest in (1, 2, 6, 1, 2):
            sentences.append(["".join(rng.choice(letters, rng.integers(1, longest + 1))) for _ in range(size)])
    lines = []
    for k, words in enumerate(sentences):
        pad = "".join(rng.choice(letters, k % 16))
        lines.append(f"{pad} " + ", ".join(w.upper() if k % 3 == 0 else w for w in words) + " end.")
        changed = list(words)
        changed[len(words) // 2] = "zzzzzzz"  # no run of 13 words survives in the middle of a long one
        lines.append(" ".join(changed[:len(words) // 2 + 1]))

    def tokens(line: str) -> list[str]:
        return [t.lower() for t in re.findall(r"\w+|[^\w\s]", line)]

    for n in (13, 2):  # 2 words can be 2 letters: too short for any cheap test, every unit is keyed
        index = TargetIndex.build("t", [(s, True) for s in sentences], n=n)
        brute: set[int] = set()
        for line in lines:
            words = words_of(tokens(line))
            for size in {index.n, *index.short_lengths}:
                brute.update(h for h in (gram_hash(words[i:i + size]) for i in range(len(words) - size + 1))
                             if h in index.keys)
        scanner = Scanner([index], tokens)
        for _ in scanner.watch(lines):
            pass
        assert scanner.result() == brute
        assert all(index.held(brute))  # every sentence, long or short, is found in its own line
        assert scanner.every_unit == (n == 2)


def test_a_short_run_is_looked_for_whole_before_its_unit_is_tokenized(cheap_test, monkeypatch):
    """A run of 15 to 22 letters is found by an 8-byte window, common in any text: a unit holding the
    window but not the whole run is not tokenized (it is when the run is not looked for whole); one
    holding the whole run is."""
    rng = np.random.default_rng(3)
    letters = list("abcdefghijklmnopqrstuvwxyz0123456789")
    sentences = [["".join(rng.choice(letters, 2)) for _ in range(8)] for _ in range(40)]  # 16 letters
    index = TargetIndex.build("t", [(s, True) for s in sentences], n=13)
    scanner = Scanner([index], str.split)
    assert set(scanner.confirm) == {16} and not scanner.every_unit
    lines = [" ".join(s) for s in sentences[:20]] + [" ".join(s)[:-1] for s in sentences[20:]]
    assert scanner.candidates(lines) == list(range(20))
    monkeypatch.setattr(ngrams, "compiled", None)
    monkeypatch.setattr(Scanner, "_confirmed", lambda self, data, at: at)
    assert len(scanner.candidates(lines)) > 30  # the 8-byte windows alone let most cut ones through


def test_a_large_source_in_two_processes_is_read_once(injected, shared_data, tmp_path, monkeypatch):
    """--jobs 2: the overlap is scanned in the pieces' own read of a large source (a folder of three
    shards, each read by a worker process), so every shard is read once, and the values are the
    serial run's. Whole reads are counted (a file read to its end; the language is guessed from the
    first lines), in a file, since the pieces are read in other processes."""
    import simcore.matrix.schedule as schedule

    root, n_test, expected = injected
    lines = (root / "dirty.txt").read_text(encoding="utf-8").splitlines()
    shards = tmp_path / "shards"
    shards.mkdir()
    third = -(-len(lines) // 3)
    for k in range(3):
        (shards / f"part-{k}.txt").write_text("\n".join(lines[k * third:(k + 1) * third]) + "\n",
                                              encoding="utf-8")
    monkeypatch.setattr(corpus_cache, "STREAM_MIN_BYTES", 1)  # sampled in one streaming pass, in pieces
    monkeypatch.setattr(schedule, "PARALLEL_MIN_BYTES", 1)  # read in processes however small
    original = Corpus.units

    def counted(self, *args, **kwargs):
        yield from original(self, *args, **kwargs)
        if self.name == "shards":
            with open(tmp_path / "reads.log", "a", encoding="utf-8") as log:
                log.write("".join(f"{f.name}\n" for f in self.files))

    monkeypatch.setattr(Corpus, "units", counted)
    target = [Corpus.from_path(shared_data / "targets" / "conll2003")]
    tables, reads = {}, {}
    for jobs in (1, 2):
        (tmp_path / "reads.log").write_text("", encoding="utf-8")
        tables[jobs] = Workbench(ArtefactStore(tmp_path / f"store{jobs}")).matrix(
            [Corpus.from_path(shards)], target, ["jsd"], jobs=jobs)
        reads[jobs] = sorted((tmp_path / "reads.log").read_text(encoding="utf-8").split())
    shard_names = ["part-0.txt", "part-1.txt", "part-2.txt"]
    assert reads[1] == shard_names  # one process: the scan rides on the sampling pass
    assert reads[2] == shard_names  # two: on the pieces' reads in the workers, none again here
    columns = ["source", "overlap_test", "overlap_all", "overlap_ngram"]
    pd.testing.assert_frame_equal(tables[1][columns], tables[2][columns])
    assert tables[2]["overlap_test"].iloc[0] == pytest.approx(expected / n_test)


def test_breaks_as_spaces_is_the_unit_by_unit_join():
    """The C-level join of a scanner's batch equals joining unit by unit with their line breaks as spaces."""
    from simcore.contamination.ngrams import breaks_as_spaces

    for batch in (["a b\n", "c\n", "\n"], ["x\x00y\n", "z"], [("a", "b"), "q\nr\n"], ["só\n", "日本\n"],
                  [("a\x00",), "b\n"]):
        by_unit = "\n".join((u if isinstance(u, str) else "".join(u)).replace("\n", " ") for u in batch)
        assert breaks_as_spaces(batch) == by_unit


def test_the_compiled_and_the_numpy_cheap_test_pass_the_same_units(injected, shared_data,
                                                                     monkeypatch):
    """On real text of every source (with non-ASCII lines, near-duplicates, token lists and units
    holding line breaks), the compiled test lets through exactly the units the numpy test does."""
    if ngrams.compiled is None:
        pytest.skip("the compiled scan is not built here (scripts/install.sh builds it)")
    root, _, _ = injected
    options = TokenizerOptions()
    indexes = [TargetIndex.build(t.name, target_sentences(Corpus.from_path(t), options))
               for t in sorted((shared_data / "targets").iterdir())]
    scanner = Scanner(indexes, str.split)
    lines = (root / "dirty.txt").read_text(encoding="utf-8").splitlines()
    for f in sorted((shared_data / "sources").glob("*.txt.gz")):
        with gzip.open(f, "rt", encoding="utf-8") as handle:
            lines += [line.rstrip("\n") for _, line in zip(range(6000), handle)]
    lines += [" ".join(line.upper().replace(",", ";").split()).replace(" ", "  ")
              for line in lines[5::60][:40]]
    units: list = list(lines)
    units[5::97] = [line.split() for line in lines[5::97]]  # token lists among the units
    units[7::89] = [line.replace(" ", "\n", 3) for line in lines[7::89]]  # a unit's own line breaks
    assert any(not line.isascii() for line in lines)
    batches = [units[i:i + ngrams.BATCH_UNITS] for i in range(0, len(units), ngrams.BATCH_UNITS)]
    compiled = [scanner.candidates(b) for b in batches]
    monkeypatch.setattr(ngrams, "compiled", None)
    by_numpy = [scanner.candidates(b) for b in batches]
    assert compiled == by_numpy
    assert sum(map(len, compiled)) > 120  # the injected sentences, at least, pass


def test_a_unit_folded_alone_is_folded_as_in_its_batch():
    """What the compiled test asks Python for (a non-ASCII unit, a token list) is what folding the
    batch gives for that unit: Greek capitals and final sigma, the Kelvin sign, dotted I, ligatures,
    Han and kana, a lone surrogate."""
    for text in ("ΟΔΟΣ ΣΑΣ aΣ Σa", "KELVIN \u212a x", "İstanbul IŞIK", "日本語のテキスト、です。",
                 "Straße ǅ", "a_b-c\nd\x00e", "x\ud800y", "ﬁne ﬀ", "Ⅻ ⅻ ①", "ÀÉÎ õ"):
        assert fold_unit(text) == fold(text.replace("\n", " ")), text
        assert fold_unit(text.split()) == fold("".join(text.split())), text


def test_a_piece_s_task_is_sent_the_scanner_s_tables_only(injected, shared_data, tmp_path):
    """What a piece's task unpickles holds no target sentence; its scanner finds what a scanner
    built from the whole indexes finds; the overlap stored from its hits in another process (the sentences
    read back from the store) is the one the serial scan stores."""
    import pickle
    import subprocess
    import sys

    import simcore.contamination.scan as scan_module
    from simcore.contamination.scan import piece_scan, piece_scanner

    root, _, expected = injected
    store = ArtefactStore(tmp_path / "store")
    bench = Workbench(store)
    targets = [Corpus.from_path(shared_data / "targets" / "conll2003")]
    scan = piece_scan(bench, targets, OverlapOptions())
    sent = pickle.loads(pickle.dumps(scan))
    assert not hasattr(sent.targets, "sentence_keys") and not hasattr(sent, "indexes")
    source = Corpus.from_path(root / "dirty.txt")
    lines = (root / "dirty.txt").read_text(encoding="utf-8").splitlines()
    scanner = piece_scanner(sent, source)
    for _ in scanner.watch(lines):
        pass
    whole = Scanner([target_index_of(bench, targets[0])],
                    unit_tokenizer(source.segmenter(), bench.tokenizer))
    for _ in whole.watch(lines):
        pass
    assert scanner.result() == whole.result()
    # the draw's task, in another process: the sentences from the store
    (tmp_path / "scan.pickle").write_bytes(pickle.dumps((sent, scanner.result())))
    code = ("import pickle, sys; from simcore.contamination.scan import store_scan; "
            "from simcore.utils.store import ArtefactStore; "
            "scan, hits = pickle.loads(open(sys.argv[1], 'rb').read()); "
            "store_scan(ArtefactStore(sys.argv[2]), scan, 'f' * 64, hits)")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "scan.pickle"), str(store.root)],
                   check=True, cwd=Path(scan_module.__file__).parents[2])
    records = [store.meta(p) for p in (store.root / "overlap").iterdir()]
    serial_bench = Workbench(ArtefactStore(tmp_path / "serial"))
    serial = source_overlaps(serial_bench, source, targets)["conll2003"]
    assert records == [{**serial.as_dict()}]
    assert serial.test_held >= expected


def target_index_of(bench: Workbench, target: Corpus) -> TargetIndex:
    from simcore.contamination.scan import target_index

    return target_index(bench, target, OverlapOptions())


def test_non_ascii_units_are_found_as_the_brute_force_scan_finds_them(cheap_test):
    """Sentences mixing ASCII and other letters (accents, Greek with its final sigma, the Kelvin
    sign, dotted I, a ligature, Han), held in units in other cases, after other non-ASCII text, or
    as a token list: both cheap tests let every one through, so the scanner finds what a
    brute-force scan of every unit finds."""
    words = ["Überraschung", "für", "die", "ΟΔΟΣ", "straße", "İstanbul", "naïve", "café", "ﬁne",
             "東京", "\u212aelvin", "Ζωή", "año", "garçon", "smörgåsbord", "Ωmega"]
    rng = np.random.default_rng(3)
    sentences = [[str(w) for w in rng.choice(words, 14)] for _ in range(30)]

    def tokens(unit: str | list[str]) -> list[str]:
        found = unit if isinstance(unit, list) else re.findall(r"\w+|[^\w\s]", unit)
        return [t.lower() for t in found]

    units: list[str | list[str]] = []  # each sentence held by one unit only
    for k, s in enumerate(sentences):
        if k % 3 == 0:
            # in upper case, each word whose upper case is the same word ("STRASSE" is not)
            shown = " ".join(w.upper() if k % 2 and w.upper().lower() == w.lower() else w
                             for w in s)
            units.append(f"ΠΡΟΛΟΓΟΣ «{k}» {shown} — τέλος.")
        elif k % 3 == 1:
            units.append("x" * (k % 9) + " " + ", ".join(s[1:]))  # 13 of its words
        else:
            units.append(list(s))
    index = TargetIndex.build("t", [(tokens(" ".join(s)), True) for s in sentences])
    brute: set[int] = set()
    for unit in units:
        w = words_of(tokens(unit))
        brute.update(h for h in (gram_hash(w[i:i + index.n]) for i in range(len(w) - index.n + 1))
                     if h in index.keys)
    scanner = Scanner([index], tokens)
    for _ in scanner.watch(units):
        pass
    assert brute and scanner.result() == brute
    assert all(index.held(brute))
