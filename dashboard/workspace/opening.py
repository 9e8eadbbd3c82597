"""Workspace files back into a state, treated as untrusted data: every field checked, corpora found again
only inside the sample folder, the server's data roots or the artefact store."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

from simcore.corpora.corpus import Corpus, save_upload
from simcore.corpora.formats import FORMATS
from simcore.utils.errors import SimcoreError
from simcore.utils.store import ArtefactStore

from ..paths import UPLOAD_DECOMPRESSED_LIMIT, resolve_server_url
from ..state import AppState, Job, LoadedCorpus, NamedMatrix
from .format import (
    CORPUS_SUFFIXES,
    HEX_DIGEST,
    KIND_NAME,
    MATRIX_FILES,
    MAX_NAME,
    MEMBER_NAME,
    PROBE_FILE,
    PROBE_LABEL,
    PROBE_RESULTS,
    RESULTS_FILE,
    WorkspaceError,
    parse_manifest,
    read_csv_member,
    read_matrix_csv,
)


def checked_text(value: Any, what: str, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or len(value) > 10_000:
        raise WorkspaceError(f"the workspace's {what} is not text")
    return value


class Locator:
    """Where a workspace's corpora may be found again: the sample folder, the data roots, the store, and
    the remote locations the server allows (``resolve_remote``: by default ``$SIMCORE_REMOTE_ROOTS``)."""

    def __init__(self, store: ArtefactStore, sample_root: Path, resolve_server: Callable[[str], Path],
                 resolve_remote: Callable[[str], str] = resolve_server_url) -> None:
        self.store, self.sample_root, self.resolve_server = store, Path(sample_root).resolve(), resolve_server
        self.resolve_remote = resolve_remote

    def corpus(self, d: Any, uploads: dict[str, bytes] | None = None) -> Corpus:
        """The corpus a description names, checked: a SimcoreError says why it cannot be found.

        A decompression limit in the description is kept only up to the server's own
        (:data:`UPLOAD_DECOMPRESSED_LIMIT`): a workspace file cannot raise what this server reads.
        """
        if not isinstance(d, dict):
            raise WorkspaceError("a corpus description is not an object")
        name = checked_text(d.get("name"), "corpus name")
        if not name or len(name) > MAX_NAME:
            raise WorkspaceError("a corpus has no usable name")
        fmt = d.get("fmt")
        if fmt is not None and fmt not in FORMATS:
            raise WorkspaceError(f"{name}: unknown format")
        options = {"fmt": fmt, "text_field": checked_text(d.get("text_field", "text"), "text field") or "text",
                   "encoding": checked_text(d.get("encoding"), "encoding", optional=True)}
        limit = d.get("max_decompressed_bytes")
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            options["max_decompressed_bytes"] = min(limit, UPLOAD_DECOMPRESSED_LIMIT)
        if d.get("kind") == "remote":  # listed again (sizes and versions as they are now) with the server's credentials
            url = self.resolve_remote(checked_text(d.get("path"), "remote URL") or "")
            return Corpus.from_path(url, name=name, **options)
        path = self.path(d, name, uploads)
        if d.get("kind") == "upload":
            options.setdefault("max_decompressed_bytes", UPLOAD_DECOMPRESSED_LIMIT)  # as when it was uploaded
        files = d.get("files")
        if path.is_dir() and isinstance(files, list) and files:
            chosen = []
            for rel in files[:20_000]:
                rel = checked_text(rel, "file name") or ""
                f = (path / rel).resolve()
                if ".." in Path(rel).parts or not f.is_relative_to(path.resolve()) or not f.is_file():
                    raise WorkspaceError(f"{name}: {rel} is not a file of {path}")
                chosen.append(f)
            options["files"] = tuple(chosen)
        return Corpus(name=name, path=path, **options)

    def path(self, d: dict[str, Any], name: str, uploads: dict[str, bytes] | None = None) -> Path:
        """The local file or folder a description names (``sample``, ``upload`` or ``server``), checked."""
        kind = d.get("kind")
        if kind == "sample":
            rel = checked_text(d.get("path"), "sample path") or ""
            if ".." in Path(rel).parts or Path(rel).is_absolute():
                raise WorkspaceError(f"{name}: not a path inside the bundled sample")
            path = (self.sample_root / rel).resolve()
            if not path.is_relative_to(self.sample_root) or not path.exists():
                raise WorkspaceError(f"{name}: not found in the bundled sample")
            return path
        if kind == "upload":
            key, suffix = d.get("key"), d.get("suffix")
            if not (isinstance(key, str) and HEX_DIGEST.fullmatch(key)) or suffix not in CORPUS_SUFFIXES:
                raise WorkspaceError(f"{name}: the upload is not described as this app writes it")
            sha = d.get("sha256")
            if uploads is not None and isinstance(sha, str) and f"uploads/{sha}" in uploads:
                data = uploads[f"uploads/{sha}"]
                if hashlib.sha256(data).hexdigest() != sha:
                    raise WorkspaceError(f"{name}: the uploaded file in the workspace is damaged")
                return save_upload(data, "upload" + suffix, self.store)
            found = self.store.get("upload", key)
            if found is None:
                raise WorkspaceError(f"{name}: the uploaded file is no longer on this server; upload it again")
            return found / f"upload{suffix}"
        if kind == "server":
            return self.resolve_server(checked_text(d.get("path"), "server path") or "")
        raise WorkspaceError(f"{name}: unknown kind of corpus")

    def upload_bytes(self, d: dict[str, Any]) -> tuple[str, bytes] | None:
        """The bytes of an uploaded corpus (for the zip), with their sha256."""
        if d.get("kind") != "upload" or not HEX_DIGEST.fullmatch(str(d.get("key", ""))) or d.get("suffix") not in CORPUS_SUFFIXES:
            return None
        found = self.store.get("upload", d["key"])
        if found is None:
            return None
        data = (found / f"upload{d['suffix']}").read_bytes()
        return hashlib.sha256(data).hexdigest(), data


def job_from(value: Any) -> Job | None:
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


def _table(files: dict[str, bytes], manifest: dict[str, Any], file: Any, what: str) -> bytes:
    """The bytes of a table the manifest names, checked against the manifest's sha256 of it.

    The tables are written before the manifest, so a save cut short leaves new tables beside the old
    manifest: ``m0.csv`` may then hold another matrix's rows. Such a table is left out, never relabelled.
    """
    if not isinstance(file, str) or not MEMBER_NAME.fullmatch(file) or file.startswith("uploads/") or file not in files:
        raise WorkspaceError(f"{what}: its table is missing")
    tables = manifest.get("tables")
    if isinstance(tables, dict):  # workspaces saved before the map have none
        if tables.get(file) != hashlib.sha256(files[file]).hexdigest():
            raise WorkspaceError(f"{what}: its table {file} does not match the workspace's record of it "
                                 "(a save cut short, or an edited file); left out")
    return files[file]


def restore(files: dict[str, bytes], state: AppState, locator: Locator) -> list[str]:
    """Fill an empty state from workspace files; returns what could not be restored, one line each.

    Every table is checked against the manifest's sha256 of it: one that does not match is left out
    with a note naming it.
    """
    manifest = parse_manifest(files)
    notes: list[str] = []
    corpora = manifest.get("corpora") if isinstance(manifest.get("corpora"), dict) else {}
    for role, bucket in (("source", state.sources), ("target", state.targets)):
        for d in (corpora.get(role) or [])[:1000] if isinstance(corpora.get(role), list) else []:
            try:
                corpus = locator.corpus(d, files)
                origin = checked_text(d.get("origin", ""), "origin") or ""
                bucket[corpus.name] = LoadedCorpus(corpus, origin[:300])
            except SimcoreError as exc:
                notes.append(f"{role} not restored: {exc}")
    for entry in (manifest.get("matrices") or [])[:500] if isinstance(manifest.get("matrices"), list) else []:
        try:
            if not isinstance(entry, dict):
                raise WorkspaceError("a matrix entry is not an object")
            name = checked_text(entry.get("name"), "matrix name") or "matrix"
            data = _table(files, manifest, entry.get("file"), name)
            long = read_matrix_csv(data, name)
            raw_file = entry.get("raw")
            raw_data = (
                _table(files, manifest, raw_file, name)
                if isinstance(raw_file, str) and raw_file in files
                else None
            )
            raw = read_csv_member(raw_data, name) if raw_data is not None else None
            options = entry.get("options") if isinstance(entry.get("options"), dict) else {}
            created = (
                entry.get("created")
                if isinstance(entry.get("created"), (int, float))
                else time.time()
            )
            matrix = NamedMatrix(
                name[:MAX_NAME],
                long,
                (checked_text(entry.get("origin", ""), "origin") or "")[:300],
                options,
                raw=raw,
                job=job_from(entry.get("job")),
                created=float(created),
            )
            # its workspace CSVs are the files it was read from: a session that restored the
            # workspace does not write every matrix again (format.snapshot)
            matrix.__dict__[MATRIX_FILES] = (data, raw_data)
            state.add_matrix(matrix)
        except SimcoreError as exc:
            notes.append(f"matrix not restored: {exc}")
    if isinstance(manifest.get("active"), str) and manifest["active"] in state.matrices:
        state.active = manifest["active"]
    results = manifest.get("results")
    if isinstance(results, dict) and RESULTS_FILE in files:
        try:
            table = read_csv_member(_table(files, manifest, RESULTS_FILE, "the NER results"), "the NER results")
            state.results = table
            state.results_label = (checked_text(results.get("label", ""), "results label") or "")[:300]
            cols = results.get("columns") if isinstance(results.get("columns"), dict) else {}
            state.results_columns = {k: (v if isinstance(v, str) else None) for k, v in cols.items()
                                     if k in ("f1", "baseline", "improvement")}
            state.extra["results_version"] = 1
        except SimcoreError as exc:
            notes.append(f"NER results not restored: {exc}")
    probe = manifest.get("probe")
    if isinstance(probe, dict) and PROBE_FILE in files:
        try:
            state.extra[PROBE_RESULTS] = read_csv_member(_table(files, manifest, PROBE_FILE, "the probe's results"),
                                                   "the probe's results")
            state.extra[PROBE_LABEL] = (checked_text(probe.get("label", ""), "probe label") or "")[:300]
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
        if isinstance(manifest.get("selection_current"), str) and manifest["selection_current"] in runs:
            state.extra["selection_current"] = manifest["selection_current"]
    state.extra["name_map"] = _name_map(manifest.get("name_map"))
    state.extra["forms"] = _forms(manifest.get("forms"))
    state.extra["sample_loaded"] = bool(manifest.get("sample_loaded"))
    return notes


def _selection(s: Any, locator: Locator, files: dict[str, bytes]) -> tuple[str, dict[str, Any]]:
    if not isinstance(s, dict):
        raise WorkspaceError("a selection entry is not an object")
    label = (checked_text(s.get("label"), "selection label") or "")[:MAX_NAME]
    sc, cut = s.get("scores"), s.get("cutoff")
    if not isinstance(sc, dict) or not isinstance(cut, dict):
        raise WorkspaceError(f"{label}: no scores")
    kind, key = str(sc.get("kind", "")), str(sc.get("key", ""))
    if not KIND_NAME.fullmatch(kind) or not HEX_DIGEST.fullmatch(key):
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
