"""The session's state and its workspace on disk: opened from the page's address, saved as the
user works, merged with the workspace's other tabs, switched for another."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import streamlit as st

from simcore.utils.errors import SimcoreError

from . import compute, job_records, jobs
from . import workspace as ws
from .loading import load_sample
from .markdown import md
from .paths import SAMPLE_DATA, resolve_server_path
from .resources import get_store
from .state import AppState

STATE_KEY = "simcore_state"
# state.extra: the workspace manifest this session last read or wrote (another tab's saves differ from it).
SEEN = "workspace_seen"


def get_state() -> AppState:
    """The session's state object: on a session's first page, the workspace its address names (``?ws=``),
    or a new one (on the sample with SIMCORE_DEMO=1)."""
    state = st.session_state.get(STATE_KEY)
    if not isinstance(state, AppState):
        state = AppState()
        st.session_state[STATE_KEY] = state
        open_workspace(state, st.query_params.get("ws"))
    return state


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
