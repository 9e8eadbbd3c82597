"""Agreement: do the measures agree on which of two sources is more similar to a target?"""

import streamlit as st

from dashboard.agreement_view import flag_first_choice, kappa_reading
from dashboard.analysis_cache import agreements
from dashboard.charts import kappa_heatmap, label
from dashboard.loading import load_table3
from dashboard.markdown import md
from dashboard.page_setup import setup_page
from dashboard.session import get_state
from dashboard.widgets import (
    changed,
    keep_choices,
    matrix_links,
    pick_matrix,
    save_choices,
    similarity_measures,
    table,
)
from simcore.answer import flags
from simcore.utils.errors import SimcoreError

setup_page("Agreement", ":material/handshake:")
state = get_state()
st.caption("For each target and each pair of sources (in alphabetical order), each measure answers \"is the "
           "first source more similar?\". Fleiss' kappa is the agreement across the chosen measures over all "
           "these comparisons; Cohen's kappa compares two measures at a time.")

shown_matrix = pick_matrix(state, "agreement")
if shown_matrix is None:
    st.info("No similarity matrix yet: compute one on the Similarity page, open a matrix file, "
            "or try the published values of Dai et al. (2019).")
    matrix_links()
    if st.button("Load Table 3 of Dai et al. (2019)", key="agree_table3"):
        load_table3(state)
        changed(state)
    st.stop()

long = shown_matrix.long
FIRST_CHOICE = "changes 1st choice"  # the header, short: the table fits a 1400-pixel window
present = similarity_measures(long)
paper = [m for m in ("ppl", "wvv", "tvc") if m in present]
keep_choices(state, "agreement", {"agree_measures": paper if len(paper) >= 2 else present,
                                     "agree_unreliable": False},
               allowed={"agree_measures": present})
chosen = st.multiselect("Measures", present, format_func=label, key="agree_measures",
                        help="The paper's measures (PPL, WVV, TVC) are chosen by default")
include = st.checkbox("Include unreliable values", key="agree_unreliable",
                      help="Comparisons resting on a value computed below the size at which its measure is reliable "
                           "are left out by default: one noisy value would count as a measure's firm answer")
save_choices(state, "agreement", ["agree_measures", "agree_unreliable"])
st.caption(f"Similarity values: {md(shown_matrix.name)}.")
try:
    result = agreements(long, chosen, include_unreliable=include)
except SimcoreError as exc:
    part = long[long["measure"].isin(chosen)]
    if not include and flags.unreliable(part).any():
        text = str(exc)
        st.warning(f"{md(text[:1].upper() + text[1:])}. Tick **Include unreliable values** above to see the kappa "
                   "over them anyway.")
    else:
        st.error(str(exc))
    st.stop()

cols = st.columns([1, 2])
with cols[0]:
    st.metric("Fleiss' kappa", f"{result.fleiss:.3f}",
              help="1 = the measures always agree; 0 = no more than chance")
    st.markdown(f"**{kappa_reading(result.fleiss).capitalize()} agreement** (Landis & Koch: 0–0.20 slight, "
                "0.21–0.40 fair, 0.41–0.60 moderate, 0.61–0.80 substantial, 0.81–1 almost perfect)")
    st.caption(f"over {len(result.items)} comparisons by {', '.join(label(m) for m in result.measures)}")
    if result.left_out_note:
        (st.warning if result.included_unreliable else st.info)(result.left_out_note[:1].upper()
                                                                + result.left_out_note[1:] + ".")
    st.metric("Comparisons where they disagree", len(result.disagreements))
with cols[1]:
    st.plotly_chart(kappa_heatmap(result.cohen, result.measures), width="stretch", key="kappa_heat",
                    config={"displayModeBar": False})

st.subheader("Where the measures disagree")
if result.disagreements.empty:
    st.success("The chosen measures agree on every comparison.")
else:
    show = result.disagreements.copy()
    show.insert(3, "changes the first choice", flag_first_choice(show, long, result.measures))
    for m in result.measures:
        show[m] = show["first"].where(show[m].astype(bool), show["second"])
    show = show.rename(columns={m: label(m) for m in result.measures})  # the source each prefers
    f1, f2 = st.columns([2, 1])
    target_options = ["all targets", *sorted(show["target"].unique())]
    keep_choices(state, "agreement_filter", {"agree_target": "all targets", "agree_only_first": False},
                   allowed={"agree_target": target_options})
    target_filter = f1.selectbox("Target", target_options, key="agree_target")
    only_first = f2.checkbox("Only those that change the first choice", key="agree_only_first",
                             help="A comparison involving a source that one measure ranks first: the measures "
                                  "would pick different sources to pretrain on")
    save_choices(state, "agreement_filter", ["agree_target", "agree_only_first"])
    if target_filter != "all targets":
        show = show[show["target"] == target_filter]
    if only_first:
        show = show[show["changes the first choice"]]
    changing = int(show["changes the first choice"].sum())
    st.caption(f"{len(show)} comparisons shown; {changing} of them change the first choice. Under "
               "each measure, the source of the pair it finds more similar.")
    measures = [label(m) for m in result.measures]
    table(show.rename(columns={"changes the first choice": FIRST_CHOICE}),
          column_config={FIRST_CHOICE: st.column_config.CheckboxColumn(
              FIRST_CHOICE, help="the comparison involves a source one measure ranks first")}
          | {m: st.column_config.TextColumn(m, help=f"the source of the pair {m} finds more "
                                                        "similar") for m in measures},
          name_columns=["target", "first", "second", *measures],
          names=set(long["source"].astype(str)) | set(long["target"].astype(str)))
