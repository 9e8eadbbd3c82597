"""Long work that belongs to the session, not to a page script.

A page starts a job (``start``). The work runs in a child process of its own, watched by a thread of
the session, so it goes on while the user opens other pages and never competes for the server's
interpreter lock with the page scripts of other sessions (in one process, ten sessions' refreshing
pages starved a computation of it). The work reports progress and finished rows through a pipe; the
watcher copies them onto the job, which the sidebar of any page shows. Cancel sets a flag that the
work sees at its next progress report, so it stops cleanly between steps; what it had stored stays in
simcore's store. The next run of any page hands ended jobs to their ``on_done`` callback (``collect``),
which files the result in the session's state.

``work`` must be picklable (a module-level function, or ``functools.partial`` of one): it runs as
``work(task)`` in a freshly started interpreter, with ``task.progress``, ``task.check`` and
``task.partial.append`` as in the page process.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import secrets
import signal
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from simcore.utils.errors import SimcoreError
from simcore.utils.lifecycle import die_with_parent, start_time

from .state import AppState

_CONTEXT = multiprocessing.get_context("spawn")  # a clean child: the server process has many threads
_CANCEL_GRACE = 30.0  # seconds the work has, after Cancel, to reach its next progress report
_children: set[Any] = set()  # running job processes, stopped when the server exits
# This server process, in the records of its jobs (a record of another server whose process is gone: interrupted).
SERVER = secrets.token_hex(8)
RECORD_EVERY = 2.0  # seconds between two writes of a running job's record


@atexit.register
def _stop_children() -> None:
    """The server stops: every job process ends, and its workers with it (its process group)."""
    for child in list(_children):
        _end(child)


def _end(child: Any) -> None:
    """A job's process and its workers (the process group it leads) sent SIGTERM; the workers that outlive
    it end with it anyway (simcore.utils.lifecycle.die_with_parent)."""
    try:
        os.killpg(child.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError, TypeError):
        pass
    try:
        child.terminate()
    except (OSError, ValueError, AttributeError):
        pass

RUNNING, DONE, FAILED, CANCELLED = "running", "done", "failed", "cancelled"


class JobCancelled(Exception):
    """Raised inside the worker at its next progress report once the user pressed Cancel."""


def duration(seconds: float) -> str:
    """``45 s``, ``3 min 20 s``, ``1 h 5 min``: a time span as people say it."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


@dataclass
class BackgroundJob:
    """One job of a session, as the pages show it.

    Its ``fraction`` never goes backwards: it is the furthest of what the work reported and, for work
    that finishes rows (the matrix's cells), the expected cost of the finished rows over the expected
    cost of all (``cost`` weighs a row: a word-vector cell costs far more than a coverage count).
    """

    kind: str
    title: str
    params: Any = None  # the choices that started it (kept for the page's form)
    message: str = "starting a worker process"
    fraction: float = 0.0
    total: int | None = None  # rows expected, when known
    cost: Callable[[dict[str, Any]], float] | None = field(default=None, repr=False)
    total_cost: float = 0.0
    done_cost: float = 0.0
    work_started: float | None = None  # when the work itself began (after waiting for the server's lock)
    expected: float | None = None  # seconds the work should take, estimated before it began (stored paces)
    worker: int = 0  # the job's process (leader of its process group), once started
    worker_started: float | None = None
    status: str = RUNNING
    result: Any = None
    error: str | None = None
    # Rows finished so far, for jobs that produce them one by one (the matrix's cells).
    partial: list[dict[str, Any]] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    finished: float | None = None
    collected: bool = False
    saved: bool = False  # its result is in the workspace on disk (the other tabs can merge it)
    on_done: Callable[[AppState, BackgroundJob], None] | None = field(default=None, repr=False)
    # Called (in the watcher's thread) when the job starts, as it progresses (every RECORD_EVERY s) and when it
    # ends: the dashboard keeps the job's record in the workspace on disk with it (dashboard.job_records).
    on_change: Callable[[BackgroundJob], None] | None = field(default=None, repr=False)
    _noted: float = field(default=0.0, repr=False)
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
        self.message = _in_progress(str(message)[:160], fraction)
        self.advance(fraction)

    def expect(self, seconds: float) -> None:
        """The work's own estimate of the time it still needs, once it knows (replaces the one made before)."""
        spent = 0.0 if self.work_started is None else time.time() - self.work_started
        self.expected = spent + max(0.0, float(seconds))

    def advance(self, fraction: float) -> None:
        """Move the bar to ``fraction`` (or to the share of the finished rows' cost when that is ahead); never back."""
        by_rows = self.done_cost / self.total_cost if self.total_cost > 0 else 0.0
        ahead = max(self.fraction, float(fraction), min(0.99, by_rows))
        self.fraction = max(0.0, min(1.0 if self.status != RUNNING else 0.999, ahead))

    def add_row(self, row: dict[str, Any]) -> None:
        """A finished row: kept, and counted towards the progress by its expected cost."""
        self.partial.append(row)
        if self.cost is not None and self.total_cost > 0:
            self.done_cost += self.cost(row)
            self.advance(self.fraction)

    def eta(self) -> float | None:
        """Seconds left: the estimate made before the work began less the time spent, weighed against the
        pace so far as the work goes on (the bar's share of it); None with neither to go by."""
        if self.work_started is None or not self.running:
            return None
        spent = time.time() - self.work_started
        planned = None if self.expected is None else max(0.0, self.expected - spent)
        if self.fraction < 0.01 or spent < 2:
            return planned
        by_pace = spent * (1 - self.fraction) / self.fraction
        if planned is None or planned == 0.0:  # past its estimate: only the pace says anything
            return by_pace
        return self.fraction * by_pace + (1 - self.fraction) * planned

    def line(self) -> str:
        """``Similarity matrix: ppl of news → forum — 34 of 108 values · 31% · 1 min 05 s, about 2 min 20 s left``."""
        parts = [f"{self.fraction:.0%}"]
        if self.total and self.partial:
            parts.insert(0, f"{len(self.partial)} of {self.total} values")
        elif self.total:  # the corpora are read and prepared before any value: say so, not "0 of 126" throughout
            parts.insert(0, f"{self.total} values, the first once the corpora are prepared")
        parts.append(duration(self.elapsed()))
        left = self.eta()
        if left is not None:
            parts[-1] += f", about {duration(left)} left"
        return f"{self.title}: {self.message} — " + " · ".join(parts)

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

    def note(self, force: bool = False) -> None:
        """Tell ``on_change`` (at most every RECORD_EVERY s unless ``force``); its failure never stops the job."""
        if self.on_change is None or (not force and time.time() - self._noted < RECORD_EVERY):
            return
        self._noted = time.time()
        try:
            self.on_change(self)
        except Exception:  # noqa: BLE001 - a record that cannot be written must not stop the work
            pass


# ---- jobs belong to the workspace ------------------------------------------------------------------------
# One dict of jobs per workspace on this server, shared by every session (tab) of that workspace: a reload or
# a second tab finds a running job, shows its progress, can cancel it, and the first to run after it ends files
# its result in the workspace (the other tabs merge it from disk).
_WORKSPACES: dict[str, dict[str, BackgroundJob]] = {}
_WORKSPACES_LOCK = threading.Lock()
_COLLECT = threading.Lock()


def of_workspace(ws_id: str) -> dict[str, BackgroundJob]:
    """The jobs of the workspace ``ws_id`` on this server (the same dict for every tab of it)."""
    with _WORKSPACES_LOCK:
        return _WORKSPACES.setdefault(ws_id, {})


def running(state: AppState, kind: str) -> BackgroundJob | None:
    job = state.jobs.get(kind)
    return job if job is not None and job.running else None


def start(state: AppState, kind: str, title: str, work: Callable[[Any], Any],
          on_done: Callable[[AppState, BackgroundJob], None], params: Any = None,
          lock: threading.Lock | None = None, total: int | None = None,
          cost: Callable[[dict[str, Any]], float] | None = None, total_cost: float = 0.0,
          expected: float | None = None,
          on_change: Callable[[BackgroundJob], None] | None = None) -> BackgroundJob:
    """Run ``work(task)`` in a child process owned by this session; one job of a kind at a time.

    With ``lock`` (shared by the sessions of this server) the job waits for it before it starts, so
    computations on the same artefacts run one after another instead of all at once on a few cores.
    """
    if running(state, kind) is not None:
        raise SimcoreError(f"a {kind} computation is already running; wait for it or cancel it in the sidebar")
    job = BackgroundJob(kind=kind, title=title, params=params, on_done=on_done, total=total, cost=cost,
                        total_cost=total_cost, expected=expected, on_change=on_change)
    job.note(force=True)  # recorded before it runs: a server that stops now leaves it interrupted, not lost
    job._thread = threading.Thread(target=_watch, args=(job, work, lock), name=f"simcore-{kind}-job", daemon=True)
    state.jobs[kind] = job
    job._thread.start()
    return job


def _watch(job: BackgroundJob, work: Callable[[Any], Any], lock: threading.Lock | None) -> None:
    """The session's side of a job: wait for the lock, start the child, copy its reports onto the job."""
    try:
        if lock is not None:
            while not lock.acquire(timeout=0.5):
                job.progress("waiting for another computation on this server to finish", 0.0)
        job.work_started = time.time()
        job.message = "starting a worker process (loading simcore)"
        try:
            _supervise(job, work)
        finally:
            if lock is not None:
                lock.release()
    except JobCancelled:
        job.status, job.message = CANCELLED, "cancelled"
    except Exception as exc:  # noqa: BLE001 - a failure becomes a message, never a dead thread
        job.status, job.error = FAILED, f"Something went wrong: {exc}"
    finally:
        job.finished = time.time()
        job.note(force=True)


def _supervise(job: BackgroundJob, work: Callable[[Any], Any]) -> None:
    receive, send = _CONTEXT.Pipe(duplex=False)
    cancel = _CONTEXT.Event()
    # not daemonic, so the work may start processes of its own (spaCy workers, TVcC's tagging)
    child = _CONTEXT.Process(target=_child, args=(work, send, cancel, os.getpid()), name=f"simcore-{job.kind}",
                             daemon=False)
    with _plain_main():
        child.start()
    _children.add(child)
    job.worker, job.worker_started = child.pid or 0, start_time(child.pid or 0)
    job.note(force=True)  # its record names the process: a Resume after a crash ends it first
    send.close()  # the child holds the only writing end: end of file once it exits
    cancel_sent: float | None = None
    heard = False  # nothing from the child yet: it is still starting and has stored nothing
    try:
        while True:
            if job.cancel_requested and not heard:
                _end(child)  # Cancel during the start is at once
                job.status, job.message = CANCELLED, "cancelled"
                return
            if job.cancel_requested and cancel_sent is None:
                cancel.set()
                cancel_sent = time.time()
            if cancel_sent is not None and time.time() - cancel_sent > _CANCEL_GRACE:
                _end(child)  # its stored artefacts are whole: the store writes atomically
                job.status, job.message = CANCELLED, "cancelled"
                return
            if not receive.poll(0.25):
                continue
            try:
                message = receive.recv()
            except EOFError:
                child.join(5)
                job.status = FAILED
                job.error = f"the computation stopped unexpectedly (exit code {child.exitcode})"
                return
            heard = True
            if _record(job, message):
                return
            job.note()
    finally:
        receive.close()
        child.join(5)
        if child.is_alive():
            child.kill()
        try:
            os.killpg(child.pid, signal.SIGKILL)  # a worker of it that is still there (none should be)
        except (ProcessLookupError, PermissionError, TypeError):
            pass
        _children.discard(child)


_MAIN_SWAP = threading.Lock()


@contextmanager
def _plain_main() -> Iterator[None]:
    """While a child is spawned: an empty ``__main__`` in place of the page script's.

    Streamlit runs each page script as ``__main__`` (with its ``__file__``), and a spawned child re-runs the
    parent's ``__main__`` file to prepare itself: every job's child ran the whole page (app.py) in bare
    mode, a thousand "missing ScriptRunContext" warnings on a demo start, and could have started jobs of
    its own. The work needs nothing from ``__main__`` (it is a function of dashboard.work).
    """
    with _MAIN_SWAP:
        saved = sys.modules.get("__main__")
        neutral = types.ModuleType("__main__")
        sys.modules["__main__"] = neutral
        try:
            yield
        finally:
            # a page run that began meanwhile set its own __main__: leave that one in place
            if sys.modules.get("__main__") is neutral and saved is not None:
                sys.modules["__main__"] = saved


def _in_progress(message: str, fraction: float) -> str:
    """A step's own "done" while the job goes on (the sidebar read "done … 67%") said as what it is."""
    if message.strip().lower() == "done" and float(fraction) < 1.0:
        return "one step finished; going on with the next"
    return message


def _record(job: BackgroundJob, message: tuple[Any, ...]) -> bool:
    """Copy one report of the child onto the job; True once the work has ended."""
    what = message[0]
    if what == "progress":
        job.message = _in_progress(message[1], message[2])
        job.advance(message[2])
    elif what == "row":
        job.add_row(message[1])
    elif what == "expected":
        job.expect(message[1])
    elif what == DONE:
        job.result = message[1]
        job.fraction, job.message, job.status = 1.0, "done", DONE
    elif what == CANCELLED:
        job.status, job.message = CANCELLED, "cancelled"
    elif what == FAILED:
        job.status, job.error = FAILED, message[1]
    return what in (DONE, CANCELLED, FAILED)


class _Rows:
    """``task.partial`` in the child: appended rows go to the session."""

    def __init__(self, send: Connection) -> None:
        self._send = send

    def append(self, row: Any) -> None:
        self._send.send(("row", row))


class ChildTask:
    """What ``work`` gets in the child process: progress reports, the cancel check, finished rows."""

    def __init__(self, send: Connection, cancel: Any) -> None:
        self._send, self._cancel = send, cancel
        self.partial = _Rows(send)

    def progress(self, message: str, fraction: float) -> None:
        """Report progress; raises JobCancelled once the user asked to stop."""
        self.check()
        self._send.send(("progress", str(message)[:160], max(0.0, min(1.0, float(fraction)))))

    def check(self) -> None:
        if self._cancel.is_set():
            raise JobCancelled

    def expect(self, seconds: float) -> None:
        """The time the work still needs, as it estimates it once it knows (the sidebar's time left)."""
        self._send.send(("expected", float(seconds)))


def _child(work: Callable[[Any], Any], send: Connection, cancel: Any, server: int) -> None:
    """The job's process: the leader of a process group of its own (its workers join it), ending with the
    server process that started it, whatever stopped that (SIGTERM, Ctrl-C, kill -9)."""
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    die_with_parent(server)
    task = ChildTask(send, cancel)
    try:
        result = work(task)
        message: tuple[Any, ...] = (DONE, result)
    except JobCancelled:
        message = (CANCELLED,)
    except SimcoreError as exc:
        message = (FAILED, str(exc))
    except Exception as exc:  # noqa: BLE001 - reported to the session as a message, never a traceback
        message = (FAILED, f"Something went wrong: {exc}")
    try:
        send.send(message)
    except Exception as exc:  # noqa: BLE001 - a result that cannot be sent back is a failure, said as one
        send.send((FAILED, f"Something went wrong: the result could not be passed back ({exc})"))
    send.close()


def collect(state: AppState) -> list[BackgroundJob]:
    """Hand each ended job to its on_done (in the page script's thread) once, whichever tab of the workspace
    runs first; messages go to the flash. Returns the jobs filed here (to be marked saved once written)."""
    filed = []
    for job in list(state.jobs.values()):
        with _COLLECT:
            if job.running or job.collected:
                continue
            job.collected = True
        filed.append(job)
        if job.status == DONE and job.on_done is not None:
            try:
                job.on_done(state, job)
            except SimcoreError as exc:
                state.say("error", str(exc))
        elif job.status == FAILED:
            state.say("error", f"{job.title} stopped: {job.error}")
        elif job.status == CANCELLED:
            state.say("info", f"{job.title} was cancelled.")
    return filed
