"""The files a shell pattern (``--source-glob``, ``**`` included) names, found in bounded work.

Python's :func:`glob.glob` follows a symbolic link back to a parent folder until the system's
link limit (a folder linking to ``..`` lists each file 41 times) and walks ``/proc`` for ever.
Here every (folder, place in the pattern) pair is visited once, each file is listed once however
many links reach it, the walk stops past :data:`MAX_FOLDERS` folders or ``MAX_FILES`` files, and
a pattern rooted at ``/`` or a pseudo file system (or a link into one) is refused up front.
Otherwise the matches are :func:`glob.glob`'s: ``*``, ``?`` and ``[...]`` within one name, ``**``
across folders, names starting with a dot only when the pattern's part does too.
"""

from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Iterator
from pathlib import Path

from ..utils.errors import CorpusError
from .listing import refuse_system_path

MAX_FOLDERS = 100_000  # folders one pattern may walk before it is refused as too wide


def _is_magic(part: str) -> bool:
    return glob.has_magic(part)


def _split(pattern: str) -> tuple[Path, list[str]]:
    """The literal folder a pattern starts from and its remaining parts (the first with a wildcard on)."""
    parts = pattern.split("/")
    absolute = pattern.startswith("/")
    parts = [p for p in parts if p]
    first = next((i for i, p in enumerate(parts) if _is_magic(p)), len(parts))
    root = Path("/" if absolute else ".").joinpath(*parts[:first])
    return root, parts[first:]


def _refuse_system(path: Path, pattern: str, via: str = "") -> None:
    try:
        refuse_system_path(path)
    except CorpusError:
        how = f" through the link {via}" if via else ""
        raise CorpusError(f"the pattern {pattern} reaches the system location {path}{how}; give the folder "
                          "holding the corpus files, e.g. /data/crawl/part-*.gz") from None


def glob_files(pattern: str, max_files: int) -> list[Path]:
    """Every regular file matching ``pattern`` (``~`` expanded), sorted, each file once.

    Raises CorpusError for a pattern over ``/`` or a pseudo file system, or one that walks more
    than :data:`MAX_FOLDERS` folders or matches more than ``max_files`` files.
    """
    if not isinstance(pattern, str) or not pattern.strip() or "\0" in pattern:
        raise CorpusError(f"{pattern!r} is not a file pattern")
    pattern = os.path.expanduser(pattern)
    if pattern.endswith("/"):  # names folders only: no files
        return []
    root, parts = _split(pattern)
    if not parts:  # no wildcard: the path itself
        return [root] if root.is_file() else []
    _refuse_system(root, pattern)
    found: dict[tuple[int, int], Path] = {}
    seen: set[tuple[int, int, int]] = set()  # (device, inode, place in the pattern) of folders walked
    for path, identity in _walk(root, parts, 0, seen, pattern):
        found[identity] = min(found.get(identity, path), path)  # one file under several names: the first in order
        if len(found) > max_files:
            raise CorpusError(f"the pattern {pattern} matches more than {max_files:,} files; give a narrower one")
    return sorted(found.values())


def _walk(folder: Path, parts: list[str], at: int, seen: set[tuple[int, int, int]],
          pattern: str) -> Iterator[tuple[Path, tuple[int, int]]]:
    """(path, (device, inode)) of each file under ``folder`` matching ``parts[at:]``."""
    try:
        info = folder.stat()
    except OSError:
        return
    state = (info.st_dev, info.st_ino, at)
    if state in seen:
        return
    seen.add(state)
    if len(seen) > MAX_FOLDERS:
        raise CorpusError(f"the pattern {pattern} walks more than {MAX_FOLDERS:,} folders; give a narrower one")
    part, last = parts[at], at == len(parts) - 1
    if part == "**":
        if not last:
            yield from _walk(folder, parts, at + 1, seen, pattern)  # ** matching no folder
        for entry in _entries(folder, hidden=False):
            if _is_dir(entry):
                _check_link(entry, pattern)
                yield from _walk(Path(entry.path), parts, at, seen, pattern)
            elif last:
                yield from _file(entry)
        return
    if not _is_magic(part):  # a plain name: looked up, not listed
        yield from _literal(folder / part, parts, at, seen, pattern)
        return
    entries = [e for e in _entries(folder, hidden=part.startswith(".")) if fnmatch.fnmatchcase(e.name, part)]
    for entry in entries:
        if last:
            yield from _file(entry)
        elif _is_dir(entry):
            _check_link(entry, pattern)
            yield from _walk(Path(entry.path), parts, at + 1, seen, pattern)


def _literal(path: Path, parts: list[str], at: int, seen: set[tuple[int, int, int]],
             pattern: str) -> Iterator[tuple[Path, tuple[int, int]]]:
    try:
        if at == len(parts) - 1:
            if path.is_file():
                info = path.stat()
                yield path, (info.st_dev, info.st_ino)
        elif path.is_dir():
            if path.is_symlink():
                _refuse_system(path, pattern, via=str(path))
            yield from _walk(path, parts, at + 1, seen, pattern)
    except OSError:
        return


def _entries(folder: Path, hidden: bool) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as listing:
            return sorted((e for e in listing if hidden or not e.name.startswith(".")), key=lambda e: e.name)
    except OSError:  # unreadable folders are skipped, as glob skips them
        return []


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _check_link(entry: os.DirEntry[str], pattern: str) -> None:
    """A folder reached through a link may lead anywhere: never into /proc, /sys, /dev or /."""
    if entry.is_symlink():
        _refuse_system(Path(entry.path), pattern, via=entry.path)


def _file(entry: os.DirEntry[str]) -> Iterator[tuple[Path, tuple[int, int]]]:
    try:
        if entry.is_file():
            info = entry.stat()
            yield Path(entry.path), (info.st_dev, info.st_ino)
    except OSError:
        return
