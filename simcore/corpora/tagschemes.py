"""Entity tag schemes (IOB1, IOB2, BIOES, BILOU, IO): recognised per file and rewritten as IOB2.

NER data sets spell the same entities in several schemes: CoNLL-2003's original files use IOB1
(``I-`` starts an entity, ``B-`` only between two adjacent entities of one type), most others IOB2
(``B-`` starts every entity), some BIOES/IOBES (``E-`` ends, ``S-`` is a single token) or BILOU
(``L-``, ``U-``), and some IO (``I-`` only, or bare types such as ``PER``). The entities are read the
way conlleval reads them, whatever the scheme, and written back as IOB2, so every consumer of tags sees
one scheme; :class:`SchemeTracker` says which scheme a file was in and counts the sentences rewritten.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from .notes import ReadNotes

SCHEMES = ("IOB1", "IOB2", "BIOES", "BILOU", "IO")
_CANONICAL = {"L": "E", "U": "S"}  # BILOU spelled as BIOES


@lru_cache(maxsize=4096)  # a file has a few tags, read again on every token
def split_tag(tag: str) -> tuple[str, str]:
    """(prefix, type) of a tag: ``("O", "")`` for outside, ``("I", tag)`` for a bare type such as ``PER``."""
    if tag in ("O", "o", "", "_", "-"):  # a lower-case o is outside too (never an entity of type "o")
        return "O", ""
    head, dash, kind = tag.partition("-")
    if dash and len(head) == 1 and head.upper() in "BIESLU":
        return head.upper(), kind
    if not dash and tag.upper() in ("B", "I", "E", "S", "L", "U"):
        return tag.upper(), ""
    return "I", tag  # no prefix: inside an entity of that type (IO)


@lru_cache(maxsize=4096)
def _canonical(tag: str) -> tuple[str, str]:
    """:func:`split_tag` with BILOU's prefixes spelled as BIOES's."""
    head, kind = split_tag(tag)
    return _CANONICAL.get(head, head), kind


def chunks(tags: Sequence[str]) -> list[tuple[int, int, str]]:
    """(start, end exclusive, type) of each entity, read as conlleval reads IOB1/IOB2/BIOES/BILOU/IO."""
    return _chunks([_canonical(tag) for tag in tags])


def _chunks(split: list[tuple[str, str]]) -> list[tuple[int, int, str]]:
    """:func:`chunks` of tags already split (and spelled as BIOES)."""
    found: list[tuple[int, int, str]] = []
    prev, prev_kind, start = "O", "", -1
    for i, (head, kind) in enumerate([*split, ("O", "")]):
        ends = (prev in ("E", "S")
                or (prev in ("B", "I") and head in ("B", "S", "O"))
                or (prev != "O" and prev_kind != kind))
        if start >= 0 and ends:
            found.append((start, i, prev_kind))
            start = -1
        starts = head in ("B", "S") or (head in ("I", "E") and (prev in ("E", "S", "O") or prev_kind != kind))
        if head != "O" and (starts or start < 0):
            start = i
        prev, prev_kind = head, kind
    return found


def to_iob2(tags: Sequence[str]) -> list[str]:
    """The same entities as IOB2 tags (``B-`` on the first token of each, ``I-`` on the rest)."""
    return _as_iob2(len(tags), chunks(tags))


def _as_iob2(length: int, found: list[tuple[int, int, str]]) -> list[str]:
    out = ["O"] * length
    for start, end, kind in found:
        suffix = f"-{kind}" if kind else ""
        out[start] = "B" + suffix
        for i in range(start + 1, end):
            out[i] = "I" + suffix
    return out


class SchemeTracker:
    """Rewrites each sentence's tags as IOB2 and gathers what shows the file's scheme.

    Evidence, over the whole file: ``E``/``S`` prefixes mean BIOES, ``L``/``U`` BILOU; ``B`` with an
    entity started by ``I`` means IOB1, ``B`` without one IOB2; entities and no ``B`` mean IO.
    """

    def __init__(self) -> None:
        self.prefixes: set[str] = set()
        self.inside_starts = 0  # entities whose first tag is I- (IOB1 or IO)
        self.sentences = 0
        self.changed = 0
        self.first_changed = -1

    def normalise(self, tags: list[str]) -> list[str]:
        self.sentences += 1
        if isinstance(tags, list) and tags.count("O") == len(tags):  # no entity: nothing to rewrite
            return list(tags)
        split = [split_tag(tag) for tag in tags]
        self.prefixes.update(head for head, _ in split if head != "O")
        found = _chunks([(_CANONICAL.get(head, head), kind) for head, kind in split])
        self.inside_starts += sum(split[start][0] == "I" for start, _, _ in found)
        out = _as_iob2(len(tags), found)
        if out != list(tags):
            self.changed += 1
            if self.first_changed < 0:
                self.first_changed = self.sentences
        return out

    @property
    def scheme(self) -> str | None:
        """The file's scheme, or None when it holds no entity at all."""
        found = self.prefixes
        if not found:
            return None
        if found & {"L", "U"}:
            return "BILOU"
        if found & {"E", "S"}:
            return "BIOES"
        if "B" in found:
            return "IOB1" if self.inside_starts else "IOB2"
        return "IO"

    def record(self, notes: ReadNotes, name: str) -> None:
        """Say the file's scheme in ``notes`` and count the sentences whose tags were rewritten."""
        scheme = self.scheme
        if scheme is None:
            return
        notes.fact("tag scheme", f"{scheme} (read as IOB2)" if scheme != "IOB2" else "IOB2")
        if self.changed:
            notes.note("repaired", f"{name} sentence {self.first_changed}: {scheme} tags rewritten as IOB2",
                       f"{scheme} tags rewritten as IOB2", self.changed)
