"""The similarity matrix as a session job: it goes on while the user browses other pages.

``start_matrix`` checks the choices and starts a :mod:`dashboard.jobs` worker; each finished
(source, target, measure) cell is in simcore's disk store and on the job, so nothing finished is lost
when the job is cancelled. When it ends the matrix is kept under a new name (nothing is replaced).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from simcore.corpora.tokenize import TokenizerOptions
from simcore.matrix.plan import DEFAULT_MEASURES
from simcore.matrix.rows import COLUMNS
from simcore.measures.lookup import all_measures, get_measure
from simcore.measures.lookup import cost as measure_cost
from simcore.measures.options import MeasureOptions
from simcore.utils import pace
from simcore.utils.errors import SimcoreError
from simcore.utils.pace import MatrixEstimate
from simcore.utils.store import digest

from . import job_records, jobs, work
from .resources import get_bench, get_store
from .state import AppState, Job, NamedMatrix

KIND = "matrix"


def job_options(job: Job) -> tuple[MeasureOptions, TokenizerOptions]:
    return MeasureOptions.from_dict(job.options), TokenizerOptions(**job.tokenizer)


def cell_cost(row: dict[str, Any]) -> float:
    """Rough cost of one (source, target) value, relative to a coverage count (the measure's
    ``cost``, as the matrix schedules its parts): the progress bar weighs finished cells by it."""
    return measure_cost(str(row.get("measure", "")))


def options_label(job: Job) -> str:
    """What sets a run apart from the default choices, e.g. ``PPL order 4, 3 sub-corpora, case kept``."""
    default = MeasureOptions()
    words = {"ppl_order": "PPL order", "jsd_max_n": "JSD n ≤", "wvv_words": "WVV words", "seed": "seed",
             "ppl_per_sentence": "PPL per sentence", "kl_buckets": "KL buckets", "emb_sentences": "EMB sentences"}
    parts = [f"{text} {job.options[key]}" for key, text in words.items()
             if key in job.options and job.options[key] != getattr(default, key, None)]
    if "tvcc_pos" in job.options and "PROPN" in job.options["tvcc_pos"]:
        parts.append("TVcC with proper nouns")
    if job.samples != 1:
        parts.append(f"{job.samples} sub-corpora")
    if job.sample_tokens:
        parts.append(f"{job.sample_tokens:,} tokens each")
    if job.compute_noise:
        parts.append("noisy measures computed")
    if not job.tokenizer.get("lowercase", True):
        parts.append("case kept")
    if list(job.measures) != list(DEFAULT_MEASURES):
        parts.append(", ".join(get_measure(m).label for m in job.measures))
    return ", ".join(parts) or "default options"


def _run_name(state: AppState, job: Job) -> str:
    runs = sum(1 for m in state.matrices.values() if m.job is not None) + 1
    return f"run {runs}: {len(job.sources)} sources × {len(job.targets)} targets, {options_label(job)}"


def _estimate_key(state: AppState, job: Job) -> str:
    """The estimate's cache key: the choices, each corpus's files as they are, and the recorded paces."""
    corpora = []
    for bucket, names in ((state.sources, job.sources), (state.targets, job.targets)):
        for n in names:
            c = bucket[n].corpus
            corpora.append((n, str(c.path), c.size_bytes))
    paces = Path(get_store().root) / "pace"
    stamp = max((p.stat().st_mtime_ns for p in paces.glob("*.jsonl")), default=0) if paces.is_dir() else 0
    return json.dumps([_job_key(job), corpora, stamp], default=str)


@st.cache_data(show_spinner=False, max_entries=64)
def _estimate(key: str, _state: AppState, _job: Job) -> MatrixEstimate:
    from simcore.matrix.estimates import matrix_seconds

    options, tokenizer = job_options(_job)
    sources = [_state.sources[n].corpus for n in _job.sources]
    targets = [_state.targets[n].corpus for n in _job.targets]
    bench = get_bench(options, tokenizer).workbench
    return matrix_seconds(bench, sources, targets, list(_job.measures),
                          samples=_job.samples, sample_tokens=_job.sample_tokens,
                          compute_noise=_job.compute_noise,
                          jobs=os.cpu_count() or 1,  # as dashboard.work runs it
                          contention=1.0)  # the load is the moment's: applied when shown, not kept


def matrix_estimate(state: AppState, job: Job) -> tuple[float, str] | None:
    """(seconds, the sentence the form shows) for these choices, from this machine's recorded paces and
    counting only what is not stored yet (simcore.matrix.estimates.matrix_seconds); None when it cannot be made."""
    if not job.sources or not job.targets or not job.measures or any(
            n not in state.sources for n in job.sources) or any(n not in state.targets for n in job.targets):
        return None
    try:
        kept = _estimate(_estimate_key(state, job), state, job)
        estimate = replace(kept, contention=pace.contention())
    except (SimcoreError, OSError):
        return None
    return estimate.seconds, estimate.text(jobs.duration)


def start_matrix(state: AppState, job: Job, on_done: Any = None, title: str = "",
                 demo: bool = False) -> jobs.BackgroundJob:
    """Start computing the matrix for these choices in the background (SimcoreError when they do not make sense).
    It is recorded with the workspace on disk (``demo``: the sample's answer) until its result is filed."""
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
                   sample_tokens=job.sample_tokens, compute_noise=job.compute_noise)
    total = len(job.sources) * len(job.targets) * len(job.measures)
    total_cost = len(job.sources) * len(job.targets) * sum(cell_cost({"measure": m}) for m in job.measures)
    from .workspace.records import matrix_params

    record = job_records.recorder(get_store().root, state.workspace, KIND, matrix_params(job, demo))
    estimate = matrix_estimate(state, job)  # the time left starts from it, then moves to the job's pace
    return jobs.start(state, KIND, title or f"Similarity matrix ({total} values)", task, on_done or _finished,
                      params=job, lock=bench.lock, total=total, cost=cell_cost, total_cost=total_cost,
                      on_change=record, expected=None if estimate is None else estimate[0])


# ---- the demo's answer: the sample's matrix, computed at start (once per server) -------------------------

DEMO_NAME = "the sample, default options"


@st.cache_resource(show_spinner=False)
def _answers() -> tuple[dict[str, pd.DataFrame], threading.Lock]:
    """Matrices of the demo's default job by its choices, computed once per server and shared by sessions."""
    return {}, threading.Lock()


def demo_job(state: AppState) -> Job:
    """The Similarity form's default choices for every loaded corpus."""
    options = MeasureOptions()
    return Job(sources=sorted(state.sources), targets=sorted(state.targets), measures=list(DEFAULT_MEASURES),
               options=json.loads(json.dumps(options.subset(tuple(options.__dataclass_fields__)))),
               tokenizer={"lowercase": True})


def _job_key(job: Job) -> str:
    return json.dumps([job.sources, job.targets, job.measures, job.options, job.tokenizer, job.samples,
                       job.sample_tokens, job.compute_noise], sort_keys=True, default=str)


@st.cache_resource(show_spinner=False)
def _code_version() -> str:
    """A hash of simcore's source: a stored answer is used only with the code that computed it."""
    package = Path(__file__).resolve().parent.parent / "simcore"
    h = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        h.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def answer_key(state: AppState, job: Job) -> str:
    corpora = [(n, str(b[n].corpus.path), b[n].corpus.size_bytes) for b, names in
               ((state.sources, job.sources), (state.targets, job.targets)) for n in names]
    return digest("demo-answer", _job_key(job), json.dumps(corpora), _code_version())


def start_demo_answer(state: AppState) -> None:
    """With the sample loaded: its matrix at once when this server (or its store, from an earlier start) has
    it, else computed in the background."""
    job = demo_job(state)
    if not job.sources or not job.targets or jobs.running(state, KIND) is not None:
        return
    answers, lock = _answers()
    key = answer_key(state, job)
    with lock:
        table = answers.get(key)
    if table is None:
        stored = get_store().get("demo-answer", key)
        if stored is not None:
            from .workspace.format import read_matrix_csv

            table = read_matrix_csv((stored / "matrix.csv").read_bytes(), DEMO_NAME)
            with lock:
                answers[key] = table
    if table is not None:
        _keep(state, job, table.copy(), DEMO_NAME)
        return
    start_matrix(state, job, on_done=partial(demo_finished, key=key), title="Working out the sample's answer",
                 demo=True)


def demo_finished(state: AppState, task: jobs.BackgroundJob, key: str) -> None:
    from .workspace.format import matrix_csv

    answers, lock = _answers()
    with lock:
        answers[key] = task.result.copy()
    data = matrix_csv(task.result)
    get_store().build("demo-answer", key, lambda out: (out / "matrix.csv").write_bytes(data) and None)
    _keep(state, task.params, task.result, DEMO_NAME)


def _finished(state: AppState, task: jobs.BackgroundJob) -> None:
    name = _keep(state, task.params, task.result, _run_name(state, task.params))
    state.say("success", f"Computed {len(task.result)} similarity values: kept as “{name}”.")


def _keep(state: AppState, job: Job, table: pd.DataFrame, name: str) -> str:
    """Keep a computed matrix under ``name`` (made unique) with the settings that made it."""
    options, tokenizer = job_options(job)
    settings = {"measures": job.measures, "samples": job.samples,
                "sample_tokens": int(table["sample_tokens"].iloc[0]) if len(table) and "sample_tokens" in table
                and pd.notna(table["sample_tokens"].iloc[0]) else job.sample_tokens,
                **json.loads(json.dumps(options.subset(tuple(options.__dataclass_fields__)))), **tokenizer.as_dict()}
    return state.add_matrix(NamedMatrix(name, table, "computed here", settings, job=job))


def partial_matrix(task: jobs.BackgroundJob) -> pd.DataFrame:
    return pd.DataFrame(list(task.partial), columns=COLUMNS)


def early_lm_matrix(task: jobs.BackgroundJob) -> pd.DataFrame | None:
    """A running matrix's rows of the measures that carry the answer for language models (PPL, JSD), once
    every source and target has them: that answer is final then, while the slower measures (TVcC's
    tagging, WVV's training) are still computed. None before, or when the job computes neither."""
    from simcore.answer.recommendation import PRETRAINING

    job = task.params
    if not isinstance(job, Job):
        return None
    carrying = [m for m in PRETRAINING["lm"] if m in job.measures]
    if not carrying or all(m in carrying for m in job.measures):
        return None  # nothing to show early: the whole matrix is the answer
    rows = [r for r in list(task.partial) if r.get("measure") in carrying]
    wanted = {(s, t, m) for s in job.sources for t in job.targets for m in carrying}
    if {(r["source"], r["target"], r["measure"]) for r in rows} != wanted:
        return None
    return pd.DataFrame(rows, columns=COLUMNS)


def still_coming(task: jobs.BackgroundJob) -> list[str]:
    """The labels of a running matrix's measures some of whose cells are not in yet, in the job's
    order (what the early answer says is still being computed)."""
    job = task.params
    if not isinstance(job, Job):
        return []
    got: dict[str, int] = {}
    for row in list(task.partial):
        got[str(row.get("measure"))] = got.get(str(row.get("measure")), 0) + 1
    cells = len(job.sources) * len(job.targets)
    return [get_measure(m).label for m in job.measures if got.get(m, 0) < cells]


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

