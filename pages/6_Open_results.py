"""Open results: explore a matrix written by `python -m simcore matrix` without recomputing it."""

import streamlit as st

from dashboard import common as c
from dashboard.charts import label
from dashboard.compute import failures
from dashboard.loading import load_table3, read_table, set_matrix, set_results
from dashboard.paths import browse, data_roots, resolve_server_path
from simcore.errors import SimcoreError

c.setup_page("Open results", ":material/folder_open:")
state = c.get_state()
st.caption("Large corpora are best scored on the command line, e.g. "
           "`python -m simcore matrix --sources DIR --targets DIR --out matrix.csv`; open that file here to "
           "see the heatmaps, agreement, rankings and exports. A wide table with one column per measure "
           "(like the paper's Table 3) works too.")

upload_tab, path_tab = st.tabs(["Upload a matrix CSV", "Server path"])
with upload_tab:
    upload = st.file_uploader("Matrix CSV", type=["csv"], key="matrix_upload")
    if upload is not None and state.extra.get("matrix_upload_id") != upload.file_id:
        state.extra["matrix_upload_id"] = upload.file_id
        try:
            set_matrix(state, read_table(upload.getvalue(), upload.name), f"file {upload.name}")
            st.success(f"Opened {c.md(upload.name)}.")
        except SimcoreError as exc:
            st.error(str(exc))
    if st.button("Open Table 3 of Dai et al. (2019) instead", key="open_table3"):
        load_table3(state)
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
                set_matrix(state, read_table(path.read_bytes(), path.name), f"file {path.name}")
                st.success(f"Opened {c.md(path.name)}.")
            except SimcoreError as exc:
                st.error(str(exc))

if state.matrix is None:
    st.info("Nothing opened yet.")
    st.page_link(c.HOME, label="Home", icon=":material/home:")
    st.stop()

long = state.matrix
st.subheader(f"Loaded: {state.matrix_label}")
cols = st.columns(3)
cols[0].metric("Sources", long["source"].nunique())
cols[1].metric("Targets", long["target"].nunique())
cols[2].metric("Measures", long["measure"].nunique())
st.caption("Measures: " + ", ".join(label(m) for m in dict.fromkeys(long["measure"])))
bad = failures(long)
if len(bad):
    st.warning("Some values in this file could not be computed:")
    st.dataframe(bad, hide_index=True, width="stretch")
raw = state.extra.get("matrix_raw")
f1_like = [] if raw is None else [col for col in raw.columns if "f1" in str(col).lower()]
if f1_like and st.button("Also use this file's F1 columns as the NER results", key="use_f1"):
    try:
        set_results(state, raw, state.matrix_label)
        st.success("NER results set; see the Predictiveness page.")
    except SimcoreError as exc:
        st.error(str(exc))
for page, text, icon in ((c.SIMILARITY, "Heatmaps and values", ":material/grid_on:"), (c.AGREEMENT, "Agreement", ":material/handshake:"),
                         (c.RANKING, "Ranking and export", ":material/trophy:"), (c.PREDICTIVENESS, "Predictiveness", ":material/insights:")):
    st.page_link(page, label=text, icon=icon)
