"""Predictiveness: does similarity predict the NER improvement? Scatters, correlations, regret."""

import streamlit as st

from dashboard import common as c
from dashboard.charts import label, scatter
from dashboard.loading import load_table3, read_table, set_results
from dashboard.tables import NO_COLUMN, correlation_table, normalised_results
from simcore.analysis import correlate, regret
from simcore.analysis.correlation import join
from simcore.errors import SimcoreError

c.setup_page("Predictiveness", ":material/insights:")
state = c.get_state()
st.caption("An NER results table gives, per target and source, the F1 after pretraining on that source and "
           "either a no-pretraining baseline (improvement = F1 − baseline) or the improvement itself.")

st.subheader("NER results")
cols = st.columns([2, 1, 1])
upload = cols[0].file_uploader("Upload a results CSV (columns target, source, f1, optionally baseline)",
                               type=["csv"], key="results_upload")
if upload is not None and state.extra.get("results_upload_id") != upload.file_id:
    state.extra["results_upload_id"] = upload.file_id
    try:
        set_results(state, read_table(upload.getvalue(), upload.name), f"upload: {upload.name}")
    except SimcoreError as exc:
        st.error(str(exc))
if cols[1].button("Load Table 3 of Dai et al. (2019)", key="load_table3",
                  help="Its published similarity values become the matrix, its F1 the results"):
    load_table3(state)
if state.matrix is not None and cols[2].button("Start a table for the current matrix", key="start_results"):
    pairs = state.matrix[["target", "source"]].drop_duplicates().sort_values(["target", "source"])
    set_results(state, pairs.assign(f1=float("nan"), baseline=float("nan")).reset_index(drop=True), "typed in")

if state.results is None:
    st.info("No NER results yet: upload a CSV, load the bundled Table 3, or start a table and type the F1 scores.")
    if state.matrix is None:
        st.page_link(c.HOME, label="Home: load the sample data", icon=":material/home:")
    st.stop()

editor_key = f"results_editor_{state.extra.get('results_version', 0)}"
if editor_key not in st.session_state or "results_base" not in state.extra:
    state.extra["results_base"] = state.results.copy()
st.caption(f"Results: {c.md(state.results_label)}. Edit cells in place; add or delete rows at the bottom.")
state.results = st.data_editor(state.extra["results_base"], key=editor_key, num_rows="dynamic", hide_index=True,
                               width="stretch", height=240)

columns = list(state.results.columns)
numeric = [col for col in columns if col not in ("target", "source")]
chosen = state.results_columns
pick = st.columns(3)


def _index(options: list[str], value: str | None) -> int:
    return options.index(value) if value in options else 0


f1 = pick[0].selectbox("F1 column", numeric, index=_index(numeric, chosen.get("f1")), key="col_f1")
baseline_options = [NO_COLUMN, *numeric]
baseline = pick[1].selectbox("Baseline column (no pretraining)", baseline_options,
                             index=_index(baseline_options, chosen.get("baseline")), key="col_baseline")
improvement = pick[2].selectbox("…or a column that already holds the improvement", baseline_options,
                                index=_index(baseline_options, chosen.get("improvement")), key="col_improvement")
state.results_columns = {"f1": f1, "baseline": None if baseline == NO_COLUMN else baseline,
                         "improvement": None if improvement == NO_COLUMN else improvement}

if state.matrix is None:
    st.info("No similarity matrix yet: compute one on the Similarity page or open one on the Open results page.")
    c.matrix_links()
    st.stop()

long = state.matrix
measures = c.similarity_measures(long)
try:
    results = normalised_results(state.results, state.results_columns)
    if results.empty:
        raise SimcoreError("the results table has no F1 values yet; type them in or choose another column")
    joined = join(long[long["measure"].isin(measures)], results)
    corr = correlate(long, results, measures, per_target=True)
except SimcoreError as exc:
    st.error(str(exc))
    st.stop()

what = ("F1 − " + state.results_columns["baseline"] if state.results_columns["baseline"]
        else state.results_columns["improvement"] or f"{f1} (no baseline given)")
st.caption(f"Similarity: {c.md(state.matrix_label)}. Improvement: {what}. {joined[['target', 'source']].drop_duplicates().shape[0]} "
           "(target, source) pairs matched.")
targets = sorted(joined["target"].unique())
scope = st.radio("View", ["all targets pooled", *targets], horizontal=True, key="pred_scope")
scope_key = "all" if scope == "all targets pooled" else scope
shown = joined if scope_key == "all" else joined[joined["target"] == scope_key]

st.subheader("Correlation with the improvement")
st.caption("For measures where lower is more similar (PPL, WVV, JSD) a useful measure correlates negatively.")
st.dataframe(correlation_table(corr, scope_key), hide_index=True, width="stretch")

grid = st.columns(2)
for i, m in enumerate(measures):
    with grid[i % 2]:
        st.altair_chart(scatter(shown[shown["measure"] == m], m), width="stretch", key=f"scatter_{m}")

st.subheader("Regret: F1 lost by choosing the source each measure ranks first")
try:
    table = regret(long, results, measures)
    means = table[table["target"] == "mean"][["measure", "regret"]].assign(measure=lambda d: d["measure"].map(label))
    st.dataframe(means.rename(columns={"regret": "mean regret (F1 points)"}).round(3), hide_index=True)
    detail = table[table["target"] != "mean"]
    if scope_key != "all":
        detail = detail[detail["target"] == scope_key]
    st.dataframe(detail.assign(measure=detail["measure"].map(label)).round(3), hide_index=True, width="stretch")
except (SimcoreError, ValueError, KeyError) as exc:
    st.error(f"Regret cannot be computed: {exc}")
