"""What every page shares: page set-up with the sidebar, the session's state, the store, the workbench.

Every page starts with ``setup_page(title, icon)`` and then reads ``get_state()``. The signatures of
``setup_page``, ``get_state``, ``get_store`` and ``get_workbench`` are stable (other pages call them).
"""

from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import streamlit as st

from simcore.corpus import Corpus
from simcore.errors import SimcoreError
from simcore.matrix import Workbench
from simcore.measures import MeasureOptions
from simcore.store import ArtefactStore, default_root
from simcore.tokenize import TokenizerOptions

STATE_KEY = "simcore_state"

# Page paths for st.page_link / st.switch_page (pages-directory mode).
HOME = "app.py"
CORPORA = "pages/1_Corpora.py"
SIMILARITY = "pages/2_Similarity.py"
PREDICTIVENESS = "pages/3_Predictiveness.py"
AGREEMENT = "pages/4_Agreement.py"
RANKING = "pages/5_Ranking_and_export.py"
OPEN_RESULTS = "pages/6_Open_results.py"


@dataclass
class LoadedCorpus:
    """A corpus the user added, and where it came from (shown on the pages)."""

    corpus: Corpus
    origin: str  # "sample", "upload: <name>", "server path: <path>"


@dataclass
class Job:
    """A matrix computation asked for in the Similarity form; resumed on every rerun until done."""

    sources: list[str]
    targets: list[str]
    measures: list[str]
    options: dict[str, Any]
    tokenizer: dict[str, Any]
    samples: int = 1
    sample_tokens: int | None = None


@dataclass
class AppState:
    """Everything one browser session has loaded or computed."""

    sources: dict[str, LoadedCorpus] = field(default_factory=dict)
    targets: dict[str, LoadedCorpus] = field(default_factory=dict)
    # The similarity matrix in simcore's long form (source, target, measure, value, direction, ...).
    matrix: pd.DataFrame | None = None
    matrix_label: str = ""
    matrix_options: dict[str, Any] = field(default_factory=dict)
    # Rows finished by the running or last computation, keyed by (source, target, measure).
    cells: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    job: Job | None = None
    job_error: str | None = None
    # NER results: the raw table as loaded or edited, and which columns hold what.
    results: pd.DataFrame | None = None
    results_label: str = ""
    results_columns: dict[str, str | None] = field(default_factory=dict)
    # Anything a page wants to keep (other pages may use their own keys).
    extra: dict[str, Any] = field(default_factory=dict)

    def clear_matrix(self) -> None:
        self.matrix, self.matrix_label, self.matrix_options = None, "", {}
        self.cells, self.job, self.job_error = {}, None, None
        for key in ("matrix_job", "matrix_raw", "drill", "report_parts"):
            self.extra.pop(key, None)


def get_state() -> AppState:
    """The session's state object (created empty on a session's first page)."""
    state = st.session_state.get(STATE_KEY)
    if not isinstance(state, AppState):
        state = AppState()
        st.session_state[STATE_KEY] = state
        if os.environ.get("SIMCORE_DEMO") == "1":  # scripts/demo.sh: every new session starts on the sample
            from .loading import load_sample

            try:
                load_sample(state)
            except SimcoreError as exc:
                st.error(str(exc))
    return state


@st.cache_resource(show_spinner=False)
def _store(root: str) -> ArtefactStore:
    return ArtefactStore(root)


def get_store() -> ArtefactStore:
    """The artefact store under $SIMCORE_CACHE (or ~/.cache/simcore), shared by all sessions and the CLI."""
    return _store(str(default_root()))


class _Bench:
    """A workbench and the lock that serialises computations on it (Workbench is not thread-safe)."""

    def __init__(self, workbench: Workbench) -> None:
        self.workbench = workbench
        self.lock = threading.Lock()


@st.cache_resource(show_spinner=False, max_entries=8)
def _bench(root: str, options_json: str, tokenizer_json: str) -> _Bench:
    options = MeasureOptions.from_dict(json.loads(options_json))
    tokenizer = TokenizerOptions(**json.loads(tokenizer_json))
    return _Bench(Workbench(_store(root), tokenizer=tokenizer, options=options))


def _bench_for(options: MeasureOptions | None, tokenizer: TokenizerOptions | None) -> _Bench:
    options = options or MeasureOptions()
    tokenizer = tokenizer or TokenizerOptions()
    return _bench(str(default_root()), json.dumps(options.subset(tuple(options.__dataclass_fields__)), sort_keys=True),
                  json.dumps(tokenizer.as_dict(), sort_keys=True))


def get_workbench(options: MeasureOptions | None = None, tokenizer: TokenizerOptions | None = None) -> Workbench:
    """The shared workbench for these options (its prepared corpora stay in memory between reruns)."""
    return _bench_for(options, tokenizer).workbench


def workbench_lock(options: MeasureOptions | None = None, tokenizer: TokenizerOptions | None = None) -> threading.Lock:
    return _bench_for(options, tokenizer).lock


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def md(text: object) -> str:
    """User-supplied text (file and corpus names) made inert inside Markdown: shown as typed."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))


def matrix_links() -> None:
    """Links to the two places a similarity matrix comes from (for pages that need one)."""
    st.page_link(SIMILARITY, label="Similarity: compute the matrix", icon=":material/grid_on:")
    st.page_link(OPEN_RESULTS, label="Open results: load a matrix file", icon=":material/folder_open:")


def similarity_measures(long: pd.DataFrame) -> list[str]:
    """The measures of a long matrix that are similarities (TTR is not), in their order."""
    directions = long.groupby("measure", sort=False)["direction"].first()
    return [m for m, d in directions.items() if d != 0]


def show_error(exc: BaseException) -> None:
    """An input problem as a message on the page (never a traceback)."""
    st.error(str(exc) if isinstance(exc, SimcoreError) else f"Something went wrong: {exc}")


def _sidebar(state: AppState) -> None:
    with st.sidebar:
        st.markdown("**Loaded now**")
        if not (state.sources or state.targets or state.matrix is not None or state.results is not None):
            st.caption("Nothing yet. Load the bundled sample on the home page or add corpora on the Corpora page.")
            st.page_link(HOME, label="Load the sample", icon=":material/home:")
            return
        lines = [
            f"Sources: {len(state.sources)}" + (f" ({md(', '.join(sorted(state.sources)))})" if state.sources else ""),
            f"Targets: {len(state.targets)}" + (f" ({md(', '.join(sorted(state.targets)))})" if state.targets else ""),
        ]
        if state.matrix is not None:
            lines.append(f"Similarity matrix: {md(state.matrix_label)} ({len(state.matrix)} values)")
        elif state.job is not None:
            lines.append(f"Similarity matrix: computing ({len(state.cells)} values so far)")
        if state.results is not None:
            lines.append(f"NER results: {md(state.results_label)}")
        st.caption("\n\n".join(lines))


def setup_page(title: str, icon: str = "") -> None:
    """Page configuration, title and the shared sidebar; call first on every page."""
    st.set_page_config(page_title=f"{title} · simcore", page_icon=icon or None, layout="wide")
    _sidebar(get_state())
    st.title(title)
