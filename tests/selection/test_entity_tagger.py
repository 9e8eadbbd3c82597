"""The target's tagger: tag schemes normalised, entity types read from the target."""

from __future__ import annotations

from simcore.corpora.corpus import Corpus
from simcore.selection.entity_tagger import iob2, target_entity_types


def test_iob2_normalises_tag_schemes():
    assert iob2(["B-X", "I-X", "O", "I-Y", "I-Y", "B-Y"]) == ["B-X", "I-X", "O", "B-Y", "I-Y", "B-Y"]
    assert iob2(["S-X", "B-Y", "E-Y", "U-X", "O"]) == ["B-X", "B-Y", "I-Y", "B-X", "O"]
    assert iob2(["PER", "PER", "O", "LOC"]) == ["B-PER", "I-PER", "O", "B-LOC"]


def test_target_entity_types_counts_entities_not_tokens(tmp_path):
    path = tmp_path / "t.conll"
    path.write_text("EU\tB-ORG\nrejects\tO\nGerman\tB-MISC\ncall\tO\n\nPeter\tB-PER\nBlackburn\tI-PER\n\n"
                    "New\tI-LOC\nYork\tI-LOC\n", encoding="utf-8")
    assert target_entity_types(Corpus.from_path(path)) == {"ORG": 1, "MISC": 1, "PER": 1, "LOC": 1}
    plain = tmp_path / "plain.txt"
    plain.write_text("no tags here .\n", encoding="utf-8")
    assert not target_entity_types(Corpus.from_path(plain))
