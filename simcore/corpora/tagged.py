"""Tagged sentences of one file, whatever its format, with the tags rewritten as IOB2 and the scheme said.

CoNLL and CoNLL-U files give their tags as written; Parquet, Arrow and JSON Lines files of Hub-style
NER rows give their integer tags by name. Every file's tags then go through one
:class:`~.tagschemes.SchemeTracker`, so IOB1, BIOES, BILOU and IO files reach their users as IOB2, and
the scheme found (and the sentences rewritten) is recorded in the reader's notes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .columnar import columnar_tagged
from .conll import conll_sentences
from .conllu import conllu_sentences
from .formats import COLUMNAR
from .hub_ner import label_names
from .jsonl import jsonl_tagged
from .notes import ReadNotes
from .tagschemes import SchemeTracker
from .text import guard, open_text

if TYPE_CHECKING:
    from .options import ReadOptions as Corpus

Tagged = Iterator[tuple[list[str], list[str]]]


def _as_written(path: Path, fmt: str, corpus: Corpus, notes: ReadNotes) -> Tagged:
    if fmt in COLUMNAR:
        yield from columnar_tagged(path, fmt, corpus, notes)
        return
    if fmt not in ("conll", "conllu", "jsonl"):
        return  # raw text and CSV carry no tags
    text, _ = open_text(path, corpus)
    with text:
        if fmt == "conll":
            yield from guard(conll_sentences(text, path.name, with_tags=True, corpus=corpus, notes=notes), corpus,
                             path)
        elif fmt == "conllu":
            for words, tags in guard(conllu_sentences(text, path.name, corpus=corpus, notes=notes), corpus, path):
                if tags is not None:
                    yield words, tags
        else:
            yield from guard(jsonl_tagged(text, path.name, corpus, label_names(path, corpus), notes), corpus, path)


def file_tagged_sentences(path: Path, fmt: str, corpus: Corpus, notes: ReadNotes | None = None) -> Tagged:
    """(tokens, IOB2 tags) of each tagged sentence of one file; what was skipped, and the scheme, in ``notes``."""
    notes = notes if notes is not None else ReadNotes()
    tracker = SchemeTracker()
    for tokens, tags in _as_written(path, fmt, corpus, notes):
        yield tokens, tracker.normalise(tags)
    tracker.record(notes, path.name)
