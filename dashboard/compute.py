"""The similarity matrix as a session job: it goes on while the user browses other pages.

``start_matrix`` checks the choices and starts a :mod:`dashboard.jobs` worker; each finished
(source, target, measure) cell is in simcore's disk store and on the job, so nothing finished is lost
when the job is cancelled. When it ends the matrix is kept under a new name (nothing is replaced).
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pandas as pd

from simcore.errors import SimcoreError
from simcore.matrix import COLUMNS
from simcore.measures import MeasureOptions, all_measures, get_measure
from simcore.tokenize import TokenizerOptions

from . import jobs, work
from .resources import get_bench, get_store
from .state import AppState, Job, NamedMatrix

KIND = "matrix"


def job_options(job: Job) -> tuple[MeasureOptions, TokenizerOptions]:
    return MeasureOptions.from_dict(job.options), TokenizerOptions(**job.tokenizer)


def _run_name(state: AppState, job: Job) -> str:
    runs = sum(1 for m in state.matrices.values() if m.job is not None) + 1
    return f"run {runs}: {len(job.sources)} sources × {len(job.targets)} targets"


def start_matrix(state: AppState, job: Job) -> jobs.BackgroundJob:
    """Start computing the matrix for these choices in the background (SimcoreError when they do not make sense)."""
    missing = [n for n in job.sources if n not in state.sources] + [n for n in job.targets if n not in state.targets]
    if missing:
        raise SimcoreError(f"not loaded any more: {', '.join(missing)}")
    if not job.sources or not job.targets:
        raise SimcoreError("choose at least one source and one target")
    if not job.measures:
        raise SimcoreError("choose at least one measure")
    sources = [state.sources[n].corpus for n in job.sources]
    targets = [state.targets[n].corpus for n in job.targets]
    options, tokenizer = job_options(job)
    bench = get_bench(options, tokenizer)  # in the page's thread: cache_resource needs the script context
    task = partial(work.matrix, root=str(get_store().root), options=job.options, tokenizer=job.tokenizer,
                   sources=sources, targets=targets, measures=list(job.measures), samples=job.samples,
                   sample_tokens=job.sample_tokens)
    total = len(job.sources) * len(job.targets) * len(job.measures)
    return jobs.start(state, KIND, f"Similarity matrix ({total} values)", task, _finished, params=job,
                      lock=bench.lock)


def _finished(state: AppState, task: jobs.BackgroundJob) -> None:
    job: Job = task.params
    table: pd.DataFrame = task.result
    options, tokenizer = job_options(job)
    settings = {"measures": job.measures, "samples": job.samples,
                "sample_tokens": int(table["sample_tokens"].iloc[0]) if len(table) else job.sample_tokens,
                **json.loads(json.dumps(options.subset(tuple(options.__dataclass_fields__)))), **tokenizer.as_dict()}
    name = state.add_matrix(NamedMatrix(_run_name(state, job), table, "computed here", settings, job=job))
    state.say("success", f"Computed {len(table)} similarity values: kept as “{name}”.")


def partial_matrix(task: jobs.BackgroundJob) -> pd.DataFrame:
    return pd.DataFrame(list(task.partial), columns=COLUMNS)


def failures(long: pd.DataFrame) -> pd.DataFrame:
    if "error" not in long:
        return long.iloc[0:0]
    bad = long[long["error"].notna() & (long["error"].astype(str).str.len() > 0)]
    return bad.assign(measure=bad["measure"].map(lambda m: get_measure(m).label))[
        ["measure", "source", "target", "error"]].drop_duplicates(["measure", "source", "error"])


def describe(matrix: NamedMatrix) -> dict[str, Any]:
    """One row for the list of kept matrices."""
    long = matrix.long
    return {"name": matrix.name, "from": matrix.origin, "sources": long["source"].nunique(),
            "targets": long["target"].nunique(),
            "measures": ", ".join(get_measure(m).label if m in all_measures() else m for m in dict.fromkeys(long["measure"]))}

