"""Worker processes that end with whoever started them.

A pool worker (``simcore matrix --jobs N``, TVcC's tagging beside a matrix, the dashboard's job process
and its own workers) must not outlive its parent: a parent stopped by SIGTERM, SIGINT or ``kill -9``
left its workers re-parented to PID 1, computing or idling at hundreds of MB each, and a resumed job
then ran beside them. Three layers, each enough on its own where it applies:

- :func:`die_with_parent`, called first in every child: on Linux the kernel sends the child SIGKILL
  when its parent ends (``prctl(PR_SET_PDEATHSIG)``, set through ctypes), whatever killed the parent;
  elsewhere a watchdog thread polls the parent's id and ends the child once it changes.
- :func:`stop_pool`: a parent that stops on an exception (KeyboardInterrupt, SystemExit from SIGTERM)
  cancels its pool's queue and terminates its workers instead of waiting for their tasks.
- :func:`program_ends_with_me`: a program a worker runs (KenLM's ``lmplz``) gets the same kernel
  signal when the worker ends.
- :func:`end_group`: the dashboard's job process leads a process group of its own, so the job and all
  its workers are ended by one signal (on Cancel, on the server's exit, before a Resume).

Every artefact is written atomically by the store, so a worker killed mid-task leaves nothing half-written.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any

PR_SET_PDEATHSIG = 1
WATCH_EVERY = 0.5  # seconds between two looks at the parent's id (the watchdog, where prctl is missing)


@functools.lru_cache(maxsize=1)
def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl`` (Linux only), looked up once; None where there is none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _set_parent_death_signal(sig: int) -> bool:
    """Ask the Linux kernel to send ``sig`` here when the parent ends; False where it cannot."""
    prctl = _prctl()
    return prctl is not None and prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0


def program_ends_with_me() -> Callable[[], None] | None:
    """A ``preexec_fn`` for :mod:`subprocess`: the program started (KenLM's ``lmplz``) gets SIGKILL
    from the kernel when this process ends, however it ends (a worker killed with SIGKILL cannot end
    its own children, and ``lmplz`` went on running re-parented to PID 1). None without prctl."""
    prctl = _prctl()  # looked up here: after the fork only this call runs (no import, no dlopen)
    if prctl is None:
        return None
    parent = os.getpid()

    def arm() -> None:
        prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # this process ended before the kernel was asked to watch it
            os._exit(1)

    return arm


def _watch_parent(parent: int, sig: int) -> None:
    while True:
        time.sleep(WATCH_EVERY)
        if os.getppid() != parent:
            os.kill(os.getpid(), sig)
            os._exit(1)  # a signal that is caught or ignored must not keep an orphan alive


def die_with_parent(parent: int | None = None, *, ignore_interrupt: bool = True,
                    sig: int = signal.SIGKILL) -> None:
    """Make this (child) process end when ``parent`` (the process that started it) ends.

    Call it first in the child, with the parent's id taken in the parent (``os.getpid()`` there): a
    parent that died before this call is then seen at once. With ``ignore_interrupt`` the child ignores
    SIGINT: Ctrl-C in a terminal reaches the whole process group, and the parent, not each worker, stops
    the work and says so once. SIGTERM ends the child at once, whatever handler it inherited.
    """
    parent = os.getppid() if parent is None else parent
    # a forked worker inherits its parent's Python handler (the CLI turns SIGTERM into an exception, which a
    # pool worker would catch as its task's failure and live on): here SIGTERM ends the process
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if ignore_interrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    armed = _set_parent_death_signal(sig)
    if os.getppid() != parent:  # the parent ended before the kernel was asked to watch it
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch_parent, args=(parent, sig), name="simcore-parent-watch",
                         daemon=True).start()


def _init_worker(parent: int, initializer: Any, initargs: tuple[Any, ...]) -> None:
    die_with_parent(parent)
    if initializer is not None:
        initializer(*initargs)


def process_pool(jobs: int, method: str, initializer: Any = None,
                 initargs: tuple[Any, ...] = ()) -> ProcessPoolExecutor:
    """A ProcessPoolExecutor of ``jobs`` workers (``fork`` or ``spawn``) that end with this process."""
    return ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context(method),
                               initializer=_init_worker, initargs=(os.getpid(), initializer, initargs))


def pool_initializer(initializer: Any = None) -> tuple[Any, tuple[Any, ...]]:
    """``(initializer, initargs)`` for a ``multiprocessing.Pool`` whose workers end with this process and
    then run ``initializer`` (pass its own arguments after these: ``initargs + (a, b)``)."""
    return _init_then, (os.getpid(), initializer)


def _init_then(parent: int, initializer: Any, *args: Any) -> None:
    die_with_parent(parent)
    if initializer is not None:
        initializer(*args)


def stop_pool(executor: Executor) -> None:
    """Stop a pool now: queued tasks cancelled, running workers terminated (not waited for)."""
    # taken before the shutdown, which forgets them (terminating after it reached no process, and the
    # interpreter's exit then waited for the workers' tasks to finish)
    processes = list((getattr(executor, "_processes", None) or {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        try:
            process.terminate()
        except (OSError, ValueError, AttributeError):
            pass


def alive(pid: int, started: float | None = None) -> bool:
    """Whether process ``pid`` runs (and, with ``started``, is the one that began then, not a reused id)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if started is None:
        return True
    began = start_time(pid)
    return began is None or abs(began - started) < 2.0


def start_time(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), from ``/proc``; None where unknown."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks = int(fields[19])  # field 22 of stat: start time in clock ticks after boot
        with open("/proc/stat", encoding="ascii") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def group_members(pgid: int) -> list[int]:
    """The living processes of process group ``pgid`` (zombies left out), from ``/proc``."""
    found = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if len(fields) > 2 and fields[0] != "Z" and fields[2] == str(pgid):
            found.append(int(name))
    return found


def end_group(pgid: int, started: float | None = None, timeout: float = 10.0) -> bool:
    """End process group ``pgid`` (a job process and its workers): SIGTERM, then SIGKILL after ``timeout``
    seconds. With ``started``, only when its leader is the process that began then (or is gone while
    members remain). True once no member is left."""
    if pgid <= 1 or pgid == os.getpgrp():
        return False  # never this process's own group
    if started is not None and alive(pgid) and not alive(pgid, started):
        return True  # the id was reused by an unrelated process: the job's group is long gone
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, timeout)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not group_members(pgid):
                return True
            time.sleep(0.1)
    return not group_members(pgid)
