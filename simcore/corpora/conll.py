"""CoNLL / BIO: one ``token<TAB>tag`` per line, a blank line between sentences, real files' quirks counted."""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import chain
from typing import IO, TYPE_CHECKING

from ..utils.errors import CorpusError
from . import text as _text
from .columns import MAX_CONLL_SENTENCE, MAX_SKIPPED_FLOOR, MAX_SKIPPED_SHARE, invisible, looks_like_conllu
from .conllu import conllu_lines
from .notes import ReadNotes
from .text import bounded_lines

if TYPE_CHECKING:
    from .options import ReadOptions as Corpus  # what a reader reads of a Corpus

TAG = re.compile(r"^(O|[BIESLU]-\S+|[BIESLU])$")
PEEK_LINES = 50  # non-blank lines looked at before deciding that a "CoNLL" file is CoNLL-U
# Without a tab, columns are separated by ASCII spaces: a no-break or other Unicode space is part of a token
# ("New York" in one token), never a separator that would cut it. With a tab, the tab alone separates.
_SEPARATORS = re.compile(r"[\t\n\v\f\r ]+")
_UNICODE_SPACE = re.compile(r"[^\S\t\n\v\f\r ]")
_PAD = " \v\f\r"
_NUMBER = re.compile(r"^\d+$")
SPACE = " "  # the token a space row gives when space rows are kept
# The common line: a token and a tag of visible ASCII characters around one tab, for which every
# check below passes; read at once (a 100k-token target in about half the time), the same columns.
PLAIN_LINE = re.compile(r"[!-~]+\t[!-~]+")
SPACE_ROW = "space row"


def conll_columns(line: str) -> tuple[list[str], str | None]:
    """The columns of one CoNLL line and, when the line needed a repair or must be skipped, why.

    The reason starts with ``skip:`` for lines that hold no usable token. In a line with a tab the token
    is the whole first field, spaces inside it included (``New York<TAB>B-LOC``), and the tag the last word
    of the last field.
    """
    content = line.rstrip("\r\n")
    if PLAIN_LINE.fullmatch(content):
        return content.split("\t"), None
    if "\t" in content:
        fields = content.split("\t")
        first = fields[0]
        if len(fields) >= 2 and first and first.isspace() and TAG.match(fields[-1].strip()):
            # KLUE's " <TAB>O" between the characters of two words
            return [SPACE, fields[-1].strip()], SPACE_ROW
        if len(fields) >= 2 and (not first or invisible(first)) and any(f.strip() for f in fields[1:]):
            return [], "skip: the token is blank or invisible"
    if not content.strip():
        return [], ("whitespace-only line read as a sentence break" if content else None)
    if "\t" in content:
        columns = [f.strip(_PAD) for f in content.split("\t")]
        columns = [c for c in columns if c]
    else:
        columns = [c for c in _SEPARATORS.split(content) if c]
    if any(invisible(c) for c in columns):
        columns = [c for c in columns if not invisible(c)]
        if len(columns) < 2:
            return [], "skip: the token is blank or invisible"
        return columns, "an invisible column removed"
    if len(columns) == 1:
        what = "only a tag" if TAG.match(columns[0]) else "one column"
        return [], f"skip: {what} ({columns[0][:30]!r}), no 'token<TAB>tag'"
    if " " in columns[-1]:  # "token<TAB>POS TAG": the tag is the last word
        columns[-1:] = columns[-1].split()
        return columns, "mixed tab and space separators"
    if " " in columns[0]:
        return columns, "an ASCII space inside a tab-separated token kept"
    if _UNICODE_SPACE.search(columns[0]):
        return columns, "a Unicode space inside the token kept"
    return columns, None


def _comment(line: str, columns: list[str]) -> bool:
    """A ``#`` line that is not a token and its tag (``# sent_id = 3``, ``#<TAB>http://...``), unlike ``#<TAB>O``."""
    return line.startswith("#") and not (len(columns) == 2 and TAG.match(columns[-1]))


def _peek(lines: Iterator[tuple[str, bool]]) -> tuple[list[tuple[str, bool]], Iterator[tuple[str, bool]]]:
    """The first :data:`PEEK_LINES` non-blank lines (with the blank ones between), and the rest."""
    head: list[tuple[str, bool]] = []
    seen = 0
    for piece in lines:
        head.append(piece)
        seen += bool(piece[0].strip())
        if seen >= PEEK_LINES or not piece[1]:
            break
    return head, lines


def conll_sentences(
    text: IO[str], name: str, *, with_tags: bool, corpus: Corpus | None = None,
    notes: ReadNotes | None = None, keep_spaces: bool = False,
) -> Iterator[tuple[list[str], list[str]]]:
    """Sentences of a CoNLL file, tolerating real files' quirks and counting them in ``notes``.

    A line with no usable token (blank or invisible token, a tag alone, a line over the line bound) is
    skipped; separators mixing tabs and spaces and whitespace-only lines are read as intended. A file
    where more than a tenth of the lines (and more than ten) must be skipped, or every line, is not
    CoNLL, and is refused with the first bad line named.

    Shapes of other formats are never read as tokens: ``#`` comment lines are skipped and counted; a file
    whose first lines are tab-separated with word numbers first (CoNLL-U, Universal NER, GermEval) is read
    as CoNLL-U (:mod:`.conllu`) and said so; space-separated lines whose first column numbers the words
    are refused.

    A row whose token is a space and whose tag is a tag (KLUE-NER's ``" "<TAB>O`` between the
    characters of two words) is a space row: skipped and counted in ``notes`` (never a reason to refuse
    the file); with ``keep_spaces`` given as a ``" "`` token, so that a character-tagged target's words
    can be rejoined (:mod:`.lang.cut`).
    """
    tokens: list[str] = []
    tags: list[str] = []
    label = corpus.name if corpus else name
    local = ReadNotes()
    head, rest = _peek(bounded_lines(text))
    if looks_like_conllu(line for line, complete in head if complete):
        if notes is not None:
            notes.fact("format", "CoNLL-U (numbered words), read by its columns")
        for words, found in conllu_lines(chain(head, rest), name, corpus=corpus, notes=notes):
            if found is not None or not with_tags:  # a sentence with no tag has none to give
                yield words, found or []
        return
    first_skip = ""
    content_lines = 0
    numbered = bad = 0
    number = 0
    in_long = False
    for line, complete in chain(head, rest):
        if in_long:  # the rest of a line over the bound: read and dropped, never held
            in_long = not complete
            continue
        number += 1
        if complete and not line.startswith("#"):  # the common line, as conll_columns reads it
            content = line.rstrip("\r\n")
            if PLAIN_LINE.fullmatch(content):
                token, tag = content.split("\t")
                if token != "-DOCSTART-":
                    content_lines += 1
                    tokens.append(token)
                    tags.append(tag)
                    if len(tokens) > MAX_CONLL_SENTENCE:
                        _refuse_long(label, name, number)
                continue
        if not complete:
            in_long = True
            columns, reason = [], f"skip: a line of over {_text.LINE_BOUND:,} characters"
        elif line.startswith("#") and _comment(line, _SEPARATORS.split(line.strip())):
            local.note("skipped", f"{name} line {number}: a '#' comment", "comment line")
            continue
        else:
            columns, reason = conll_columns(line)
        if reason == SPACE_ROW:  # a space between two words of a character-tagged file (.lang.cut)
            if not keep_spaces or not tokens:  # skipped as a token, never a reason to refuse the file
                blank = "the token is blank or invisible"  # said as any blank token is
                local.note("skipped", f"{name} line {number}: {blank}", blank)
                continue
            reason = None
        if reason is not None:
            skip = reason.startswith("skip: ")
            why = reason.removeprefix("skip: ")
            local.note("skipped" if skip else "repaired", f"{name} line {number}: {why}",
                       why.split(" (")[0] if not why.startswith("a line of over") else "line over the bound")
            if skip:
                first_skip = first_skip or f"line {number}: {why}"
                content_lines += 1
                bad += 1
                if bad > 1000 and bad > MAX_SKIPPED_SHARE * content_lines:
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
        if len(columns) >= 3 and columns[0] == str(len(tokens) + 1) and _NUMBER.match(columns[0]):
            numbered += 1
            if content_lines == PEEK_LINES and numbered >= 0.9 * content_lines:
                _refuse_numbered(label, name, number)
        tokens.append(columns[0])
        tags.append(columns[-1])
        if len(tokens) > MAX_CONLL_SENTENCE:
            _refuse_long(label, name, number)
    if numbered >= 3 and numbered >= 0.9 * content_lines:
        _refuse_numbered(label, name, number)
    if bad and (bad == content_lines or bad > max(MAX_SKIPPED_FLOOR, MAX_SKIPPED_SHARE * content_lines)):
        raise CorpusError(
            f"{label}: {name} is not 'token<TAB>tag' on {bad:,} of {content_lines:,} lines "
            f"(first: {first_skip}); CoNLL needs a token and a tag on every line"
        )
    if notes is not None:
        notes.merge(local)
    if tokens:
        yield tokens, tags


def _refuse_long(label: str, name: str, number: int) -> None:
    raise CorpusError(
        f"{label}: {name} has a sentence of more than {MAX_CONLL_SENTENCE:,} tokens ending near line "
        f"{number}; CoNLL needs a blank line between sentences"
    )


def _refuse_numbered(label: str, name: str, number: int) -> None:
    raise CorpusError(f"{label}: {name} numbers its words in the first column (1, 2, 3 ... up to line {number}), "
                      "so it is not 'token<TAB>tag'; write it as CoNLL-U (tab-separated, .conllu) or drop the numbers")
