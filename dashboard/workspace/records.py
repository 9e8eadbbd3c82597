"""Running jobs recorded with the workspace on disk: one plain JSON file per kind of job, ``jobs/<kind>.json``.

A record says what was asked (the kind, its parameters as the workspace stores them: corpus names and
descriptions, options as plain values), when it started, its last progress, and which server process
runs it (a token made once per process, and the process id). When the workspace is opened again and that
process is gone, the job is shown as interrupted and can be started again from its record: everything it
had finished is in the artefact store under fingerprints, so the new run computes only what is missing.

A record is read as untrusted data, like the rest of the workspace: every field is checked and turned
into the same objects a form would make (paths found again only where the workspace's corpora may be);
anything else is refused with one line. Nothing in a record is ever executed or unpickled.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import secrets
from dataclasses import MISSING, asdict, dataclass, fields
from pathlib import Path
from typing import Any

from simcore.measures.lookup import all_measures
from simcore.probe.config import ProbeCaps
from simcore.probe.data import TargetSplits
from simcore.probe.lm_train import LMCaps
from simcore.utils.errors import SimcoreError

from ..state import Job, LoadedCorpus
from .folders import Workspaces
from .format import MAX_NAME, WorkspaceError, describe_corpus
from .opening import Locator, checked_text, job_from

RECORD_FORMAT = "simcore-job"
KINDS = ("matrix", "selection", "probe")
TARGET_PREFIX = "target "  # a target's add-time work (dashboard.target_job): "target NAME"
FOLDER = "jobs"
MAX_RECORD_BYTES = 200_000
# The fields of a selection that the Sentence selection form sets (the rest keep their defaults: a record
# never chooses a model or pipeline directory).
SELECTION_FIELDS = ("method", "pool_sample", "order", "seed", "entity_labels", "target_tokens", "adapt", "tagger")


class RecordError(WorkspaceError):
    """A job record that cannot be used (refused in one line)."""


# ---- writing ------------------------------------------------------------------------------------------

def record(kind: str, title: str, params: dict[str, Any], *, started: float, server: str, message: str = "",
           fraction: float = 0.0, done: int = 0, total: int | None = None, status: str = "running",
           worker: int = 0, worker_started: float | None = None) -> dict[str, Any]:
    """A job record as it is written (``params`` from one of the ``*_params`` functions; ``worker``: the
    job's process, the leader of its process group, and when it started, so that no Resume runs beside it)."""
    return {"format": RECORD_FORMAT, "version": 1, "kind": kind, "title": title[:MAX_NAME], "started": started,
            "server": server, "pid": os.getpid(), "status": status, "message": message[:300],
            "fraction": round(float(fraction), 4), "done": int(done), "total": total, "params": params,
            "worker": int(worker), "worker_started": worker_started}


def known_kind(kind: Any) -> bool:
    """Whether ``kind`` names a job this app records: one of KINDS, or a target's work."""
    if not isinstance(kind, str):
        return False
    name = kind.removeprefix(TARGET_PREFIX)
    return kind in KINDS or (name != kind and 0 < len(name) <= MAX_NAME and name.strip() == name)


def file_name(kind: str) -> str:
    """The record's file name: ``matrix.json``; a target's work by a hash of its name (a corpus name
    may hold any character), ``target-<16 hex>.json``."""
    if not known_kind(kind):
        raise RecordError(f"{str(kind)[:60]!r} is not a kind of job")
    if kind in KINDS:
        return f"{kind}.json"
    return f"target-{hashlib.sha256(kind.encode('utf-8')).hexdigest()[:16]}.json"


def _file(spaces: Workspaces, ws_id: str, kind: str) -> Path:
    return spaces.folder(ws_id) / FOLDER / file_name(kind)


def write(spaces: Workspaces, ws_id: str, data: dict[str, Any]) -> None:
    """Write (atomically) the record of a running job."""
    path = _file(spaces, ws_id, data["kind"])
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def remove(spaces: Workspaces, ws_id: str, kind: str) -> None:
    """The job ended (filed, cancelled, failed or dismissed): its record goes."""
    try:
        _file(spaces, ws_id, kind).unlink(missing_ok=True)
    except (OSError, SimcoreError):
        pass


def read_all(spaces: Workspaces, ws_id: str) -> dict[str, bytes]:
    """The raw records of a workspace by file name (unchecked; see :func:`parse`)."""
    try:
        folder = spaces.folder(ws_id) / FOLDER
        if folder.is_symlink() or not folder.is_dir():
            return {}
        out = {}
        for p in sorted(folder.iterdir())[:20]:
            if p.name.startswith(".") or p.is_symlink() or not p.is_file():
                continue
            if p.stat().st_size > MAX_RECORD_BYTES:
                out[p.name] = b""  # refused by parse, unread
            else:
                out[p.name] = p.read_bytes()
        return out
    except (OSError, SimcoreError):
        return {}


def describe_path(path: Path, store_root: Path, sample_root: Path) -> dict[str, Any]:
    """A local file or folder as the workspace stores a corpus's place (sample, upload or server path)."""
    d = describe_corpus(LoadedCorpus(_PathOnly(Path(path)), ""), Path(store_root).resolve(),
                         Path(sample_root).resolve())  # type: ignore[arg-type]
    return {k: d[k] for k in ("kind", "path", "key", "suffix") if k in d}


@dataclass
class _PathOnly:
    """Just enough of a corpus for :func:`describe_corpus` to describe where a file is."""

    path: Path
    name: str = ""
    fmt: str | None = None
    text_field: str = "text"
    encoding: str | None = None
    max_decompressed_bytes: int | None = None
    files: tuple[Path, ...] = ()


def matrix_params(job: Job, demo: bool = False) -> dict[str, Any]:
    return {"job": json.loads(json.dumps(asdict(job), default=str)), "demo": bool(demo)}


def selection_params(*, label: str, pool: Any, target: str, options: Any, top: int | None, fraction: float | None,
                     keep_duplicates: bool, min_tokens: int, store_root: Path, sample_root: Path) -> dict[str, Any]:
    return {"label": label, "pool": describe_corpus(LoadedCorpus(pool, "selection pool"), Path(store_root).resolve(),
                                                      Path(sample_root).resolve()),
            "target": target, "options": {k: getattr(options, k) for k in SELECTION_FIELDS}, "top": top,
            "fraction": fraction, "keep_duplicates": bool(keep_duplicates), "min_tokens": int(min_tokens)}


def _target_params(target: TargetSplits, store_root: Path, sample_root: Path) -> dict[str, Any]:
    splits = {"train": target.train, "test": target.test, "dev": target.dev}
    described = {k: describe_path(v, store_root, sample_root) for k, v in splits.items() if v is not None}
    if all(d["kind"] == "upload" for d in described.values()):
        return {"name": target.name, "uploads": described}
    return {"name": target.name, "directory": describe_path(Path(target.train).parent, store_root, sample_root)}


def target_work_params(target: str, sources: list[str]) -> dict[str, Any]:
    """A target's add-time work: the target and the sources it was prepared against (by name)."""
    return {"target": target, "sources": list(sources)}


def probe_params(request: Any, *, store_root: Path, sample_root: Path) -> dict[str, Any]:
    """A probe request (vectors or LM) as plain values."""
    lm = isinstance(request.caps, LMCaps)
    out = {"probe": "lm" if lm else "vectors", "sources": list(request.sources),
           "target": _target_params(request.target, store_root, sample_root), "caps": request.caps.as_dict(),
           "seeds": int(request.seeds)}
    if lm:
        out.update(model=request.model, max_minutes=float(request.max_minutes), force=bool(request.force),
                   plan_only=bool(request.plan_only))
    else:
        out["source_tokens"] = request.source_tokens
    return out


# ---- reading ------------------------------------------------------------------------------------------

@dataclass
class JobRecord:
    """A checked record: what the job asked for, as the objects a form would make, and where it got to."""

    kind: str
    title: str
    started: float
    server: str
    pid: int
    status: str
    message: str
    fraction: float
    done: int
    total: int | None
    params: dict[str, Any]  # by kind: see parse
    worker: int = 0  # the job's own process (leader of its process group); 0 when not known
    worker_started: float | None = None  # when it started (a reused process id is not the job's)

    def server_alive(self, this_server: str) -> bool:
        """Whether the server process that ran it may still be running it (this one, or another alive)."""
        if self.server == this_server:
            return True
        if self.pid == os.getpid() or self.pid <= 0:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def _int(value: Any, what: str, low: int = 0, high: int = 10**12, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise RecordError(f"{what} is not a whole number from {low:,} to {high:,}")
    return value


def _float(value: Any, what: str, low: float = 0.0, high: float = 1e12, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not low <= value <= high:
        raise RecordError(f"{what} is not a number from {low:g} to {high:g}")
    return float(value)


def _bool(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise RecordError(f"{what} is not true or false")
    return value


def _names(value: Any, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or len(value) > 1000 or not all(
            isinstance(v, str) and 0 < len(v) <= MAX_NAME for v in value):
        raise RecordError(f"{what} is not a list of corpus names")
    return tuple(value)


def _dict(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RecordError(f"{what} is not an object")
    return value


# Caps the probe's form may write as 0 ("0 = all" sentences) or that a seed may be; every other is at least 1.
_ZERO_ALLOWED = {"train_sentences", "dev_sentences", "test_sentences", "lm_seed"}


def _caps(cls: type, value: Any) -> Any:
    """Caps of a probe: each field a number (or none where the form allows none), nothing else."""
    value = _dict(value, "the probe's caps")
    unknown = set(value) - {f.name for f in fields(cls)}
    if unknown:
        raise RecordError(f"the probe's caps have unknown fields ({', '.join(sorted(map(str, unknown)))[:100]})")
    out = {}
    for f in fields(cls):
        default = f.default if f.default is not MISSING else None
        v = value.get(f.name, default)
        optional = "None" in str(f.type)
        low = 0 if f.name in _ZERO_ALLOWED else 1  # the form never writes 0 epochs, batch or block
        if isinstance(default, float) and isinstance(v, (int, float)) and not isinstance(v, bool):
            out[f.name] = _float(v, f"the probe's {f.name}", 1e-12 if low else 0.0, 1e9)
        else:
            out[f.name] = _int(v, f"the probe's {f.name}", low, 10**10, optional=optional)
    try:
        return cls(**out)
    except (TypeError, ValueError, SimcoreError) as exc:
        raise RecordError(f"the probe's caps: {exc}") from None


def _target(value: Any, locator: Locator) -> TargetSplits:
    value = _dict(value, "the probe's target")
    name = checked_text(value.get("name"), "target name") or ""
    if not name or len(name) > MAX_NAME:
        raise RecordError("the probe's target has no usable name")
    if "directory" in value:
        where = _dict(value["directory"], "the probe's target directory")
        if where.get("kind") not in ("sample", "server"):
            raise RecordError("the probe's target directory is not a sample or server folder")
        return TargetSplits.from_directory(locator.path(where, name), name=name)
    uploads = _dict(value.get("uploads"), "the probe's target files")
    if set(uploads) - {"train", "test", "dev"} or not {"train", "test"} <= set(uploads):
        raise RecordError("the probe's target files are not train, test and dev")
    paths = {}
    for split, d in uploads.items():
        d = _dict(d, f"the probe's {split} file")
        if d.get("kind") != "upload":
            raise RecordError(f"the probe's {split} file is not an upload")
        paths[split] = locator.path(d, name)
    return TargetSplits(name, paths["train"], paths["test"], paths.get("dev"))


def _matrix(params: dict[str, Any]) -> dict[str, Any]:
    job = job_from(params.get("job"))
    if job is None:
        raise RecordError("its matrix choices are not as this app writes them")
    for what, names in (("sources", job.sources), ("targets", job.targets), ("measures", job.measures)):
        _names(names, f"its {what}")
    unknown = [m for m in job.measures if m not in all_measures()]
    if unknown:
        raise RecordError(f"unknown measure {unknown[0][:40]!r}")
    _int(job.samples, "its number of sub-corpora", 1, 1000)
    _int(job.sample_tokens, "its tokens per sample", 1, 10**11, optional=True)
    from simcore.corpora.tokenize import TokenizerOptions
    from simcore.measures.options import MeasureOptions

    try:
        MeasureOptions.from_dict(job.options)
        TokenizerOptions(**job.tokenizer)
    except (TypeError, ValueError, SimcoreError) as exc:
        raise RecordError(f"its options: {str(exc)[:200]}") from None
    return {"job": job, "demo": _bool(params.get("demo", False), "its demo flag")}


def _selection(params: dict[str, Any], locator: Locator) -> dict[str, Any]:
    from simcore.selection.options import SelectionOptions

    label = (checked_text(params.get("label"), "selection label") or "")[:MAX_NAME]
    chosen = _dict(params.get("options"), "its selection options")
    if set(chosen) - set(SELECTION_FIELDS):
        raise RecordError("its selection options have fields the form does not set")
    try:
        options = SelectionOptions(**chosen)
    except (TypeError, ValueError, SimcoreError) as exc:
        raise RecordError(f"its selection options: {str(exc)[:200]}") from None
    top = _int(params.get("top"), "its top", 1, 10**10, optional=True)
    fraction = _float(params.get("fraction"), "its fraction", 0.0, 1.0, optional=True)
    if (top is None) == (fraction is None):
        raise RecordError("it keeps neither a top number nor a fraction of sentences")
    return {"label": label, "pool": locator.corpus(params.get("pool")),
            "target": checked_text(params.get("target"), "selection target") or "", "options": options, "top": top,
            "fraction": fraction, "keep_duplicates": _bool(params.get("keep_duplicates"), "keep duplicates"),
            "min_tokens": _int(params.get("min_tokens", 1), "its minimum length", 1, 10_000)}


def _probe(params: dict[str, Any], locator: Locator, resolve_model: Any) -> dict[str, Any]:
    kind = params.get("probe")
    if kind not in ("vectors", "lm"):
        raise RecordError("it is neither a word-vector nor a language-model probe")
    out: dict[str, Any] = {"probe": kind, "sources": _names(params.get("sources"), "its sources"),
                           "target": _target(params.get("target"), locator),
                           "seeds": _int(params.get("seeds"), "its seeds", 1, 100)}
    if kind == "vectors":
        out["caps"] = _caps(ProbeCaps, params.get("caps"))
        out["source_tokens"] = _int(params.get("source_tokens"), "its source tokens", 1, 10**11, optional=True)
        return out
    out["caps"] = _caps(LMCaps, params.get("caps"))
    model = checked_text(params.get("model"), "model directory", optional=True)
    out["model"] = None if not model else str(resolve_model(model))  # only inside the server's data roots
    out["max_minutes"] = _float(params.get("max_minutes"), "its time limit", 0.0, 1e6)
    out["force"] = _bool(params.get("force"), "its force flag")
    out["plan_only"] = _bool(params.get("plan_only"), "its plan-only flag")
    return out


def _target_work(kind: str, params: dict[str, Any]) -> dict[str, Any]:
    target = checked_text(params.get("target"), "its target") or ""
    if kind != TARGET_PREFIX + target:
        raise RecordError("its target is not the one its kind names")
    sources = params.get("sources")
    if not isinstance(sources, list) or len(sources) > 1000 or not all(
            isinstance(v, str) and 0 < len(v) <= MAX_NAME for v in sources):
        raise RecordError("its sources are not a list of corpus names")
    return {"target": target, "sources": tuple(sources)}


def _record_text(value: Any, what: str, longest: int) -> str:
    """A title or progress message as this app writes them: text of at most ``longest`` characters."""
    if not isinstance(value, str) or len(value) > longest:
        raise RecordError(f"{what} is not text of at most {longest:,} characters")
    return value


def parse(data: bytes, locator: Locator, resolve_model: Any = None) -> JobRecord:
    """A record checked field by field (RecordError, one line, for anything this app does not write)."""
    if not data or len(data) > MAX_RECORD_BYTES:
        raise RecordError("a job record is empty or too large")
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise RecordError("a job record is not readable JSON") from None
    except RecursionError:
        raise RecordError("a job record is nested too deeply") from None
    raw = _dict(raw, "a job record")
    if raw.get("format") != RECORD_FORMAT or raw.get("version") != 1:
        raise RecordError("a job record is not one this app writes")
    kind = raw.get("kind")
    if not known_kind(kind):
        raise RecordError(f"a job record names no known kind of job ({str(kind)[:40]!r})")
    title = _record_text(raw.get("title"), "its title", MAX_NAME)
    message = _record_text(raw.get("message", ""), "its progress message", 300)
    params = _dict(raw.get("params"), "its parameters")
    try:
        if kind == "matrix":
            checked = _matrix(params)
        elif kind == "selection":
            checked = _selection(params, locator)
        elif kind not in KINDS:
            checked = _target_work(kind, params)
        else:
            checked = _probe(params, locator, resolve_model or locator.resolve_server)
    except RecordError:
        raise
    except SimcoreError as exc:
        raise RecordError(f"{title or kind}: {str(exc)[:300]}") from None
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise RecordError(f"{title or kind}: its parameters are not as this app writes them ({exc})"[:300]) from None
    server = raw.get("server")
    return JobRecord(kind=kind, title=title, started=_float(raw.get("started"), "its start time") or 0.0,
                     server=server if isinstance(server, str) else "",
                     pid=_int(raw.get("pid"), "its process id", 0, 2**31) or 0,
                     status=raw.get("status") if raw.get("status") in ("running", "done") else "running",
                     message=message,
                     fraction=_float(raw.get("fraction", 0.0), "its progress", 0.0, 1.0) or 0.0,
                     done=_int(raw.get("done", 0), "its count of values done") or 0,
                     total=_int(raw.get("total"), "its count of values", optional=True), params=checked,
                     worker=_int(raw.get("worker", 0), "its worker's process id", 0, 2**31) or 0,
                     worker_started=_float(raw.get("worker_started"), "its worker's start time", optional=True))
