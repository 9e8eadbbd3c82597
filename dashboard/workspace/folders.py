"""Workspace folders on disk: written atomically (a temporary file renamed into place) and only when their
content changed, locked while one session reads, merges and writes, listed, renamed and deleted by id."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .format import MANIFEST, MEMBER_NAME, WorkspaceError, clean_name, valid_id


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class Workspaces:
    """The workspace folders under one root (``<store root>/workspaces``)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self._written: dict[tuple[str, str], str] = {}  # (id, file) -> sha256 of what is on disk

    def folder(self, ws_id: str) -> Path:
        if not valid_id(ws_id):
            raise WorkspaceError("that is not a workspace id")
        return self.root / ws_id

    def exists(self, ws_id: str) -> bool:
        return valid_id(ws_id) and (self.root / ws_id / MANIFEST).is_file()

    def write(self, ws_id: str, files: dict[str, bytes]) -> int:
        """Write the files that changed (atomically) and remove tables no longer named; returns how many were written."""
        folder = self.folder(ws_id)
        folder.mkdir(parents=True, exist_ok=True)
        written = 0
        for name, data in files.items():
            if not MEMBER_NAME.fullmatch(name) or name.startswith("uploads/"):
                raise WorkspaceError(f"{name} is not a workspace file")
            sha = hashlib.sha256(data).hexdigest()
            if self._written.get((ws_id, name)) == sha and (folder / name).is_file():
                continue
            _atomic_write(folder / name, data)
            self._written[(ws_id, name)] = sha
            written += 1
        for old in folder.glob("*.csv"):
            if old.name not in files:
                old.unlink(missing_ok=True)
                self._written.pop((ws_id, old.name), None)
        return written

    def read(self, ws_id: str) -> dict[str, bytes]:
        """The workspace's files (the manifest and the tables it names)."""
        folder = self.folder(ws_id)
        if not (folder / MANIFEST).is_file():
            raise WorkspaceError("this workspace does not exist (deleted, or the address is wrong)")
        files = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and MEMBER_NAME.fullmatch(p.name)}
        for name, data in files.items():
            self._written[(ws_id, name)] = hashlib.sha256(data).hexdigest()
        return files

    def manifest_bytes(self, ws_id: str) -> bytes | None:
        """The manifest as it is on disk now (None when the workspace is gone): cheap to compare every run."""
        try:
            return (self.folder(ws_id) / MANIFEST).read_bytes()
        except OSError:
            return None

    @contextlib.contextmanager
    def lock(self, ws_id: str) -> Iterator[None]:
        """Hold the workspace while one session reads, merges and writes it (two tabs of one workspace)."""
        folder = self.folder(ws_id)
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / ".lock", "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def manifest(self, ws_id: str) -> dict[str, Any]:
        try:
            return json.loads((self.folder(ws_id) / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise WorkspaceError(f"this workspace cannot be read ({exc})") from None
        except RecursionError:
            raise WorkspaceError("this workspace cannot be read (workspace.json is nested too deeply)") from None

    def rename(self, ws_id: str, name: str) -> str:
        name = clean_name(name)
        manifest = self.manifest(ws_id)
        manifest["name"] = name
        data = json.dumps(manifest, indent=1, ensure_ascii=False).encode("utf-8")
        _atomic_write(self.folder(ws_id) / MANIFEST, data)
        self._written[(ws_id, MANIFEST)] = hashlib.sha256(data).hexdigest()
        return name

    def delete(self, ws_id: str) -> None:
        folder = self.folder(ws_id)
        shutil.rmtree(folder, ignore_errors=True)
        self._written = {k: v for k, v in self._written.items() if k[0] != ws_id}

    def changed(self, ws_id: str) -> float:
        """When a file of the workspace was last written (seconds since the epoch)."""
        try:
            return max(p.stat().st_mtime for p in self.folder(ws_id).iterdir() if p.is_file())
        except (OSError, ValueError):
            return 0.0

    def describe(self, ids: list[str]) -> list[dict[str, Any]]:
        """Name, last change and contents of each of these workspaces that still exists (for a list)."""
        rows = []
        for ws_id in dict.fromkeys(ids):
            if not self.exists(ws_id):
                continue
            try:
                m = self.manifest(ws_id)
            except WorkspaceError:
                continue
            corpora = m.get("corpora", {}) if isinstance(m.get("corpora"), dict) else {}
            rows.append({"id": ws_id, "name": str(m.get("name", "")), "changed": self.changed(ws_id),
                         "sources": len(corpora.get("source", []) or []), "targets": len(corpora.get("target", []) or []),
                         "matrices": len(m.get("matrices", []) or [])})
        return rows
