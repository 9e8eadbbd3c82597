"""Long work that belongs to the session, not to a page script.

A page starts a job (``start``); the work runs in a thread, so it goes on while the user opens other
pages. The worker never calls Streamlit: it updates the job's progress, checks the cancel flag each
time it reports progress, and leaves its result on the job. The next run of any page hands finished
jobs to their ``on_done`` callback (``collect``), which files the result in the session's state.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from simcore.errors import SimcoreError

from .state import AppState

RUNNING, DONE, FAILED, CANCELLED = "running", "done", "failed", "cancelled"


class JobCancelled(Exception):
    """Raised inside the worker at its next progress report once the user pressed Cancel."""


@dataclass
class BackgroundJob:
    kind: str
    title: str
    params: Any = None  # the choices that started it (kept for the page's form)
    message: str = "starting"
    fraction: float = 0.0
    status: str = RUNNING
    result: Any = None
    error: str | None = None
    # Rows finished so far, for jobs that produce them one by one (the matrix's cells).
    partial: list[dict[str, Any]] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    finished: float | None = None
    collected: bool = False
    on_done: Callable[[AppState, BackgroundJob], None] | None = field(default=None, repr=False)
    _cancel: threading.Event = field(default_factory=threading.Event, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    @property
    def running(self) -> bool:
        return self.status == RUNNING

    @property
    def cancel_requested(self) -> bool:
        return self._cancel.is_set()

    def progress(self, message: str, fraction: float) -> None:
        """The worker's progress report; raises JobCancelled once the user asked to stop."""
        if self._cancel.is_set():
            raise JobCancelled
        self.message = str(message)[:160]
        self.fraction = max(0.0, min(1.0, float(fraction)))

    def check(self) -> None:
        if self._cancel.is_set():
            raise JobCancelled

    def cancel(self) -> None:
        self._cancel.set()
        if self.running:
            self.message = "cancelling…"

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the worker ends (tests, scripts); True when it did."""
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.running

    def elapsed(self) -> float:
        return (self.finished or time.time()) - self.started


def running(state: AppState, kind: str) -> BackgroundJob | None:
    job = state.jobs.get(kind)
    return job if job is not None and job.running else None


def start(state: AppState, kind: str, title: str, work: Callable[[BackgroundJob], Any],
          on_done: Callable[[AppState, BackgroundJob], None], params: Any = None) -> BackgroundJob:
    """Run ``work(job)`` in a thread owned by this session; one job of a kind at a time."""
    if running(state, kind) is not None:
        raise SimcoreError(f"a {kind} computation is already running; wait for it or cancel it in the sidebar")
    job = BackgroundJob(kind=kind, title=title, params=params, on_done=on_done)
    job._thread = threading.Thread(target=_run, args=(job, work), name=f"simcore-{kind}-job", daemon=True)
    state.jobs[kind] = job
    job._thread.start()
    return job


def _run(job: BackgroundJob, work: Callable[[BackgroundJob], Any]) -> None:
    try:
        job.result = work(job)
        job.fraction, job.message, job.status = 1.0, "done", DONE
    except JobCancelled:
        job.status, job.message = CANCELLED, "cancelled"
    except SimcoreError as exc:
        job.status, job.error = FAILED, str(exc)
    except Exception as exc:  # noqa: BLE001 - a worker's failure becomes a message, never a dead thread
        job.status, job.error = FAILED, f"Something went wrong: {exc}"
    finally:
        job.finished = time.time()


def collect(state: AppState) -> None:
    """Hand each ended job to its on_done (in the page script's thread) once; messages go to the flash."""
    for job in list(state.jobs.values()):
        if job.running or job.collected:
            continue
        job.collected = True
        if job.status == DONE and job.on_done is not None:
            try:
                job.on_done(state, job)
            except SimcoreError as exc:
                state.say("error", str(exc))
        elif job.status == FAILED:
            state.say("error", f"{job.title} stopped: {job.error}")
        elif job.status == CANCELLED:
            state.say("info", f"{job.title} was cancelled.")
