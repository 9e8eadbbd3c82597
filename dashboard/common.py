"""What every page shares: page set-up with the sidebar, the session's state, the store, the workbench.

Every page starts with ``setup_page(title, icon)`` and then reads ``get_state()``. The signatures of
``setup_page``, ``get_state``, ``get_store`` and ``get_workbench`` are stable (other pages call them).
Imports go one way: pages -> common -> loading/compute/jobs -> state/resources.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd
import streamlit as st

from simcore.errors import SimcoreError

from . import jobs
from .loading import load_sample
from .resources import get_store, get_workbench, workbench_lock
from .state import AppState, Job, LoadedCorpus, NamedMatrix

__all__ = ["AppState", "Job", "LoadedCorpus", "NamedMatrix", "get_state", "get_store", "get_workbench",
           "workbench_lock", "setup_page", "pick_matrix", "keep_choices", "save_choices", "changed", "md"]

STATE_KEY = "simcore_state"
# How often a running job's progress is redrawn: each redraw is a script run on the server, for every session.
REFRESH_SECONDS = 2.0

# Page paths for st.page_link / st.switch_page (pages-directory mode).
HOME = "app.py"
CORPORA = "pages/1_Corpora.py"
SIMILARITY = "pages/2_Similarity.py"
PREDICTIVENESS = "pages/3_Predictiveness.py"
AGREEMENT = "pages/4_Agreement.py"
RANKING = "pages/5_Ranking_and_export.py"
OPEN_RESULTS = "pages/6_Open_results.py"
SELECTION = "pages/7_Sentence_selection.py"
COMPARE = "pages/8_Compare_results.py"
PROBE = "pages/9_NER_probe.py"

# The sidebar's navigation (Streamlit's own is off in .streamlit/config.toml: it would call the home page "app").
NAVIGATION = [
    (HOME, "Home", ":material/home:"),
    (CORPORA, "Corpora", ":material/library_books:"),
    (SIMILARITY, "Similarity", ":material/grid_on:"),
    (PREDICTIVENESS, "Predictiveness", ":material/insights:"),
    (AGREEMENT, "Agreement", ":material/handshake:"),
    (RANKING, "Ranking and export", ":material/trophy:"),
    (OPEN_RESULTS, "Open results", ":material/folder_open:"),
    (SELECTION, "Sentence selection", ":material/filter_alt:"),
    (COMPARE, "Compare results", ":material/compare_arrows:"),
    (PROBE, "NER probe", ":material/science:"),
]


def get_state() -> AppState:
    """The session's state object (created empty on a session's first page)."""
    state = st.session_state.get(STATE_KEY)
    if not isinstance(state, AppState):
        state = AppState()
        st.session_state[STATE_KEY] = state
        if os.environ.get("SIMCORE_DEMO") == "1":  # scripts/demo.sh: every new session starts on the sample
            try:
                load_sample(state)
                state.extra["sample_loaded"] = True
            except SimcoreError as exc:
                st.error(str(exc))
    return state


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def md(text: object) -> str:
    """User-supplied text (file and corpus names) made inert inside Markdown: shown as typed."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))


def matrix_links() -> None:
    """Links to the two places a similarity matrix comes from (for pages that need one)."""
    task = jobs.running(get_state(), "matrix")
    if task is not None:
        st.caption(f"A similarity matrix is being computed ({task.fraction:.0%}, progress in the sidebar); "
                   "this page shows it when it is done.")
    st.page_link(SIMILARITY, label="Similarity: compute the matrix", icon=":material/grid_on:")
    st.page_link(OPEN_RESULTS, label="Open results: load a matrix file", icon=":material/folder_open:")


def similarity_measures(long: pd.DataFrame) -> list[str]:
    """The measures of a long matrix that are similarities (TTR is not), in their order."""
    directions = long.groupby("measure", sort=False)["direction"].first()
    return [m for m, d in directions.items() if d != 0]


def show_error(exc: BaseException) -> None:
    """An input problem as a message on the page (never a traceback)."""
    st.error(str(exc) if isinstance(exc, SimcoreError) else f"Something went wrong: {exc}")


def changed(state: AppState, kind: str = "", text: str = "") -> None:
    """After an action changed the state: keep its message and rerun, so the sidebar and page show the new state."""
    if text:
        state.say(kind or "success", text)
    st.rerun()


# ---- choices kept across pages ------------------------------------------------------------------------
# Streamlit forgets a widget's value when its page is left; the pages keep their forms' choices here.

def keep_choices(state: AppState, form: str, defaults: dict[str, Any],
                 allowed: dict[str, Iterable[Any]] | None = None) -> None:
    """Before the widgets: put the form's kept (or default) values into the widgets' keys."""
    kept = state.extra.setdefault("forms", {}).get(form, {})
    for key, default in defaults.items():
        if key in st.session_state:
            continue
        value = kept.get(key, default)
        if allowed and key in allowed:
            options = list(allowed[key])
            value = [v for v in value if v in options] if isinstance(value, list) else (
                value if value in options else default)
        st.session_state[key] = value


def save_choices(state: AppState, form: str, keys: Iterable[str]) -> None:
    """After a submit: remember the values the widgets hold."""
    state.extra.setdefault("forms", {})[form] = {k: st.session_state[k] for k in keys if k in st.session_state}


# ---- named matrices -----------------------------------------------------------------------------------

def pick_matrix(state: AppState, page: str) -> NamedMatrix | None:
    """The matrix this page shows: the user's pick among the kept ones (the newest until they pick)."""
    if not state.matrices:
        return None
    names = list(state.matrices)
    remembered = state.shown.get(page)
    default = remembered if remembered in names else (state.active if state.active in names else names[-1])
    if len(names) == 1:
        name = names[0]
    else:
        key = f"shown_{page}_{state.matrices_version}"
        if st.session_state.get(key) not in names:
            st.session_state[key] = default
        name = st.selectbox("Similarity matrix shown", names, key=key,
                            help="Every matrix computed, opened or loaded in this session is kept under a name; "
                                 "rename or remove them on the Open results page.")
    state.shown[page] = name
    state.active = name
    return state.matrices[name]


# ---- progress of a page's job ---------------------------------------------------------------------------

def job_progress(kind: str, caption: Callable[[jobs.BackgroundJob], str],
                 rows: Callable[[jobs.BackgroundJob], pd.DataFrame] | None = None) -> None:
    """On the page that started it: the running job's progress, a caption and what it finished so far,
    redrawn every REFRESH_SECONDS; the whole page runs again once the job has ended."""

    def panel() -> None:
        current = jobs.running(get_state(), kind)
        if current is None:
            st.rerun()
        st.progress(current.fraction, text=md(f"{current.title}: {current.message}"))
        st.caption(caption(current))
        if rows is not None and current.partial:
            st.dataframe(rows(current), hide_index=True)

    st.fragment(panel, run_every=REFRESH_SECONDS)()


# ---- sidebar ------------------------------------------------------------------------------------------

def _job_line(job: jobs.BackgroundJob) -> str:
    return f"{job.title}: {job.message} ({job.fraction:.0%}, {job.elapsed():.0f} s)"


def _jobs_panel() -> None:
    """Progress of the session's running jobs, refreshed every second from any page; Cancel buttons."""
    state = get_state()
    active = [j for j in state.jobs.values() if j.running]
    ended = [j for j in state.jobs.values() if not j.running and not j.collected]
    if ended:
        st.rerun()  # the whole page: the job's result is filed and shown
    for job in active:
        st.progress(job.fraction, text=md(_job_line(job)))
        st.button("Cancel", key=f"cancel_{job.kind}", on_click=job.cancel, disabled=job.cancel_requested,
                  help="Stops at the next step; values already computed stay in the cache")


def _loaded_now(state: AppState) -> None:
    st.markdown("**Loaded now**")
    if not (state.sources or state.targets or state.matrices or state.results is not None):
        st.caption("Nothing yet. Load the bundled sample on the home page or add corpora on the Corpora page.")
        return
    lines = [
        f"Sources: {len(state.sources)}" + (f" ({md(', '.join(sorted(state.sources)))})" if state.sources else ""),
        f"Targets: {len(state.targets)}" + (f" ({md(', '.join(sorted(state.targets)))})" if state.targets else ""),
    ]
    if state.matrices:
        lines.append(f"Similarity matrices: {len(state.matrices)} (shown: {md(state.matrix_label)})")
    if state.results is not None:
        lines.append(f"NER results: {md(state.results_label)}")
    st.caption("\n\n".join(lines))


def _sidebar(state: AppState) -> None:
    with st.sidebar:
        for page, text, icon in NAVIGATION:
            st.page_link(page, label=text, icon=icon)
        st.divider()
        running = any(j.running for j in state.jobs.values())
        st.fragment(_jobs_panel, run_every=REFRESH_SECONDS if running else None)()
        _loaded_now(state)


def setup_page(title: str, icon: str = "") -> None:
    """Page configuration, finished jobs filed, the shared sidebar, title and pending messages; call first."""
    st.set_page_config(page_title=f"{title} · simcore", page_icon=icon or None, layout="wide")
    state = get_state()
    jobs.collect(state)
    _sidebar(state)
    st.title(title)
    messages, state.flash = state.flash, []
    for kind, text in messages:
        getattr(st, kind if kind in ("success", "info", "warning", "error") else "info")(text)
