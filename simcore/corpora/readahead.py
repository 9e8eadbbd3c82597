"""A big compressed text file's units read in a child process, handed over in batches as they come.

One ``.txt.gz`` is one piece of a streaming pass (a compressed stream cannot be cut), so one
process read it: decompressing, decoding and cutting lines, then hashing each unit
(:meth:`simcore.corpora.sampling.Candidates.offer`), one after the other. Here a forked child
reads, exactly as :meth:`simcore.corpora.corpus.Corpus.units` does, and sends the units through a
pipe (with some of the per-unit work done, see ``extra``) while this process works on the batches
before them: the same units, in the same order, on two cores. The child ends with this process
(:func:`simcore.utils.lifecycle.die_with_parent`), and as soon as the units are no longer wanted.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..utils.errors import CorpusError
from ..utils.lifecycle import die_with_parent
from .formats import split_suffixes
from .notes import ReadNotes

if TYPE_CHECKING:
    from .corpus import Corpus

READ_AHEAD_MIN_BYTES = 8 << 20  # compressed files smaller than this are read in this process
BATCH_UNITS = 4096  # units a message
_PIPE_BUFFER = 1 << 20

Progress = Callable[[str, float], None]


def reads_ahead(corpus: Corpus, file: Any) -> bool:
    """Whether ``file`` of ``corpus`` is read in a child: a local compressed text file of at least
    :data:`READ_AHEAD_MIN_BYTES`, on a system that forks, with a second core, from a process without
    other threads (a fork copies only the calling thread)."""
    if not isinstance(file, Path) or split_suffixes(file.name)[1] is None:
        return False
    if not hasattr(os, "fork") or (os.cpu_count() or 1) < 2 or threading.active_count() > 1:
        return False
    try:
        return file.stat().st_size >= READ_AHEAD_MIN_BYTES and corpus.file_format(file) == "text"
    except OSError:
        return False  # read here, where the error is reported


def units_read_ahead(corpus: Corpus, file: Path, progress: Progress,
                     notes: ReadNotes | None) -> Iterator[str | list[str]]:
    """The units of ``file`` (a file of ``corpus``) as ``part_corpus(corpus, file).units`` yields
    them, read in a child process; its notes added to ``notes`` and its errors raised here, after
    the units read before them."""
    for units, _ in batches_read_ahead(corpus, file, progress, notes):
        yield from units


def batches_read_ahead(corpus: Corpus, file: Path, progress: Progress, notes: ReadNotes | None,
                       extra: Callable[[list[Any]], Any] | None = None,
                       every: int = 1) -> Iterator[tuple[list[Any], Any]]:
    """:func:`units_read_ahead` in batches of :data:`BATCH_UNITS` units (the last one shorter,
    perhaps empty), one batch in ``every`` with what ``extra`` makes of it in the child, the others
    with None: work on the units done beside this process's, shared so that neither waits long."""
    read, write = os.pipe()
    try:  # room for a few batches in the pipe itself, so that neither side waits on the other's pace
        fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, _PIPE_BUFFER)
    except (AttributeError, OSError):  # not Linux, or over /proc/sys/fs/pipe-max-size
        pass
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        status = 1
        try:
            os.close(read)
            die_with_parent(parent)
            _send_units(corpus, file, write, extra, every)
            status = 0
        finally:
            os._exit(status)
    os.close(write)
    finished = False
    try:
        with os.fdopen(read, "rb", buffering=_PIPE_BUFFER) as pipe:
            yield from _received(pipe, corpus, file, progress, notes)
        finished = True
    finally:
        if not finished:  # the units are no longer wanted (or the child failed): end it now
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os.waitpid(pid, 0)


def _received(pipe: IO[bytes], corpus: Corpus, file: Path, progress: Progress,
              notes: ReadNotes | None) -> Iterator[tuple[list[Any], Any]]:
    while True:
        try:
            kind, payload, where, made = pickle.load(pipe)
        except (EOFError, pickle.UnpicklingError) as exc:
            raise CorpusError(f"{corpus.name}: the process reading {file.name} ended before "
                              "its end") from exc
        if kind == "units":
            yield payload, made
            if where is not None:
                progress(*where)
        elif kind == "error":
            raise payload
        else:
            if notes is not None:
                notes.merge(payload)
            return


def _send_units(corpus: Corpus, file: Path, write: int, extra: Callable[[list[Any]], Any] | None,
                every: int) -> None:
    """In the child: every unit of ``file``, BATCH_UNITS a message, then its notes (or error)."""
    from .corpus import part_corpus

    sent = [0]

    def send(batch: list[Any], where: tuple[str, float] | None) -> None:
        made = extra(batch) if extra is not None and sent[0] % every == 0 else None
        sent[0] += 1
        pickle.dump(("units", batch, where, made), pipe, pickle.HIGHEST_PROTOCOL)

    with os.fdopen(write, "wb", buffering=_PIPE_BUFFER) as pipe:
        notes = ReadNotes()
        where: list[tuple[str, float] | None] = [None]

        def seen(message: str, fraction: float) -> None:
            where[0] = (message, fraction)

        batch: list[str | list[str]] = []
        try:
            for unit in part_corpus(corpus, file).units(seen, notes):
                batch.append(unit)
                if len(batch) >= BATCH_UNITS:
                    send(batch, where[0])
                    batch, where[0] = [], None
            send(batch, where[0])
            pickle.dump(("notes", notes, None, None), pipe, pickle.HIGHEST_PROTOCOL)
        except BrokenPipeError:
            raise
        except Exception as exc:  # said in the parent, after the units before it
            send(batch, None)
            try:
                message = pickle.dumps(("error", exc, None, None), pickle.HIGHEST_PROTOCOL)
                pickle.loads(message)
            except Exception:  # an error that does not pickle: its message
                message = pickle.dumps(("error", CorpusError(str(exc)), None, None),
                                       pickle.HIGHEST_PROTOCOL)
            pipe.write(message)
