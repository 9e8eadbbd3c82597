"""Decontaminating a source as a session job (the Corpora page starts it): the clean copy is written
into simcore's store and added as a source of its own, named after the original with ``_clean``."""

from __future__ import annotations

from functools import partial

from simcore.contamination.decontaminate import Decontamination
from simcore.corpora.corpus import Corpus
from simcore.utils.errors import SimcoreError

from . import jobs, work
from .loading import add_corpus
from .resources import get_store
from .state import AppState

KIND = "decontaminate"


def _done(state: AppState, job: jobs.BackgroundJob) -> None:
    result = job.result
    report = Decontamination(**result["report"])
    name = add_corpus(state, "source", Corpus.from_path(result["path"], name=f"{result['source']}_clean"),
                      f"{result['source']} without the units overlapping {result['target']}")
    state.say("success", report.summary(result["source"], result["target"], f"the source {name}"))


def start_decontamination(state: AppState, source: str, target: str, test_only: bool) -> jobs.BackgroundJob:
    """Write the loaded source ``source`` without its units that overlap the loaded target ``target``."""
    if source not in state.sources or target not in state.targets:
        raise SimcoreError(f"not loaded any more: {source if source not in state.sources else target}")
    task = partial(work.decontamination, root=str(get_store().root), source=state.sources[source].corpus,
                   target=state.targets[target].corpus, test_only=test_only)
    return jobs.start(state, KIND, f"Decontaminating {source} against {target}", task, _done,
                      params={"source": source, "target": target, "test_only": test_only})
