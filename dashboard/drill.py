"""Why a source and a target come out (dis)similar: the drill-down tables, kept per session."""

from __future__ import annotations

from typing import Any

import pandas as pd

from simcore.answer import flags
from simcore.measures.lookup import all_measures, get_measure
from simcore.utils.errors import SimcoreError

from .compute import job_options
from .resources import get_workbench, workbench_lock
from .state import AppState, Job


def views() -> dict[str, str]:
    """The drill-down views, by measure: each measure with a ``drill_title`` (its tab's title), the
    default measures first in their order (TVC's tab first), then the others."""
    measures = [get_measure(name) for name in all_measures() if get_measure(name).drill_title]
    ordered = sorted(measures, key=lambda m: (not m.default, m.default_rank))  # stable sort
    return {m.name: m.drill_title for m in ordered}


def pair_flags(long: pd.DataFrame, source: str, target: str) -> list[str]:
    """'PPL: why' for each flagged cell of this (source, target) pair, so the drill-down says what to doubt."""
    part = long[(long["source"] == source) & (long["target"] == target)]
    mask = flags.marked(part).to_numpy()
    known = set(all_measures())
    return [f"{get_measure(m).label if m in known else m}: {why}"
            for m, why in zip(part["measure"][mask], flags.why(part)[mask])]


def _compute(view: str, source: Any, target: Any, top: int) -> pd.DataFrame:
    if view not in views():
        raise SimcoreError(f"no drill-down for {view}")
    return get_measure(view).drill(source, target, top)


def drill_down(state: AppState, job: Job, source_name: str, target_name: str, view: str,
               top: int = 25) -> pd.DataFrame | str:
    """The table for one view, or the message saying why it cannot be shown. Kept in the session."""
    cache: dict = state.extra.setdefault("drill", {})
    key = (repr(job), source_name, target_name, view, top)
    if key in cache:
        return cache[key]
    if source_name not in state.sources or target_name not in state.targets:
        return "This pair's corpora are no longer loaded; add them again on the Corpora page."
    options, tokenizer = job_options(job)
    workbench = get_workbench(options, tokenizer)
    try:
        with workbench_lock(options, tokenizer):
            source_corpus = state.sources[source_name].corpus
            tokens = job.sample_tokens or workbench.default_sample_tokens(
                [state.sources[n].corpus for n in job.sources if n in state.sources], view)
            prepared = workbench.source(source_corpus, tokens, job.samples)[0]
            target = workbench.target(state.targets[target_name].corpus)
            result: pd.DataFrame | str = _compute(view, prepared, target, top)
    except SimcoreError as exc:
        result = str(exc)
    cache[key] = result
    return result
