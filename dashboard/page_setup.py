"""Every page starts with ``setup_page(title)``: page configuration, finished jobs filed, the
shared sidebar (navigation, running and interrupted jobs, what is loaded), title and messages."""

from __future__ import annotations

import streamlit as st

from simcore.utils.errors import SimcoreError

from . import job_records, jobs, resume
from .markdown import md
from .navigation import NAVIGATION, OPEN_RESULTS, PAGE_ICON
from .resources import get_store
from .session import get_state, save_workspace
from .state import AppState
from .widgets import REFRESH_SECONDS, changed


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
                if resume.resume(state, kind) is None:  # a target now too small to need its own job
                    changed(state, "info", f"{record.title}: nothing is left worth a job of its "
                                           "own; Compute does the rest.")
                else:
                    changed(state, "info", f"{record.title}: started again; what it had finished "
                                           "is read back from the store, only the rest is computed.")
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
    st.title(title)  # drawn before the workspace is restored (a new session reads it from disk)
    state = get_state()
    if st.query_params.get("ws") != state.workspace:
        st.query_params["ws"] = state.workspace  # a reload, a bookmark or a new tab opens this workspace again
    filed = jobs.collect(state)
    save_workspace(state)  # what the last run changed
    for job in filed:
        job.saved = True  # the workspace's other tabs may merge its result now
        job_records.close(get_store().root, state.workspace, job)  # filed: its record on disk goes
    _sidebar(state)
    messages, state.flash = state.flash, []
    for kind, text in messages:
        getattr(st, kind if kind in ("success", "info", "warning", "error") else "info")(text)
