"""The workspace's file format: what a state is written as (``workspace.json`` and CSV tables) and the
names, ids and limits every other part of :mod:`dashboard.workspace` checks against.

A workspace is a folder ``<store root>/workspaces/<id>/`` of plain files: ``workspace.json`` (names,
corpora, matrices' descriptions, choices) and CSV tables (one per matrix, the NER results, the probe's
table). The id is an unguessable ``secrets.token_urlsafe`` string carried in the page's address
(``?ws=``), so two people on one server never open each other's work.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pandas as pd

from simcore.corpora.compression import COMPRESSIONS
from simcore.corpora.corpus import Corpus
from simcore.corpora.formats import SUFFIX_FORMAT
from simcore.corpora.remote import RemoteFile
from simcore.reporting.export import escape_formulas, unescape_formula
from simcore.utils.errors import SimcoreError

from ..state import AppState, LoadedCorpus

FORMAT = "simcore-workspace"
VERSION = 1
MANIFEST = "workspace.json"
RESULTS_FILE, PROBE_FILE = "results.csv", "probe.csv"
# Keys of AppState.extra kept in a workspace (dashboard.probe_job uses the same two probe keys).
PROBE_RESULTS, PROBE_LABEL = "probe_results", "probe_label"
_ID = re.compile(r"[A-Za-z0-9_-]{20,64}")  # every pattern here is used with fullmatch ($ matches before a newline)
MEMBER_NAME = re.compile(r"workspace\.json|results\.csv|probe\.csv|m\d{1,4}(-raw)?\.csv|uploads/[0-9a-f]{64}")
HEX_DIGEST = re.compile(r"[0-9a-f]{64}")
KIND_NAME = re.compile(r"[a-z][a-z0-9-]{0,40}")
CORPUS_SUFFIXES = {s + (c or "") for s in SUFFIX_FORMAT for c in (None, *COMPRESSIONS)}
MAX_ZIP_BYTES = 300_000_000  # a workspace file opened in the browser (it holds uploaded corpora)
MAX_MEMBER_BYTES = 200_000_000
MAX_MEMBERS = 2_000
MAX_NAME = 200
# A kept matrix's workspace CSVs (the long table, the table it was opened from), made or read once.
MATRIX_FILES = "_workspace_csv"


class WorkspaceError(SimcoreError):
    """A workspace that cannot be read, opened or found."""


def new_id() -> str:
    """An unguessable workspace id (144 random bits), safe in a URL and as a folder name."""
    return secrets.token_urlsafe(18)


def valid_id(text: object) -> bool:
    return isinstance(text, str) and bool(_ID.fullmatch(text))


def clean_name(name: object) -> str:
    text = " ".join(str(name or "").split())[:MAX_NAME]
    if not text:
        raise WorkspaceError("a workspace name cannot be empty")
    return text


def parse_manifest(files: dict[str, bytes]) -> dict[str, Any]:
    try:
        manifest = json.loads(files[MANIFEST].decode("utf-8"))
    except KeyError:
        raise WorkspaceError("this is not a simcore workspace (no workspace.json in it)") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise WorkspaceError(f"workspace.json is not readable JSON ({exc})") from None
    except RecursionError:
        raise WorkspaceError("workspace.json is nested too deeply to be a workspace") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise WorkspaceError("this is not a simcore workspace (workspace.json does not say so)")
    if not isinstance(manifest.get("version"), int) or manifest["version"] > VERSION:
        raise WorkspaceError("this workspace was written by a newer simcore; update simcore to open it")
    return manifest


# ---- the state as files --------------------------------------------------------------------------------

def matrix_csv(long: pd.DataFrame) -> bytes:
    """A long matrix as the CSV ``simcore matrix`` writes (and ``read_matrix`` and Open results read)."""
    return escape_formulas(long).to_csv(index=False).encode("utf-8")


# Matrices read from workspace files, by the files' content: every page opened by its address is a
# new session that restores its workspace, and reading and checking 7 matrices took a third of a
# page's time.
_READ: OrderedDict[str, pd.DataFrame] = OrderedDict()
_READ_LOCK = threading.Lock()
READ_KEPT = 32


def read_matrix_csv(data: bytes, label: str) -> pd.DataFrame:
    """A long matrix from CSV bytes written by :func:`matrix_csv` or the CLI (checked by
    ``to_long``); the same bytes are read and checked once per server (a copy is returned)."""
    from simcore.analysis.tables import to_long  # scipy loads with it: not on every page's first import

    key = hashlib.sha256(data).hexdigest()
    with _READ_LOCK:
        kept = _READ.get(key)
        if kept is not None:
            _READ.move_to_end(key)
            return kept.copy()
    long = to_long(read_csv_member(data, label))
    for column in ("source", "target"):
        long[column] = long[column].map(unescape_formula)
    with _READ_LOCK:
        _READ[key] = long.copy()
        while len(_READ) > READ_KEPT:
            _READ.popitem(last=False)
    return long


def read_csv_member(data: bytes, label: str) -> pd.DataFrame:
    try:
        return pd.read_csv(io.BytesIO(data))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError) as exc:
        raise WorkspaceError(f"{label} is not a readable CSV table ({exc})") from None


def describe_corpus(loaded: LoadedCorpus, store_root: Path, sample_root: Path) -> dict[str, Any]:
    c = loaded.corpus
    out: dict[str, Any] = {"name": c.name, "origin": loaded.origin, "fmt": c.fmt, "text_field": c.text_field,
                           "encoding": c.encoding, "max_decompressed_bytes": c.max_decompressed_bytes}
    if isinstance(c.path, RemoteFile):  # its URL as displayed (no credentials, no signed query values)
        out.update(kind="remote", path=str(c.path))
        return out
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
            "pool": describe_corpus(LoadedCorpus(pool, "selection pool"), store_root, sample_root),
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
        cached = m.__dict__.get(MATRIX_FILES)
        if cached is None:  # a kept matrix does not change: its CSV is made once
            cached = (matrix_csv(m.long), None if m.raw is None else escape_formulas(m.raw).to_csv(index=False).encode())
            m.__dict__[MATRIX_FILES] = cached
        files[entry["file"]] = cached[0]
        if cached[1] is not None:
            files[entry["raw"]] = cached[1]
    manifest: dict[str, Any] = {
        "format": FORMAT, "version": VERSION, "name": name, "created": created or time.time(),
        "related": list(related or []),
        "corpora": {role: [describe_corpus(v, store_root, sample_root) for v in bucket.values()]
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
