"""A workspace as one zip to download and open again: JSON and CSV only, member names from a fixed
pattern (they never choose a path), sizes capped, nothing unpickled or executed."""

from __future__ import annotations

import hashlib
import io
import json
import lzma
import struct
import zipfile
import zlib
from typing import Any

from .format import MANIFEST, MAX_MEMBER_BYTES, MAX_MEMBERS, MAX_ZIP_BYTES, MEMBER_NAME, WorkspaceError, parse_manifest
from .opening import Locator


def to_zip(files: dict[str, bytes], locator: Locator | None = None) -> bytes:
    """The workspace as one zip of its JSON and CSV files, with the bytes of uploaded corpora when found."""
    files = dict(files)
    if locator is not None:
        manifest = parse_manifest(files)
        described = [d for role in ("source", "target") for d in manifest.get("corpora", {}).get(role, [])]
        described += [s.get("pool", {}) for s in manifest.get("selections", [])]
        for d in described:
            found = locator.upload_bytes(d)
            if found is not None:
                d["sha256"] = found[0]
                files[f"uploads/{found[0]}"] = found[1]
        files[MANIFEST] = json.dumps(manifest, indent=1, ensure_ascii=False).encode("utf-8")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name in sorted(files):
            z.writestr(name, files[name])
    return buffer.getvalue()


def read_zip(data: bytes) -> dict[str, bytes]:
    """The files of a workspace zip, checked: known member names only, sizes capped, nothing run or unpickled."""
    if len(data) > MAX_ZIP_BYTES:
        raise WorkspaceError(f"the workspace file is over {MAX_ZIP_BYTES // 1_000_000} MB")
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError, NotImplementedError, RuntimeError, EOFError, struct.error):
        raise WorkspaceError("this is not a workspace file (not a zip archive)") from None
    with z:
        members = z.infolist()
        if len(members) > MAX_MEMBERS:
            raise WorkspaceError("the workspace file holds too many files")
        files: dict[str, bytes] = {}
        total = read = 0
        for info in members:
            if info.is_dir():
                continue
            if not MEMBER_NAME.fullmatch(info.filename):
                raise WorkspaceError(f"the workspace file holds {info.filename[:80]!r}, which a workspace never has")
            if info.filename in files:  # otherwise the last copy would silently win
                raise WorkspaceError(f"the workspace file holds {info.filename} twice")
            if info.file_size > MAX_MEMBER_BYTES:
                raise WorkspaceError(f"{info.filename} is too large")
            total += info.file_size
            if total > 2 * MAX_ZIP_BYTES:
                raise WorkspaceError("the workspace file expands to too much data")
            try:
                with z.open(info) as f:
                    content = f.read(MAX_MEMBER_BYTES + 1)
            except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError, zlib.error, ValueError,
                    EOFError, lzma.LZMAError) as exc:  # damaged compressed data (zlib, bz2, lzma)
                raise WorkspaceError(f"{info.filename} cannot be read from the workspace file: it is damaged "
                                     f"({type(exc).__name__}: {str(exc)[:120]})") from None
            if len(content) > MAX_MEMBER_BYTES:
                raise WorkspaceError(f"{info.filename} is too large")
            read += len(content)  # what was read, not what the header claims
            if read > 2 * MAX_ZIP_BYTES:
                raise WorkspaceError("the workspace file expands to too much data")
            files[info.filename] = content
    _check_members(files, parse_manifest(files))
    return files


def _named(manifest: dict[str, Any]) -> set[str]:
    """The tables a manifest names (its sha256 map, its matrices, results and probe entries)."""
    tables = manifest.get("tables")
    names = {k for k in tables if isinstance(k, str)} if isinstance(tables, dict) else set()
    entries = manifest.get("matrices") if isinstance(manifest.get("matrices"), list) else []
    found = [e.get(key) for e in entries if isinstance(e, dict) for key in ("file", "raw")]
    found += [e.get("file") for e in (manifest.get("results"), manifest.get("probe")) if isinstance(e, dict)]
    return names | {n for n in found if isinstance(n, str)}  # a list or a dict there is no name


def _check_members(files: dict[str, bytes], manifest: dict[str, Any]) -> None:
    """Every table is text the manifest names, every uploaded corpus the bytes its name's sha256 says."""
    named = _named(manifest)
    for name, content in files.items():
        if name.startswith("uploads/"):
            if hashlib.sha256(content).hexdigest() != name.removeprefix("uploads/"):
                raise WorkspaceError(f"{name} in the workspace file is damaged (its content has another sha256)")
        elif name != MANIFEST:
            if name not in named:
                raise WorkspaceError(f"the workspace file holds {name}, which its workspace.json does not name")
            try:
                text = content.decode("utf-8")
            except UnicodeDecodeError:
                text = "\0"
            if "\0" in text:
                raise WorkspaceError(f"{name} in the workspace file is not a text table (binary data)")
