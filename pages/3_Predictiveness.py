"""Predictiveness: does similarity predict the NER improvement? Scatters, correlations, regret, the audit."""

import pandas as pd
import streamlit as st

from dashboard.analysis_cache import audit_views, correlations, regrets, scatter_specs
from dashboard.charts import label, scatter
from dashboard.loading import TABLE3_NAME, load_table3, read_table, set_results, use_table3_results
from dashboard.markdown import md
from dashboard.name_map import apply_mapping
from dashboard.navigation import HOME
from dashboard.page_setup import setup_page
from dashboard.page_tables import NO_COLUMN, correlation_table, normalised_results
from dashboard.session import get_state, save_workspace
from dashboard.widgets import (
    changed,
    keep_choices,
    matrix_links,
    name_pickers,
    pick_matrix,
    save_choices,
    similarity_measures,
    table,
    uncomputed_measures,
)
from simcore.analysis.audit import RULE
from simcore.analysis.correlation import CAPPED, join, left_out_note, usable_results
from simcore.utils.errors import SimcoreError

setup_page("Predictiveness", ":material/insights:")
state = get_state()
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
        changed(state, "success", f"NER results from {upload.name}.")
    except SimcoreError as exc:
        st.error(str(exc))
if cols[1].button("Load Table 3 of Dai et al. (2019)", key="load_table3",
                  help="Its published similarity values are kept as a matrix; its F1 become the results "
                       "when none are loaded"):
    load_table3(state)
    changed(state)
if state.results is not None and state.results_label != TABLE3_NAME and TABLE3_NAME in state.matrices:
    if cols[1].button("Use Table 3's F1 as the NER results", key="use_table3_results",
                      help=f"Replaces the results now loaded ({state.results_label})"):
        use_table3_results(state)
        changed(state)
if state.matrix is not None and cols[2].button("Start a table for the shown matrix", key="start_results"):
    pairs = state.matrix[["target", "source"]].drop_duplicates().sort_values(["target", "source"])
    set_results(state, pairs.assign(f1=float("nan"), baseline=float("nan")).reset_index(drop=True), "typed in")
    changed(state)

if state.results is None:
    st.info("No NER results yet: upload a CSV, load the bundled Table 3, or start a table and type the F1 scores.")
    if state.matrix is None:
        st.page_link(HOME, label="Home: load the sample data", icon=":material/home:")
    st.stop()

editor_key = f"results_editor_{state.extra.get('results_version', 0)}"
if editor_key not in st.session_state or "results_base" not in state.extra:
    state.extra["results_base"] = state.results.copy()
st.caption(f"Results: {md(state.results_label)}. Edit cells in place; add or delete rows at the bottom.")
state.results = st.data_editor(state.extra["results_base"], key=editor_key, num_rows="dynamic", hide_index=True,
                               width="stretch", height=240)
save_workspace(state)  # an edited cell is kept at once (a reload right after it finds it)

columns = list(state.results.columns)
numeric = [col for col in columns if col not in ("target", "source")]
chosen = state.results_columns
pick = st.columns(3)


def _index(options: list[str], value: str | None) -> int:
    return options.index(value) if value in options else 0


version = state.extra.get("results_version", 0)  # new results: the pickers start on their guessed columns
f1 = pick[0].selectbox("F1 column", numeric, index=_index(numeric, chosen.get("f1")), key=f"col_f1_{version}")
baseline_options = [NO_COLUMN, *numeric]
baseline = pick[1].selectbox("Baseline column (no pretraining)", baseline_options,
                             index=_index(baseline_options, chosen.get("baseline")), key=f"col_baseline_{version}")
improvement = pick[2].selectbox("…or a column that already holds the improvement", baseline_options,
                                index=_index(baseline_options, chosen.get("improvement")),
                                key=f"col_improvement_{version}")
state.results_columns = {"f1": f1, "baseline": None if baseline == NO_COLUMN else baseline,
                         "improvement": None if improvement == NO_COLUMN else improvement}

shown_matrix = pick_matrix(state, "predictiveness")
if shown_matrix is None:
    st.info("No similarity matrix yet: compute one on the Similarity page or open one on the Open results page.")
    matrix_links()
    st.stop()

long = shown_matrix.long
measures = similarity_measures(long)
missing = uncomputed_measures(long, measures)  # WVV below 1M tokens: no value, nothing to correlate or plot
measures = [m for m in measures if m not in missing]
if missing:
    st.caption(", ".join(label(m) for m in missing) + " not computed in this matrix (no values): left out of the "
               "correlations, scatters, regret and audit below.")
if not measures:
    st.info("This matrix has no similarity values to compare with the NER results.")
    st.stop()

# Names in the results that the matrix does not have: suggest matches, let the user pick, remember the picks.
mapping: dict[str, dict[str, str | None]] = state.extra.setdefault("name_map", {"target": {}, "source": {}})
mapped: dict[str, dict[str, str | None]] = {"target": {}, "source": {}}  # this matrix's matches, picked or guessed
unmatched = {col: sorted({str(v) for v in state.results[col].dropna()} - set(map(str, long[col].unique())))
             for col in ("target", "source") if col in state.results}
if any(unmatched.values()):
    with st.expander("Match the results' names to the matrix's corpus names", expanded=True):
        st.caption("These names in the results are not in the matrix. Pick the corpus each one stands for "
                   "(suggested from the spelling); the choice is remembered for this session.")
        for col, names in unmatched.items():
            if not names:
                continue
            # only the user's own picks are remembered: a guess made for another matrix is not a choice
            mapped[col] = name_pickers(col, names, sorted(map(str, long[col].unique())), mapping[col],
                                         lambda name, col=col: f"map_{col}_{name}_{shown_matrix.name}")
capped_runs = CAPPED in state.results and (pd.to_numeric(state.results[CAPPED], errors="coerce").fillna(0) > 0).any()
include_capped = st.checkbox("Include runs cut short by the probe's time cap", key="pred_capped", value=False,
                             disabled=not capped_runs,
                             help="They trained fewer epochs than the others, so their F1 (often near 0) measures the "
                                  "cap, not the source: left out of the correlations and regret by default")
try:
    results = normalised_results(apply_mapping(state.results, mapped), state.results_columns)
    if results.empty:
        raise SimcoreError("the results table has no F1 values yet; type them in or choose another column")
    results, left_out = usable_results(results, include_capped)
    if len(left_out):
        st.info(md(left_out_note(left_out)) + ". Tick the box above to include them.")
    elif include_capped and capped_runs:
        st.warning("Runs cut short by the probe's time cap are included: their F1 is not comparable with the others'.")
    joined = join(long[long["measure"].isin(measures)], results)
    corr = correlations(long, results, measures)  # cached: a click elsewhere on the page does not redo it
    corr.attrs.clear()  # what it left out is shown above; Streamlit cannot serialise it
except SimcoreError as exc:
    st.error(str(exc))
    st.stop()

what = ("F1 − " + state.results_columns["baseline"] if state.results_columns["baseline"]
        else state.results_columns["improvement"] or f"{f1} (no baseline given)")
st.caption(f"Similarity: {md(shown_matrix.name)}. Improvement: {what}. {joined[['target', 'source']].drop_duplicates().shape[0]} "
           "(target, source) pairs matched.")
targets = sorted(joined["target"].unique())
keep_choices(state, "predictiveness", {"pred_scope": "all targets pooled"},
               allowed={"pred_scope": ["all targets pooled", *targets]})
scope = st.radio("View", ["all targets pooled", *targets], horizontal=True, key="pred_scope")
save_choices(state, "predictiveness", ["pred_scope"])
scope_key = "all" if scope == "all targets pooled" else scope
shown = joined if scope_key == "all" else joined[joined["target"] == scope_key]

st.subheader("Correlation with the improvement")
st.caption("For measures where lower is more similar (PPL, WVV, JSD) a useful measure correlates negatively.")
st.dataframe(correlation_table(corr, scope_key), hide_index=True, width="stretch")

st.caption("One colour and shape per target; each point is labelled with its source. Solid lines: least-squares "
           "fit per target" + ("; dashed: all targets pooled." if scope_key == "all" else ".")
           + (" Red rings: runs cut short by the probe's time cap (included above)." if include_capped and capped_runs
              else ""))
grid = st.columns(2)
# built once per content
specs = scatter_specs(shown[shown["measure"].isin(measures)], measures, targets, CAPPED)
for i, m in enumerate(measures):
    with grid[i % 2]:
        if specs[m] is not None:
            st.vega_lite_chart(specs[m], width="stretch", key=f"scatter_{m}")
        else:
            chart = scatter(shown[shown["measure"] == m], m, targets=targets, capped_column=CAPPED)
            st.altair_chart(chart, width="stretch", key=f"scatter_{m}")

st.subheader("Regret: F1 lost by choosing the source each measure ranks first")
if "f1_std" in results and results["f1_std"].notna().any():
    st.caption("The results carry the probe's spread over seeds (f1_std): sources whose F1 differ by less than "
               "√(std₁² + std₂²) are a tie, and choosing any source tied with the best costs nothing (regret 0; the "
               "note says so). A single seed has no spread: its F1 are compared exactly.")
try:
    regret_table = regrets(long, results, measures)
    regret_table.attrs.clear()
    if scope_key == "all":
        summary = regret_table[regret_table["target"] == "mean"][["measure", "regret"]]
        heading = "mean regret (F1 points)"
    else:
        summary = regret_table[regret_table["target"] == scope_key][["measure", "regret"]]
        heading = f"regret on {scope_key} (F1 points)"
    summary = summary.assign(measure=lambda d: d["measure"].map(label))
    st.dataframe(summary.rename(columns={"regret": heading}).round(3), hide_index=True)
    detail = regret_table[regret_table["target"] != "mean"]
    if scope_key != "all":
        detail = detail[detail["target"] == scope_key]
    table(detail.assign(measure=detail["measure"].map(label)).round(3))
except (SimcoreError, ValueError, KeyError) as exc:
    st.error(f"Regret cannot be computed: {exc}")

RULE_ROWS = ("How to read the rule's rows: the recommendation rule orders the sources by their share of the votes "
             "over bootstrap replicates. On a table without replicates (one value per cell, as a published table) it "
             "names only its first choice and gives every other source a share of 0, so the pairs of a target that do "
             "not involve that source stay undecided and count ½ each: its decision accuracy is capped (0.70 on "
             "Table 3 is the rule choosing the best source for every target), and its interval can be zero-width. "
             "Top-1 regret, which only looks at the first choice, is not capped.")
st.subheader("Audit: would each measure have chosen well?")
st.caption("Per measure and for the recommendation rule (recommended (lm), recommended (vectors)): decision accuracy "
           "(share of source pairs ordered as their F1 orders them; pairs closer in F1 than the tie margin are ties, "
           "left out; a pair the measure leaves equal counts ½), top-1 regret (F1 lost by following its first choice) "
           "and NDCG@k (gain: F1 minus the target's lowest). Intervals: 95% bootstrap over targets.")
knobs = st.columns(2)
k = knobs[0].number_input("NDCG cut-off k", min_value=1, max_value=100, value=3, step=1, key="audit_k")
tie_f1 = knobs[1].number_input("Tie margin (F1 points)", min_value=0.0, max_value=100.0, value=0.0, step=0.1,
                               key="audit_tie_f1",
                               help="Pairs whose F1 differ by less than this, or than their spread over seeds "
                                    "(f1_std) when larger, are ties, not errors")
try:
    audited, audit_view, audit_files = audit_views(  # each made once per content
        long, results, measures, int(k), float(tie_f1), include_capped, scope_key)
    st.dataframe(audit_view, hide_index=True, width="stretch")
    if audited["measure"].astype(str).str.startswith(RULE).any():
        st.caption(RULE_ROWS)
    downloads = st.columns(len(audit_files))
    for column, (suffix, text) in zip(downloads, audit_files.items()):
        column.download_button(f"Audit ({suffix[1:].upper()})", text,
                               file_name=f"simcore-audit{suffix}",
                               key=f"audit_download_{suffix[1:]}")
except SimcoreError as exc:
    st.error(f"The audit cannot be computed: {exc}")
