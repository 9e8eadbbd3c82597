"""Agreement: do the measures agree on which of two sources is more similar to a target?"""

import streamlit as st

from dashboard import common as c
from dashboard.charts import kappa_heatmap, label
from dashboard.loading import load_table3
from simcore.analysis import agreement
from simcore.errors import SimcoreError

c.setup_page("Agreement", ":material/handshake:")
state = c.get_state()
st.caption("For each target and each pair of sources (in alphabetical order), each measure answers \"is the "
           "first source more similar?\". Fleiss' kappa is the agreement across the chosen measures over all "
           "these comparisons; Cohen's kappa compares two measures at a time.")

if state.matrix is None:
    st.info("No similarity matrix yet: compute one on the Similarity page, open a matrix file, "
            "or try the published values of Dai et al. (2019).")
    c.matrix_links()
    if st.button("Load Table 3 of Dai et al. (2019)", key="agree_table3"):
        load_table3(state)
        st.rerun()
    st.stop()

long = state.matrix
present = c.similarity_measures(long)
paper = [m for m in ("ppl", "wvv", "tvc") if m in present]
chosen = st.multiselect("Measures", present, default=paper if len(paper) >= 2 else present, format_func=label,
                        key="agree_measures", help="The paper's measures (PPL, WVV, TVC) are chosen by default")
st.caption(f"Similarity values: {c.md(state.matrix_label)}.")
try:
    result = agreement(long, chosen)
except SimcoreError as exc:
    st.error(str(exc))
    st.stop()

cols = st.columns([1, 2])
with cols[0]:
    st.metric("Fleiss' kappa", f"{result.fleiss:.3f}",
              help="1 = the measures always agree; 0 = no more than chance")
    st.caption(f"over {len(result.items)} comparisons by {', '.join(label(m) for m in result.measures)}")
    st.metric("Comparisons where they disagree", len(result.disagreements))
with cols[1]:
    st.plotly_chart(kappa_heatmap(result.cohen, result.measures), width="stretch", key="kappa_heat",
                    config={"displayModeBar": False})

st.subheader("Where the measures disagree")
if result.disagreements.empty:
    st.success("The chosen measures agree on every comparison.")
else:
    show = result.disagreements.copy()
    for m in result.measures:
        show[m] = [row["first"] if v else row["second"] for v, (_, row) in zip(show[m], show.iterrows())]
    show = show.rename(columns={m: f"{label(m)} says more similar" for m in result.measures})
    st.dataframe(show, hide_index=True, width="stretch")
