"""Server-side paths: only inside the data roots configured for this app.

The roots come from ``$SIMCORE_DATA_ROOTS`` (separated by ``os.pathsep``); by default the bundled
``sample_data`` and ``../shared/data`` when it exists. A path typed by a user is taken relative to a
root (or absolute), must not contain ``..``, and must resolve (symlinks followed) inside a root.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlsplit

from simcore.utils.errors import SimcoreError

REPO = Path(__file__).resolve().parent.parent
SAMPLE_DATA = REPO / "sample_data"
TABLE3 = SAMPLE_DATA / "results" / "dai2019_table3.csv"
# A compressed file a visitor brings (an upload, a workspace) may not expand past this (decompression
# bombs); big corpora belong on the server's disk.
UPLOAD_DECOMPRESSED_LIMIT = 500_000_000


def remote_roots() -> list[str]:
    """URL prefixes (``$SIMCORE_REMOTE_ROOTS``, separated by spaces) corpora may be added from; none by default.

    A shared dashboard reads with the server's credentials (its environment and config files), so only
    the prefixes its operator lists are offered, never any URL a visitor types.
    """
    from simcore.corpora.remote import is_url

    return [p.rstrip("/") + "/" for p in os.environ.get("SIMCORE_REMOTE_ROOTS", "").split() if is_url(p)]


def resolve_server_url(text: str, roots: list[str] | None = None) -> str:
    """``text`` when it is a URL under one of the remote roots, or a SimcoreError saying why not."""
    from simcore.corpora.remote import display_url

    roots = remote_roots() if roots is None else roots
    url = text.strip()
    shown = display_url(url)
    if not roots:
        raise SimcoreError("no remote location is configured on this server (set SIMCORE_REMOTE_ROOTS)")
    plain = _decoded(url)  # %2e%2e is '..' to the server that answers: checked as it will be read
    if ("/../" in plain + "/" or "/./" in plain + "/" or plain.endswith("/..") or "\\" in plain
            or any(c.isspace() or c == "\0" for c in plain)):
        raise SimcoreError(f"{shown}: give a plain URL inside one of the remote locations")
    inside = [root for root in roots if plain == _decoded(root).rstrip("/") or plain.startswith(_decoded(root))]
    if not inside:
        raise SimcoreError(f"{shown} is outside the remote locations this server allows ({', '.join(roots)})")
    if plain.lower().startswith("file://"):  # a local root: no link may lead out of it
        root = Path(urlsplit(_decoded(inside[0])).path)
        try:
            resolve_server_path(urlsplit(plain).path, [root.resolve(strict=True)])
        except OSError:
            raise SimcoreError(f"{shown}: its remote location does not exist on this server") from None
    return url


def _decoded(url: str) -> str:
    """``url`` with its percent escapes decoded until none is left (``%252e`` is ``%2e`` is ``.``)."""
    for _ in range(8):
        plain = unquote(url)
        if plain == url:
            break
        url = plain
    return url


def data_roots() -> list[Path]:
    """The directories server-side paths may point into (resolved, existing ones only)."""
    env = os.environ.get("SIMCORE_DATA_ROOTS")
    if env is not None:
        candidates = [Path(p).expanduser() for p in env.split(os.pathsep) if p.strip()]
    else:
        candidates = [SAMPLE_DATA, REPO.parent / "shared" / "data"]
    roots = []
    for c in candidates:
        try:
            resolved = c.resolve(strict=True)
        except OSError:
            continue
        if resolved.is_dir() and resolved not in roots:
            roots.append(resolved)
    return roots


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def resolve_server_path(text: str, roots: list[Path] | None = None) -> Path:
    """The file or directory ``text`` names inside a data root, or a SimcoreError saying why not."""
    roots = data_roots() if roots is None else roots
    text = (text or "").strip()
    if not roots:
        raise SimcoreError("no data directory is configured on this server (set SIMCORE_DATA_ROOTS)")
    if not text:
        raise SimcoreError("type a path inside one of the data directories")
    if "\0" in text:
        raise SimcoreError("the path contains a NUL character")
    raw = Path(text).expanduser() if text.startswith("~") else Path(text)
    if ".." in raw.parts:
        raise SimcoreError("paths may not contain '..'; give a path inside one of the data directories")
    candidates = [raw] if raw.is_absolute() else [root / raw for root in roots]
    for candidate in candidates:
        try:
            resolved = candidate.resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        if not _inside(resolved, roots):
            raise SimcoreError(f"{text} is outside the data directories this server allows "
                               f"({', '.join(str(r) for r in roots)}); whoever starts the server can add "
                               "directories to SIMCORE_DATA_ROOTS (separated by ':')")
        if resolved.is_dir():
            for entry in resolved.rglob("*"):
                if not entry.is_symlink():
                    continue
                try:
                    target = entry.resolve()
                except (OSError, RuntimeError):
                    continue  # a link loop leads to no data; the readers skip it
                if not _inside(target, roots):
                    raise SimcoreError(f"{text} holds a link to a place outside the data directories")
        return resolved
    raise SimcoreError(f"{text} was not found in the data directories ({', '.join(str(r) for r in roots)})")


def browse(roots: list[Path] | None = None, depth: int = 2, limit: int = 300) -> list[str]:
    """Files and directories under the roots (relative names first by root), for a picker."""
    roots = data_roots() if roots is None else roots
    found: list[str] = []
    for root in roots:
        stack = [(root, 0)]
        while stack and len(found) < limit:
            folder, level = stack.pop(0)
            try:
                entries = sorted(p for p in folder.iterdir() if not p.name.startswith("."))
            except OSError:
                continue
            for entry in entries:
                if entry.is_symlink():
                    continue
                found.append(str(entry))
                if entry.is_dir() and level + 1 < depth:
                    stack.append((entry, level + 1))
    return found[:limit]
