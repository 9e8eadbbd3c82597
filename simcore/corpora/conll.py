"""CoNLL / BIO: one ``token<TAB>tag`` per line, a blank line between sentences, real files' quirks counted."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING

from ..errors import CorpusError
from . import text as _text
from .notes import ReadNotes
from .text import bounded_lines

if TYPE_CHECKING:
    from .options import ReadOptions as Corpus  # what a reader reads of a Corpus

TAG = re.compile(r"^(O|[BIESLU]-\S+|[BIESLU])$")
MAX_CONLL_SENTENCE = 10_000  # tokens; more means the blank lines between sentences are missing
MAX_SKIPPED_SHARE = 0.1      # more CoNLL lines skipped than this share means the file is not CoNLL
MAX_SKIPPED_FLOOR = 10       # ... unless they are this few
_INVISIBLE = {"Cc", "Cf", "Zs", "Zl", "Zp", "Co", "Cn"}
# Columns are separated by tabs and ASCII spaces only: a no-break or other Unicode space is part of a token
# ("New York" in one token), never a separator that would cut it.
_SEPARATORS = re.compile(r"[\t\n\v\f\r ]+")
_UNICODE_SPACE = re.compile(r"[^\S\t\n\v\f\r ]")


_VISIBLE_ASCII = re.compile(r"[!-~]")


def invisible(token: str) -> bool:
    """True when a token has no visible character (spaces, zero-width and control characters)."""
    if _VISIBLE_ASCII.search(token):
        return False  # the common case, without looking up each character's category
    return all(unicodedata.category(c) in _INVISIBLE for c in token)


def conll_columns(line: str) -> tuple[list[str], str | None]:
    """The columns of one CoNLL line and, when the line needed a repair or must be skipped, why.

    The reason starts with ``skip:`` for lines that hold no usable token.
    """
    content = line.rstrip("\r\n")
    if "\t" in content:
        fields = content.split("\t")
        first = fields[0]
        if len(fields) >= 2 and (not first or invisible(first)) and any(f.strip() for f in fields[1:]):
            return [], "skip: the token is blank or invisible"
    if not content.strip():
        return [], ("whitespace-only line read as a sentence break" if content else None)
    columns = [c for c in _SEPARATORS.split(content) if c]
    if any(invisible(c) for c in columns):
        columns = [c for c in columns if not invisible(c)]
        if len(columns) < 2:
            return [], "skip: the token is blank or invisible"
        return columns, "an invisible column removed"
    if len(columns) == 1:
        what = "only a tag" if TAG.match(columns[0]) else "one column"
        return [], f"skip: {what} ({columns[0][:30]!r}), no 'token<TAB>tag'"
    if _UNICODE_SPACE.search(columns[0]):
        return columns, "a Unicode space inside the token kept"
    stripped = content.strip()
    if "\t" in stripped and " " in stripped.replace("\t", "", 1).strip():
        return columns, "mixed tab and space separators"
    return columns, None


def conll_sentences(
    text: IO[str], name: str, *, with_tags: bool, corpus: Corpus | None = None, notes: ReadNotes | None = None
) -> Iterator[tuple[list[str], list[str]]]:
    """Sentences of a CoNLL file, tolerating real files' quirks and counting them in ``notes``.

    A line with no usable token (blank or invisible token, a tag alone, a line over the line bound) is
    skipped; separators mixing tabs and spaces and whitespace-only lines are read as intended. A file
    where more than a tenth of the lines (and more than ten) must be skipped, or every line, is not
    CoNLL, and is refused with the first bad line named.
    """
    tokens: list[str] = []
    tags: list[str] = []
    label = corpus.name if corpus else name
    local = ReadNotes()
    first_skip = ""
    content_lines = 0
    number = 0
    in_long = False
    for line, complete in bounded_lines(text):
        if in_long:  # the rest of a line over the bound: read and dropped, never held
            in_long = not complete
            continue
        number += 1
        if not complete:
            in_long = True
            columns, reason = [], f"skip: a line of over {_text.LINE_BOUND:,} characters"
        else:
            columns, reason = conll_columns(line)
        if reason is not None:
            skip = reason.startswith("skip: ")
            why = reason.removeprefix("skip: ")
            local.note("skipped" if skip else "repaired", f"{name} line {number}: {why}",
                       why.split(" (")[0] if not why.startswith("a line of over") else "line over the bound")
            if skip:
                first_skip = first_skip or f"line {number}: {why}"
                content_lines += 1
                if local.skipped > 1000 and local.skipped > MAX_SKIPPED_SHARE * content_lines:
                    break
                continue
        if not columns:
            if tokens:
                yield tokens, tags
                tokens, tags = [], []
            continue
        if columns[0] == "-DOCSTART-":
            continue
        content_lines += 1
        tokens.append(columns[0])
        tags.append(columns[-1])
        if len(tokens) > MAX_CONLL_SENTENCE:
            raise CorpusError(
                f"{label}: {name} has a sentence of more than {MAX_CONLL_SENTENCE:,} tokens ending near line "
                f"{number}; CoNLL needs a blank line between sentences"
            )
    if local.skipped and (local.skipped == content_lines
                          or local.skipped > max(MAX_SKIPPED_FLOOR, MAX_SKIPPED_SHARE * content_lines)):
        raise CorpusError(
            f"{label}: {name} is not 'token<TAB>tag' on {local.skipped:,} of {content_lines:,} lines "
            f"(first: {first_skip}); CoNLL needs a token and a tag on every line"
        )
    if notes is not None:
        notes.merge(local)
    if tokens:
        yield tokens, tags
