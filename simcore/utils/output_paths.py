"""Outputs that must not touch inputs, and files written whole with the permissions a normal file gets.

Every command names its outputs and inputs to :func:`refuse_overwriting_inputs` before any work:
an output that is an input (the same path, a symbolic link to it, a hard link to it), or that lies
inside an input folder read as corpora, or that is one of the files an input pattern (``--source-glob``)
matches, is refused with one line. Comparing both resolved paths and (device, inode) catches every kind
of link; folders are walked (bounded) for hard links, and patterns are expanded as the readers expand
them (:mod:`simcore.corpora.globbing`), so ``**``, links to folders and character classes are covered.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import glob
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from ..corpora.globbing import glob_files
from .errors import DiskFull, OutputError, SimcoreError

MAX_WALK = 100_000  # entries of an input folder looked at for hard links (a bigger folder: paths only)
MAX_GLOB_FILES = 20_000  # files one input pattern may match (as many as one corpus folder may hold)

PathLike = str | os.PathLike


def _resolved(path: PathLike) -> Path:
    try:
        return Path(os.path.abspath(os.path.expanduser(os.fspath(path)))).resolve(strict=False)
    except (OSError, RuntimeError, ValueError):  # a link loop: the absolute path, unresolved
        return Path(os.path.abspath(os.fspath(path)))


def _identity(path: PathLike) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_dev, info.st_ino


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def _walk(folder: Path) -> tuple[set[Path], set[tuple[int, int]]]:
    """Every folder (resolved, links followed once) and every file identity under ``folder``, bounded."""
    folders: set[Path] = set()
    files: set[tuple[int, int]] = set()
    seen: set[tuple[int, int]] = set()
    stack = [folder]
    count = 0
    while stack and count < MAX_WALK:
        current = stack.pop()
        ident = _identity(current)
        if ident is None or ident in seen:
            continue
        seen.add(ident)
        folders.add(_resolved(current))
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    count += 1
                    if count >= MAX_WALK:
                        break
                    try:
                        if entry.is_dir(follow_symlinks=True):
                            stack.append(Path(entry.path))
                        else:
                            info = entry.stat(follow_symlinks=True)
                            files.add((info.st_dev, info.st_ino))
                    except OSError:
                        continue
        except OSError:
            continue
    return folders, files


def _flat(inputs: Mapping[str, PathLike | Iterable[PathLike] | None]) -> Iterator[tuple[str, str]]:
    for flag, given in inputs.items():
        if given is None:
            continue
        if not isinstance(given, (str, os.PathLike)) and not isinstance(given, (list, tuple, set)):
            continue  # a remote input (a RemoteFile) is never a local output
        values = [given] if isinstance(given, (str, os.PathLike)) else list(given)
        for value in values:
            if isinstance(value, (str, os.PathLike)) and str(value).strip() and "\0" not in str(value):
                yield flag, os.fspath(value)


def refuse_overwriting_inputs(outputs: Mapping[str, PathLike | None],
                              inputs: Mapping[str, PathLike | Iterable[PathLike] | None],
                              globs: Mapping[str, Iterable[str]] | None = None) -> None:
    """Raise OutputError when an output is an input, a link to one, or lies inside an input folder.

    ``outputs`` and ``inputs`` map an option's flag (``--out``) to its path(s); ``globs`` maps a flag
    to shell patterns of input files (``--source-glob``, ``NAME=PATTERN`` or a bare pattern): an output that
    is one of the files a pattern matches, or that a pattern would match once written, is refused. Two
    outputs naming one file are refused too.
    """
    outs = [(flag, os.fspath(p)) for flag, p in outputs.items()
            if p is not None and str(p).strip() and "\0" not in str(p)]
    walked: dict[str, tuple[set[Path], set[tuple[int, int]]]] = {}
    patterns_matched = _patterns(globs)
    for i, (flag, out) in enumerate(outs):
        out_path, out_id = _resolved(out), _identity(out)
        for other_flag, other in outs[:i]:
            if _resolved(other) == out_path or (out_id is not None and _identity(other) == out_id):
                raise OutputError(f"{flag} {out} and {other_flag} {other} name the same file; give two file names")
        for in_flag, given in _flat(inputs):
            in_path, in_id = _resolved(given), _identity(given)
            if in_path == out_path or (out_id is not None and out_id == in_id):
                raise OutputError(f"{flag} {out} is the input {in_flag} {given}; writing it would destroy the "
                                  "input, give another file name")
            if not os.path.isdir(given):
                continue
            if _inside(out_path, in_path):
                raise OutputError(f"{flag} {out} lies inside the input folder {in_flag} {given}, which is read "
                                  "as input; write it elsewhere")
            if given not in walked:
                walked[given] = _walk(Path(given))
            folders, files = walked[given]
            if any(_inside(out_path, folder) for folder in folders) or (out_id is not None and out_id in files):
                raise OutputError(f"{flag} {out} is (or is inside) a file read from the input folder {in_flag} "
                                  f"{given}; write it elsewhere")
        for in_flag, pattern, matched in patterns_matched:
            for file in matched:
                if _resolved(file) == out_path or (out_id is not None and _identity(file) == out_id):
                    raise OutputError(f"{flag} {out} is the file {file} matched by the input {in_flag} {pattern}; "
                                      "writing it would destroy that file, write it elsewhere")
            if _would_match(out, pattern):
                raise OutputError(f"{flag} {out} matches the input {in_flag} {pattern}; write it elsewhere")


def _patterns(globs: Mapping[str, Iterable[str]] | None) -> list[tuple[str, str, list[Path]]]:
    """(flag, pattern, every file it matches now) for each ``NAME=PATTERN`` or bare pattern given."""
    found = []
    for in_flag, patterns in (globs or {}).items():
        for given in patterns:
            pattern = given.partition("=")[2].strip() if "=" in given else given
            if pattern and "\0" not in pattern:
                found.append((in_flag, pattern, glob_files(pattern, MAX_GLOB_FILES)))
    return found


def _would_match(out: str, pattern: str) -> bool:
    """Whether a file written at ``out`` would be matched by ``pattern`` (its literal folder resolved too)."""
    absolute = os.path.abspath(os.path.expanduser(pattern))
    parts = absolute.split("/")
    first = next((i for i, p in enumerate(parts) if glob.has_magic(p)), len(parts))
    literal_root = _resolved("/".join(parts[:first]) or "/")
    resolved_pattern = os.path.join(str(literal_root), *parts[first:])
    names = {str(_resolved(out)), os.path.abspath(os.path.expanduser(out))}
    return any(fnmatch.fnmatch(name, p) for name in names for p in (absolute, resolved_pattern))


def normal_mode() -> int:
    """The permissions a new file gets here (0666 less the umask), read without changing the umask."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    mask = os.umask(0o022)  # no /proc: read it by setting it (and put it back at once)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def atomic_file(path: PathLike, mode: str = "w", **open_args: Any) -> Iterator[IO[Any]]:
    """A file handle whose content replaces ``path`` only when the block ends without an error.

    Written to a temporary file beside ``path`` and renamed into place, so a full disk or a crash
    leaves the earlier file as it was, never half of it; the new file has the usual permissions.
    """
    path = Path(path)
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:50]}.", suffix=".part", dir=path.parent)
        os.fchmod(fd, normal_mode())
        with os.fdopen(fd, mode, **open_args) as handle:
            yield handle
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise output_error(exc, path) from None
    except UnicodeEncodeError as exc:
        raise OutputError(f"cannot write {path}: the text holds {exc.object[exc.start:exc.end]!r}, which is not "
                          "valid Unicode (a file name that is not UTF-8?); rename that file") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def write_text_atomic(path: PathLike, text: str) -> None:
    """Write a whole text file at once (UTF-8, line ends as given)."""
    with atomic_file(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def output_error(exc: OSError, path: PathLike) -> SimcoreError:
    """A one-line message for an OSError met while writing ``path``."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return DiskFull(f"the disk holding {path} is full; free some space and run again")
    return OutputError(f"cannot write {path} ({exc.strerror or exc})")
