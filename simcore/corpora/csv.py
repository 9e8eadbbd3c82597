"""CSV: the text in the ``text_field`` column; rows that do not fit the header are counted, never cut silently."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING

from ..utils.errors import CorpusError
from . import text as _text
from .notes import ReadNotes
from .text import whole_lines

if TYPE_CHECKING:
    from .options import ReadOptions as Corpus  # what a reader reads of a Corpus


def csv_units(text: IO[str], name: str, corpus: Corpus, notes: ReadNotes | None = None) -> Iterator[str]:
    """The text column of every row.

    - A row with more fields than the header (unquoted commas in the text) gets its extra fields
      joined back into the text column, with the commas, and is counted as repaired.
    - A quote that is never closed would swallow the rest of the file into one unit: refused, naming the line.
    - A quoted text spanning several lines is kept whole and counted (an unclosed quote that a later
      quote happens to close shows up there).
    - A physical line over the line bound is refused (memory stays bounded).
    """
    notes = notes if notes is not None else ReadNotes()
    csv.field_size_limit(max(csv.field_size_limit(), _text.LINE_BOUND))
    reader = csv.reader(whole_lines(text, name, corpus, "CSV line"), strict=True)
    start = 1
    try:
        header = next(reader, None)
        if header is None or corpus.text_field not in header:
            found = ", ".join(header or [])[:200]
            raise CorpusError(f"{corpus.name}: {name} has no {corpus.text_field!r} column (found: {found}); "
                              "choose the text column")
        if header.count(corpus.text_field) > 1:
            raise CorpusError(f"{corpus.name}: {name} has {header.count(corpus.text_field)} columns named "
                              f"{corpus.text_field!r}; rename all but one (or choose another column)")
        column, width = header.index(corpus.text_field), len(header)
        start = reader.line_num + 1
        for row in reader:
            where = f"{name} line {start}"
            span = reader.line_num - start + 1
            start = reader.line_num + 1
            if not row:
                continue
            if len(row) > width:
                extra = len(row) - width
                value = ",".join(row[column: column + extra + 1])
                notes.note("repaired", f"{where}: {extra} more field{'s' if extra > 1 else ''} than the header "
                                       "(unquoted commas?) joined back into the text", "unquoted commas in CSV text")
            elif column >= len(row):
                notes.note("skipped", f"{where}: {len(row)} fields, no {corpus.text_field!r} column",
                           "CSV row shorter than the header")
                continue
            else:
                value = row[column]
            if span > 1:
                notes.note("repaired", f"{where}: a quoted text spanning {span} lines kept as one unit",
                           "CSV text spanning several lines")
            if value.strip():
                yield value
    except csv.Error as exc:
        if "unexpected end of data" in str(exc):
            raise CorpusError(f"{corpus.name}: {name} line {start} opens a quote that is never closed (the rest of "
                              "the file would become one unit); close or remove the quote") from None
        raise CorpusError(f"{corpus.name}: {name} near line {reader.line_num} is not readable CSV ({exc})") from None
