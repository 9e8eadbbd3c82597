"""Open results: explore a matrix written by `python -m simcore matrix` without recomputing it."""

import time

import pandas as pd
import streamlit as st

from dashboard import workspace as ws
from dashboard.charts import label
from dashboard.compute import describe, failures
from dashboard.loading import add_matrix_table, load_table3, read_table, set_results
from dashboard.markdown import md
from dashboard.navigation import AGREEMENT, HOME, PREDICTIVENESS, RANKING, SIMILARITY
from dashboard.page_setup import setup_page
from dashboard.paths import SAMPLE_DATA, browse, data_roots, resolve_server_path
from dashboard.resources import get_store
from dashboard.session import get_state, get_workspaces, locator, switch_workspace
from dashboard.state import AppState, unique_name
from dashboard.widgets import changed, pick_matrix, table
from simcore.utils.errors import SimcoreError

setup_page("Open results", ":material/folder_open:")
state = get_state()
st.caption("Large corpora are best scored on the command line, e.g. "
           "`simcore matrix --sources DIR --targets DIR --out matrix.csv`; open that file here to "
           "see the heatmaps, agreement, rankings and exports. A wide table with one column per measure "
           "(like the paper's Table 3) works too.")

TABS = ["Upload a matrix CSV", "Server path", "Workspaces"]
if st.query_params.get("tab") == "workspaces":  # the sidebar's "Manage workspaces" link
    st.session_state["open_results_tab"] = "Workspaces"
    del st.query_params["tab"]
# Tabs that keep their state: the open tab stays open across the rerun after an action (a rename, an upload).
upload_tab, path_tab, ws_tab = st.tabs(TABS, key="open_results_tab", on_change="rerun")
with upload_tab:
    upload = st.file_uploader("Matrix CSV", type=["csv"], key="matrix_upload")
    if upload is not None and state.extra.get("matrix_upload_id") != upload.file_id:
        state.extra["matrix_upload_id"] = upload.file_id
        try:
            name = add_matrix_table(state, read_table(upload.getvalue(), upload.name), upload.name, "file (upload)")
            changed(state, "success", f"Opened {upload.name} as “{name}”.")
        except SimcoreError as exc:
            st.error(str(exc))
    if st.button("Open Table 3 of Dai et al. (2019)", key="open_table3"):
        load_table3(state)
        changed(state)
with path_tab:
    roots = data_roots()
    if not roots:
        st.info("No data directory is configured on this server (set SIMCORE_DATA_ROOTS).")
    else:
        with st.form("matrix_path_form"):
            csvs = [p for p in browse(roots, depth=3) if p.lower().endswith(".csv")]
            picked = st.selectbox("Pick a CSV file", [""] + csvs, key="matrix_pick")
            typed = st.text_input("…or type a path inside a data directory", key="matrix_path")
            go = st.form_submit_button("Open")
        if go:
            try:
                path = resolve_server_path(typed or picked)
                if not path.is_file():
                    raise SimcoreError(f"{path} is a directory; choose a CSV file")
                name = add_matrix_table(state, read_table(path.read_bytes(), path.name), path.name,
                                        f"file on the server: {path}")
                changed(state, "success", f"Opened {path.name} as “{name}”.")
            except SimcoreError as exc:
                st.error(str(exc))

with ws_tab:
    st.caption("Everything you add or compute (corpora, names, matrices, NER results and name matches, selections, "
               "probe results, form choices) is saved in this workspace as you work. Its address (the `?ws=` part) "
               "opens it again after a reload or in a new tab; keep it to yourself: whoever has it can open it.")
    with st.form("ws_rename_form"):
        r1, r2 = st.columns([4, 1], vertical_alignment="bottom")
        typed_name = r1.text_input("Name of this workspace", value=state.workspace_name, key="ws_name")
        renamed = r2.form_submit_button("Rename", key="ws_rename")
    if renamed:
        try:
            state.workspace_name = ws.clean_name(typed_name)
            changed(state, "success", f"This workspace is now called {md(state.workspace_name)}.")
        except SimcoreError as exc:
            st.error(str(exc))
    spaces = get_workspaces()
    here = locator()
    snapshot_args = (state, state.workspace_name, get_store().root, SAMPLE_DATA, state.workspace_created,
                     state.workspace_related)
    b1, b2, b3 = st.columns(3)
    b1.download_button("Download this workspace (.zip)", lambda: ws.to_zip(ws.snapshot(*snapshot_args), here),
                       file_name="simcore-workspace.zip", mime="application/zip", on_click="ignore", key="ws_download",
                       help="One file of plain JSON and CSV (and your uploaded corpora): open it here again, on any server")
    if b2.button("New empty workspace", key="ws_new", help="This one stays saved; it is listed below"):
        switch_workspace(state, None)
        changed(get_state(), "success", "A new workspace; the one you left is listed under Workspaces.")
    if b3.button("Delete this workspace", key="ws_delete", help="Removes its saved files from the server"):
        gone = state.workspace
        switch_workspace(state, None)
        spaces.delete(gone)
        fresh = get_state()
        fresh.workspace_related = [r for r in fresh.workspace_related if r != gone]
        changed(fresh, "info", "The workspace was deleted; this is a new one.")
    opened = st.file_uploader("Open a workspace file (.zip downloaded here)", type=["zip"], key="ws_upload")
    if opened is not None and state.extra.get("ws_upload_id") != opened.file_id:
        state.extra["ws_upload_id"] = opened.file_id
        try:
            files = ws.read_zip(opened.getvalue())
            new_state = AppState()
            notes = ws.restore(files, new_state, here)
            manifest = ws.parse_manifest(files)
            if not ws.has_content(new_state):  # e.g. a pickle named m0.csv: refused, not a new empty workspace
                raise SimcoreError(f"{opened.name} holds nothing that can be opened"
                                   + (f": {'; '.join(notes[:3])}" if notes else " (no corpus, matrix or result)")
                                   + ". This workspace is unchanged.")
            # a reopened file next to its original is told apart in the list ("Paper check (2)")
            listed = {row["name"] for row in spaces.describe([state.workspace, *state.workspace_related])}
            switch_workspace(state, None)
            fresh = get_state()
            for key in ("sources", "targets", "matrices", "active", "results", "results_label", "results_columns"):
                setattr(fresh, key, getattr(new_state, key))
            fresh.extra.update(new_state.extra)
            fresh.workspace_name = unique_name(ws.clean_name(manifest.get("name") or opened.name), listed)
            fresh.extra["ws_upload_id"] = opened.file_id
            for note in notes[:10]:
                fresh.say("warning", note)
            changed(fresh, "success", f"Opened {md(opened.name)} as a new workspace.")
        except SimcoreError as exc:
            st.error(str(exc))
    rows = spaces.describe([state.workspace, *state.workspace_related])
    if rows:
        st.markdown("**Workspaces opened from this one**" if len(rows) > 1 else "**This workspace**")
        for row in rows:
            l1, l2, l3 = st.columns([4, 1, 1], vertical_alignment="center")
            when = time.strftime("%d %b %H:%M", time.localtime(row["changed"])) if row["changed"] else "–"
            l1.write(f"{md(row['name'])} · {row['sources']} sources, {row['targets']} targets, "
                     f"{row['matrices']} matrices · changed {when}" + (" · **open now**" if row["id"] == state.workspace else ""))
            if row["id"] != state.workspace:
                if l2.button("Open", key=f"ws_open_{row['id']}"):
                    switch_workspace(state, row["id"])
                    changed(get_state(), "success", f"Opened {md(row['name'])}.")
                if l3.button("Delete", key=f"ws_del_{row['id']}"):
                    spaces.delete(row["id"])
                    state.workspace_related = [r for r in state.workspace_related if r != row["id"]]
                    changed(state, "info", f"Deleted {md(row['name'])}.")

if not state.matrices:
    st.info("Nothing opened yet.")
    st.page_link(HOME, label="Home", icon=":material/home:")
    st.stop()

st.subheader("Similarity matrices kept in this session")
st.caption("Each page shows one of them (a picker at its top when there are several); the newest is shown until "
           "you pick another. Nothing is replaced: a new run or file is added under a new name.")
table(pd.DataFrame([describe(m) for m in state.matrices.values()]))
with st.form("manage_matrices"):
    m1, m2, m3 = st.columns([2, 2, 1])
    target_name = m1.selectbox("Matrix", list(state.matrices), key="manage_pick")
    new_name = m2.text_input("New name", key="manage_name")
    action = m3.radio("Action", ["rename", "remove"], key="manage_action", horizontal=True)
    apply = st.form_submit_button("Apply")
if apply and target_name in state.matrices:
    if action == "remove":
        state.remove_matrix(target_name)
        changed(state, "info", f"Removed “{target_name}”.")
    elif new_name.strip():
        changed(state, "success", f"Renamed to “{state.rename_matrix(target_name, new_name)}”.")
    else:
        st.warning("Type the new name first.")

shown = pick_matrix(state, "open_results")
long = shown.long
st.subheader(f"Shown: {shown.name}")
cols = st.columns(3)
cols[0].metric("Sources", long["source"].nunique())
cols[1].metric("Targets", long["target"].nunique())
cols[2].metric("Measures", long["measure"].nunique())
st.caption("Measures: " + ", ".join(label(m) for m in dict.fromkeys(long["measure"])))
st.download_button("Download this matrix (CSV)", lambda long=long: ws.matrix_csv(long), file_name="simcore-matrix.csv",
                   mime="text/csv", on_click="ignore", key="dl_matrix",
                   help="The CSV `simcore matrix` writes: `simcore rank --matrix` and this page open it again")
bad = failures(long)
if len(bad):
    st.warning("Some values in this file could not be computed:")
    st.dataframe(bad, hide_index=True, width="stretch")
raw = shown.raw
f1_like = [] if raw is None else [col for col in raw.columns if "f1" in str(col).lower()]
if f1_like and st.button("Also use this file's F1 columns as the NER results", key="use_f1"):
    try:
        set_results(state, raw, shown.name)
        st.success("NER results set; see the Predictiveness page.")
    except SimcoreError as exc:
        st.error(str(exc))
for page, text, icon in ((SIMILARITY, "Heatmaps and values", ":material/grid_on:"), (AGREEMENT, "Agreement", ":material/handshake:"),
                         (RANKING, "Ranking and export", ":material/trophy:"), (PREDICTIVENESS, "Predictiveness", ":material/insights:")):
    st.page_link(page, label=text, icon=icon)
