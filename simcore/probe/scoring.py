"""Entity-level F1 with exact span and type, counted the way conlleval and seqeval count it.

Tags may be IOB1, IOB2 (BIO), IOBES or BILOU; a chunk starts at ``B``/``S``/``U``, at an ``I``/``E``/``L``
after ``O`` or after a finished chunk, and wherever the type changes, as in conlleval. F1 is given
in percent (F1 points, the unit of the papers' tables).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

Span = tuple[int, int, str]  # start, end (exclusive), type

_PREFIX = {"L": "E", "U": "S"}  # BILOU spelled as IOBES


def _split(tag: str) -> tuple[str, str]:
    if tag in ("O", ""):
        return "O", ""
    head, _, kind = tag.partition("-")
    if len(head) != 1:  # a tag with no prefix ("PER") is read as inside a chunk of that type
        return "I", tag
    return _PREFIX.get(head, head), kind


def _ends(prev: str, tag: str, prev_kind: str, kind: str) -> bool:
    if prev in ("E", "S"):
        return True
    if prev in ("B", "I") and tag in ("B", "S", "O"):
        return True
    return prev != "O" and prev_kind != kind


def _starts(prev: str, tag: str, prev_kind: str, kind: str) -> bool:
    if tag in ("B", "S"):
        return True
    if tag in ("I", "E") and prev in ("E", "S", "O"):
        return True
    return tag != "O" and prev_kind != kind


def spans(tags: Sequence[str]) -> list[Span]:
    """The chunks of one sentence's tags, as (start, end, type)."""
    found: list[Span] = []
    prev, prev_kind, start = "O", "", -1
    for i, raw in enumerate([*tags, "O"]):
        tag, kind = _split(raw)
        if start >= 0 and _ends(prev, tag, prev_kind, kind):
            found.append((start, i, prev_kind))
            start = -1
        if _starts(prev, tag, prev_kind, kind):
            start = i
        prev, prev_kind = tag, kind
    return found


def spans_to_bio(length: int, chunks: Sequence[Span]) -> list[str]:
    """BIO (IOB2) tags for non-overlapping chunks in a sentence of ``length`` tokens."""
    tags = ["O"] * length
    for start, end, kind in chunks:
        tags[start] = f"B-{kind}"
        for i in range(start + 1, end):
            tags[i] = f"I-{kind}"
    return tags


@dataclass(frozen=True)
class EntityScore:
    """Counts of exactly matching chunks, and precision, recall and F1 in percent."""

    correct: int
    predicted: int
    gold: int

    @property
    def precision(self) -> float:
        return 100.0 * self.correct / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return 100.0 * self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def entity_score(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> EntityScore:
    """Score predicted tag sequences against gold ones, sentence by sentence."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold sentences but {len(predicted)} predicted")
    correct = n_pred = n_gold = 0
    for g, p in zip(gold, predicted):
        if len(g) != len(p):
            raise ValueError("a predicted sentence has a different number of tokens from the gold one")
        gs, ps = set(spans(g)), set(spans(p))
        correct += len(gs & ps)
        n_pred += len(ps)
        n_gold += len(gs)
    return EntityScore(correct, n_pred, n_gold)
