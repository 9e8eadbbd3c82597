"""Which files make a corpus, and which entries of a folder are corpora: one answer for the CLI, the
library and the dashboard.

:func:`corpus_files` lists the files of one corpus (a file, a folder read recursively, or a remote
object or prefix); :func:`corpus_entries` lists the entries of a folder of corpora, each one corpus.
Hidden files and folders are skipped, a Hub folder's or ``datasets`` export's metadata is never read
as text, and a folder may hold at most :data:`MAX_FILES` files.
"""

from __future__ import annotations

import stat
from pathlib import Path

from ..utils.errors import CorpusError
from .formats import is_dataset_metadata
from .remote import RemoteFile, check_objects, list_objects

MAX_FILES = 20_000  # files in one corpus folder
SYSTEM_PATHS = ("/proc", "/sys", "/dev")


def refuse_system_path(path: Path, name: str = "") -> None:
    """Refuse the file system's root and its pseudo file systems (endless files, no corpora there)."""
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):
        return
    if resolved.is_relative_to("/dev/shm"):  # a RAM disk: ordinary files
        return
    if resolved == Path(resolved.anchor) or any(resolved.is_relative_to(p) for p in SYSTEM_PATHS):
        label = f"{name}: " if name else ""
        raise CorpusError(f"{label}{path} is a system location, not a corpus; give a corpus file or folder")


def hidden(path: Path, root: Path) -> bool:
    """Whether ``path`` is hidden below ``root`` (its name, or a folder on the way, starts with a dot)."""
    return any(part.startswith(".") for part in path.relative_to(root).parts)


def corpus_files(path: Path | RemoteFile, name: str, max_bytes: int | None = None) -> list[Path | RemoteFile]:
    """The files of the corpus ``name`` at ``path``, sorted: the file itself, or every regular file below
    the folder except hidden ones and dataset metadata; a CorpusError when there are none, more than
    :data:`MAX_FILES`, or one is empty, not a regular file or over ``max_bytes``."""
    if isinstance(path, RemoteFile):  # listed once, sizes and versions with it; nothing read
        return list(check_objects(list_objects(path, name, MAX_FILES), path, name, max_bytes))
    if not path.exists():
        raise CorpusError(f"{name}: {path} does not exist")
    refuse_system_path(path, name)
    if path.is_file():
        files: list[Path | RemoteFile] = [path]
    elif path.is_dir():
        files = []
        try:
            for p in path.rglob("*"):
                if p.is_file() and not hidden(p, path):
                    files.append(p)
                    if len(files) > MAX_FILES:
                        raise CorpusError(f"{name}: {path} holds more than {MAX_FILES:,} files; "
                                          "give the folder of one corpus")
        except OSError as exc:
            raise CorpusError(f"{name}: cannot list {path} ({exc.strerror or exc})") from exc
        files.sort()
        files = [f for f in files if not is_dataset_metadata(f)]  # a Hub folder's or `datasets` export's
    else:
        raise CorpusError(f"{name}: {path} is neither a regular file nor a directory "
                          "(devices, FIFOs and sockets are not read)")
    if not files:
        raise CorpusError(f"{name}: the directory {path} holds no files")
    for f in files:
        info = f.stat()
        if not stat.S_ISREG(info.st_mode):
            raise CorpusError(f"{name}: {f.name} is not a regular file (devices and FIFOs are not read)")
        size = info.st_size
        if size == 0:
            raise CorpusError(f"{name}: {f.name} is empty")
        if max_bytes is not None and size > max_bytes:
            raise CorpusError(f"{name}: {f.name} is {size / 1e6:.1f} MB, over the limit of "
                              f"{max_bytes / 1e6:.0f} MB")
    return files


def corpus_entries(directory: Path) -> list[Path]:
    """The entries of a folder of corpora (each file or subfolder one corpus), sorted, hidden ones skipped;
    a CorpusError when it cannot be listed or holds none."""
    refuse_system_path(directory)
    if not directory.is_dir():
        raise CorpusError(f"{directory} is not a directory")
    try:
        entries = sorted(p for p in directory.iterdir() if not p.name.startswith("."))
    except OSError as exc:
        raise CorpusError(f"cannot list {directory} ({exc.strerror or exc})") from exc
    if not entries:
        raise CorpusError(f"{directory} holds no corpora")
    return entries
