"""Decompressing streams: gzip, bzip2, xz and zstd, bounded against decompression bombs.

Every decompressor reads the raw file as a stream (never all of it): a shard of many gigabytes
costs a buffer, not its size. A truncated or corrupt frame raises, so it is reported (by
:func:`simcore.corpora.text.guard`) instead of ending the corpus early and silently.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..utils.errors import CorpusError
from .formats import split_suffixes
from .remote import RemoteFile, open_raw

if TYPE_CHECKING:
    from .options import ReadOptions as Corpus  # what a reader reads of a Corpus

BOMB_RATIO = 200             # decompressed / compressed size beyond this, past BOMB_FLOOR, is refused
BOMB_FLOOR = 1 << 30
PREFLIGHT_BYTES = 8 << 20    # compressed bytes decompressed (and only counted) before reading: a bomb ends here
_BUFFER = 1 << 16
_FEED = 1 << 10  # compressed bytes given to the zstd decompressor at once


class ZstdError(OSError):
    """A zstd stream that is corrupt or ends inside a frame (an OSError, like gzip's own)."""


class _ZstdStream(io.RawIOBase):
    """zstd frames one after another (as `zstd` and Dolma-style dumps write them), decompressed as read.

    zstandard's own stream reader returns what it has when the input ends inside a frame; this one
    checks that the last frame was complete and raises :class:`ZstdError` otherwise.
    """

    def __init__(self, raw: IO[bytes]) -> None:
        import zstandard

        self.raw, self._zstd = raw, zstandard
        self._dctx = zstandard.ZstdDecompressor()
        self._obj = self._dctx.decompressobj()
        self._input = b""  # compressed bytes read from the file, not yet fed
        self._pending = b""
        self._at = 0  # how much of _pending was handed out
        self._in_frame = False
        self._eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while self._at >= len(self._pending) and not self._eof:
            if not self._input:
                self._input = self.raw.read(_BUFFER)
                if not self._input:
                    self._eof = True
                    if self._in_frame:
                        raise ZstdError("the zstd stream ends inside a frame (the file is truncated)")
                    break
            # A little input at a time: one kilobyte of a bomb expands to tens of MB, not gigabytes.
            feed, self._input = self._input[:_FEED], self._input[_FEED:]
            self._pending, self._at = self._feed(feed), 0
        n = min(len(buffer), len(self._pending) - self._at)
        buffer[:n] = self._pending[self._at:self._at + n]
        self._at += n
        return n

    def _feed(self, chunk: bytes) -> bytes:
        out = []
        while chunk:
            try:
                out.append(self._obj.decompress(chunk))
            except self._zstd.ZstdError as exc:
                raise ZstdError(f"corrupt zstd data ({exc})") from exc
            self._in_frame = not self._obj.eof
            if not self._obj.eof:
                break
            chunk = self._obj.unused_data  # the next frame, if any, starts here
            self._obj = self._dctx.decompressobj()
            self._in_frame = bool(chunk)
        return b"".join(out)

    def close(self) -> None:
        self.raw.close()
        super().close()


COMPRESSIONS: dict[str, Callable[[IO[bytes]], IO[bytes]]] = {
    ".gz": lambda raw: gzip.GzipFile(fileobj=raw, mode="rb"),
    ".bz2": lambda raw: bz2.BZ2File(raw, "rb"),
    ".xz": lambda raw: lzma.LZMAFile(raw, "rb"),
    ".zst": _ZstdStream,
    ".zstd": _ZstdStream,
}
# What a decompressor raises on a truncated or corrupt stream (guard turns each into a message).
DECOMPRESSION_ERRORS: tuple[type[BaseException], ...] = (EOFError, OSError, lzma.LZMAError, zlib.error)


class LimitedStream(io.RawIOBase):
    """A decompressed stream that refuses to grow past a limit (decompression bombs)."""

    def __init__(self, stream: IO[bytes], limit: int, label: str) -> None:
        self.stream, self.limit, self.label, self.count = stream, limit, label, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.stream.read(len(buffer))
        self.count += len(data)
        if self.count > self.limit:
            raise CorpusError(f"{self.label} decompresses to more than {self.limit / 1e6:,.0f} MB; "
                              "refusing it (a decompression bomb, or raise the limit)")
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.stream.close()
        super().close()


def open_binary(path: Path | RemoteFile, corpus: Corpus | None = None) -> tuple[IO[bytes], IO[bytes]]:
    """(decompressed stream, the raw file under it, whose position tells progress); a remote object streamed."""
    raw = open_raw(path, corpus.name if corpus else "")
    _, compression = split_suffixes(path.name)
    if not compression:
        return raw, raw
    limit = max(BOMB_FLOOR, BOMB_RATIO * path.stat().st_size)
    if corpus is not None and corpus.max_decompressed_bytes is not None:
        limit = corpus.max_decompressed_bytes
    label = f"{corpus.name}: {path.name}" if corpus else path.name
    if not isinstance(path, RemoteFile):  # a remote object is read once: its LimitedStream alone bounds it
        _preflight(path, compression, limit, label)
    limited = LimitedStream(COMPRESSIONS[compression](raw), limit, label)
    return io.BufferedReader(limited, _BUFFER), raw


def _preflight(path: Path, compression: str, limit: int, label: str) -> None:
    """Decompress the first :data:`PREFLIGHT_BYTES` of the file, counting bytes and keeping none.

    A bomb (a few hundred KB that expand past the limit) is refused here at decompression speed, in
    seconds, instead of at tokenizer speed minutes later; a normal file costs the decompression of
    its first 8 MB. Corrupt data is left for the real read to report with its place.
    """
    with open(path, "rb") as raw:
        stream = COMPRESSIONS[compression](raw)
        count = 0
        try:
            while raw.tell() <= PREFLIGHT_BYTES:
                chunk = stream.read(_PREFLIGHT_CHUNK)
                if not chunk:
                    return
                count += len(chunk)
                if count > limit:
                    raise CorpusError(f"{label} decompresses to more than {limit / 1e6:,.0f} MB; "
                                      "refusing it (a decompression bomb, or raise the limit)")
        except DECOMPRESSION_ERRORS:
            return
        finally:
            stream.close()


_PREFLIGHT_CHUNK = 1 << 20
