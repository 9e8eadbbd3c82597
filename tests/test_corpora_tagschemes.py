"""IOB1, IOB2, BIOES, BILOU and IO tags are recognised per file and reach every user as IOB2 (issue 27,
item 1). Each case is converted by hand; seqeval's own strict scheme handling checks that the entities are
the same before and after."""

import pytest
from seqeval.metrics.sequence_labeling import get_entities
from seqeval.scheme import BILOU, IOB1, IOB2, IOBES, Entities

from simcore.corpora.corpus import Corpus
from simcore.corpora.notes import ReadNotes
from simcore.corpora.tagschemes import SchemeTracker, to_iob2

WORDS = ["Peter", "Blackburn", "Anna", "met", "EU", "officials", "in", "Paris", "."]
CASES = {
    # Two adjacent persons: IOB1 marks the second with B-, every other entity starts with I-.
    "IOB1": ["I-PER", "I-PER", "B-PER", "O", "I-ORG", "O", "O", "I-LOC", "O"],
    "IOB2": ["B-PER", "I-PER", "B-PER", "O", "B-ORG", "O", "O", "B-LOC", "O"],
    "BIOES": ["B-PER", "E-PER", "S-PER", "O", "S-ORG", "O", "O", "S-LOC", "O"],
    "BILOU": ["B-PER", "L-PER", "U-PER", "O", "U-ORG", "O", "O", "U-LOC", "O"],
}
EXPECTED = ["B-PER", "I-PER", "B-PER", "O", "B-ORG", "O", "O", "B-LOC", "O"]
# IO cannot tell two adjacent persons apart: "Peter Blackburn Anna" is one person there.
IO = ["I-PER", "I-PER", "I-PER", "O", "I-ORG", "O", "O", "I-LOC", "O"]
IO_EXPECTED = ["B-PER", "I-PER", "I-PER", "O", "B-ORG", "O", "O", "B-LOC", "O"]
SEQEVAL = {"IOB1": IOB1, "IOB2": IOB2, "BIOES": IOBES, "BILOU": BILOU}


def entities(tags, scheme):
    return [e.to_tuple()[1:] for e in Entities([tags], scheme=scheme).entities[0]]


@pytest.mark.parametrize("scheme", list(CASES))
def test_each_scheme_is_rewritten_as_iob2_with_the_same_entities(scheme):
    tags = CASES[scheme]
    assert to_iob2(tags) == EXPECTED
    assert entities(EXPECTED, IOB2) == entities(tags, SEQEVAL[scheme])  # seqeval, strict, on each scheme


def test_io_tags_and_bare_types():
    assert to_iob2(IO) == IO_EXPECTED
    bare = ["PER", "PER", "O", "LOC"]
    assert to_iob2(bare) == ["B-PER", "I-PER", "O", "B-LOC"]
    # seqeval's default (conlleval) reading of the IO tags finds the same entities as strict IOB2 of the result
    assert [(k, s, e + 1) for k, s, e in get_entities(IO)] == entities(IO_EXPECTED, IOB2)


@pytest.mark.parametrize("scheme", [*CASES, "IO"])
def test_a_file_in_each_scheme_reads_as_iob2_and_says_its_scheme(tmp_path, scheme):
    tags = IO if scheme == "IO" else CASES[scheme]
    p = tmp_path / f"{scheme.lower()}.conll"
    p.write_text("".join(f"{w}\t{t}\n" for w, t in zip(WORDS, tags)) + "\n" + "Rome\tO\n\n")
    notes = ReadNotes()
    sentences = list(Corpus.from_path(p).tagged_sentences(notes))
    assert sentences == [(WORDS, IO_EXPECTED if scheme == "IO" else EXPECTED), (["Rome"], ["O"])]
    if scheme == "IOB2":
        assert notes.facts == {"tag scheme": "IOB2"} and not notes  # nothing rewritten
    else:
        assert notes.facts == {"tag scheme": f"{scheme} (read as IOB2)"}
        assert notes.reasons == {f"{scheme} tags rewritten as IOB2": 1}
        assert f"tag scheme: {scheme} (read as IOB2)" in notes.summary()


def test_iob1_without_adjacent_entities_is_still_told_from_iob2():
    tracker = SchemeTracker()
    assert tracker.normalise(["I-LOC", "O"]) == ["B-LOC", "O"]
    assert tracker.normalise(["B-PER", "I-PER"]) == ["B-PER", "I-PER"]
    assert tracker.scheme == "IOB1"
    plain = SchemeTracker()
    plain.normalise(["O", "O"])
    assert plain.scheme is None


def test_a_type_change_inside_i_tags_starts_a_new_entity():
    # conlleval (and seqeval's default mode) start a new chunk where the type changes.
    tags = ["I-PER", "I-LOC", "E-LOC", "O"]
    assert to_iob2(tags) == ["B-PER", "B-LOC", "I-LOC", "O"]
    assert get_entities(tags) == [("PER", 0, 0), ("LOC", 1, 2)]


def test_lowercase_o_tags_are_outside(tmp_path):
    """A file that writes outside as ``o`` reads as the same file with ``O``: no entity of type ``o``."""
    from simcore.corpora.corpus import Corpus

    rows = [("EU", "B-ORG"), ("rejects", "o"), ("German", "B-MISC"), ("call", "o"), (".", "o")]
    lower = tmp_path / "lower.conll"
    upper = tmp_path / "upper.conll"
    lower.write_text("\n".join(f"{w}\t{t}" for w, t in rows) + "\n", encoding="utf-8")
    upper.write_text("\n".join(f"{w}\t{t.upper()}" for w, t in rows) + "\n", encoding="utf-8")
    read = list(Corpus.from_path(lower).tagged_sentences())
    assert read == list(Corpus.from_path(upper).tagged_sentences())
    assert read[0][1] == ["B-ORG", "O", "B-MISC", "O", "O"]
