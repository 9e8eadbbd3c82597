"""Ranking and export: the recommendation per target, how sure it is and why; the sources ranked by
each measure; CSV, JSON and HTML downloads."""

import streamlit as st

from dashboard.charts import label
from dashboard.markdown import md
from dashboard.navigation import COMPARE
from dashboard.page_setup import setup_page
from dashboard.page_tables import rank_table, recommendation_frame
from dashboard.report_cache import report_parts
from dashboard.session import get_state
from dashboard.widgets import matrix_links, pick_matrix, similarity_measures, table
from simcore.answer.evidence import readable_pairs
from simcore.contamination.verdict import OVERLAP_THRESHOLD, overlap_table
from simcore.measures.lookup import explained

setup_page("Ranking and export", ":material/trophy:")
state = get_state()

if pick_matrix(state, "ranking") is None:
    st.info("No similarity matrix yet: compute one on the Similarity page or open a matrix file first.")
    matrix_links()
    st.stop()

long = state.matrix
present = similarity_measures(long)
left, right = st.columns([1, 2])
pretraining = left.radio("What will you pretrain?", ["lm", "vectors"], key="rank_pretraining", horizontal=True,
                         format_func={"lm": "language model / BERT", "vectors": "word vectors"}.get,
                         help="Language models and BERT-style encoders: the recommendation follows PPL and JSD. "
                              "Word vectors: it follows TVcC, TVC and WVV. The other measures are shown beside it.")
chosen = right.multiselect("Measures in the rankings below", present, default=present, format_func=label,
                           key="rank_measures")
if not chosen:
    st.info("Choose at least one measure.")
    st.stop()

parts = report_parts(state, chosen, pretraining)
if parts.error:
    st.error(parts.error)
    st.stop()
ranking = parts.ranking

corpus_names = set(long["source"].astype(str)) | set(long["target"].astype(str))
st.subheader("Which source to pretrain on")
table(recommendation_frame(parts.recommendations),
      column_config={"confidence": st.column_config.ProgressColumn(
                 "confidence", help="the recommended source's share of the votes: over every carrying measure and "
                                    "every bootstrap replicate, how often that measure puts it first (for a tie or "
                                    "a disagreement, the first-named source's share)", min_value=0.0, max_value=1.0,
                 format="percent"),
                 "why": st.column_config.TextColumn("why")},
      name_columns=["target", "pretrain on"], names=corpus_names)
st.caption(f"Similarity values: {md(state.matrix_label)}. A tie names every source within noise of the first: "
           "an honest tie beats a false winner. 'disagree': the carrying measures each put another source first.")
with st.expander("Why, in full", expanded=len(parts.recommendations) <= 3):
    for rec in parts.recommendations:
        st.markdown(f"**{md(rec.headline())}**  \n{md(rec.reason)}")
held = overlap_table(long)
if len(held):
    dirty = held[held["contaminated"]]
    with st.expander(f"Which sources already hold your test set ({len(dirty)} contaminated pair(s))",
                     expanded=bool(len(dirty))):
        table(held, room=870, column_config={
            "overlap_test": st.column_config.NumberColumn("test sentences held", format="percent"),
            "overlap_all": st.column_config.NumberColumn("all sentences held", format="percent"),
            "overlap_ngram": st.column_config.TextColumn("n-gram")})
        st.caption(f"The share of the target's sentences sharing an n-gram with the source. From "
                   f"{OVERLAP_THRESHOLD:.0%} of the test sentences the answer says so and is never 'high': "
                   "pretraining on such a source inflates the test F1. The Corpora page writes a clean copy "
                   "(Decontaminate a source).")
with st.expander("How each pair of sources was compared (at the largest size both have)"):
    targets = [r.target for r in parts.recommendations]
    pick, every = st.columns([2, 1])
    shown = pick.selectbox("Target", targets, key="rank_pairs_target") if targets else None
    all_pairs = every.toggle("All pairs", key="rank_pairs_all",
                             help="Off: only the pairs with the recommended source, which decide the answer. "
                                  "On: every pair of sources.")
    if shown is not None and parts.pairs is not None:
        pairs = readable_pairs(parts.pairs[parts.pairs["target"].astype(str) == str(shown)], not all_pairs)
        table(pairs.drop(columns="target"), room=870,
              column_config={"measure": st.column_config.TextColumn("measure", width="medium"),
                                    "A more similar in": st.column_config.TextColumn(
                                        "A more similar in", help="share of the bootstrap replicates of the target "
                                                                  "in which source A is the more similar")})
        st.caption("Each pair is compared at the largest sample size both sources have; the recommended source is "
                   "source A. The downloads below include every pair (pairwise CSV, and 'pairs' in the JSON).")

downloads = [*st.columns(2), *st.columns(2), *st.columns(2)]  # two a row: four in one row cut their labels
downloads[0].download_button("Download recommendation (CSV)", parts.recommendations_csv,
                             file_name="simcore-recommendation.csv", mime="text/csv", on_click="ignore",
                             key="dl_rec", type="primary")
downloads[1].download_button("Download ranking (CSV)", parts.csv, file_name="simcore-ranking.csv",
                             mime="text/csv", on_click="ignore", key="dl_csv")
downloads[2].download_button("Download ranking (JSON)", parts.json, file_name="simcore-ranking.json",
                             mime="application/json", on_click="ignore", key="dl_json")
downloads[3].download_button("Download report (HTML)", parts.html, file_name="simcore-report.html",
                             mime="text/html", on_click="ignore", key="dl_html")
downloads[4].download_button("Download pairwise comparisons (CSV)", parts.pairs_csv,
                             file_name="simcore-pairs.csv", mime="text/csv", on_click="ignore", key="dl_pairs")

st.subheader("Sources ranked per target")
st.caption("Each source's rank under each measure: 1 is the most similar; ties share a rank "
           "(=2: tied at 2); rows in the order of the recommendation. "
           "The 'recommended' column ranks the sources by "
           "its share of the votes (each carrying measure, each bootstrap replicate). ⚠ marks a source whose value for that measure is flagged "
           "(used whole, or below the size at which the measure is reliable; the Similarity page lists why); in the "
           "'recommended' column, flagged under a measure that carries the recommendation.")
st.caption("; ".join(explained(m) for m in chosen) + ".")
for target in sorted(ranking["target"].unique()):
    st.markdown(f"**{md(target)}**")
    carrying = next((r.measures for r in parts.recommendations if r.target == target), ())
    table(rank_table(ranking, target, long, carrying), name_columns=["source"], names=corpus_names)
for note in parts.notes:
    st.caption(note)
if len(state.matrices) > 1:
    st.page_link(COMPARE, label="Compare this ranking with another matrix's", icon=":material/compare_arrows:")
