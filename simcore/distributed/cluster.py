"""Connecting to a Dask cluster, or starting a local one, for the ``matrix`` command.

``--scheduler ADDRESS`` (or ``$SIMCORE_SCHEDULER``) uses an existing cluster; ``--local-cluster N``
starts N worker processes on this machine. With neither, nothing here runs and the matrix is
computed in this process as before. Every worker must see the artefact store at the same path
and have simcore, its requirements and KenLM's programs: :func:`check_workers` says which do not.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..utils.errors import SimcoreError

SCHEDULER_ENV = "SIMCORE_SCHEDULER"
CONNECT_TIMEOUT_S = 20


MAX_LOCAL_WORKERS = 64
@contextlib.contextmanager
def open_client(scheduler: str | None = None, local_workers: int | None = None) -> Iterator[Any]:
    """A ``distributed.Client`` on the scheduler, or on a new local cluster of ``local_workers`` processes.

    Local workers run one task at a time each (simcore's heavy steps use their own threads or
    programs) and share this machine's memory equally.
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:  # pragma: no cover - dask is a pinned requirement
        raise SimcoreError("dask and distributed are not installed; run scripts/install.sh") from exc
    logging.getLogger("distributed").setLevel(logging.ERROR)
    if local_workers:
        # silence_logs: the workers' own log lines (a lost heartbeat at shutdown) are not the user's business
        cluster = LocalCluster(n_workers=local_workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.CRITICAL)
        try:
            with Client(cluster) as client:
                yield client
        finally:
            cluster.close()
        return
    if not scheduler:
        raise SimcoreError("give --scheduler ADDRESS, set SIMCORE_SCHEDULER, or use --local-cluster N")
    try:
        client = Client(scheduler, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError, ValueError) as exc:
        raise SimcoreError(f"cannot reach the Dask scheduler at {scheduler} ({exc}); start one with "
                           "`dask scheduler` and workers with `dask worker ADDRESS`, or use --local-cluster N") from exc
    with client:
        yield client


def worker_report(store_root: str) -> str | None:
    """Run on a worker: None when it can work for simcore, else what is missing."""
    from ..models.kenlm_tools import find_program

    root = Path(store_root)
    if not (root / "signing.key").is_file() or not os.access(root, os.W_OK):
        return f"cannot write to the artefact store {root} (it must be on a filesystem every worker reaches)"
    try:
        for program in ("lmplz", "build_binary"):
            find_program(program)
    except SimcoreError as exc:
        return str(exc)
    return None


def one_line(exc: BaseException) -> str:
    """An exception as one short line (Dask's own messages run over several)."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}"


def scheduler_report() -> None:
    """Run on the scheduler: that it can import simcore is the check (it unpickles simcore's tasks)."""


def check_workers(client: Any, store_root: Path | str) -> int:
    """The number of workers; a clear error when there are none or one cannot use the store."""
    try:
        client.run_on_scheduler(scheduler_report)
    except Exception as exc:  # whatever the scheduler's unpickling raises when simcore is missing there
        raise SimcoreError(f"the Dask scheduler cannot import simcore ({one_line(exc)}); start it in the same "
                           "environment as the workers (see the README)") from exc
    workers = client.scheduler_info().get("workers", {})
    if not workers:
        raise SimcoreError("the Dask cluster has no workers; start some with `dask worker ADDRESS`")
    try:
        reports = client.run(worker_report, str(store_root))
    except ImportError as exc:
        raise SimcoreError(f"simcore cannot be imported on the Dask workers ({exc}); install the same "
                           "environment on every worker") from exc
    problems = {address: report for address, report in reports.items() if report}
    if problems:
        address, report = next(iter(problems.items()))
        raise SimcoreError(f"{len(problems)} of {len(reports)} Dask workers cannot run simcore; {address}: {report}")
    return len(reports)


def scheduler_from_env() -> str | None:
    """``$SIMCORE_SCHEDULER``, where the dashboard sends its computations when set."""
    return os.environ.get(SCHEDULER_ENV) or None
