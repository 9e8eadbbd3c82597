"""Open results: explore a matrix written by `python -m simcore matrix` without recomputing it."""

import pandas as pd
import streamlit as st

from dashboard import common as c
from dashboard.charts import label
from dashboard.compute import describe, failures
from dashboard.loading import add_matrix_table, load_table3, read_table, set_results
from dashboard.paths import browse, data_roots, resolve_server_path
from simcore.errors import SimcoreError

c.setup_page("Open results", ":material/folder_open:")
state = c.get_state()
st.caption("Large corpora are best scored on the command line, e.g. "
           "`simcore matrix --sources DIR --targets DIR --out matrix.csv`; open that file here to "
           "see the heatmaps, agreement, rankings and exports. A wide table with one column per measure "
           "(like the paper's Table 3) works too.")

upload_tab, path_tab = st.tabs(["Upload a matrix CSV", "Server path"])
with upload_tab:
    upload = st.file_uploader("Matrix CSV", type=["csv"], key="matrix_upload")
    if upload is not None and state.extra.get("matrix_upload_id") != upload.file_id:
        state.extra["matrix_upload_id"] = upload.file_id
        try:
            name = add_matrix_table(state, read_table(upload.getvalue(), upload.name), upload.name, "file (upload)")
            c.changed(state, "success", f"Opened {upload.name} as “{name}”.")
        except SimcoreError as exc:
            st.error(str(exc))
    if st.button("Open Table 3 of Dai et al. (2019)", key="open_table3"):
        load_table3(state)
        c.changed(state)
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
                c.changed(state, "success", f"Opened {path.name} as “{name}”.")
            except SimcoreError as exc:
                st.error(str(exc))

if not state.matrices:
    st.info("Nothing opened yet.")
    st.page_link(c.HOME, label="Home", icon=":material/home:")
    st.stop()

st.subheader("Similarity matrices kept in this session")
st.caption("Each page shows one of them (a picker at its top when there are several); the newest is shown until "
           "you pick another. Nothing is replaced: a new run or file is added under a new name.")
st.dataframe(pd.DataFrame([describe(m) for m in state.matrices.values()]), hide_index=True, width="stretch")
with st.form("manage_matrices"):
    m1, m2, m3 = st.columns([2, 2, 1])
    target_name = m1.selectbox("Matrix", list(state.matrices), key="manage_pick")
    new_name = m2.text_input("New name", key="manage_name")
    action = m3.radio("Action", ["rename", "remove"], key="manage_action", horizontal=True)
    apply = st.form_submit_button("Apply")
if apply and target_name in state.matrices:
    if action == "remove":
        state.remove_matrix(target_name)
        c.changed(state, "info", f"Removed “{target_name}”.")
    elif new_name.strip():
        c.changed(state, "success", f"Renamed to “{state.rename_matrix(target_name, new_name)}”.")
    else:
        st.warning("Type the new name first.")

shown = c.pick_matrix(state, "open_results")
long = shown.long
st.subheader(f"Shown: {shown.name}")
cols = st.columns(3)
cols[0].metric("Sources", long["source"].nunique())
cols[1].metric("Targets", long["target"].nunique())
cols[2].metric("Measures", long["measure"].nunique())
st.caption("Measures: " + ", ".join(label(m) for m in dict.fromkeys(long["measure"])))
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
for page, text, icon in ((c.SIMILARITY, "Heatmaps and values", ":material/grid_on:"), (c.AGREEMENT, "Agreement", ":material/handshake:"),
                         (c.RANKING, "Ranking and export", ":material/trophy:"), (c.PREDICTIVENESS, "Predictiveness", ":material/insights:")):
    st.page_link(page, label=text, icon=icon)
