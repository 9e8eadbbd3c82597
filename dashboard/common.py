"""What every page shares: page set-up with the sidebar, the session's state, the store, the workbench.

Every page starts with ``setup_page(title, icon)`` and then reads ``get_state()``. The signatures of
``setup_page``, ``get_state``, ``get_store`` and ``get_workbench`` are stable (other pages call them).
Imports go one way: pages -> common -> loading/compute/jobs -> state/resources.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from simcore.utils.errors import SimcoreError

from . import compute, job_records, jobs, resume
from . import workspace as ws
from .loading import load_sample
from .paths import SAMPLE_DATA, resolve_server_path
from .resources import get_store, get_workbench, workbench_lock
from .state import AppState, Job, LoadedCorpus, NamedMatrix

__all__ = ["AppState", "Job", "LoadedCorpus", "NamedMatrix", "get_state", "get_store", "get_workbench",
           "workbench_lock", "setup_page", "pick_matrix", "keep_choices", "save_choices", "changed", "md",
           "save_workspace", "switch_workspace", "get_workspaces"]

STATE_KEY = "simcore_state"
# state.extra: the workspace manifest this session last read or wrote (another tab's saves differ from it).
SEEN = "workspace_seen"
PAGE_ICON = "🧭"
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
    """The session's state object: on a session's first page, the workspace its address names (``?ws=``),
    or a new one (on the sample with SIMCORE_DEMO=1)."""
    state = st.session_state.get(STATE_KEY)
    if not isinstance(state, AppState):
        state = AppState()
        st.session_state[STATE_KEY] = state
        open_workspace(state, st.query_params.get("ws"))
    return state


# ---- the workspace on disk (dashboard.workspace) ---------------------------------------------------------

@st.cache_resource(show_spinner=False)
def _workspaces(root: str) -> ws.Workspaces:
    return ws.Workspaces(Path(root) / "workspaces")


def get_workspaces() -> ws.Workspaces:
    """The workspace folders of this server (under the artefact store)."""
    return _workspaces(str(get_store().root))


def locator() -> ws.Locator:
    return ws.Locator(get_store(), SAMPLE_DATA, resolve_server_path)


def _new_workspace(state: AppState, related: list[str] | None = None, demo: bool = True,
                   ws_id: str | None = None) -> None:
    state.workspace = ws_id or ws.new_id()
    state.jobs = jobs.of_workspace(state.workspace)
    state.workspace_name = time.strftime("Workspace of %d %b %Y, %H:%M")
    state.workspace_created = time.time()
    state.workspace_related = list(related or [])
    if demo and os.environ.get("SIMCORE_DEMO") == "1":  # scripts/demo.sh: a visitor starts on the sample...
        try:
            load_sample(state)
            state.extra["sample_loaded"] = True
            compute.start_demo_answer(state)  # ...and its answer (at once when this server has it)
        except SimcoreError as exc:
            state.say("error", str(exc))


def open_workspace(state: AppState, ws_id: str | None) -> None:
    """Fill an empty state from the workspace ``ws_id`` (a new workspace when there is none by that id)."""
    spaces = get_workspaces()
    if ws_id and spaces.exists(ws_id):
        try:
            manifest = spaces.manifest(ws_id)
            files = spaces.read(ws_id)
            notes = ws.restore(files, state, locator())
            state.extra[SEEN] = files[ws.MANIFEST]
            state.workspace, state.workspace_name = ws_id, str(manifest.get("name", ""))[:ws.MAX_NAME]
            state.jobs = jobs.of_workspace(ws_id)  # a job this workspace runs, started in another tab or before F5
            state.workspace_created = float(manifest.get("created") or time.time())
            related = manifest.get("related")
            state.workspace_related = [r for r in related if ws.valid_id(r)] if isinstance(related, list) else []
            for note in notes[:10]:
                state.say("warning", note)
            _find_interrupted(state)
            return
        except SimcoreError as exc:
            state.say("error", f"The workspace could not be opened: {exc}. This is a new one.")
            state.__init__()  # type: ignore[misc]  # drop anything half-restored
    elif ws.valid_id(ws_id):  # nothing saved yet (a tab opened before any work), or deleted: the address stays
        state.say("info", "Nothing is saved at this address yet (a new workspace, or one that was deleted): "
                          "what you add now is saved here.")
        _new_workspace(state, ws_id=ws_id)
        return
    elif ws_id:
        state.say("warning", "This address does not name a workspace (it is incomplete): this is a new one.")
    _new_workspace(state)


def _find_interrupted(state: AppState) -> None:
    """The workspace's jobs whose server stopped (their records on disk): shown in the sidebar with Resume."""
    found, notes = job_records.find_interrupted(get_store().root, state.workspace, locator(), resolve_server_path)
    state.extra[job_records.INTERRUPTED] = found
    for note in notes[:5]:
        state.say("warning", note)


def _merge_other_tabs(state: AppState, spaces: ws.Workspaces) -> None:
    """What another tab of this workspace saved since this session last read or wrote it, merged in."""
    seen, now = state.extra.get(SEEN), spaces.manifest_bytes(state.workspace)
    if not isinstance(seen, bytes) or now == seen:
        return
    if now is None:
        state.say("info", "This workspace was deleted in another tab; what this tab holds is saved in it again.")
        return
    try:
        base = json.loads(seen.decode("utf-8"))
    except ValueError:
        return
    changes = ws.merge(base, spaces.read(state.workspace), state, locator())
    if changes:
        shown = "; ".join(md(c) for c in changes[:8]) + (f"; and {len(changes) - 8} more" if len(changes) > 8 else "")
        state.say("info", f"Another tab of this workspace changed it: {shown}.")


def save_workspace(state: AppState) -> None:
    """Write the state's workspace files that changed (nothing until the workspace holds something)."""
    if not state.workspace:
        return
    spaces = get_workspaces()
    if not ws.has_content(state) and not spaces.exists(state.workspace):
        return
    try:
        with spaces.lock(state.workspace):
            _merge_other_tabs(state, spaces)
            files = ws.snapshot(state, state.workspace_name, get_store().root, SAMPLE_DATA, state.workspace_created,
                                state.workspace_related)
            spaces.write(state.workspace, files)
            state.extra[SEEN] = files[ws.MANIFEST]
    except (OSError, SimcoreError) as exc:
        if not state.extra.get("workspace_warned"):
            state.extra["workspace_warned"] = True
            st.warning(f"Your work could not be saved on the server ({exc}); a reload would lose it.")


def switch_workspace(state: AppState, ws_id: str | None) -> None:
    """Leave this workspace for another (or a new one, ``None``): the session's state starts again from it."""
    save_workspace(state)  # its running jobs go on: they belong to it, and reopening it shows them
    related = [state.workspace, *state.workspace_related]
    fresh = AppState()
    st.session_state[STATE_KEY] = fresh
    if ws_id is None:
        _new_workspace(fresh, related, demo=False)
    else:
        open_workspace(fresh, ws_id)
        fresh.workspace_related = list(dict.fromkeys(
            [r for r in [*fresh.workspace_related, *related] if r != fresh.workspace]))
    st.query_params["ws"] = fresh.workspace
    save_workspace(fresh)


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


def uncomputed_measures(long: pd.DataFrame, measures: Iterable[str]) -> list[str]:
    """The measures among ``measures`` with no value at all in the matrix (WVV below 1M tokens per source)."""
    values = pd.to_numeric(long["value"], errors="coerce")
    have = set(long.loc[values.notna() & values.abs().ne(float("inf")), "measure"])
    return [m for m in measures if m not in have]


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


def remember_pick(mapping: dict[str, Any], name: str, key: str, leave_out: str) -> None:
    """A name match the user picked (an on_change callback): kept for the session and its workspace."""
    picked = st.session_state.get(key)
    mapping[name] = None if picked == leave_out else picked


def name_pickers(col: str, names: list[str], choices: list[str], memory: dict[str, Any],
                 key: Callable[[str], str]) -> dict[str, str | None]:
    """One picker per name that has no match: the name of ``choices`` it stands for, or None (left out).
    The user's own picks are kept in ``memory``; otherwise the spelling suggests one (never stored)."""
    from .name_map import LEAVE_OUT, suggest

    guesses = suggest(names, choices)
    options = [LEAVE_OUT, *choices]
    grid = st.columns(3)
    picked: dict[str, str | None] = {}
    for i, name in enumerate(names):
        own = memory.get(name, "")
        widget = key(name)
        if st.session_state.get(widget) not in options:
            st.session_state[widget] = ((own or LEAVE_OUT) if own is None or own in options
                                        else (guesses.get(name) or LEAVE_OUT))
        choice = grid[i % 3].selectbox(f"{col} “{name}” is", options, key=widget, on_change=remember_pick,
                                       args=(memory, name, widget, LEAVE_OUT))
        picked[name] = None if choice == LEAVE_OUT else choice
    return picked


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
        st.progress(current.fraction, text=md(current.line()))
        st.caption(caption(current))
        if rows is not None and current.partial:
            st.dataframe(rows(current), hide_index=True)

    st.fragment(panel, run_every=REFRESH_SECONDS)()


# ---- sidebar ------------------------------------------------------------------------------------------

def _job_line(job: jobs.BackgroundJob) -> str:
    return job.line()


def _jobs_panel() -> None:
    """Progress of the workspace's running jobs, refreshed every REFRESH_SECONDS from any page of any of its
    tabs; Cancel buttons. When a job ends the page runs again: here its result is filed, or, once another tab
    filed and saved it, merged from the workspace."""
    state = get_state()
    active = [j for j in state.jobs.values() if j.running]
    ended = [j for j in state.jobs.values() if not j.running and not j.collected]
    seen: set[int] = st.session_state.setdefault("jobs_seen", set())
    filed_elsewhere = [j for j in state.jobs.values() if id(j) in seen and j.collected and j.saved]
    seen.difference_update(id(j) for j in filed_elsewhere)
    seen.update(id(j) for j in active)
    if ended or filed_elsewhere:
        st.rerun()  # the whole page: the job's result is filed (or merged) and shown
    for job in active:
        st.progress(job.fraction, text=md(_job_line(job)))
        st.button("Cancel", key=f"cancel_{job.kind}", on_click=job.cancel, disabled=job.cancel_requested,
                  help="Stops at the next step; values already computed stay in the cache")


def _interrupted_panel(state: AppState) -> None:
    """Each interrupted job of the workspace: what it was and how far it got, Resume and Dismiss."""
    for kind, record in list(resume.interrupted(state).items()):
        st.warning(md(job_records.describe(record)), icon=":material/pause_circle:")
        left, right = st.columns(2)
        if left.button("Resume", key=f"resume_{kind}", type="primary",
                       help="Starts the same job again; what it had finished is read back from the store"):
            try:
                resume.resume(state, kind)
                changed(state, "info", f"{record.title}: started again; what it had finished is read back from "
                                       "the store, only the rest is computed.")
            except SimcoreError as exc:
                st.error(str(exc))
        if right.button("Dismiss", key=f"dismiss_{kind}", help="Forget this job (what it stored stays cached)"):
            resume.dismiss(state, kind)
            changed(state)


def _loaded_now(state: AppState) -> None:
    st.markdown("**Loaded now**")
    st.caption(f"Workspace: {md(state.workspace_name)} (saved as you work; its address reopens it)")
    st.page_link(OPEN_RESULTS, label="Manage workspaces", icon=":material/work:",
                 query_params={"tab": "workspaces", "ws": state.workspace})
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
        # also while a job that ended is not yet filed and saved (by whichever tab runs first)
        watching = any(j.running or not j.saved for j in state.jobs.values())
        st.fragment(_jobs_panel, run_every=REFRESH_SECONDS if watching else None)()
        _interrupted_panel(state)
        _loaded_now(state)


def setup_page(title: str, icon: str = "") -> None:
    """(``icon`` is kept for the pages' calls; every page has the app's own icon.) Page configuration, finished jobs filed, the shared sidebar, title and pending messages; call first."""
    # An emoji favicon is drawn by the browser; a Material icon would be fetched from fonts.gstatic.com.
    st.set_page_config(page_title=f"{title} · simcore", page_icon=PAGE_ICON, layout="wide")
    state = get_state()
    if st.query_params.get("ws") != state.workspace:
        st.query_params["ws"] = state.workspace  # a reload, a bookmark or a new tab opens this workspace again
    filed = jobs.collect(state)
    save_workspace(state)  # what the last run changed
    for job in filed:
        job.saved = True  # the workspace's other tabs may merge its result now
        job_records.close(get_store().root, state.workspace, job)  # filed: its record on disk goes
    _sidebar(state)
    st.title(title)
    messages, state.flash = state.flash, []
    for kind, text in messages:
        getattr(st, kind if kind in ("success", "info", "warning", "error") else "info")(text)
