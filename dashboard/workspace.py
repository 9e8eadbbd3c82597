"""Workspaces: what one user added and computed in the dashboard, kept on disk so a reload finds it.

A workspace is a folder ``<store root>/workspaces/<id>/`` of plain files: ``workspace.json`` (names,
corpora, matrices' descriptions, choices) and CSV tables (one per matrix, the NER results, the probe's
table). The id is an unguessable ``secrets.token_urlsafe`` string carried in the page's address
(``?ws=``), so two people on one server never open each other's work. Files are written atomically
(a temporary file renamed into place) and only when their content changed.

A workspace downloads as one zip of the same files (plus the bytes of uploaded corpora) and opens
again through :func:`read_zip` and :func:`restore`, which treat it as untrusted data: JSON and CSV
only (nothing is unpickled or executed), member names from a fixed pattern (they never choose a
path), sizes capped, corpora found again only inside the sample folder, the server's data roots or
the artefact store. No Streamlit here: :mod:`dashboard.common` calls these functions.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import os
import re
import secrets
import shutil
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import pandas as pd

from simcore.corpus import _SUFFIX_FORMAT, COMPRESSIONS, FORMATS, Corpus, save_upload
from simcore.errors import SimcoreError
from simcore.export import escape_formulas, unescape_formula
from simcore.store import ArtefactStore

from .state import AppState, Job, LoadedCorpus, NamedMatrix

FORMAT = "simcore-workspace"
VERSION = 1
MANIFEST = "workspace.json"
RESULTS_FILE, PROBE_FILE = "results.csv", "probe.csv"
# Keys of AppState.extra kept in a workspace (dashboard.probe_job uses the same two probe keys).
PROBE_RESULTS, PROBE_LABEL = "probe_results", "probe_label"
_ID = re.compile(r"^[A-Za-z0-9_-]{20,64}$")
_MEMBER = re.compile(r"^(workspace\.json|results\.csv|probe\.csv|m\d{1,4}(-raw)?\.csv|uploads/[0-9a-f]{64})$")
_HEX = re.compile(r"^[0-9a-f]{64}$")
_KIND = re.compile(r"^[a-z][a-z0-9-]{0,40}$")
_SUFFIXES = {s + (c or "") for s in _SUFFIX_FORMAT for c in (None, *COMPRESSIONS)}
MAX_ZIP_BYTES = 300_000_000  # a workspace file opened in the browser (it holds uploaded corpora)
MAX_MEMBER_BYTES = 200_000_000
MAX_MEMBERS = 2_000
MAX_NAME = 200


class WorkspaceError(SimcoreError):
    """A workspace that cannot be read, opened or found."""


def new_id() -> str:
    """An unguessable workspace id (144 random bits), safe in a URL and as a folder name."""
    return secrets.token_urlsafe(18)


def valid_id(text: object) -> bool:
    return isinstance(text, str) and bool(_ID.match(text))


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
            if not _MEMBER.match(name) or name.startswith("uploads/"):
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
        files = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and _MEMBER.match(p.name)}
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


def clean_name(name: object) -> str:
    text = " ".join(str(name or "").split())[:MAX_NAME]
    if not text:
        raise WorkspaceError("a workspace name cannot be empty")
    return text


# ---- the state as files --------------------------------------------------------------------------------

def matrix_csv(long: pd.DataFrame) -> bytes:
    """A long matrix as the CSV ``simcore matrix`` writes (and ``read_matrix`` and Open results read)."""
    return escape_formulas(long).to_csv(index=False).encode("utf-8")


def read_matrix_csv(data: bytes, label: str) -> pd.DataFrame:
    """A long matrix from CSV bytes written by :func:`matrix_csv` or the CLI (checked by ``to_long``)."""
    from simcore.analysis import to_long  # scipy loads with it: not on every page's first import

    long = to_long(_read_csv(data, label))
    for column in ("source", "target"):
        long[column] = long[column].map(unescape_formula)
    return long


def _read_csv(data: bytes, label: str) -> pd.DataFrame:
    try:
        return pd.read_csv(io.BytesIO(data))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError) as exc:
        raise WorkspaceError(f"{label} is not a readable CSV table ({exc})") from None


def _describe_corpus(loaded: LoadedCorpus, store_root: Path, sample_root: Path) -> dict[str, Any]:
    c = loaded.corpus
    out: dict[str, Any] = {"name": c.name, "origin": loaded.origin, "fmt": c.fmt, "text_field": c.text_field,
                           "encoding": c.encoding, "max_decompressed_bytes": c.max_decompressed_bytes}
    path = Path(c.path)
    real = path.resolve()
    if real.is_relative_to(sample_root):
        out.update(kind="sample", path=real.relative_to(sample_root).as_posix())
    elif real.is_relative_to(store_root / "upload") and real.name.startswith("upload"):
        out.update(kind="upload", key=real.parent.name, suffix=real.name[len("upload"):])
    else:
        out.update(kind="server", path=str(path))
    if path.is_dir():
        out["files"] = [Path(f).relative_to(path).as_posix() for f in c.files if Path(f).is_relative_to(path)]
    return out


def _describe_selection(label: str, run: dict[str, Any], store_root: Path, sample_root: Path) -> dict[str, Any] | None:
    from simcore.selection.choosing import Cutoff, ScoreSet  # the selection package is slow to import

    scores, cutoff, pool = run.get("scores"), run.get("cutoff"), run.get("pool")
    if not isinstance(scores, ScoreSet) or not isinstance(cutoff, Cutoff) or not isinstance(pool, Corpus):
        return None
    return {"label": label, "method": str(run.get("method", "")), "target": str(run.get("target", "")),
            "keep_duplicates": bool(run.get("keep_duplicates")),
            "pool": _describe_corpus(LoadedCorpus(pool, "selection pool"), store_root, sample_root),
            "scores": {"kind": Path(scores.path).parent.name, "key": Path(scores.path).name, "method": scores.method,
                       "higher_kept": bool(scores.higher_kept), "n": int(scores.n),
                       "meta": json.loads(json.dumps(scores.meta, default=str))},
            "cutoff": asdict(cutoff)}


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def snapshot(state: AppState, name: str, store_root: Path, sample_root: Path, created: float | None = None,
             related: list[str] | None = None) -> dict[str, bytes]:
    """The workspace files of this state: ``workspace.json`` and the CSV tables it names."""
    store_root, sample_root = Path(store_root).resolve(), Path(sample_root).resolve()
    files: dict[str, bytes] = {}
    matrices = []
    for i, m in enumerate(state.matrices.values()):
        entry = {"name": m.name, "origin": m.origin, "options": _jsonable(m.options), "created": m.created,
                 "file": f"m{i}.csv", "raw": f"m{i}-raw.csv" if m.raw is not None else None,
                 "job": asdict(m.job) if m.job is not None else None}
        matrices.append(_jsonable(entry))
        cached = m.__dict__.get("_workspace_csv")
        if cached is None:  # a kept matrix does not change: its CSV is made once
            cached = (matrix_csv(m.long), None if m.raw is None else escape_formulas(m.raw).to_csv(index=False).encode())
            m.__dict__["_workspace_csv"] = cached
        files[entry["file"]] = cached[0]
        if cached[1] is not None:
            files[entry["raw"]] = cached[1]
    manifest: dict[str, Any] = {
        "format": FORMAT, "version": VERSION, "name": name, "created": created or time.time(),
        "related": list(related or []),
        "corpora": {role: [_describe_corpus(v, store_root, sample_root) for v in bucket.values()]
                    for role, bucket in (("source", state.sources), ("target", state.targets))},
        "matrices": matrices, "active": state.active,
        "name_map": _jsonable(state.extra.get("name_map", {})), "forms": _jsonable(state.extra.get("forms", {})),
        "sample_loaded": bool(state.extra.get("sample_loaded")),
        "results": None, "probe": None, "selections": [],
        "selection_current": state.extra.get("selection_current"),
    }
    if isinstance(state.results, pd.DataFrame):
        files[RESULTS_FILE] = state.results.to_csv(index=False).encode("utf-8")
        manifest["results"] = {"file": RESULTS_FILE, "label": state.results_label,
                               "columns": _jsonable(state.results_columns)}
    probe = state.extra.get(PROBE_RESULTS)
    if isinstance(probe, pd.DataFrame):
        files[PROBE_FILE] = probe.to_csv(index=False).encode("utf-8")
        manifest["probe"] = {"file": PROBE_FILE, "label": str(state.extra.get(PROBE_LABEL, ""))}
    for label, run in (state.extra.get("selection_runs") or {}).items():
        described = _describe_selection(label, run, store_root, sample_root)
        if described is not None:
            manifest["selections"].append(described)
    # What each table holds, so that the manifest alone tells another tab what changed.
    manifest["tables"] = {name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())}
    files[MANIFEST] = json.dumps(manifest, indent=1, ensure_ascii=False).encode("utf-8")
    return files


def has_content(state: AppState) -> bool:
    return bool(state.sources or state.targets or state.matrices or state.results is not None
                or state.extra.get(PROBE_RESULTS) is not None or state.extra.get("selection_runs")
                or state.extra.get("forms"))


# ---- files back into a state ---------------------------------------------------------------------------

def _text(value: Any, what: str, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or len(value) > 10_000:
        raise WorkspaceError(f"the workspace's {what} is not text")
    return value


class Locator:
    """Where a workspace's corpora may be found again: the sample folder, the data roots, the store."""

    def __init__(self, store: ArtefactStore, sample_root: Path, resolve_server: Callable[[str], Path]) -> None:
        self.store, self.sample_root, self.resolve_server = store, Path(sample_root).resolve(), resolve_server

    def corpus(self, d: Any, uploads: dict[str, bytes] | None = None) -> Corpus:
        """The corpus a description names, checked: a SimcoreError says why it cannot be found."""
        if not isinstance(d, dict):
            raise WorkspaceError("a corpus description is not an object")
        name = _text(d.get("name"), "corpus name")
        if not name or len(name) > MAX_NAME:
            raise WorkspaceError("a corpus has no usable name")
        fmt = d.get("fmt")
        if fmt is not None and fmt not in FORMATS:
            raise WorkspaceError(f"{name}: unknown format")
        options = {"fmt": fmt, "text_field": _text(d.get("text_field", "text"), "text field") or "text",
                   "encoding": _text(d.get("encoding"), "encoding", optional=True)}
        limit = d.get("max_decompressed_bytes")
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            options["max_decompressed_bytes"] = limit
        kind = d.get("kind")
        if kind == "sample":
            rel = _text(d.get("path"), "sample path") or ""
            if ".." in Path(rel).parts or Path(rel).is_absolute():
                raise WorkspaceError(f"{name}: not a path inside the bundled sample")
            path = (self.sample_root / rel).resolve()
            if not path.is_relative_to(self.sample_root) or not path.exists():
                raise WorkspaceError(f"{name}: not found in the bundled sample")
        elif kind == "upload":
            key, suffix = d.get("key"), d.get("suffix")
            if not (isinstance(key, str) and _HEX.match(key)) or suffix not in _SUFFIXES:
                raise WorkspaceError(f"{name}: the upload is not described as this app writes it")
            sha = d.get("sha256")
            if uploads is not None and isinstance(sha, str) and f"uploads/{sha}" in uploads:
                data = uploads[f"uploads/{sha}"]
                if hashlib.sha256(data).hexdigest() != sha:
                    raise WorkspaceError(f"{name}: the uploaded file in the workspace is damaged")
                path = save_upload(data, "upload" + suffix, self.store)
            else:
                found = self.store.get("upload", key)
                if found is None:
                    raise WorkspaceError(f"{name}: the uploaded file is no longer on this server; upload it again")
                path = found / f"upload{suffix}"
        elif kind == "server":
            path = self.resolve_server(_text(d.get("path"), "server path") or "")
        else:
            raise WorkspaceError(f"{name}: unknown kind of corpus")
        files = d.get("files")
        if path.is_dir() and isinstance(files, list) and files:
            chosen = []
            for rel in files[:20_000]:
                rel = _text(rel, "file name") or ""
                f = (path / rel).resolve()
                if ".." in Path(rel).parts or not f.is_relative_to(path.resolve()) or not f.is_file():
                    raise WorkspaceError(f"{name}: {rel} is not a file of {path}")
                chosen.append(f)
            options["files"] = tuple(chosen)
        return Corpus(name=name, path=path, **options)

    def upload_bytes(self, d: dict[str, Any]) -> tuple[str, bytes] | None:
        """The bytes of an uploaded corpus (for the zip), with their sha256."""
        if d.get("kind") != "upload" or not _HEX.match(str(d.get("key", ""))) or d.get("suffix") not in _SUFFIXES:
            return None
        found = self.store.get("upload", d["key"])
        if found is None:
            return None
        data = (found / f"upload{d['suffix']}").read_bytes()
        return hashlib.sha256(data).hexdigest(), data


def _job(value: Any) -> Job | None:
    if not isinstance(value, dict):
        return None
    names = {f.name for f in fields(Job)}
    try:
        job = Job(**{k: v for k, v in value.items() if k in names})
    except TypeError:
        return None
    ok = (all(isinstance(x, list) and all(isinstance(s, str) for s in x) for x in (job.sources, job.targets, job.measures))
          and isinstance(job.options, dict) and isinstance(job.tokenizer, dict) and isinstance(job.samples, int)
          and (job.sample_tokens is None or isinstance(job.sample_tokens, int)) and isinstance(job.compute_noise, bool))
    return job if ok else None


_SCALAR = (str, int, float, bool, type(None))


def _forms(value: Any) -> dict[str, Any]:
    """Kept form choices: plain scalars and lists of scalars only (they go into widgets)."""
    out: dict[str, Any] = {}
    if not isinstance(value, dict):
        return out
    for form, choices in value.items():
        if not isinstance(form, str) or not isinstance(choices, dict):
            continue
        out[form] = {k: v for k, v in choices.items() if isinstance(k, str) and (
            isinstance(v, _SCALAR) or (isinstance(v, list) and all(isinstance(x, _SCALAR) for x in v)))}
    return out


def _name_map(value: Any) -> dict[str, dict[str, str | None]]:
    out: dict[str, dict[str, str | None]] = {"target": {}, "source": {}}
    if isinstance(value, dict):
        for col in out:
            names = value.get(col)
            if isinstance(names, dict):
                out[col] = {str(k): (v if isinstance(v, str) else None) for k, v in names.items()}
    return out


def parse_manifest(files: dict[str, bytes]) -> dict[str, Any]:
    try:
        manifest = json.loads(files[MANIFEST].decode("utf-8"))
    except KeyError:
        raise WorkspaceError("this is not a simcore workspace (no workspace.json in it)") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise WorkspaceError(f"workspace.json is not readable JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise WorkspaceError("this is not a simcore workspace (workspace.json does not say so)")
    if not isinstance(manifest.get("version"), int) or manifest["version"] > VERSION:
        raise WorkspaceError("this workspace was written by a newer simcore; update simcore to open it")
    return manifest


def restore(files: dict[str, bytes], state: AppState, locator: Locator) -> list[str]:
    """Fill an empty state from workspace files; returns what could not be restored, one line each."""
    manifest = parse_manifest(files)
    notes: list[str] = []
    corpora = manifest.get("corpora") if isinstance(manifest.get("corpora"), dict) else {}
    for role, bucket in (("source", state.sources), ("target", state.targets)):
        for d in (corpora.get(role) or [])[:1000] if isinstance(corpora.get(role), list) else []:
            try:
                corpus = locator.corpus(d, files)
                origin = _text(d.get("origin", ""), "origin") or ""
                bucket[corpus.name] = LoadedCorpus(corpus, origin[:300])
            except SimcoreError as exc:
                notes.append(f"{role} not restored: {exc}")
    for entry in (manifest.get("matrices") or [])[:500] if isinstance(manifest.get("matrices"), list) else []:
        try:
            if not isinstance(entry, dict):
                raise WorkspaceError("a matrix entry is not an object")
            name = _text(entry.get("name"), "matrix name") or "matrix"
            file = entry.get("file")
            if not isinstance(file, str) or not _MEMBER.match(file) or file not in files:
                raise WorkspaceError(f"{name}: its table is missing")
            long = read_matrix_csv(files[file], name)
            raw_file = entry.get("raw")
            raw = _read_csv(files[raw_file], name) if isinstance(raw_file, str) and _MEMBER.match(raw_file) \
                and raw_file in files else None
            options = entry.get("options") if isinstance(entry.get("options"), dict) else {}
            created = entry.get("created") if isinstance(entry.get("created"), (int, float)) else time.time()
            matrix = NamedMatrix(name[:MAX_NAME], long, (_text(entry.get("origin", ""), "origin") or "")[:300],
                                 options, raw=raw, job=_job(entry.get("job")), created=float(created))
            state.add_matrix(matrix)
        except SimcoreError as exc:
            notes.append(f"matrix not restored: {exc}")
    if manifest.get("active") in state.matrices:
        state.active = manifest["active"]
    results = manifest.get("results")
    if isinstance(results, dict) and RESULTS_FILE in files:
        try:
            table = _read_csv(files[RESULTS_FILE], "the NER results")
            state.results = table
            state.results_label = (_text(results.get("label", ""), "results label") or "")[:300]
            cols = results.get("columns") if isinstance(results.get("columns"), dict) else {}
            state.results_columns = {k: (v if isinstance(v, str) else None) for k, v in cols.items()
                                     if k in ("f1", "baseline", "improvement")}
            state.extra["results_version"] = 1
        except SimcoreError as exc:
            notes.append(f"NER results not restored: {exc}")
    probe = manifest.get("probe")
    if isinstance(probe, dict) and PROBE_FILE in files:
        try:
            state.extra[PROBE_RESULTS] = _read_csv(files[PROBE_FILE], "the probe's results")
            state.extra[PROBE_LABEL] = (_text(probe.get("label", ""), "probe label") or "")[:300]
        except SimcoreError as exc:
            notes.append(f"probe results not restored: {exc}")
    runs: dict[str, Any] = {}
    for s in (manifest.get("selections") or [])[:200] if isinstance(manifest.get("selections"), list) else []:
        try:
            runs.update([_selection(s, locator, files)])
        except (SimcoreError, TypeError, ValueError) as exc:
            notes.append(f"selection not restored: {exc}")
    if runs:
        state.extra["selection_runs"] = runs
        if manifest.get("selection_current") in runs:
            state.extra["selection_current"] = manifest["selection_current"]
    state.extra["name_map"] = _name_map(manifest.get("name_map"))
    state.extra["forms"] = _forms(manifest.get("forms"))
    state.extra["sample_loaded"] = bool(manifest.get("sample_loaded"))
    return notes


def _selection(s: Any, locator: Locator, files: dict[str, bytes]) -> tuple[str, dict[str, Any]]:
    if not isinstance(s, dict):
        raise WorkspaceError("a selection entry is not an object")
    label = (_text(s.get("label"), "selection label") or "")[:MAX_NAME]
    sc, cut = s.get("scores"), s.get("cutoff")
    if not isinstance(sc, dict) or not isinstance(cut, dict):
        raise WorkspaceError(f"{label}: no scores")
    kind, key = str(sc.get("kind", "")), str(sc.get("key", ""))
    if not _KIND.match(kind) or not _HEX.match(key):
        raise WorkspaceError(f"{label}: its scores are not described as this app writes them")
    path = locator.store.get(kind, key)
    if path is None:
        raise WorkspaceError(f"{label}: its scores are not in this server's store; run the selection again")
    from simcore.selection.choosing import Cutoff, ScoreSet, check_min_tokens
    scores = ScoreSet(path=path, method=str(sc.get("method", "")), higher_kept=bool(sc.get("higher_kept")),
                      n=int(sc.get("n", 0)), meta=sc.get("meta") if isinstance(sc.get("meta"), dict) else {})
    cutoff = Cutoff(key=float(cut["key"]), index=int(cut["index"]), n_kept=int(cut["n_kept"]),
                    n_eligible=int(cut["n_eligible"]), n_duplicates=int(cut["n_duplicates"]),
                    n_unscored=int(cut["n_unscored"]), k=int(cut["k"]),
                    # workspaces saved before the minimum length have neither field
                    min_tokens=check_min_tokens(cut.get("min_tokens", 1)), n_short=int(cut.get("n_short", 0)))
    pool = locator.corpus(s.get("pool"), files)
    return label, {"pool": pool, "scores": scores, "cutoff": cutoff, "keep_duplicates": bool(s.get("keep_duplicates")),
                   "method": str(s.get("method", scores.method)), "target": str(s.get("target", ""))}


# ---- two tabs of one workspace --------------------------------------------------------------------------

def _names(manifest: dict[str, Any], key: str, role: str | None = None, field_: str = "name") -> set[str]:
    entries = manifest.get(key)
    if role is not None:
        entries = entries.get(role) if isinstance(entries, dict) else None
    return {e[field_] for e in entries or [] if isinstance(e, dict) and isinstance(e.get(field_), str)} \
        if isinstance(entries, list) else set()


def _table_sha(manifest: dict[str, Any], file: str) -> str | None:
    tables = manifest.get("tables")
    return tables.get(file) if isinstance(tables, dict) and manifest.get(file.split(".")[0]) else None


def _sha(table: Any) -> str | None:
    return hashlib.sha256(table.to_csv(index=False).encode("utf-8")).hexdigest() if isinstance(table, pd.DataFrame) \
        else None


def _created(manifest: dict[str, Any]) -> dict[float, str]:
    """A manifest's matrices by when they were made (a matrix's identity across tabs: names can be taken twice)."""
    entries = manifest.get("matrices")
    return {float(e["created"]): e["name"] for e in entries if isinstance(e, dict) and isinstance(e.get("name"), str)
            and isinstance(e.get("created"), (int, float))} if isinstance(entries, list) else {}


def _merge_matrices(base: dict[str, Any], theirs: dict[str, Any], other: AppState, state: AppState,
                    changes: list[str]) -> None:
    was, now = _created(base), _created(theirs)
    ours = {m.created: name for name, m in state.matrices.items()}
    for created, name in was.items():
        if created not in now and created in ours:
            state.remove_matrix(ours.pop(created))
            changes.append(f"matrix {name} removed")
        elif created in now and now[created] != name and ours.get(created) == name:
            ours[created] = state.rename_matrix(name, now[created])
            changes.append(f"matrix {name} renamed {ours[created]}")
    for matrix in other.matrices.values():
        if matrix.created not in was and matrix.created not in ours:
            changes.append(f"matrix {state.add_matrix(matrix)} added")


def merge(base: dict[str, Any], files: dict[str, bytes], state: AppState, locator: Locator) -> list[str]:
    """Bring what another session (a second tab) saved to this workspace into ``state``, three-way.

    ``base`` is the manifest this session last read or wrote, ``files`` the workspace on disk now. What
    the other session added since ``base`` is added here (a name this state also took in the meantime
    keeps this state's), what it removed is removed, and a table or choice it changed replaces this
    state's unless this state changed it too. Returns one line per change, for the page.
    """
    theirs = parse_manifest(files)
    other = AppState()
    restore(files, other, locator)
    changes: list[str] = []
    for role, ours, got in (("source", state.sources, other.sources), ("target", state.targets, other.targets)):
        before = _names(base, "corpora", role)
        for name, loaded in got.items():
            if name not in before and name not in ours:
                ours[name] = loaded
                changes.append(f"{role} {name} added")
            elif name not in before and Path(ours[name].corpus.path).resolve() != Path(loaded.corpus.path).resolve():
                changes.append(f"{role} {name} of the other tab not taken: this tab has another corpus by that name")
        for name in sorted(before - _names(theirs, "corpora", role)):
            if ours.pop(name, None) is not None:
                changes.append(f"{role} {name} removed")
    _merge_matrices(base, theirs, other, state, changes)
    for file, what in ((RESULTS_FILE, "NER results"), (PROBE_FILE, "probe results")):
        was, now = _table_sha(base, file), _table_sha(theirs, file)
        mine = _sha(state.results if file == RESULTS_FILE else state.extra.get(PROBE_RESULTS))
        if now == was or mine != was:
            continue  # the other session left it alone, or this one changed it too: this one's stays
        if file == RESULTS_FILE:
            state.results, state.results_label = other.results, other.results_label
            state.results_columns = other.results_columns
            state.extra["results_version"] = int(state.extra.get("results_version") or 0) + 1
        else:
            for key in (PROBE_RESULTS, PROBE_LABEL):
                state.extra[key] = other.extra.get(key)
        changes.append(f"{what} {'replaced' if now else 'removed'}")
    runs = state.extra.setdefault("selection_runs", {})
    before = _names(base, "selections", field_="label")
    for label, run in (other.extra.get("selection_runs") or {}).items():
        if label not in before and label not in runs:
            runs[label] = run
            changes.append(f"selection {label} added")
    for label in sorted(before - _names(theirs, "selections", field_="label")):
        if runs.pop(label, None) is not None:
            changes.append(f"selection {label} removed")
    for key in ("name_map", "forms"):
        was = base.get(key) if isinstance(base.get(key), dict) else {}
        mine = state.extra.setdefault(key, {})
        for part, value in other.extra.get(key, {}).items():
            if value != was.get(part) and mine.get(part) == was.get(part):
                mine[part] = value
    name = theirs.get("name")
    if isinstance(name, str) and name != base.get("name") and state.workspace_name == base.get("name"):
        state.workspace_name = name[:MAX_NAME]
        changes.append(f"renamed {name[:MAX_NAME]}")
    return changes


# ---- one file to download and open again ----------------------------------------------------------------

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
