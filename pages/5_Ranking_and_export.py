"""Ranking and export: sources ranked per target by each measure and by consensus; CSV, JSON, HTML report."""

import streamlit as st

from dashboard import common as c
from dashboard.charts import label
from dashboard.report_cache import report_parts
from dashboard.tables import ranking_grid

c.setup_page("Ranking and export", ":material/trophy:")
state = c.get_state()

if state.matrix is None:
    st.info("No similarity matrix yet: compute one on the Similarity page or open a matrix file first.")
    c.matrix_links()
    st.stop()

long = state.matrix
present = c.similarity_measures(long)
chosen = st.multiselect("Measures for the ranking and the consensus (mean rank)", present, default=present,
                        format_func=label, key="rank_measures")
if not chosen:
    st.info("Choose at least one measure.")
    st.stop()

parts = report_parts(state, chosen)
if parts.error:
    st.error(parts.error)
    st.stop()
ranking = parts.ranking
st.caption(f"Similarity values: {c.md(state.matrix_label)}. Rank 1 is the most similar source; ties share a rank.")

downloads = st.columns(3)
downloads[0].download_button("Download ranking (CSV)", parts.csv, file_name="simcore-ranking.csv",
                             mime="text/csv", on_click="ignore", key="dl_csv", type="primary")
downloads[1].download_button("Download ranking (JSON)", parts.json, file_name="simcore-ranking.json",
                             mime="application/json", on_click="ignore", key="dl_json")
downloads[2].download_button("Download report (HTML)", parts.html, file_name="simcore-report.html",
                             mime="text/html", on_click="ignore", key="dl_html")

targets = sorted(ranking["target"].unique())
consensus = ranking[(ranking["measure"] == "consensus") & (ranking["rank"] == 1)]
st.subheader("Consensus choice per target")
st.dataframe(consensus.groupby("target", as_index=False)["source"].agg(", ".join)
             .rename(columns={"source": "pretrain on"}), hide_index=True)
st.subheader("Sources ranked per target")
for target in targets:
    st.markdown(f"**{c.md(target)}**")
    st.dataframe(ranking_grid(ranking, target), hide_index=True, width="stretch")
for note in parts.notes:
    st.caption(note)
