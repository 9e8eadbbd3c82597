"""Text files: opening (decompressor, encoding), reading lines with bounded memory, plain-text units.

Lines are read at most :data:`LINE_BOUND` characters at a time, so a file that is one line of a
gigabyte costs memory of the bound, never a multiple of the line: plain text splits such a line
at whitespace (and counts it), line formats that cannot split refuse or skip it (and say so).
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..utils.errors import CorpusError
from .columns import looks_like_conllu
from .compression import DECOMPRESSION_ERRORS, open_binary
from .notes import ReadNotes

if TYPE_CHECKING:
    from .options import ReadOptions as Corpus  # what a reader reads of a Corpus

SNIFF_BYTES = 1 << 16
LINE_BOUND = 1 << 20  # characters read at once; a longer line is split (text) or refused (line formats)
_TAG = re.compile(r"^([Oo]|[BIESLU]-\S+|[BIESLU])$")
_SPACE = re.compile(r"\s")


def detect_encoding(head: bytes, corpus: Corpus, name: str) -> str:
    if corpus.encoding:
        return corpus.encoding
    if head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):  # before UTF-16: FF FE 00 00 starts both
        return "utf-32"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    if b"\0" in head:
        quads = [head[i::4] for i in range(4)]
        if len(head) >= 8 and sum(q.count(0) > 0.9 * len(q) for q in quads) == 3:
            raise CorpusError(f"{corpus.name}: {name} looks like UTF-32 text without a byte-order mark; "
                              "give its encoding (utf-32-le or utf-32-be) or save it as UTF-8")
        even, odd = head[0::2], head[1::2]
        if odd.count(0) > 0.9 * len(odd) or even.count(0) > 0.9 * len(even):
            raise CorpusError(
                f"{corpus.name}: {name} looks like UTF-16 text without a byte-order mark; "
                "give its encoding (utf-16-le or utf-16-be) or save it as UTF-8"
            )
        raise CorpusError(f"{corpus.name}: {name} looks like a binary file (it contains NUL bytes), not text")
    return "utf-8-sig"


def open_text(path: Path, corpus: Corpus) -> tuple[io.TextIOWrapper, IO[bytes]]:
    """The decoded text of a (possibly compressed) file, and the raw file under it.

    A remote object is opened once: the head read to detect the encoding is put back in front of the rest.
    """
    stream, raw = open_binary(path, corpus)
    remote = not isinstance(path, Path)
    try:
        head = stream.read(SNIFF_BYTES)
        if not head.strip():
            raise CorpusError(f"{corpus.name}: {path.name} is empty (or only whitespace)")
        encoding = detect_encoding(head, corpus, path.name)
    except DECOMPRESSION_ERRORS as exc:
        remote = False
        raise CorpusError(f"{corpus.name}: {path.name} is not a readable compressed file ({exc})") from exc
    except BaseException:
        remote = False
        raise
    finally:
        if not remote:
            stream.close()
            raw.close()
    if remote:
        stream = io.BufferedReader(_Replayed(head, stream), 1 << 16)
    else:
        stream, raw = open_binary(path, corpus)
    return io.TextIOWrapper(stream, encoding=encoding, errors="strict", newline=None), raw


class _Replayed(io.RawIOBase):
    """``head`` (already read from ``stream``) and then the rest of ``stream``."""

    def __init__(self, head: bytes, stream: IO[bytes]) -> None:
        self.head, self.stream = head, stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.head:
            n = min(len(buffer), len(self.head))
            buffer[:n], self.head = self.head[:n], self.head[n:]
            return n
        data = self.stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.stream.close()
        super().close()


def guard(iterator: Iterator[Any], corpus: Corpus, path: Path) -> Iterator[Any]:
    """Turn decoding and decompression failures into messages that name the file."""
    try:
        yield from iterator
    except UnicodeDecodeError as exc:
        raise CorpusError(
            f"{corpus.name}: {path.name} is not valid {exc.encoding} text "
            f"(byte 0x{exc.object[exc.start]:02x}); save it as UTF-8 or give its encoding"
        ) from exc
    except UnicodeError as exc:  # e.g. UTF-16 asked for, and no byte-order mark
        raise CorpusError(f"{corpus.name}: {path.name} cannot be read as {corpus.encoding or 'UTF-8'} text ({exc}); "
                          "give its encoding") from exc
    except DECOMPRESSION_ERRORS as exc:
        raise CorpusError(f"{corpus.name}: {path.name} is truncated or corrupt ({exc})") from exc
    except csv.Error as exc:
        raise CorpusError(f"{corpus.name}: {path.name} is not a readable CSV file ({exc})") from exc


def bounded_lines(text: IO[str], bound: int | None = None) -> Iterator[tuple[str, bool]]:
    """(piece, complete) for each line: a line longer than ``bound`` characters comes in pieces, all but
    the last with ``complete`` False. Memory is the bound, whatever the line."""
    bound = bound or LINE_BOUND
    while True:
        piece = text.readline(bound)
        if not piece:
            return
        yield piece, piece.endswith("\n") or len(piece) < bound


def whole_lines(text: IO[str], name: str, corpus: Corpus, what: str) -> Iterator[str]:
    """Lines for a format that cannot split one (JSONL, CSV): a line over the bound is refused, read no further."""
    for number, (line, complete) in enumerate(bounded_lines(text), 1):
        if not complete:
            raise CorpusError(f"{corpus.name}: {name} line {number} is over {LINE_BOUND:,} characters; "
                              f"a {what} that long is refused")
        yield line


def text_units(text: IO[str], name: str, corpus: Corpus, notes: ReadNotes | None = None) -> Iterator[str]:
    """Each non-blank line; a line over the bound is cut at whitespace into pieces of at most the bound, counted.

    At most twice the bound is held: the piece just read and the end of the previous one.
    """
    carry = ""
    number = 0
    inside = False  # in the middle of a line over the bound
    readline, bound = text.readline, LINE_BOUND
    while True:  # bounded_lines, inlined: the common line costs no generator of its own
        piece = readline(bound)
        if not piece:
            break
        complete = piece.endswith("\n") or len(piece) < bound
        if not inside and complete:
            number += 1
            if piece.strip():
                yield piece
            continue
        if not inside:
            number += 1
            if notes is not None:
                notes.note("repaired", f"{name} line {number}: over {LINE_BOUND:,} characters, split at spaces",
                           "long line split")
        piece = carry + piece
        while len(piece) > LINE_BOUND or (not complete and len(piece) == LINE_BOUND):
            cut = _last_space(piece[:LINE_BOUND]) or LINE_BOUND  # no space to cut at: cut at the bound
            if piece[:cut].strip():
                yield piece[:cut]
            piece = piece[cut:]
        carry = "" if complete else piece
        inside = not complete
        if complete and piece.strip():
            yield piece
    if carry.strip():
        yield carry


def _last_space(text: str) -> int:
    """The index just after the last space, tab or line break of ``text`` (0 when it has none)."""
    return max(text.rfind(" "), text.rfind("\t"), text.rfind("\n")) + 1


def sniff_format(path: Path, corpus: Corpus) -> str:
    """``conllu`` when most of the first lines are tab-separated with a word number first (``#`` comments
    aside), ``conll`` when most are ``token<TAB>tag``, else ``text``."""
    text, _ = open_text(path, corpus)
    with text:
        lines: list[str] = []
        for line, complete in guard(bounded_lines(text), corpus, path):
            if not complete:  # a line of the bound is not CoNLL; stop reading it here
                lines.append("")
                break
            if line.strip() and not line.startswith("-DOCSTART-"):
                lines.append(line)
            if len(lines) >= 50:
                break
    if looks_like_conllu(lines):
        return "conllu"
    columns = [line.split() for line in lines if not line.startswith("#")]
    tagged = sum(1 for cols in columns if len(cols) >= 2 and _TAG.match(cols[-1]))
    return "conll" if columns and tagged >= 0.9 * len(columns) else "text"


class _RangeReader(io.RawIOBase):
    """Bytes ``[start, end)`` of a file, as a stream of their own."""

    def __init__(self, path: Path, start: int, end: int) -> None:
        self.file = open(path, "rb")
        self.file.seek(start)
        self.left = end - start

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.file.read(min(len(buffer), self.left))
        self.left -= len(data)
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.file.close()
        super().close()


def line_starts(path: Path, pieces: int) -> list[int]:
    """``pieces + 1`` byte offsets, each the start of a line (or the file's end), splitting ``path`` evenly."""
    size = path.stat().st_size
    bounds = [0]
    with open(path, "rb") as f:
        for i in range(1, pieces):
            at = max(bounds[-1] + 1, i * size // pieces)
            if at >= size:
                break
            f.seek(at - 1)
            while True:  # to the end of the line that holds byte at - 1, a block at a time
                block = f.read(1 << 20)
                if not block:
                    at = size
                    break
                newline = block.find(b"\n")
                if newline >= 0:
                    at = f.tell() - len(block) + newline + 1
                    break
            if at >= size:
                break
            if at > bounds[-1]:
                bounds.append(at)
    return [*bounds, size]


def range_text(path: Path, start: int, end: int, corpus: Corpus) -> io.TextIOWrapper:
    """Lines ``[start, end)`` of a UTF-8 file (both offsets at line starts), decoded as the whole file is."""
    stream = io.BufferedReader(_RangeReader(path, start, end), 1 << 16)
    return io.TextIOWrapper(stream, encoding="utf-8-sig" if start == 0 else "utf-8", errors="strict", newline=None)
