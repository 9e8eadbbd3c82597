"""Resume and Dismiss for a workspace's interrupted jobs (their server stopped; dashboard.job_records).

Resume starts the same job again from its checked record, through the same function the page's form
calls: everything the first run stored (cells, samples, models, probe runs, pool scores) is under
fingerprints in the artefact store, so the new run reads it back and computes only what is missing.
"""

from __future__ import annotations

from functools import partial

from simcore.utils.errors import SimcoreError
from simcore.utils.lifecycle import end_group, group_members

from . import compute, job_records, jobs, probe_job, selection_job, target_job
from .resources import get_store
from .state import AppState
from .workspace.records import JobRecord


def interrupted(state: AppState) -> dict[str, JobRecord]:
    """The workspace's interrupted jobs not started again meanwhile (by this tab or another)."""
    found: dict[str, JobRecord] = state.extra.get(job_records.INTERRUPTED) or {}
    for kind in [k for k in found if jobs.running(state, k) is not None]:
        found.pop(kind)  # resumed in another tab of this workspace
    return found


def resume(state: AppState, kind: str) -> jobs.BackgroundJob | None:
    """Start the interrupted job of ``kind`` again (SimcoreError when it cannot be: a corpus no
    longer loaded; None when nothing is left to do: a target now too small to need its work)."""
    record = interrupted(state).get(kind)
    if record is None:
        raise SimcoreError("that job is no longer interrupted (resumed or dismissed in another tab)")
    end_stale_worker(record)
    p = record.params
    if kind == "matrix":
        job = p["job"]
        if p["demo"]:
            key = compute.answer_key(state, job)
            started = compute.start_matrix(state, job, on_done=partial(compute.demo_finished, key=key),
                                           title=record.title, demo=True)
        else:
            started = compute.start_matrix(state, job, title=record.title)
    elif kind == target_job.kind_of(p.get("target", "")):
        started = target_job.resume_target_work(state, p["target"])
        if started is None:
            job_records.dismiss(get_store().root, state.workspace, kind)
    elif kind == "selection":
        started = selection_job.start_selection(
            state, label=p["label"], pool=p["pool"], target=p["target"], options=p["options"], top=p["top"],
            fraction=p["fraction"], keep_duplicates=p["keep_duplicates"], min_tokens=p["min_tokens"])
    elif p["probe"] == "lm":
        started = probe_job.start_lm_probe(state, probe_job.LMProbeRequest(
            p["sources"], p["target"], p["caps"], p["seeds"], p["model"], p["max_minutes"], p["force"],
            p["plan_only"]))
    else:
        started = probe_job.start_probe(state, probe_job.ProbeRequest(
            p["sources"], p["target"], p["caps"], p["seeds"], p["source_tokens"]))
    state.extra[job_records.INTERRUPTED].pop(kind, None)
    return started


def dismiss(state: AppState, kind: str) -> None:
    """Forget the interrupted job (what it stored stays in the store for a later run)."""
    job_records.dismiss(get_store().root, state.workspace, kind)
    (state.extra.get(job_records.INTERRUPTED) or {}).pop(kind, None)


def end_stale_worker(record: JobRecord) -> None:
    """The interrupted job's process and its workers ended before anything runs again, should any have
    outlived their server (they end with it on their own; this is the guard that no Resume runs beside one).
    SimcoreError when they cannot be ended."""
    if record.worker <= 1 or not group_members(record.worker):
        return
    if not end_group(record.worker, record.worker_started):
        raise SimcoreError(f"the interrupted job's processes (group {record.worker}) are still running and "
                           "cannot be stopped from here; stop them, then press Resume again")
