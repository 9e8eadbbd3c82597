"""Corpora in object storage and on web servers: any fsspec URL (s3://, gs://, http(s)://, hf://, memory://).

A remote corpus is listed once into :class:`RemoteFile` values (URL, size, ETag or version id). A
RemoteFile quacks like the :class:`pathlib.Path` the readers use (``.name``, ``.suffix``, ``.parent``,
``/``, ``.stat().st_size``, ``.open()``), so format and compression detection, Hub dataset cards
and the streaming pass work on it unchanged, while a local path keeps the local code path.

Credentials and endpoints come from where fsspec and its back ends look (the environment, e.g.
``AWS_ACCESS_KEY_ID`` and ``AWS_ENDPOINT_URL``; ``~/.aws``; fsspec's config files and ``FSSPEC_*``
variables) or from explicit storage options (``--storage-options JSON``). Explicit options travel
inside an opaque :class:`StorageOptions` handle that prints as ``<hidden>`` (so a worker process can
open the objects itself, as Dask's own readers pass ``storage_options``), and never reach a
fingerprint, a repr, a message or a file: every message about a remote object goes through
:func:`scrub`. A URL holding a password (``https://user:pw@host/``) is refused.

A remote object is fingerprinted by its URL, size and version (ETag, S3 version id, GCS generation,
Hub blob id; else its Last-Modified time), never by reading it: a changed object gets a new one.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from ..utils.errors import CorpusError, InvalidArgument
from ..utils.redact import has_user_info, redact, redact_url
from .formats import is_dataset_metadata

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]{1,30})://")
_MAGIC = re.compile(r"[*?\[]")
# Storage option and variable names whose values are secrets (scrubbed from every message).
_SECRET_NAME = re.compile(r"(secret|token|password|passwd|credential|session|signature|private|api_?key|"
                          r"access_?key|account_?key|sas|^key$|_key$)", re.IGNORECASE)
_SECRET_QUERY = re.compile(r"(sig|signature|token|credential|key|secret|password|sas|auth)", re.IGNORECASE)
_VERSION_FIELDS = ("VersionId", "version_id", "generation", "ETag", "etag", "blob_id", "md5Hash", "Content-MD5",
                   "Digest", "LastModified", "Last-Modified", "mtime", "updated", "created")
_REGISTERED: set[str] = set()  # the secrets of every StorageOptions this process has seen, for scrub()
BLOCK_BYTES = 8 << 20  # read-ahead of a remote stream: the memory one open object costs
_PACKAGES = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "az": "adlfs", "abfs": "adlfs",
             "http": "aiohttp", "https": "aiohttp", "hf": "huggingface_hub"}


def is_url(text: object) -> bool:
    """True for a URL with a protocol (``s3://``, ``file://``, ...); a Windows drive or a plain path is not one."""
    return isinstance(text, str) and _URL.match(text.strip()) is not None


class StorageOptions:
    """fsspec storage options (credentials, endpoint), carried opaquely: printed as ``<hidden>``, never hashed.

    It pickles with its content, so a Dask worker opens the objects itself with the caller's options.
    """

    __slots__ = ("_options",)

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        if options is not None and not isinstance(options, Mapping):
            raise InvalidArgument("storage options must be a JSON object (a dict of fsspec options)")
        self._options = dict(options or {})
        _REGISTERED.update(self.secrets())

    def get(self) -> dict[str, Any]:
        return dict(self._options)

    def secrets(self) -> list[str]:
        return list(_secret_values(self._options))

    def __bool__(self) -> bool:
        return bool(self._options)

    def __repr__(self) -> str:
        return "StorageOptions(<hidden>)" if self._options else "StorageOptions()"

    def __getstate__(self) -> dict[str, Any]:
        return self._options

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._options = state
        _REGISTERED.update(self.secrets())




def parse_storage_options(text: str) -> StorageOptions:
    """``--storage-options``: a JSON object. Its text is never echoed (it holds credentials)."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise InvalidArgument("--storage-options is not valid JSON; give an object such as "
                              "'{\"endpoint_url\": \"https://...\"}'") from None
    if not isinstance(value, dict):
        raise InvalidArgument("--storage-options must be a JSON object, e.g. '{\"anon\": true}'")
    return StorageOptions(value)


def _secret_values(value: Any, secret: bool = False) -> Iterable[str]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from _secret_values(item, secret or bool(_SECRET_NAME.search(str(key))))
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _secret_values(item, secret)
    elif secret and isinstance(value, str) and len(value) >= 8:
        yield value


_NO_OPTIONS = StorageOptions()


def _known_secrets(options: StorageOptions | None = None) -> list[str]:
    """Secret values this process knows of: the given options, fsspec's config, secret-named variables."""
    found = list(options.secrets() if options else ()) + list(_REGISTERED)
    try:
        import fsspec.config

        found.extend(_secret_values(fsspec.config.conf, True))
    except ImportError:
        pass
    found.extend(v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 8
                 and (k.startswith(("AWS_", "GOOGLE_", "GCS", "HF_", "HUGGING", "AZURE_", "FSSPEC_", "S3_"))))
    return sorted(set(found), key=len, reverse=True)


def display_url(url: str) -> str:
    """A URL as it may be shown or stored: no user name or password, no secret query values
    (:func:`simcore.utils.redact.redact`)."""
    text = url.strip()
    found = _URL.match(text)
    return redact_url(found.group(0), text[found.end():]) if found else redact(text)


def scrub(text: str, options: StorageOptions | None = None) -> str:
    """``text`` with every known secret replaced by ``***`` and every URL redacted."""
    for secret in _known_secrets(options):
        text = text.replace(secret, "***")
    return redact(text)


def _one_line(exc: BaseException, options: StorageOptions | None) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return scrub(text, options)[:300]


@dataclass(frozen=True)
class RemoteStat:
    """The part of :func:`os.stat`'s answer the readers use, for a remote object.

    ``st_mtime_ns`` stands for the object's version: it changes whenever the ETag or version id does,
    so caches keyed by (path, size, mtime) see a changed object as changed.
    """

    st_size: int
    st_mtime_ns: int
    st_mode: int = stat.S_IFREG | 0o444
    st_dev: int = 0
    st_ino: int = 0

    @property
    def st_mtime(self) -> float:
        return self.st_mtime_ns / 1e9


@dataclass(frozen=True, repr=False)
class RemoteFile:
    """An object (or a folder, or a glob pattern) at a URL: where it is, its size and version, and a handle
    on the storage options that open it. Printed and stored by :attr:`display` only."""

    url: str
    size: int | None = None     # None: a folder, a pattern, or not yet looked up
    version: str = ""           # ETag, version id, generation, ... ('' when the store gives none)
    options: StorageOptions = field(default=_NO_OPTIONS, compare=False)

    def __post_init__(self) -> None:
        if not is_url(self.url):
            raise InvalidArgument(f"{self.url[:200]!r} is not a URL")
        if has_user_info(self.url.strip().split("://", 1)[1]):  # a password may hold '/' and '@'
            raise CorpusError(f"{display_url(self.url)}: put credentials in --storage-options or the environment, "
                              "not in the URL")

    # What pathlib.Path offers the readers

    @property
    def display(self) -> str:
        return display_url(self.url)

    def __str__(self) -> str:
        return self.display

    def __repr__(self) -> str:
        return f"RemoteFile({self.display!r}, size={self.size}, version={self.version!r})"

    @property
    def protocol(self) -> str:
        return self.url.split("://", 1)[0].lower()

    @property
    def _path(self) -> str:
        return urlsplit(self.url).path if self.protocol in ("http", "https") else self.url.split("://", 1)[1]

    @property
    def name(self) -> str:
        return self._path.rstrip("/").rsplit("/", 1)[-1]

    @property
    def suffix(self) -> str:
        return Path(self.name).suffix if self.name else ""

    @property
    def suffixes(self) -> list[str]:
        return Path(self.name).suffixes if self.name else []

    @property
    def stem(self) -> str:
        return Path(self.name).stem

    @property
    def parent(self) -> RemoteFile:
        base = self.url.split("?", 1)[0].rstrip("/")
        head, sep, _ = base.rpartition("/")
        if not sep or head.endswith(":/") or head.endswith("://") or head == f"{self.protocol}:":
            return RemoteFile(base, options=self.options)  # a bucket or host: its own parent
        if self.protocol in ("http", "https") and "/" not in head.split("://", 1)[1]:
            return RemoteFile(base, options=self.options)
        return RemoteFile(head, options=self.options)

    def __truediv__(self, name: str) -> RemoteFile:
        return RemoteFile(self.url.split("?", 1)[0].rstrip("/") + "/" + name, options=self.options)

    def resolve(self) -> RemoteFile:
        return self

    def stat(self) -> RemoteStat:
        if self.size is None:
            return self.looked_up().stat()
        return RemoteStat(self.size, int(hashlib.sha256(self.version.encode()).hexdigest()[:15], 16))

    def is_file(self) -> bool:
        try:
            return self.looked_up().size is not None
        except CorpusError:
            return False

    def is_dir(self) -> bool:
        """False: a remote folder is never a local directory (the NER probe reads its splits from local folders)."""
        return False

    def exists(self) -> bool:
        try:
            fs, path = self.filesystem()
            return bool(fs.exists(path))
        except Exception:  # noqa: BLE001 - a store that cannot answer: nothing there to read
            return False

    def filesystem(self) -> tuple[Any, str]:
        """(fsspec file system, its path for this object), with the storage options given."""
        try:
            import fsspec.core

            return fsspec.core.url_to_fs(self.url, **_with_timeouts(self.protocol, self.options.get()))
        except ImportError as exc:
            package = _PACKAGES.get(self.protocol, "the fsspec back end for it")
            raise CorpusError(f"{self.protocol}:// needs {package} (pip install {package})") from exc
        except ValueError as exc:
            raise CorpusError(f"{self.display}: {_one_line(exc, self.options)}") from None

    def looked_up(self) -> RemoteFile:
        """This object with its size and version from the store (one request)."""
        fs, path = self.filesystem()
        info = _call(lambda: fs.info(path), self, "look up")
        if info.get("type") != "file":
            raise CorpusError(f"{self.display} is not a file")
        return self.with_info(info)

    def with_info(self, info: Mapping[str, Any]) -> RemoteFile:
        size = info.get("size")
        return RemoteFile(self.url, None if size is None else int(size), version_of(info), self.options)

    def identity(self) -> str:
        """What the store keys this object by: its URL (as displayed), size and version, nothing read."""
        return f"{self.display}\0{self.size}\0{self.version}"

    def open(self, mode: str = "r", encoding: str | None = None, errors: str | None = None,
             label: str = "") -> IO[Any]:
        """The object as a stream read ahead :data:`BLOCK_BYTES` at a time (never all of it at once).

        Read failures (the object gone, access denied, a response cut short) raise a CorpusError naming
        the object, with no secret in it.
        """
        if mode not in ("r", "rb"):
            raise InvalidArgument("remote corpora are read only")
        fs, path = self.filesystem()
        handle = _call(lambda: fs.open(path, "rb", block_size=BLOCK_BYTES, cache_type="readahead"), self, "open",
                       label)
        raw = io.BufferedReader(_Guarded(handle, self, label), 1 << 16)
        return raw if mode == "rb" else io.TextIOWrapper(raw, encoding=encoding or "utf-8", errors=errors)

    def read_text(self, encoding: str = "utf-8") -> str:
        with self.open("r", encoding=encoding) as f:
            return f.read()


def version_of(info: Mapping[str, Any]) -> str:
    """The object's version from a listing or lookup record: the first of ETag-like fields the store gives."""
    for name in _VERSION_FIELDS:
        value = info.get(name)
        if isinstance(value, datetime):
            value = value.timestamp()
        if value not in (None, ""):
            return f"{name}={str(value).strip(chr(34))}"
    lfs = info.get("lfs")
    if isinstance(lfs, Mapping) and lfs.get("sha256"):
        return f"sha256={lfs['sha256']}"
    return ""


def _status(exc: BaseException) -> int | None:
    """The HTTP status an fsspec back end's error carries (aiohttp's ``status``, botocore's response), if any."""
    seen = 0
    while exc is not None and seen < 5:  # fsspec's http raises FileNotFoundError from the server's 403
        status = getattr(exc, "status", None) or getattr(exc, "code", None)
        response = getattr(exc, "response", None)
        if status is None and isinstance(response, Mapping):
            status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if isinstance(status, int) and status >= 400:
            return status
        exc, seen = exc.__cause__ or exc.__context__, seen + 1  # type: ignore[assignment]
    return None


def read_timeout() -> float:
    """Seconds a remote read may wait for data: ``$SIMCORE_READ_TIMEOUT``, else 60 (a stalled server)."""
    try:
        value = float(os.environ.get("SIMCORE_READ_TIMEOUT", "60"))
    except ValueError:
        return 60.0
    return value if 0 < value < 1e6 else 60.0


def _with_timeouts(protocol: str, options: dict[str, Any]) -> dict[str, Any]:
    """HTTP(S) options with a connect and a read timeout (aiohttp waits 5 minutes by default, and a server
    that sends its headers and then nothing is waited on that long), unless the options set one."""
    if protocol not in ("http", "https"):
        return options
    client = dict(options.get("client_kwargs") or {})
    if "timeout" not in client:
        import aiohttp

        client["timeout"] = aiohttp.ClientTimeout(total=None, sock_connect=read_timeout(), sock_read=read_timeout())
    return {**options, "client_kwargs": client}


def _stalled(exc: BaseException) -> bool:
    return isinstance(exc, TimeoutError) or "Timeout" in type(exc).__name__


def _call(function: Any, where: RemoteFile, what: str, label: str = "") -> Any:
    prefix = f"{label}: " if label and label != where.display else ""
    try:
        return function()
    except CorpusError:
        raise
    except Exception as exc:  # noqa: BLE001 - every back end has its own errors; one line each, scrubbed
        status = _status(exc)
        if isinstance(exc, PermissionError) or status in (401, 403):
            raise CorpusError(f"{prefix}{where.display}: access denied ({status or 403}); check the credentials"
                              ) from None
        if isinstance(exc, ImportError):
            package = _PACKAGES.get(where.protocol, "the fsspec back end for it")
            raise CorpusError(f"{where.protocol}:// needs {package} (pip install {package})") from exc
        if isinstance(exc, FileNotFoundError) or status == 404:
            raise CorpusError(f"{prefix}{where.display} does not exist") from None
        if _stalled(exc):
            raise CorpusError(f"{prefix}cannot {what} {where.display}: no answer for {read_timeout():g} s "
                              "(the server stalled; SIMCORE_READ_TIMEOUT sets the wait)") from None
        raise CorpusError(f"{prefix}cannot {what} {where.display} ({_one_line(exc, where.options)})") from None


class _Guarded(io.RawIOBase):
    """An fsspec file whose failures are one-line CorpusErrors, and whose early end is noticed."""

    def __init__(self, handle: Any, where: RemoteFile, label: str) -> None:
        self.handle, self.where, self.label = handle, where, label
        self.size = where.size if where.size is not None else getattr(handle, "size", None)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        return int(self.handle.seek(offset, whence))

    def tell(self) -> int:
        return int(self.handle.tell())

    def readinto(self, buffer: Any) -> int:
        where = f"{self.label}: {self.where.name}" if self.label else self.where.display
        try:
            data = self.handle.read(len(buffer))
        except Exception as exc:  # noqa: BLE001 - every back end has its own errors; one line each, scrubbed
            status = _status(exc)
            if isinstance(exc, PermissionError) or status in (401, 403):
                raise CorpusError(f"{where}: access denied ({status or 403}) while it was read") from None
            if isinstance(exc, FileNotFoundError) or status == 404:
                raise CorpusError(f"{where} vanished while it was read ({self.where.display})") from None
            if _stalled(exc):
                raise CorpusError(f"{where}: no data for {read_timeout():g} s while it was read (the server "
                                  "stalled; SIMCORE_READ_TIMEOUT sets the wait)") from None
            if any(n in type(exc).__name__ for n in ("Payload", "IncompleteRead", "ContentLength")):
                raise CorpusError(f"{where}: the response was cut short (truncated; {_one_line(exc, self.where.options)})"
                                  ) from None
            raise CorpusError(f"{where}: the read failed ({_one_line(exc, self.where.options)})") from None
        if not data and len(buffer) and self.size is not None and self.handle.tell() < self.size:
            raise CorpusError(f"{where}: the response ended after {self.handle.tell():,} of {self.size:,} bytes "
                              "(truncated)")
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        try:
            self.handle.close()
        except Exception:  # noqa: BLE001 - closing a read-only stream cannot lose data
            pass
        super().close()


# Opening, listing, fingerprinting: what the corpus layer calls

def location(path: Any, storage_options: StorageOptions | Mapping[str, Any] | None = None) -> Path | RemoteFile:
    """A Path for a local path or a ``file://`` URL; a RemoteFile (with the options) for any other URL."""
    if isinstance(path, RemoteFile):
        return path if storage_options is None else RemoteFile(path.url, path.size, path.version,
                                                                _as_options(storage_options))
    if isinstance(path, str) and is_url(path):
        text = path.strip()
        if text.lower().startswith("file://"):
            return Path(urlsplit(text).path)
        return RemoteFile(text, options=_as_options(storage_options))
    return Path(path)


def _as_options(options: StorageOptions | Mapping[str, Any] | None) -> StorageOptions:
    if isinstance(options, StorageOptions):
        return options
    return StorageOptions(options) if options else _NO_OPTIONS


def open_raw(path: Path | RemoteFile, label: str = "") -> IO[bytes]:
    """The raw bytes of a local file (``open``) or a remote object (a read-ahead stream)."""
    if isinstance(path, RemoteFile):
        return path.open("rb", label=label)
    return open(path, "rb")


def columnar_source(path: Path | RemoteFile, label: str = "") -> Any:
    """What pyarrow opens: a local path's name (memory-mapped), a remote object's stream."""
    return path.open("rb", label=label) if isinstance(path, RemoteFile) else str(path)


def has_magic(text: str) -> bool:
    return _MAGIC.search(text) is not None


def list_objects(root: RemoteFile, label: str, max_files: int) -> list[RemoteFile]:
    """Every object a URL names: the object itself, every object under a folder (listed once, hidden names
    and dataset metadata left out), or every object a glob matches; sorted, with size and version."""
    fs, path = root.filesystem()
    literal = root.url
    if has_magic(root._path):
        literal = root.url[: _MAGIC.search(root.url).start()].rsplit("/", 1)[0]  # type: ignore[union-attr]
    base_fs, base = RemoteFile(literal, options=root.options).filesystem()
    _call(lambda: base_fs.invalidate_cache(), root, "list", label)  # a fresh listing: changed objects are seen

    def listing() -> dict[str, Any]:
        if literal != root.url:
            return dict(fs.glob(path, detail=True))
        if root.protocol in ("http", "https") and root._path.endswith("/"):
            return _http_folder(fs, path, root, label)
        info = fs.info(path)
        if info.get("type") == "file":
            return {info["name"]: info}
        return dict(fs.find(path, detail=True))

    entries = _call(listing, root, "list", label)
    files: list[RemoteFile] = []
    for name in sorted(entries):
        info = entries[name]
        if info.get("type") not in (None, "file"):
            continue
        rel = name[len(base):].strip("/") if name.startswith(base) else name.rsplit("/", 1)[-1]
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        url = literal.rstrip("/") + "/" + rel if rel else literal
        files.append(RemoteFile(url, None if info.get("size") is None else int(info["size"]), version_of(info),
                                root.options))
        if len(files) > max_files:
            raise CorpusError(f"{label}: {root.display} holds more than {max_files:,} files; give the folder of "
                              "one corpus")
    if len(files) > 1:
        files = [f for f in files if not is_dataset_metadata(f)]  # a Hub folder's README.md dataset card
    return files


def _http_folder(fs: Any, path: str, root: RemoteFile, label: str) -> dict[str, Any]:
    """The files an HTTP directory listing (a page of links, as web servers write for a folder) links to
    directly under its own URL, each looked up for its size and version; a page without such links is
    refused with what to give instead."""
    base = path.rstrip("/") + "/"
    links = [e["name"] for e in fs.ls(path, detail=True) if e.get("type") == "file"
             and e["name"].startswith(base) and "/" not in e["name"][len(base):].strip("/")
             and "?" not in e["name"][len(base):] and "#" not in e["name"][len(base):]]
    if not links:
        raise CorpusError(f"{label}: {root.display} is a web page without links to files under it; give the "
                          "URL of each file (or a bucket URL: s3://, gs://, ...)")
    return {name: fs.info(name) for name in sorted(set(links))[:MAX_LISTED_LINKS]}


MAX_LISTED_LINKS = 10_000  # links of one HTTP directory listing looked up (one request each)


def check_objects(files: list[RemoteFile], root: RemoteFile, label: str, max_bytes: int | None) -> list[RemoteFile]:
    """The listed objects, refused as a local corpus's files are: none at all, an empty one, one over the limit."""
    if not files:
        raise CorpusError(f"{label}: {root.display} holds no files")
    for f in files:
        if f.size is None:
            raise CorpusError(f"{label}: {f.name}: the server gives no size for it")
        if f.size == 0:
            raise CorpusError(f"{label}: {f.name} is empty")
        if max_bytes is not None and f.size > max_bytes:
            raise CorpusError(f"{label}: {f.name} is {f.size / 1e6:.1f} MB, over the limit of {max_bytes / 1e6:.0f} MB")
    return files


def file_identity(path: Path | RemoteFile) -> str | None:
    """A remote object's key (URL, size, version) when the store gives a version; None: hash the bytes."""
    if isinstance(path, RemoteFile) and path.version:
        return hashlib.sha256(path.identity().encode("utf-8", "surrogatepass")).hexdigest()
    return None


def content_sha256(path: Path | RemoteFile, label: str = "") -> str:
    """SHA-256 of an object's bytes (for a store that gives no version), streamed."""
    h = hashlib.sha256()
    with open_raw(path, label) as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
