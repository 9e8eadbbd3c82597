"""Why a source and a target come out (dis)similar: the drill-down tables, kept per session."""

from __future__ import annotations

from typing import Any

import pandas as pd

from simcore import flags
from simcore.errors import SimcoreError
from simcore.measures import all_measures, emb, get_measure, jsd, kl, ppl, tvc, wvv

from .compute import job_options
from .resources import get_workbench, workbench_lock
from .state import AppState, Job

VIEWS = {
    "tvc": "Frequent target words the source lacks",
    "ppl": "Target sentences the source's language model finds least likely",
    "jsd": "N-grams contributing most to the divergence",
    "wvv": "Words whose vectors moved most on the target",
    "kl": "Hashed n-gram buckets adding most to the KL",
    "emb": "Target sentences farthest from the source's centroid",
}


def pair_flags(long: pd.DataFrame, source: str, target: str) -> list[str]:
    """'PPL: why' for each flagged cell of this (source, target) pair, so the drill-down says what to doubt."""
    part = long[(long["source"] == source) & (long["target"] == target)]
    mask = flags.marked(part).to_numpy()
    known = set(all_measures())
    return [f"{get_measure(m).label if m in known else m}: {why}"
            for m, why in zip(part["measure"][mask], flags.why(part)[mask])]


def _compute(view: str, source: Any, target: Any, top: int) -> pd.DataFrame:
    if view == "tvc":
        return pd.DataFrame(tvc.uncovered_words(source, target, top), columns=["word", "target frequency"])
    if view == "ppl":
        return pd.DataFrame(ppl.least_likely_sentences(source, target, top))[["perplexity", "oov", "sentence"]]
    if view == "jsd":
        return pd.DataFrame(jsd.divergent_ngrams(source, target, top))
    if view == "wvv":
        return pd.DataFrame(wvv.moved_words(source, target, top), columns=["word", "mean squared change"])
    if view == "kl":
        return pd.DataFrame(kl.contributing_buckets(source, target, top))
    if view == "emb":
        return pd.DataFrame(emb.farthest_sentences(source, target, top))[["cosine", "sentence"]]
    raise SimcoreError(f"no drill-down for {view}")


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
