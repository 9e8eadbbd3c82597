"""The Corpora page's statistics, counted by numpy and pyarrow and with tags read once, equal what
the straightforward definition below gives (the code they replaced: a Counter updated sentence by
sentence, every word sorted, every tag split again), on hand-made files with odd spaces and odd
tags and on the shared data."""

from __future__ import annotations

import gzip
import itertools
import math
import random
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from simcore.corpora.conll import conll_sentences
from simcore.corpora.corpus import Corpus, tokenize_corpus
from simcore.corpora.corpus_counts import ODD_SPACES, length_histogram, token_file_stats
from simcore.corpora.notes import ReadNotes
from simcore.corpora.stats import corpus_statistics, with_tag_notes
from simcore.corpora.tagschemes import SchemeTracker, chunks, split_tag, to_iob2

# ---- the reference: the definitions as they were written before they were made fast ----

PUNCT = re.compile(r"^[^\w]+$")


def reference_sentence_stats(path: Path, top: int = 20) -> dict:
    freq: Counter[str] = Counter()
    lengths: list[int] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            sentence = line.split()
            if sentence:
                freq.update(sentence)
                lengths.append(len(sentence))
    array = np.asarray(lengths, dtype=np.int64)
    tokens = int(array.sum())
    edges, counts = length_histogram(array, clip_quantile=0.99)
    ranked = sorted(freq.items(), key=lambda x: (-x[1], x[0]))
    words = [(w, c) for w, c in ranked if not PUNCT.match(w)]
    return {
        "tokens": tokens, "types": len(freq), "ttr": len(freq) / tokens if tokens else float("nan"),
        "sentences": len(lengths),
        "mean_length": float(array.mean()) if lengths else float("nan"),
        "median_length": float(np.median(array)) if lengths else float("nan"),
        "max_length": int(array.max()) if lengths else 0,
        "length_edges": edges, "length_counts": counts, "top_words": words[:top],
    }


reference_split = split_tag.__wrapped__  # the tag split as it was, without the cache


def reference_chunks(tags: list[str]) -> list[tuple[int, int, str]]:
    found = []
    prev, prev_kind, start = "O", "", -1
    for i, raw in enumerate([*tags, "O"]):
        head, kind = reference_split(raw)
        head = {"L": "E", "U": "S"}.get(head, head)
        ends = (prev in ("E", "S") or (prev in ("B", "I") and head in ("B", "S", "O"))
                or (prev != "O" and prev_kind != kind))
        if start >= 0 and ends:
            found.append((start, i, prev_kind))
            start = -1
        starts = head in ("B", "S") or (
            head in ("I", "E") and (prev in ("E", "S", "O") or prev_kind != kind))
        if head != "O" and (starts or start < 0):
            start = i
        prev, prev_kind = head, kind
    return found


def reference_iob2(tags: list[str]) -> list[str]:
    out = ["O"] * len(tags)
    for start, end, kind in reference_chunks(tags):
        suffix = f"-{kind}" if kind else ""
        out[start] = "B" + suffix
        for i in range(start + 1, end):
            out[i] = "I" + suffix
    return out


class ReferenceTracker(SchemeTracker):
    """SchemeTracker's evidence gathered as it was: every tag split again for each question."""

    def normalise(self, tags: list[str]) -> list[str]:
        self.sentences += 1
        self.prefixes.update(head for head, _ in map(reference_split, tags) if head != "O")
        for start, _, _ in reference_chunks(tags):
            if reference_split(tags[start])[0] == "I":
                self.inside_starts += 1
        out = reference_iob2(tags)
        if out != list(tags):
            self.changed += 1
            if self.first_changed < 0:
                self.first_changed = self.sentences
        return out


def reference_spans(tags: list[str]) -> list[str]:
    found, previous = [], "O"
    for tag in tags:
        if tag == "O" or not tag:
            previous = "O"
            continue
        prefix, _, kind = tag.partition("-")
        if not kind:
            prefix, kind = tag, "ENTITY"
        prefix = prefix.upper()
        prev_kind = previous.partition("-")[2] or ("ENTITY" if previous != "O" else "")
        prev_prefix = previous.partition("-")[0].upper()
        if prefix in ("B", "S", "U") or prev_kind != kind or prev_prefix in ("E", "L", "S", "U"):
            found.append(kind)
        previous = tag
    return found


def reference_statistics(corpus: Corpus, store) -> dict:
    """corpus_statistics as it was, for CoNLL and plain-text files written in UTF-8."""
    tokenized = tokenize_corpus(corpus, store)
    values = reference_sentence_stats(tokenized.tokens_file)
    tag_notes = ReadNotes()
    counts: Counter[str] = Counter()
    tagged = 0
    for f in corpus.files:
        if corpus.file_format(f) != "conll":
            continue
        tracker = ReferenceTracker()
        with open(f, encoding="utf-8") as text:
            read = conll_sentences(text, f.name, with_tags=True, corpus=corpus, notes=tag_notes)
            for _, tags in read:
                tagged += 1
                counts.update(reference_spans(tracker.normalise(tags)))
        tracker.record(tag_notes, f.name)
    notes = with_tag_notes(tokenized.read_notes, tag_notes)
    entities = dict(sorted(counts.items(), key=lambda x: (-x[1], x[0])))
    return {"name": corpus.name, **values, "entities": entities, "tagged_sentences": tagged,
            "read_notes": notes.as_dict()}


def same(found: dict, expected: dict) -> None:
    assert found.keys() >= expected.keys()
    for key, value in expected.items():
        if isinstance(value, float) and math.isnan(value):
            assert math.isnan(found[key]), key
        else:
            assert found[key] == value and type(found[key]) is type(value), (key, found[key], value)


# ---- token files ----

def test_the_odd_spaces_are_every_space_but_the_token_files_own():
    spaces = {chr(c) for c in range(0x110000) if chr(c).isspace()}
    assert set(ODD_SPACES) == spaces - {" ", "\n"}


ODD_FILES = {
    "plain": "a b a\nc\nd e f g\n",
    "no last newline": "a b\nb c",
    "empty lines and runs of spaces": "\n\n a  b \n   \n\nb\n\n",
    "windows and old mac line ends": "a b\r\nc d\re\r\n\r\nf\n",
    "tabs and unicode spaces": "a\tb\xa0c\u2028d\u3000e\x1cf\x85g\u200ah\n\u2003\n",
    "non-ascii words": "caf\u00e9 \u2019 \u4e2d\u6587 caf\u00e9\n"
                       "\u00e9 \u2019\u2019 \u4e2d\u6587\n",
    "byte order mark": "\ufeffa b\na\n",
    "punctuation and ties": ", . , ! ? ... -- z y x w , .\nz y . ,\n",
    "only spaces": "   \n \n",
    "empty": "",
}


@pytest.mark.parametrize("name", list(ODD_FILES))
@pytest.mark.parametrize("block", [1, 7, 64, 1 << 23])
def test_token_file_stats_equal_the_definition_on_odd_files(tmp_path, name, block):
    path = tmp_path / "tokens.txt"
    path.write_bytes(ODD_FILES[name].encode("utf-8"))
    for top in (0, 1, 3, 20):
        same(token_file_stats(path, top, block_bytes=block), reference_sentence_stats(path, top))


@pytest.mark.parametrize("space", list(ODD_SPACES))
def test_each_odd_space_cuts_words_as_python_does(tmp_path, space):
    path = tmp_path / "tokens.txt"
    for text in (f"a{space}b c\nd e\n", f"x y{space}", f"\u2019 z\n{space}"):
        path.write_bytes(text.encode("utf-8"))
        for block in (1, 2, 64):
            same(token_file_stats(path, block_bytes=block), reference_sentence_stats(path))


def test_token_file_stats_equal_the_definition_on_random_files(tmp_path):
    rng = random.Random(37)
    pieces = ["a", "b", "c", "ab", ",", ".", "!!", "\u00e9t\u00e9", "\u4e2d", "\u2019", "x1", "_",
              " ", " ", " ", "  ", "\n", "\n", "\r\n", "\t", "\xa0", "\u2009", "\x0b"]
    for case in range(150):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 400)))
        path = tmp_path / f"t{case}.txt"
        path.write_bytes(text.encode("utf-8"))
        top = rng.choice([0, 1, 2, 5, 20])
        same(token_file_stats(path, top, block_bytes=rng.choice([1, 16, 100, 1 << 20])),
             reference_sentence_stats(path, top))


def test_the_top_words_look_past_many_frequent_punctuation_marks(tmp_path):
    # 60 punctuation marks more frequent than any word: the first candidates are all punctuation.
    marks = ["".join(p) for p in itertools.product(",.;:!?", repeat=2)][:60]
    lines = [" ".join(marks * 5), " ".join(f"w{i}" for i in range(40) for _ in range(i % 4 + 1))]
    path = tmp_path / "tokens.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for top in (1, 5, 20, 45):
        found = token_file_stats(path, top)
        assert found["top_words"] == reference_sentence_stats(path, top)["top_words"]
    assert [c for _, c in found["top_words"][:10]] == [4] * 10  # the ties, in alphabetical order
    assert found["top_words"][:2] == [("w11", 4), ("w15", 4)]


# ---- tags ----

TAGS = ["O", "O", "O", "B-PER", "I-PER", "E-PER", "S-LOC", "L-ORG", "U-ORG", "B", "I", "E", "o", "",
        "_", "-", "PER", "b-per", "i-per", "B-", "I-GENE-X", "B-GENE-X", "I-LOC", "gene-x",
        "ENTITY", "B-ENTITY"]


def test_the_tracker_rewrites_and_reports_as_the_definition_does():
    rng = random.Random(27)
    for case in range(300):
        length = rng.randrange(0, 12)
        sentences = [[rng.choice(TAGS if case % 3 else TAGS[:9]) for _ in range(length)]
                     for _ in range(rng.randrange(1, 6))]
        tracker, reference = SchemeTracker(), ReferenceTracker()
        for tags in sentences:
            assert chunks(tags) == reference_chunks(tags)
            assert to_iob2(tags) == reference_iob2(tags)
            assert tracker.normalise(list(tags)) == reference.normalise(list(tags))
        assert (tracker.scheme, tracker.inside_starts, tracker.changed, tracker.first_changed) == (
            reference.scheme, reference.inside_starts, reference.changed, reference.first_changed)
        notes, expected = ReadNotes(), ReadNotes()
        tracker.record(notes, "f.conll")
        reference.record(expected, "f.conll")
        assert notes.as_dict() == expected.as_dict()


CONLL_FILES = {
    "iob1.conll": "Peter\tI-PER\nAnna\tB-PER\n \tO\nin\tO\nParis\tI-LOC\n\n"
                  "EU\tI-ORG\nrejects\tO\n\n",
    "bioes.conll": "-DOCSTART- O\n\nJohn\tB-PER\nSmith\tE-PER\nin\tO\nRome\tS-LOC\n.\tO\n\n"
                   "IL-2\tS-protein\ngene\tO\n\n",
    "bilou.conll": "a\tU-X\nb\tB-Y\nc\tL-Y\n\nd\tO\n",
    "null_tags.conll": "the\t_\ncat\t-\nsat\to\non\t\nmat\tB-ANIMAL\n\nGene\tB-\nX\tI-\n\n",
    "bad_rows.conll": "# sent_id = 1\nw1\tB-A\nw2\nonly\nw3\tI-A\nNew York\tB-LOC\nw4 POS\tO\n"
                      "x\tNN B-B\n\u200b\tO\n\nw5\tS-C\r\nw6\tO\r\n\r\n",
    "io.conll": "p\tPER\nq\tPER\nr\tO\ns\tLOC\n",
}


@pytest.mark.parametrize("name", list(CONLL_FILES))
def test_corpus_statistics_equal_the_definition_on_odd_conll(tmp_path, store, name):
    path = tmp_path / name
    path.write_text(CONLL_FILES[name], encoding="utf-8")
    corpus = Corpus.from_path(path)
    expected = reference_statistics(corpus, store)
    assert expected["tagged_sentences"] > 0
    same(corpus_statistics(corpus, store).as_dict(), expected)


def test_corpus_statistics_equal_the_definition_on_the_shared_data(tmp_path, store, shared_data):
    paths = []
    for source in sorted((shared_data / "sources").glob("*.txt.gz")):
        with gzip.open(source, "rt", encoding="utf-8") as f:
            lines = list(itertools.islice(f, 2000))
        paths.append(tmp_path / source.name.removesuffix(".gz"))
        paths[-1].write_text("".join(lines), encoding="utf-8")
    targets = sorted((shared_data / "targets").glob("*/test.conll"))
    assert targets
    for path in paths + targets:
        corpus = Corpus.from_path(path)
        expected = reference_statistics(corpus, store)
        if path in targets:
            assert expected["entities"]
        same(corpus_statistics(corpus, store).as_dict(), expected)
