"""Parquet files and Arrow files (``datasets.save_to_disk``), read with pyarrow a batch at a time.

A Parquet file is streamed by row group, a few thousand rows per batch; an Arrow file (the IPC
stream ``datasets`` writes, or the IPC file format) batch by batch from a memory map. The text is
the ``text_field`` column (default ``text``), or, for Hub-style NER rows, the ``tokens_field``
token lists with ``tags_field`` integer tags. Null cells and empty row groups are counted; a shard
without the column says which columns it has.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..utils.errors import CorpusError
from . import text as _text
from .compression import BOMB_FLOOR, BOMB_RATIO
from .expansion import decoded_bytes, has_dictionary, python_values
from .hub_ner import clean_tokens, label_names, tagged_row
from .notes import ReadNotes
from .remote import columnar_source

if TYPE_CHECKING:
    from .options import ReadOptions as Corpus  # what a reader reads of a Corpus

BATCH_ROWS = 2048


class MissingColumn(CorpusError):
    """A Parquet or Arrow shard without the text (or tokens) column."""


def _batches(path: Path, fmt: str, corpus: Corpus, columns: list[str] | None,
             notes: ReadNotes | None) -> tuple[Any, Iterator[Any]]:
    """(schema, record batches) of one file; only ``columns`` are decoded (all when None).

    Dictionary-encoded columns are read as dictionaries, and the file is refused when its rows decode
    past the bomb limit (:mod:`.expansion`), counted before any row is read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        if fmt == "parquet":
            parquet = pq.ParquetFile(columnar_source(path, corpus.name), memory_map=isinstance(path, Path))
            schema = parquet.schema_arrow
            if columns is None:
                return schema, iter(())
            empty = [i for i in range(parquet.num_row_groups) if parquet.metadata.row_group(i).num_rows == 0]
            if empty and notes is not None:
                notes.note("skipped", f"{path.name} row group {empty[0]}: empty", "empty row group", len(empty))
            _check_expanded_size(parquet.metadata, columns, path, corpus)
            encoded = _dictionary_paths(parquet.metadata, columns)
            if encoded:
                parquet = pq.ParquetFile(columnar_source(path, corpus.name), memory_map=isinstance(path, Path),
                                         read_dictionary=encoded)
                _check_decoded(parquet.iter_batches(batch_size=BATCH_ROWS, columns=columns, use_threads=False),
                               path, corpus)
            return schema, parquet.iter_batches(batch_size=BATCH_ROWS, columns=columns, use_threads=False)
        schema, batches = _arrow_batches(path, corpus, columns)
        if columns is not None and (isinstance(path, Path) or any(
                has_dictionary(schema.field(c).type) for c in columns if c in schema.names)):
            _check_decoded(_arrow_batches(path, corpus, columns)[1], path, corpus)  # memory-mapped: cheap
        return schema, batches
    except (pa.ArrowException, OSError) as exc:
        kind = "Parquet" if fmt == "parquet" else "Arrow"
        raise CorpusError(f"{corpus.name}: {path.name} is not a readable {kind} file ({str(exc)[:200]})") from exc


def _arrow_batches(path: Path, corpus: Corpus, columns: list[str] | None) -> tuple[Any, Iterator[Any]]:
    """(schema, record batches) of an Arrow IPC stream or file, opened afresh."""
    import pyarrow as pa

    source = pa.memory_map(str(path)) if isinstance(path, Path) else pa.PythonFile(path.open("rb", label=corpus.name))
    try:
        reader: Any = pa.ipc.open_stream(source)
        return reader.schema, _select(iter(reader), columns)
    except pa.ArrowInvalid:
        reader = pa.ipc.open_file(source)
        return reader.schema, _select((reader.get_batch(i) for i in range(reader.num_record_batches)), columns)


def _limit(path: Path, corpus: Corpus) -> int:
    """The most bytes a file's text may decode to: the compressed formats' bomb limit (:mod:`.compression`)."""
    if corpus.max_decompressed_bytes is not None:
        return corpus.max_decompressed_bytes
    return max(BOMB_FLOOR, BOMB_RATIO * path.stat().st_size)


def _dictionary_paths(metadata: Any, columns: list[str]) -> list[str]:
    """The leaf paths (``text``, ``tokens.list.element``) of ``columns`` stored with a dictionary page."""
    wanted, found = set(columns), set()
    for i in range(metadata.num_row_groups):
        group = metadata.row_group(i)
        for j in range(group.num_columns):
            chunk = group.column(j)
            if (chunk.path_in_schema.split(".")[0] in wanted and chunk.has_dictionary_page
                    and chunk.physical_type == "BYTE_ARRAY"):
                found.add(chunk.path_in_schema)
    return sorted(found)


def _check_decoded(batches: Iterator[Any], path: Path, corpus: Corpus) -> None:
    """Refuse a file whose rows decode past the bomb limit, counted from the (dictionary) batches."""
    limit, total = _limit(path, corpus), 0
    for batch in batches:
        total += sum(decoded_bytes(column) for column in batch.columns)
        if total > limit:
            raise CorpusError(f"{corpus.name}: {path.name}: its rows decode to more than {limit / 1e6:,.0f} MB "
                              "(values repeated through a dictionary); refusing it (a decompression bomb, "
                              "or raise the limit)")


def _check_expanded_size(metadata: Any, columns: list[str], path: Path, corpus: Corpus) -> None:
    """Refuse, from the footer alone, a Parquet file whose columns' encoded pages pass the bomb limit of the
    compressed formats (:mod:`.compression`), or one row group (decoded at once) past :data:`BOMB_FLOOR`.
    A footer gives the encoded sizes: what dictionary-encoded rows decode to is counted apart
    (:func:`_check_decoded`)."""
    limit = _limit(path, corpus)
    group_limit = min(limit, BOMB_FLOOR)
    wanted = set(columns)
    total = 0
    for i in range(metadata.num_row_groups):
        group = metadata.row_group(i)
        size = sum(group.column(j).total_uncompressed_size for j in range(group.num_columns)
                   if group.column(j).path_in_schema.split(".")[0] in wanted)
        total += size
        if size > group_limit or total > limit:
            what, bound = (f"row group {i} decodes", group_limit) if size > group_limit else ("its text decodes", limit)
            raise CorpusError(f"{corpus.name}: {path.name}: {what} to more than {bound / 1e6:,.0f} MB; refusing it "
                              "(a decompression bomb, or raise the limit; a row group is decoded at once)")


def _select(batches: Iterator[Any], columns: list[str] | None) -> Iterator[Any]:
    for batch in batches:
        yield batch.select(columns) if columns is not None else batch


def _mode(schema: Any, path: Path, corpus: Corpus) -> str:
    """``text`` when the file has the text column, ``tokens`` for Hub-style NER rows; else MissingColumn."""
    import pyarrow as pa

    names = schema.names
    if corpus.text_field in names:
        kind = schema.field(corpus.text_field).type
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind)):
            raise CorpusError(f"{corpus.name}: {path.name} column {corpus.text_field!r} holds {kind}, not text; "
                              "choose the text column")
        return "text"
    if corpus.tokens_field in names:
        return "tokens"
    raise MissingColumn(f"{corpus.name}: {path.name} has no {corpus.text_field!r} column (found: "
                        f"{', '.join(names)[:200]}); choose the text column")


def _guarded(batches: Iterator[Any], path: Path, corpus: Corpus) -> Iterator[Any]:
    import pyarrow as pa

    try:
        yield from batches
    except (pa.ArrowException, OSError) as exc:
        raise CorpusError(f"{corpus.name}: {path.name} is truncated or corrupt ({str(exc)[:200]})") from exc


def columnar_units(path: Path, fmt: str, corpus: Corpus, notes: ReadNotes | None = None) -> Iterator[str | list[str]]:
    """The text cells (or token lists) of a Parquet or Arrow file, in row order."""
    notes = notes if notes is not None else ReadNotes()
    schema, _ = _batches(path, fmt, corpus, None, None)
    mode = _mode(schema, path, corpus)
    column = corpus.text_field if mode == "text" else corpus.tokens_field
    _, batches = _batches(path, fmt, corpus, [column], notes)
    row = 0
    for batch in _guarded(batches, path, corpus):
        values = batch.column(0)
        if values.null_count:
            notes.note("skipped", f"{path.name} row {row + _first_null(values)}: null {column!r}", "null cell",
                       values.null_count)
        for value in python_values(values):
            row += 1
            if value is None:
                continue
            if mode == "tokens":
                tokens = clean_tokens(value, f"{path.name} row {row}", notes)
                if tokens:
                    yield tokens
            elif len(value) > _text.LINE_BOUND:
                notes.note("repaired", f"{path.name} row {row}: a cell of {len(value):,} characters split at spaces",
                           "long cell split")
                yield from _pieces(value)
            elif value.strip():
                yield value


def _first_null(values: Any) -> int:
    return next((i for i, v in enumerate(values.is_null().to_pylist()) if v), 0) + 1


def _pieces(value: str) -> Iterator[str]:
    """A huge cell in pieces of at most the line bound, cut at the last space before it when there is one."""
    start = 0
    while start < len(value):
        end = min(len(value), start + _text.LINE_BOUND)
        if end < len(value):
            space = value.rfind(" ", start, end)
            end = space + 1 if space > start else end
        if value[start:end].strip():
            yield value[start:end]
        start = end


def columnar_tagged(path: Path, fmt: str, corpus: Corpus,
                    notes: ReadNotes | None = None) -> Iterator[tuple[list[str], list[str]]]:
    """(tokens, tag names) of each Hub-style NER row; nothing for a file of raw text.

    A row whose tokens or tags are null, a null token and a null tag are skipped and counted in ``notes``.
    """
    schema, _ = _batches(path, fmt, corpus, None, None)
    if corpus.text_field in schema.names or corpus.tokens_field not in schema.names:
        return
    if corpus.tags_field not in schema.names:
        raise CorpusError(f"{corpus.name}: {path.name} has {corpus.tokens_field!r} but no {corpus.tags_field!r} "
                          f"column (found: {', '.join(schema.names)[:200]})")
    names = label_names(path, corpus, schema.metadata)
    _, batches = _batches(path, fmt, corpus, [corpus.tokens_field, corpus.tags_field], None)
    notes = notes if notes is not None else ReadNotes()
    row = 0
    for batch in _guarded(batches, path, corpus):
        for tokens, tags in zip(python_values(batch.column(0)), python_values(batch.column(1))):
            row += 1
            where = f"{path.name} row {row}"
            pair = tagged_row(tokens, tags, where, corpus, names, notes)
            if pair is not None:
                yield pair
