"""JSON Lines: one record per line, the text in ``text_field`` (or a token list, Hub-style)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

import orjson

from ..utils.errors import CorpusError
from .notes import ReadNotes
from .text import bounded_lines

if TYPE_CHECKING:
    from .options import ReadOptions as Corpus  # what a reader reads of a Corpus

JSON_MAX_LINE = 64 << 20  # characters; a longer JSONL line is refused, read no further


_MANY_BRACKETS = 400  # lines with this many are read by json alone: no nesting json refuses is this shallow


def decode_record(line: str, text_field: str) -> Any:
    """One JSONL line as the standard library's ``json.loads`` reads it, about 3.5 times faster.

    orjson's record is taken only when it is an object whose ``text_field`` is a string: that string
    is then the same as json's (orjson is strict: it refuses what json would read differently, such as
    lone surrogates, NaN, or numbers out of a double's range). Everything else (an error, another text
    value, a Hub-style token row, where orjson would turn a huge integer into a float) is decoded again
    by ``json.loads``, whose record, exception and message stand. So is a line with many brackets: json
    refuses nesting a little shallower than orjson's limit (its depth depends on the caller's stack).
    """
    if len(line) >= _MANY_BRACKETS and line.count("[") + line.count("{") >= _MANY_BRACKETS:
        return json.loads(line)
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)
    if type(record) is dict and type(record.get(text_field)) is str:
        return record
    return json.loads(line)


def jsonl_records(text: IO[str], name: str, corpus: Corpus) -> Iterator[tuple[int, dict]]:
    """(line number, record) of every non-blank line; a line that is not a JSON object is refused."""
    for number, (line, complete) in enumerate(bounded_lines(text, JSON_MAX_LINE), 1):
        if not complete:
            raise CorpusError(f"{corpus.name}: {name} line {number} is over {JSON_MAX_LINE >> 20} million characters; "
                              "JSONL needs one record per line")
        if not line.strip():
            continue
        try:
            record = decode_record(line, corpus.text_field)
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{corpus.name}: {name} line {number} is not JSON ({exc.msg})") from exc
        except RecursionError:
            raise CorpusError(f"{corpus.name}: {name} line {number} is JSON nested too deeply to read") from None
        except ValueError as exc:  # e.g. an integer of thousands of digits
            raise CorpusError(f"{corpus.name}: {name} line {number} is not readable JSON ({exc})") from None
        if not isinstance(record, dict):
            raise CorpusError(f"{corpus.name}: {name} line {number} is a JSON {type(record).__name__}, not an "
                              f"object with a {corpus.text_field!r} field")
        yield number, record


def jsonl_units(text: IO[str], name: str, corpus: Corpus,
                notes: ReadNotes | None = None) -> Iterator[str | list[str]]:
    """The text of each record, or its token list for Hub-style NER rows (``tokens`` and integer tags)."""
    from .hub_ner import clean_tokens

    notes = notes if notes is not None else ReadNotes()
    for number, record in jsonl_records(text, name, corpus):
        where = f"{name} line {number}"
        if corpus.text_field in record:
            value = record[corpus.text_field]
            if value is None:
                notes.note("skipped", f"{where}: null text", "null cell")
            elif not isinstance(value, str):
                notes.note("skipped", f"{where}: the text is a {type(value).__name__}, not a string",
                           "non-text cell")
            elif value.strip():
                if not _encodable(value):  # a lone surrogate escape such as "\ud800"
                    value = value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
                    notes.note("repaired", f"{where}: a lone surrogate replaced by U+FFFD", "lone surrogate")
                yield value
        elif isinstance(record.get(corpus.tokens_field), list):
            tokens = clean_tokens(record[corpus.tokens_field], where, notes)
            if tokens:
                yield tokens
        else:
            keys = ", ".join(map(str, record))[:200]
            raise CorpusError(
                f"{corpus.name}: {name} line {number} has no {corpus.text_field!r} field "
                f"(found: {keys}); choose the text field"
            )


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def jsonl_tagged(text: IO[str], path_name: str, corpus: Corpus, names: list[str] | None,
                 notes: ReadNotes | None = None) -> Iterator[tuple[list[str], list[str]]]:
    """(tokens, tag names) of each Hub-style NER record (``tokens`` and ``ner_tags``); none for text records.

    A record whose tokens or tags are null, a null token and a null tag are skipped and counted in ``notes``.
    """
    from .hub_ner import tagged_row

    notes = notes if notes is not None else ReadNotes()
    for position, (number, record) in enumerate(jsonl_records(text, path_name, corpus)):
        if position == 0 and corpus.text_field in record:
            return  # a file of text records (a source): no tags, and no reason to read it all
        if corpus.text_field in record:
            continue
        pair = tagged_row(record.get(corpus.tokens_field), record.get(corpus.tags_field),
                          f"{path_name} line {number}", corpus, names, notes)
        if pair is not None:
            yield pair
