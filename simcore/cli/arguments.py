"""Shared pieces of the command line: the progress bar and the checks every option goes through.

Every option is parsed here into a value in its allowed range, so a bad value ends with one line
from argparse (exit 2) before any work starts; output paths are checked before a long run, and
written so that a full disk or an unwritable place is reported as such.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from ..corpora.corpus import check_encoding
from ..measures.lookup import parse_measures
from ..utils.errors import CorpusError, OutputError, SimcoreError
from ..utils.output_paths import output_error, refuse_overwriting_inputs, write_text_atomic
from .progress import ProgressBar

__all__ = ["Bar", "Parser", "check_names", "check_out", "encoding", "field_name", "fraction", "measures", "no_clobber",
           "output_error", "path_text", "storage_options", "whole_number", "write_text"]


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (``simcore: error: ...``) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("python -m simcore").strip()
        where = f"{command}: " if command else ""
        self.exit(2, f"simcore: error: {where}{' '.join(message.split())} (see --help)\n")


Bar = ProgressBar  # the progress bar every command shows (simcore.cli.progress)


def whole_number(low: int, high: int, *, allow_float_text: bool = True) -> Callable[[str], int]:
    """An argparse type: a whole number in [low, high] (``1e6`` accepted where allow_float_text)."""

    def parse(text: str) -> int:
        value: float | int
        try:
            value = int(text)
        except ValueError:
            if not allow_float_text:
                raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
            try:
                value = float(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
            if not math.isfinite(value) or value != int(value):
                raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be from {low:,} to {high:,} (got {text})")
        return int(value)

    return parse


def fraction(text: str) -> float:
    """An argparse type: a fraction in (0, 1], written 0.1 or 10%."""
    value_text = text.strip()
    percent = value_text.endswith("%")
    try:
        value = float(value_text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number")
    if percent:
        value /= 100
    if not 0 < value <= 1:
        hint = f" (for {value:g}% write {value / 100:g} or {value:g}%)" if 1 < value <= 100 else ""
        raise argparse.ArgumentTypeError(f"must be above 0 and at most 1{hint}")
    return value


def encoding(text: str) -> str:
    """An argparse type: a text encoding Python knows."""
    try:
        return check_encoding(text)
    except SimcoreError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def measures(text: str) -> list[str]:
    """An argparse type: a comma-separated list of known measures."""
    try:
        return parse_measures(text)
    except SimcoreError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def field_name(text: str) -> str:
    """An argparse type: a JSONL field or CSV column name."""
    if not text.strip() or "\0" in text or len(text) > 1000:
        raise argparse.ArgumentTypeError("give the name of the field or column holding the text")
    return text


def storage_options(text: str) -> Any:
    """An argparse type: fsspec storage options as a JSON object (never echoed: it may hold credentials)."""
    from ..corpora.remote import parse_storage_options

    try:
        return parse_storage_options(text)
    except SimcoreError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def path_text(text: str) -> str:
    """An argparse type: a non-empty path without NUL characters."""
    if not text.strip():
        raise argparse.ArgumentTypeError("give a path (it is empty)")
    if "\0" in text:
        raise argparse.ArgumentTypeError("the path contains a NUL character")
    return text


def check_out(path: str, suffixes: tuple[str, ...] = (), flag: str = "--out") -> Path:
    """An output file that can be written: not a directory, parent created, suffix one of ``suffixes``.

    Checked before any work starts, so a long run is never lost to a typo in the output name.
    """
    out = Path(path)
    if not path.strip() or out.name in ("", ".", ".."):
        raise OutputError(f"{flag} {path!r}: give a file name")
    if suffixes and not out.name.lower().endswith(suffixes):
        names = ", ".join(suffixes[:-1]) + (" or " if len(suffixes) > 1 else "") + suffixes[-1]
        raise OutputError(f"{flag} {path}: use a {names} file name")
    if out.is_dir():
        raise OutputError(f"{flag} {path} is a directory; give a file name inside it")
    if out.exists() and not out.is_file():
        raise OutputError(f"{flag} {path} is not a regular file (a device or FIFO); give a file name")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{flag} {path}: cannot create its folder ({exc.strerror or exc})") from None
    if not os.access(out.parent, os.W_OK):
        raise OutputError(f"{flag} {path}: the folder {out.parent} is not writable")
    return out


def write_text(path: Path | str, text: str) -> None:
    """Write a whole file at once (a temporary file renamed into place): never half a file."""
    write_text_atomic(path, text)


def check_names(corpora: Any) -> None:
    """Refuse, before any work, a corpus whose name cannot be written as UTF-8 (a file name that is not UTF-8).

    Every other character a file name can hold (carriage return, tab, escapes) is kept exactly.
    """
    for corpus in corpora:
        try:
            corpus.name.encode("utf-8")
        except UnicodeEncodeError:
            where = getattr(corpus, "path", None) or getattr(corpus, "train", corpus.name)
            raise CorpusError(f"{os.fsdecode(where)}: the file name is not valid UTF-8, so it cannot be "
                              "written into the results as it is; rename the file") from None


def no_clobber(outputs: dict[str, str | Path | None], inputs: dict[str, Any], globs: dict[str, Any] | None = None) -> None:
    """Refuse an output that is one of the command's inputs (see simcore.utils.output_paths)."""
    refuse_overwriting_inputs(outputs, inputs, globs)


def language_choice(text: str) -> tuple[str | None, str]:
    """An argparse type for ``--language``: ``CODE`` (every corpus) or ``NAME=CODE`` (one corpus), the code
    checked against the languages simcore knows (ISO 639-1, or 639-3 where there is no shorter one)."""
    from ..corpora.lang.detect import validate_language
    from ..utils.errors import InvalidArgument

    name, _, code = text.rpartition("=")
    try:
        return (name or None), validate_language(code)
    except InvalidArgument as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def with_languages(corpora: list[Any], choices: list[tuple[str | None, str]] | None) -> list[Any]:
    """The corpora with ``--language`` applied: a named corpus's choice wins over one for every corpus."""
    import dataclasses

    from ..utils.errors import InvalidArgument

    if not choices:
        return corpora
    names = {c.name for c in corpora}
    unknown = sorted({n for n, _ in choices if n is not None and n not in names})
    if unknown:
        raise InvalidArgument(f"--language names no corpus called {', '.join(map(repr, unknown))}; "
                              f"the corpora are {', '.join(sorted(names))}"[:400])
    every = [code for n, code in choices if n is None]
    named = {n: code for n, code in choices if n is not None}
    out = []
    for corpus in corpora:
        code = named.get(corpus.name, every[-1] if every else None)
        out.append(corpus if code is None or corpus.problem is not None
                   else dataclasses.replace(corpus, language=code, _guess=[]))
    return out
