"""Sentence selection as a session job (the Sentence selection page starts it; Resume starts it again).

The pool's scores are stored in simcore's store under a fingerprint of the pool, the target and the
options, so a selection started again after its server stopped reads back what was scored.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from simcore.corpora.corpus import Corpus
from simcore.utils.errors import SimcoreError

from . import job_records, jobs, work
from .paths import SAMPLE_DATA
from .resources import get_store
from .state import AppState, unique_name

KIND = "selection"


def _done(state: AppState, job: jobs.BackgroundJob) -> None:
    name = unique_name(job.params, state.extra.setdefault("selection_runs", {}))
    state.extra["selection_runs"][name] = job.result
    state.extra["selection_current"] = name
    state.extra["selection_new"] = name
    state.say("success", f"Selection done: {name}.")


def start_selection(state: AppState, *, label: str, pool: Corpus, target: str, options: Any, top: int | None,
                    fraction: float | None, keep_duplicates: bool, min_tokens: int) -> jobs.BackgroundJob:
    """Score the pool against the loaded target ``target`` and cut it, in the background; recorded with the
    workspace on disk until its result is filed."""
    from .workspace.records import selection_params

    if target not in state.targets:
        raise SimcoreError(f"not loaded any more: {target}")
    root = get_store().root
    task = partial(work.selection, root=str(root), pool=pool, target=state.targets[target].corpus, options=options,
                   top=top, fraction=fraction, keep_duplicates=keep_duplicates, min_tokens=min_tokens)
    params = selection_params(label=label, pool=pool, target=target, options=options, top=top, fraction=fraction,
                              keep_duplicates=keep_duplicates, min_tokens=min_tokens, store_root=root,
                              sample_root=SAMPLE_DATA)
    return jobs.start(state, KIND, f"Sentence selection ({options.method})", task, _done, params=label,
                      on_change=job_records.recorder(root, state.workspace, KIND, params))
