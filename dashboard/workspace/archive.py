"""A workspace as one zip to download and open again: JSON and CSV only, member names from a fixed
pattern (they never choose a path), sizes capped, nothing unpickled or executed."""

from __future__ import annotations

import io
import json
import zipfile

from .format import _MEMBER, MANIFEST, MAX_MEMBER_BYTES, MAX_MEMBERS, MAX_ZIP_BYTES, WorkspaceError, parse_manifest
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
    except (zipfile.BadZipFile, ValueError, OSError):
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
            if not _MEMBER.match(info.filename):
                raise WorkspaceError(f"the workspace file holds {info.filename[:80]!r}, which a workspace never has")
            if info.file_size > MAX_MEMBER_BYTES:
                raise WorkspaceError(f"{info.filename} is too large")
            total += info.file_size
            if total > 2 * MAX_ZIP_BYTES:
                raise WorkspaceError("the workspace file expands to too much data")
            try:
                with z.open(info) as f:
                    content = f.read(MAX_MEMBER_BYTES + 1)
            except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError) as exc:
                raise WorkspaceError(f"{info.filename} cannot be read from the workspace file ({exc})") from None
            if len(content) > MAX_MEMBER_BYTES:
                raise WorkspaceError(f"{info.filename} is too large")
            read += len(content)  # what was read, not what the header claims
            if read > 2 * MAX_ZIP_BYTES:
                raise WorkspaceError("the workspace file expands to too much data")
            files[info.filename] = content
    parse_manifest(files)
    return files
