"""Running the similarity matrix from the Similarity page so that no finished work is lost.

The form only records a :class:`Job`. Every run of the page then (re)starts the pending job:
finished cells are in simcore's disk store and in ``state.cells``, so a rerun caused by a click
elsewhere resumes where the last run stopped instead of starting over.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import streamlit as st

from simcore.errors import SimcoreError
from simcore.matrix import COLUMNS
from simcore.measures import MeasureOptions, get_measure
from simcore.tokenize import TokenizerOptions

from .common import AppState, Job, get_workbench, workbench_lock


def job_options(job: Job) -> tuple[MeasureOptions, TokenizerOptions]:
    return MeasureOptions.from_dict(job.options), TokenizerOptions(**job.tokenizer)


def start_job(state: AppState, job: Job) -> None:
    missing = [n for n in job.sources if n not in state.sources] + [n for n in job.targets if n not in state.targets]
    if missing:
        raise SimcoreError(f"not loaded any more: {', '.join(missing)}")
    if not job.sources or not job.targets:
        raise SimcoreError("choose at least one source and one target")
    if not job.measures:
        raise SimcoreError("choose at least one measure")
    state.clear_matrix()
    state.job = job


def run_pending(state: AppState) -> bool:
    """Continue the pending job with a progress display; True when it finished in this run."""
    job = state.job
    if job is None:
        return False
    try:
        sources = [state.sources[n].corpus for n in job.sources]
        targets = [state.targets[n].corpus for n in job.targets]
    except KeyError as exc:
        state.job, state.job_error = None, f"{exc.args[0]} was removed before the computation finished"
        return False
    options, tokenizer = job_options(job)
    workbench = get_workbench(options, tokenizer)
    total = len(job.sources) * len(job.targets) * len(job.measures)
    with st.status(f"Computing {total} values ({len(state.cells)} done)…", expanded=True) as status:
        bar = st.progress(0.0, text="starting")

        def progress(message: str, fraction: float) -> None:
            bar.progress(max(0.0, min(1.0, fraction)), text=message)

        def on_row(row: dict[str, Any]) -> None:
            state.cells[(row["source"], row["target"], row["measure"])] = row

        lock = workbench_lock(options, tokenizer)
        if not lock.acquire(blocking=False):
            bar.progress(0.0, text="waiting for another computation on this server to finish")
            lock.acquire()
        try:
            table = workbench.matrix(sources, targets, job.measures, samples=job.samples,
                                     sample_tokens=job.sample_tokens, progress=progress, on_row=on_row)
        except SimcoreError as exc:
            state.job, state.job_error = None, str(exc)
            status.update(label="The computation stopped", state="error")
            return False
        finally:
            lock.release()
        status.update(label=f"Computed {len(table)} values", state="complete", expanded=False)
    state.matrix = table
    state.matrix_label = f"computed: {len(job.sources)} sources × {len(job.targets)} targets"
    state.matrix_options = {"measures": job.measures, "samples": job.samples,
                            "sample_tokens": int(table["sample_tokens"].iloc[0]) if len(table) else job.sample_tokens,
                            **json.loads(json.dumps(options.subset(tuple(options.__dataclass_fields__)))),
                            **tokenizer.as_dict()}
    state.extra["matrix_job"] = job
    state.job = None
    return True


def partial_matrix(state: AppState) -> pd.DataFrame:
    return pd.DataFrame(list(state.cells.values()), columns=COLUMNS)


def failures(long: pd.DataFrame) -> pd.DataFrame:
    if "error" not in long:
        return long.iloc[0:0]
    bad = long[long["error"].notna() & (long["error"].astype(str).str.len() > 0)]
    return bad.assign(measure=bad["measure"].map(lambda m: get_measure(m).label))[
        ["measure", "source", "target", "error"]].drop_duplicates(["measure", "source", "error"])
