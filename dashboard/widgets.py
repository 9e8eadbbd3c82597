"""Widgets and helpers the pages share: links to where a matrix comes from, a form's choices kept
across pages, name pickers, the matrix a page shows, a job's progress on its page."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from simcore.utils.errors import SimcoreError

from . import jobs
from .markdown import md
from .navigation import OPEN_RESULTS, SIMILARITY
from .session import get_state
from .state import AppState, NamedMatrix

# How often a running job's progress is redrawn: each redraw is a script run on the server, for every session.
REFRESH_SECONDS = 2.0


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


def table(frame: pd.DataFrame, room: int | None = None, column_config: dict[str, Any] | None = None,
          name_columns: Sequence[str] = (), names: Iterable[str] = (), **kwargs: Any) -> None:
    """``st.dataframe`` across the page's width with every column in view: a table wider than its
    room (issue 37: columns cut off at the table's edge, seen only by scrolling it sideways) has its
    columns of sentences narrowed, then the corpus ``names`` in its ``name_columns`` shortened
    (:func:`dashboard.page_tables.fitted_table`), said in a caption under it. A width the page
    sets in ``column_config`` is kept."""
    from .page_tables import TABLE_ROOM, fitted_table

    config: dict[str, Any] = dict(column_config or {})
    named = {"small": 75, "medium": 200, "large": 400}  # Streamlit's named widths, in pixels
    fixed = {name: named.get(spec["width"], spec["width"]) for name, spec in config.items()
             if isinstance(spec, dict) and spec.get("width")}
    shown, widths, mapping = fitted_table(frame, room or TABLE_ROOM, fixed, name_columns, names)
    for name, width in widths.items():
        spec = config.get(name)
        if isinstance(spec, dict):
            config[name] = {**spec, "width": spec.get("width") or width}
        elif spec is None and name in config:
            continue  # hidden by the page
        else:
            config[name] = st.column_config.Column(spec if isinstance(spec, str) else None,
                                                   width=width)
    st.dataframe(shown, hide_index=kwargs.pop("hide_index", True),
                 width=kwargs.pop("width", "stretch"), column_config=config or None, **kwargs)
    cells = [str(v) for c in name_columns if c in frame.columns for v in frame[c].head(500)]
    used = [n for n in sorted(mapping) if any(n in v for v in cells)]
    if used:
        st.caption("Long names shortened to fit (their start…end): "
                   + md("; ".join(f"{mapping[n]} = {n}" for n in used)) + ".")
