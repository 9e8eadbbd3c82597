"""A workspace's running jobs kept on disk with it (:mod:`dashboard.workspace.records`), so that a job whose
server stopped is found again when the workspace is opened: shown as interrupted, with Resume and Dismiss.

``recorder`` makes a job's ``on_change`` (dashboard.jobs): the record is written when the job starts, as it
progresses and when it finishes; a cancelled or failed job's record goes at once, a finished one's once its
result is filed in the workspace (``close``): a server that stops between the two leaves the record, and
Resume then finds every value in the store.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import jobs
from .workspace import records as rec
from .workspace.folders import Workspaces
from .workspace.format import valid_id
from .workspace.opening import Locator

INTERRUPTED = "interrupted_jobs"  # key in state.extra: kind -> checked JobRecord
_LOCK = threading.Lock()  # record writes and removals of this server, one at a time (a late write never revives one)


def _spaces(store_root: Path | str) -> Workspaces:
    return Workspaces(Path(store_root) / "workspaces")


def recorder(store_root: Path | str, ws_id: str, kind: str,
             params: dict[str, Any]) -> Callable[[jobs.BackgroundJob], None] | None:
    """The ``on_change`` that keeps a job's record in workspace ``ws_id`` (None outside a workspace)."""
    if not valid_id(ws_id):
        return None
    spaces = _spaces(store_root)

    def on_change(job: jobs.BackgroundJob) -> None:
        with _LOCK:
            if job.__dict__.get("_record_closed"):
                return
            if job.status in (jobs.RUNNING, jobs.DONE):  # done: kept until its result is filed (close)
                rec.write(spaces, ws_id, rec.record(
                    kind, job.title, params, started=job.started, server=jobs.SERVER, message=job.message,
                    fraction=job.fraction, done=len(job.partial), total=job.total, status=job.status,
                    worker=job.worker, worker_started=job.worker_started))
            else:
                job.__dict__["_record_closed"] = True
                rec.remove(spaces, ws_id, kind)

    return on_change


def close(store_root: Path | str, ws_id: str, job: jobs.BackgroundJob) -> None:
    """The job's result is filed in the workspace (or it ended without one): its record goes."""
    if not valid_id(ws_id):
        return
    with _LOCK:
        job.__dict__["_record_closed"] = True
        rec.remove(_spaces(store_root), ws_id, job.kind)


def find_interrupted(store_root: Path | str, ws_id: str, locator: Locator,
                     resolve_model: Callable[[str], Any] | None = None) -> tuple[dict[str, rec.JobRecord], list[str]]:
    """The workspace's jobs whose server process is gone, checked, by kind; and one line per refused record
    (a refused record is removed: it can never be resumed)."""
    spaces = _spaces(store_root)
    found: dict[str, rec.JobRecord] = {}
    notes: list[str] = []
    live = jobs.of_workspace(ws_id)
    for name, data in rec.read_all(spaces, ws_id).items():
        try:
            stem = name[:-len(".json")] if name.endswith(".json") else ""
            if not (stem in rec.KINDS or stem.startswith("target-")):
                raise rec.RecordError(f"{name[:60]!r} is not a job record this app writes")
            record = rec.parse(data, locator, resolve_model)
            kind = record.kind
            if rec.file_name(kind) != name:
                raise rec.RecordError(f"{name[:60]!r} holds a record of another kind of job")
        except rec.RecordError as exc:
            notes.append(f"A job record of this workspace was refused and removed: {exc}")
            _remove_file(spaces, ws_id, name)
            continue
        here = live.get(kind)
        if record.server == jobs.SERVER and here is not None and (here.running or not here.collected):
            continue  # this server runs it (or has its result to file)
        if record.server != jobs.SERVER and record.server_alive(jobs.SERVER):
            continue  # another server process that is still running
        found[kind] = record
    return found, notes


def _remove_file(spaces: Workspaces, ws_id: str, name: str) -> None:
    try:
        path = spaces.folder(ws_id) / rec.FOLDER / name
        if path.parent.is_dir() and not path.parent.is_symlink():
            path.unlink(missing_ok=True)
    except OSError:
        pass


def dismiss(store_root: Path | str, ws_id: str, kind: str) -> None:
    """Forget an interrupted job (its stored artefacts stay in the store)."""
    with _LOCK:
        rec.remove(_spaces(store_root), ws_id, kind)


def describe(record: rec.JobRecord) -> str:
    """``Similarity matrix (126 values) was interrupted at 32% (40 of 126 values; last: ppl of news → forum)``."""
    import time

    got = f"{record.done} of {record.total} values, " if record.total else ""
    last = f"; last: {record.message}" if record.message else ""
    when = time.strftime("%d %b %H:%M", time.localtime(record.started)) if record.started else "earlier"
    return (f"{record.title}, started {when}, was interrupted at {record.fraction:.0%} ({got}the server stopped"
            f"{last}). Resume starts it again and reuses everything already stored.")
