"""Compare results: the rankings of two kept similarity matrices side by side, and what changed."""

import pandas as pd
import streamlit as st

from dashboard.analysis_cache import comparison
from dashboard.charts import label
from dashboard.compare import comparable, default_pair, renamed, unmatched_names
from dashboard.compute import describe, options_label
from dashboard.markdown import md
from dashboard.page_setup import setup_page
from dashboard.session import get_state
from dashboard.widgets import matrix_links, name_pickers, table
from simcore.utils.errors import SimcoreError

setup_page("Compare results", ":material/compare_arrows:")
state = get_state()
st.caption("Every matrix computed, opened or loaded in this session is kept under a name. Pick two to see how the "
           "ranking of the sources changed between them, e.g. two runs with different options, or your values "
           "against the paper's.")

if len(state.matrices) < 2:
    st.info("Two similarity matrices are needed first: compute another run on the Similarity page (new choices "
            "add a new matrix), open a matrix file, or load Table 3 of Dai et al. (2019).")
    matrix_links()
    st.stop()

names = list(state.matrices)
pair = default_pair({n: m.long for n, m in state.matrices.items()})
if pair is None:
    st.info("No two of your matrices can be compared as they are named: each pair shares no target, fewer than "
            "two sources or no similarity measure. If two name the same corpora differently (your run against "
            "the paper's Table 3), match their names below; or compute a run on the same corpora.")
    with st.expander("Your matrices"):
        table(pd.DataFrame([describe(m) for m in state.matrices.values()]), room=870)
    pair = (names[-2], names[-1])
if st.session_state.get("compare_a") not in names:
    st.session_state["compare_a"] = pair[0]
pick = st.columns(2)
first = pick[0].selectbox("A", names, key="compare_a")
others = [n for n in names if n != first]
if st.session_state.get("compare_b") not in others:
    st.session_state["compare_b"] = pair[1] if pair[1] in others else next(
        (n for n in reversed(others) if comparable(state.matrices[first].long, state.matrices[n].long)), others[-1])
second = pick[1].selectbox("B", others, key="compare_b")
for side, name in (("A", first), ("B", second)):
    matrix = state.matrices[name]
    st.caption(f"{side}: {md(name)} ({md(matrix.origin)}"
               + (f"; {md(options_label(matrix.job))}" if matrix.job is not None else "") + ")")
# B's names that A lacks (the paper's "1BWB" for a run's "news_1bwb"): the user matches them to A's names.
long_a, long_b = state.matrices[first].long, state.matrices[second].long
name_map: dict[str, dict[str, str | None]] = state.extra.setdefault("compare_name_map", {"target": {}, "source": {}})
missing = unmatched_names(long_a, long_b)
if missing:
    mapped: dict[str, dict[str, str | None]] = {"target": {}, "source": {}}
    with st.expander("Match B's names to A's", expanded=not comparable(long_a, long_b)):
        st.caption("These names of B are not in A. Pick the corpus of A each one stands for (suggested from the "
                   "spelling); the choice is remembered.")
        for col, (b_names, a_names) in missing.items():
            mapped[col] = name_pickers(col, b_names, a_names, name_map.setdefault(col, {}),
                                         lambda name, col=col: f"cmp_map_{col}_{name}")
    long_b = renamed(long_b, mapped)
try:
    result, summary = comparison(long_a, long_b)
except SimcoreError as exc:
    st.info(f"{exc}. Pick another pair above.")
    st.stop()

st.caption(f"Compared on what both share: {len(result.targets)} targets, {len(result.sources)} sources, "
           f"measures {', '.join(label(m) for m in result.measures)}; ranks among these sources only.")
for side, only in (("A", result.only_a), ("B", result.only_b)):
    if only:
        st.caption(f"Only in {side}: " + "; ".join(f"{k}s {md(', '.join(v))}" for k, v in only.items()))

changed = summary[summary["first choice changed"]]
m = st.columns(3)
m[0].metric("Rankings compared", len(summary))
m[1].metric("First choice changed", len(changed))
m[2].metric("Mean Spearman ρ", f"{summary['Spearman ρ'].mean():.3f}" if summary["Spearman ρ"].notna().any() else "–")
st.subheader("First choices")
only_changed = st.checkbox("Only where the first choice changed", key="compare_only_changed")
shown_table = changed if only_changed else summary
table(shown_table.assign(measure=shown_table["measure"].map(label)),
      column_config={"Spearman ρ": st.column_config.NumberColumn(format="%.3f")})

st.subheader("One ranking side by side")
sel = st.columns(2)
target = sel[0].selectbox("Target", result.targets, key="compare_target")
measure = sel[1].selectbox("Measure", list(dict.fromkeys(result.ranking_a["measure"])), format_func=label,
                           key="compare_measure", help="The measures both matrices have, and their combined ranking")
table(result.side_by_side(target, measure),
      column_config={"value (A)": st.column_config.NumberColumn(format="%.4g"),
                            "value (B)": st.column_config.NumberColumn(format="%.4g")})
st.caption("▲ moved up in B (closer to rank 1), ▼ moved down; = same rank.")
