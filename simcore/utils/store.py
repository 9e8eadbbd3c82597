"""An on-disk store of artefacts keyed by content fingerprints and options.

Artefacts (tokenized corpora, samples, vocabularies, n-gram counts, KenLM models, word
vectors, scored cells) are directories written atomically: built in a temporary directory and
renamed into place, with a manifest written last that lists every file with its size and
SHA-256, signed with a key kept in the store (HMAC-SHA256). A directory without a valid, signed
manifest is never read, so only what simcore itself wrote is ever loaded, and nothing in it is a
pickle. A lock per key makes concurrent processes build an artefact once.

Every file is hashed in full when it is first read by a process (streamed, so any size); the
result is remembered for as long as the file's inode, size and change times stay the same. A
builder killed mid-way leaves a temporary directory that the next store opened on the same root
removes, once no live process holds that key's lock.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import hmac
import json
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .errors import DiskFull, InvalidArgument, StoreError

MANIFEST = "manifest.json"
MARKER = "simcore-artefact/1"
_STORE_ENTRIES = {"tmp", "locks", "signing.key"}
_VERIFIED: dict[tuple[Any, ...], str] = {}  # (path, inode, size, mtime, ctime) -> sha256, this process
_VERIFIED_LIMIT = 100_000


def default_root() -> Path:
    """``$SIMCORE_CACHE``, else ``$XDG_CACHE_HOME/simcore``, else ``~/.cache/simcore``."""
    env = os.environ.get("SIMCORE_CACHE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "simcore" if xdg else Path.home() / ".cache" / "simcore"


def digest(*parts: Any) -> str:
    """A stable SHA-256 hex digest of JSON-serialisable parts."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_sha256(path: Path, limit: int | None = None) -> str:
    """SHA-256 of a file's bytes (its first ``limit`` bytes when given), streamed in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        remaining = limit
        while True:
            chunk = f.read(1 << 20 if remaining is None else min(1 << 20, remaining))
            if not chunk:
                break
            h.update(chunk)
            if remaining is not None:
                remaining -= len(chunk)
                if remaining <= 0:
                    break
    return h.hexdigest()


class ArtefactStore:
    """Artefact directories under ``root/<kind>/<key>``."""

    def __init__(self, root: Path | str | None = None) -> None:
        if root is not None and (not isinstance(root, (str, os.PathLike)) or not str(root) or "\0" in str(root)):
            raise InvalidArgument(f"the store's root must be a directory path, not {root!r}")
        self.root = Path(root) if root is not None else default_root()
        try:
            self._refuse_foreign_directory()
            self.root.mkdir(parents=True, exist_ok=True)
            (self.root / "tmp").mkdir(exist_ok=True)
            (self.root / "locks").mkdir(exist_ok=True)
            self._key = self._signing_key()
        except OSError as exc:
            raise StoreError(
                f"cannot use the cache directory {self.root}: {exc.strerror or exc}; "
                "set SIMCORE_CACHE to a writable directory"
            ) from exc
        self.clean_dead_builds()

    def _refuse_foreign_directory(self) -> None:
        """Refuse to turn a directory that holds other things (``/``, a home, a project) into a store."""
        if not self.root.exists():
            return
        if not self.root.is_dir():
            raise StoreError(f"the cache {self.root} is not a directory; set SIMCORE_CACHE to a directory")
        names = {p.name for p in self.root.iterdir()}
        if names and "signing.key" not in names and not names <= _STORE_ENTRIES:
            raise StoreError(
                f"{self.root} already holds other files and is not a simcore store; give an empty or new "
                "directory for the cache (e.g. ~/.cache/simcore)"
            )

    def _signing_key(self) -> bytes:
        """The store's secret (created once, readable only by its owner) that signs manifests."""
        path = self.root / "signing.key"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            for _ in range(50):
                key = path.read_bytes()
                if len(key) == 32:
                    return key
                time.sleep(0.01)  # another process is writing it
            raise StoreError(f"the store's signing key {path} is damaged; remove it (cached results will be rebuilt)") from None
        key = secrets.token_bytes(32)
        with os.fdopen(fd, "wb") as f:
            f.write(key)
        return key

    def _sign(self, manifest: dict[str, Any]) -> str:
        body = json.dumps({k: v for k, v in manifest.items() if k != "signature"}, sort_keys=True)
        return hmac.new(self._key, body.encode("utf-8"), hashlib.sha256).hexdigest()

    def path(self, kind: str, key: str) -> Path:
        return self.root / kind / key

    def get(self, kind: str, key: str) -> Path | None:
        """The artefact's directory if it exists and its manifest checks out, else None."""
        path = self.path(kind, key)
        if not path.is_dir():
            return None
        if self._verify(path, kind, key):
            return path
        shutil.rmtree(path, ignore_errors=True)
        return None

    def meta(self, path: Path) -> dict[str, Any]:
        """The metadata the builder returned for an artefact."""
        return json.loads((path / MANIFEST).read_text())["meta"]

    def build(
        self, kind: str, key: str, builder: Callable[[Path], dict[str, Any] | None],
        log: bool = True,
    ) -> Path:
        """Return the artefact, building it with ``builder(tmpdir) -> meta`` if needed.

        The builder writes its files into the temporary directory it is given; the store adds
        the manifest and renames the directory into place. A second process asking for the same
        key waits on the lock and then finds the finished artefact. ``log=False``: a fact noted on
        the way (a file's hash, its language), not a build, stays out of $SIMCORE_BUILD_LOG.
        """
        found = self.get(kind, key)
        if found is not None:
            return found
        with self._lock(key):
            found = self.get(kind, key)
            if found is not None:
                return found
            try:
                tmp = Path(tempfile.mkdtemp(prefix=f"{kind}-{key}-", dir=self.root / "tmp"))
            except OSError as exc:
                raise self._os_error(exc) from exc
            if log:
                self._log_build(kind, key)
            try:
                meta = builder(tmp) or {}
                files = self._write_manifest(tmp, kind, key, meta)
                final = self.path(kind, key)
                final.parent.mkdir(parents=True, exist_ok=True)
                os.replace(tmp, final)
                for name, info in files.items():  # just hashed: the first read need not hash again
                    with contextlib.suppress(OSError):
                        _remember_sha256(final / name, info["sha256"])
                return final
            except OSError as exc:
                raise self._os_error(exc) from exc
            finally:
                if tmp.exists():
                    shutil.rmtree(tmp, ignore_errors=True)

    def get_json(self, kind: str, key: str) -> dict[str, Any] | None:
        """A small JSON record (a scored cell), or None."""
        path = self.get(kind, key)
        return None if path is None else self.meta(path)

    def put_json(self, kind: str, key: str, record: dict[str, Any], log: bool = True) -> None:
        self.build(kind, key, lambda _tmp: record, log)

    def clear_tmp(self, older_than_s: float = 3600) -> None:
        """Remove temporary build directories left by killed processes."""
        now = time.time()
        for p in (self.root / "tmp").iterdir():
            with contextlib.suppress(OSError):
                if now - p.stat().st_mtime > older_than_s:
                    shutil.rmtree(p, ignore_errors=True)

    def clean_dead_builds(self) -> int:
        """Remove temporary directories of builders that died (no process holds their key's lock).

        Returns how many were removed. A directory of a builder still at work is left alone: its
        process holds the key's lock, which this takes only without waiting.
        """
        removed = 0
        try:
            entries = list((self.root / "tmp").iterdir())
        except OSError:
            return 0
        for entry in entries:
            key = _build_key(entry.name)
            if key is None:
                continue  # not named by this version: clear_tmp removes it once old
            try:
                fd = os.open(self.root / "locks" / f"{key}.lock", os.O_RDONLY)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue  # a live builder holds it
            try:
                shutil.rmtree(entry, ignore_errors=True)
                removed += not entry.exists()
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
        return removed

    def _log_build(self, kind: str, key: str) -> None:
        """Append ``kind key pid`` to $SIMCORE_BUILD_LOG, when set (to audit that nothing is built twice)."""
        log = os.environ.get("SIMCORE_BUILD_LOG")
        if log:
            with open(log, "a") as f:
                f.write(f"{kind} {key} {os.getpid()}\n")

    @contextlib.contextmanager
    def _lock(self, key: str) -> Iterator[None]:
        try:
            handle = open(self.root / "locks" / f"{key}.lock", "a")
        except OSError as exc:
            if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise StoreError(
                    f"the cache directory {self.root} is read-only and lacks a result that must be built; "
                    "set SIMCORE_CACHE to a writable directory"
                ) from exc
            raise self._os_error(exc) from exc
        with handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _write_manifest(self, tmp: Path, kind: str, key: str, meta: dict[str, Any]) -> dict[str, dict[str, Any]]:
        files = {}
        for p in sorted(tmp.rglob("*")):
            if p.is_file():
                size = p.stat().st_size
                files[str(p.relative_to(tmp))] = {"size": size, "sha256": file_sha256(p)}
        manifest = {"marker": MARKER, "kind": kind, "key": key, "files": files, "meta": meta}
        manifest["signature"] = self._sign(manifest)
        part = tmp / (MANIFEST + ".part")
        part.write_text(json.dumps(manifest))
        os.replace(part, tmp / MANIFEST)
        return files

    def _verify(self, path: Path, kind: str, key: str) -> bool:
        try:
            manifest = json.loads((path / MANIFEST).read_text())
            if manifest.get("marker") != MARKER or manifest.get("kind") != kind:
                return False
            if manifest.get("key") != key:
                return False
            if not hmac.compare_digest(str(manifest.get("signature", "")), self._sign(manifest)):
                return False
            for name, info in manifest["files"].items():
                p = path / name
                if p.is_symlink() or not p.is_file() or p.stat().st_size != info["size"]:
                    return False
                if _verified_sha256(p) != info["sha256"]:
                    return False
            return True
        except (OSError, ValueError, KeyError, TypeError):
            return False

    def _os_error(self, exc: OSError) -> StoreError:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return DiskFull(f"the disk holding {self.root} is full; free space or set SIMCORE_CACHE")
        return StoreError(f"cannot write to the cache directory {self.root}: {exc}")


def _build_key(name: str) -> str | None:
    """The key in a temporary build directory's name ``<kind>-<key>-<random>``; kinds may hold hyphens
    (``content-words``, ``wvv-vectors``, ``tokens-part``), so the key is the last 64-hex-digit part."""
    parts = name.split("-")
    for part in reversed(parts[1:-1]):
        if len(part) == 64 and all(c in "0123456789abcdef" for c in part):
            return part
    return None


def _file_key(path: Path) -> tuple[Any, ...]:
    info = path.stat()
    return (str(path), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _remember_sha256(path: Path, sha256: str) -> None:
    if len(_VERIFIED) >= _VERIFIED_LIMIT:
        _VERIFIED.clear()
    _VERIFIED[_file_key(path)] = sha256


def _verified_sha256(path: Path) -> str:
    """The file's full SHA-256, hashed once per process while its inode, size and times are unchanged."""
    found = _VERIFIED.get(_file_key(path))
    if found is None:
        found = file_sha256(path)
        _remember_sha256(path, found)
    return found
