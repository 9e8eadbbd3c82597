"""CoNLL-U (Universal Dependencies, Universal NER): numbered words, ten tab-separated columns, '#' comments.

A sentence is a block of lines ``ID<TAB>FORM<TAB>LEMMA<TAB>UPOS<TAB>XPOS<TAB>FEATS<TAB>HEAD<TAB>DEPREL<TAB>
DEPS<TAB>MISC`` ended by a blank line, after comment lines (``# sent_id = ...``, ``# text = ...``). The
word is FORM (the second column, spaces inside it kept). Lines that are not words of the sentence are
skipped and counted: comments, multiword-token ranges (``1-2``, whose words follow on their own lines)
and empty nodes (``1.1``).

Entity tags come from, in this order:

1. a column named ``NER`` (or ``NE``, or the corpus's ``tags_field``) in a CoNLL-U Plus
   ``# global.columns = ...`` header;
2. the MISC column (the tenth): the first of the keys ``NER=``, ``ner=``, ``NE=`` and ``Entity=`` (the
   last only when its value is a tag such as ``B-PER``: CorefUD's ``Entity=(e1...`` is coreference);
3. in a file of fewer than ten columns (Universal NER's ``ID FORM TAG - -`` files), the third column
   when it holds a tag.

A token of a tagged sentence with no tag is read as ``O`` and counted; a sentence with no tag at all
has no tags (like raw text).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import IO, TYPE_CHECKING

from ..utils.errors import CorpusError
from . import text as _text
from .columns import ANY_ID, MAX_CONLL_SENTENCE, MAX_SKIPPED_FLOOR, MAX_SKIPPED_SHARE, invisible
from .notes import ReadNotes
from .text import bounded_lines

if TYPE_CHECKING:
    from .options import ReadOptions as Corpus

WORD_ID = re.compile(r"^\d+$")
TAG = re.compile(r"^(O|[BIESLU]-\S+)$")
MISC_KEYS = ("NER", "ner", "NE", "Entity")
COLUMN_NAMES = ("NER", "NE")
FORM, MISC = 1, 9

Sentence = tuple[list[str], list[str] | None]


def _misc_tag(misc: str) -> str | None:
    values = dict(item.split("=", 1) for item in misc.split("|") if "=" in item)
    for key in MISC_KEYS:
        value = values.get(key)
        if value is not None and (key != "Entity" or TAG.match(value)):
            return value
    return None


class _Columns:
    """Where the word and its tag are, from a ``# global.columns`` header or the file's shape."""

    def __init__(self, corpus: Corpus | None) -> None:
        self.form = FORM
        self.tag: int | None = None
        self.wanted = (*COLUMN_NAMES, *((corpus.tags_field.upper(),) if corpus else ()))

    def header(self, comment: str) -> None:
        key, _, value = comment.lstrip("#").partition("=")
        if key.strip() != "global.columns":
            return
        names = [n.upper() for n in value.split()]
        self.form = names.index("FORM") if "FORM" in names else FORM
        self.tag = next((names.index(n) for n in self.wanted if n in names), None)

    def tag_of(self, fields: list[str]) -> str | None:
        if self.tag is not None:
            value = fields[self.tag].strip() if self.tag < len(fields) else ""
            return value if value not in ("", "_") else None
        if len(fields) >= 10:
            return _misc_tag(fields[MISC])
        if len(fields) >= 3 and TAG.match(fields[2].strip()):
            return fields[2].strip()
        return None


def conllu_lines(lines: Iterable[tuple[str, bool]], name: str, *, corpus: Corpus | None = None,
                 notes: ReadNotes | None = None) -> Iterator[Sentence]:
    """(words, tags or None) of each sentence of CoNLL-U lines given as :func:`bounded_lines` pieces."""
    label = corpus.name if corpus else name
    local = ReadNotes()
    columns = _Columns(corpus)
    words: list[str] = []
    tags: list[str | None] = []
    number = 0
    content = bad = 0
    first_bad = ""
    in_long = False

    def finish() -> Iterator[Sentence]:
        if not words:
            return
        if not any(t is not None for t in tags):
            yield list(words), None
            return
        missing = sum(t is None for t in tags)
        if missing:
            local.note("repaired", f"{name} line {number}: {missing} word(s) without a tag read as O",
                       "word without a tag in a tagged sentence, read as O", missing)
        yield list(words), [t or "O" for t in tags]

    for line, complete in lines:
        if in_long:
            in_long = not complete
            continue
        number += 1
        if not complete:
            in_long = True
            local.note("skipped", f"{name} line {number}: over {_text.LINE_BOUND:,} characters",
                       "line over the bound")
            continue
        stripped = line.strip()
        if not stripped:
            yield from finish()
            words.clear()
            tags.clear()
            continue
        if stripped.startswith("#"):
            columns.header(stripped)
            local.note("skipped", f"{name} line {number}: a comment", "comment line")
            continue
        fields = line.rstrip("\r\n").split("\t")
        content += 1
        if len(fields) < 2 or not ANY_ID.match(fields[0]):
            bad += 1
            first_bad = first_bad or f"line {number}: {stripped[:40]!r}"
            local.note("skipped", f"{name} line {number}: no word ID and FORM", "not a CoNLL-U word line")
            continue
        if not WORD_ID.match(fields[0]):
            kind = "multiword token range" if "-" in fields[0] else "empty node"
            local.note("skipped", f"{name} line {number}: a {kind} ({fields[0]})", kind)
            continue
        form = fields[columns.form] if columns.form < len(fields) else ""
        if not form or invisible(form):
            local.note("skipped", f"{name} line {number}: the word is blank or invisible", "blank token")
            continue
        words.append(form)
        tags.append(columns.tag_of(fields))
        if len(words) > MAX_CONLL_SENTENCE:
            raise CorpusError(f"{label}: {name} has a sentence of more than {MAX_CONLL_SENTENCE:,} words ending "
                              f"near line {number}; CoNLL-U needs a blank line between sentences")
    yield from finish()
    if bad and (bad == content or bad > max(MAX_SKIPPED_FLOOR, MAX_SKIPPED_SHARE * content)):
        raise CorpusError(f"{label}: {name} is not CoNLL-U on {bad:,} of {content:,} lines (first: {first_bad}); "
                          "each word line needs a number, a tab and the word")
    if notes is not None:
        notes.merge(local)


def conllu_sentences(text: IO[str], name: str, *, corpus: Corpus | None = None,
                     notes: ReadNotes | None = None) -> Iterator[Sentence]:
    """(words, tags or None) of each sentence of a CoNLL-U file."""
    yield from conllu_lines(bounded_lines(text), name, corpus=corpus, notes=notes)


def conllu_units(text: IO[str], name: str, corpus: Corpus, notes: ReadNotes | None = None) -> Iterator[list[str]]:
    """The words of each sentence of a CoNLL-U file (the reader of :meth:`Corpus.units`)."""
    for words, _ in conllu_sentences(text, name, corpus=corpus, notes=notes):
        yield words
