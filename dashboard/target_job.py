"""A target's own work started the moment it is added (the Corpora page calls
:func:`start_target_work`): a session job that tags it for TVcC, counts its overlap with each loaded
source and trains WVV further on it against every source whose word vectors are stored
(:func:`simcore.matrix.ahead.prepare_target`).

By the time the user has chosen sources and pressed Compute, the matrix job reads that work back
from the store instead of doing it. The job takes the server's computation lock (the one a matrix
job takes), so a Compute pressed meanwhile waits for it and then reuses all of it, rather than
doing the same work beside it on the same cores.

Like every job of a workspace, it is recorded with it (:mod:`dashboard.job_records`): a server
that stops mid-way leaves it interrupted, and Resume (:func:`resume_target_work`) starts it again,
reading back from the store what the first run finished.
"""

from __future__ import annotations

from functools import partial

from simcore.measures.lookup import get_measure
from simcore.utils.errors import SimcoreError

from . import job_records, jobs, work
from .resources import get_bench, get_store, get_workbench
from .state import AppState
from .workspace.records import target_work_params

KIND = "target"  # a job per target: "target NAME"
AHEAD_MIN_TOKENS = 20_000  # below this, the target's work takes about as long as starting a process


def kind_of(name: str) -> str:
    """The job kind of a target's work (one per target, so that several can be queued)."""
    return f"{KIND} {name}"


def worth_ahead(state: AppState, name: str) -> bool:
    """Whether the target's work is worth a process of its own: the target is large enough that
    tagging it takes seconds, or a loaded source is large enough for WVV (its further training on
    the target takes seconds per source). Otherwise the matrix job does it in about the time a
    process takes to start."""
    bench = get_workbench()
    try:
        # tokenized when it was added: from memory
        if bench.tokenize(state.targets[name].corpus).n_tokens >= AHEAD_MIN_TOKENS:
            return True
    except SimcoreError:
        return False  # it cannot be read: the matrix says why in its cells
    wvv = get_measure("wvv").reliable_tokens
    for loaded in state.sources.values():
        try:
            if bench.streams(loaded.corpus) or bench.tokenize(loaded.corpus).n_tokens >= wvv:
                return True
        except SimcoreError:
            continue
    return False


def _done(state: AppState, job: jobs.BackgroundJob) -> None:
    """Nothing to file: the work is in the store, where Compute finds it."""


def start_target_work(state: AppState, names: list[str]) -> list[jobs.BackgroundJob]:
    """Start each added target's work in the background (one job per target, never blocking the
    page); a target already being prepared, or too small to be worth it, is skipped."""
    started = []
    sources = [loaded.corpus for _, loaded in sorted(state.sources.items())]
    # the default options' workbench: the one a Compute with the form's default choices uses
    lock = get_bench().lock
    for name in names:
        if name not in state.targets or jobs.running(state, kind_of(name)) is not None:
            continue
        if not worth_ahead(state, name):
            continue
        task = partial(
            work.target_ahead,
            root=str(get_store().root),
            target=state.targets[name].corpus,
            sources=sources,
        )
        record = job_records.recorder(get_store().root, state.workspace, kind_of(name),
                                      target_work_params(name, sorted(state.sources)))
        started.append(
            jobs.start(
                state,
                kind_of(name),
                f"Preparing {name} for Compute",
                task,
                _done,
                params={"target": name},
                lock=lock,
                on_change=record,
            )
        )
    return started


def resume_target_work(state: AppState, name: str) -> jobs.BackgroundJob | None:
    """Start an interrupted target's work again, against the sources loaded now (the store holds
    what the first run finished); None when there is nothing left worth a job. SimcoreError when
    the target is no longer loaded."""
    if name not in state.targets:
        raise SimcoreError(f"the target {name} is no longer loaded: dismiss this job")
    started = start_target_work(state, [name])
    return started[0] if started else None
