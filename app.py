"""Home: what the tool answers, one click to load the bundled sample, what is loaded now."""

import streamlit as st

from dashboard import common as c
from dashboard.loading import load_sample
from dashboard.tables import recommendation_frame
from simcore.errors import SimcoreError
from simcore.recommendation import recommend

c.setup_page("Which corpus should I pretrain on?", ":material/explore:")
state = c.get_state()

st.markdown(
    "You have a small **target** sample of the text your named-entity recogniser must handle and several "
    "unlabelled **source** corpora you could pretrain on. Cheap similarity measures between each source and "
    "the target (vocabulary coverage, language-model perplexity, word-vector variance, n-gram divergence) "
    "predict which source helps the NER model most (Dai et al. 2019, 2020) — before you spend days pretraining."
)

sample_loaded = bool(state.extra.get("sample_loaded")) and any(
    loaded.origin == "sample" for loaded in [*state.sources.values(), *state.targets.values()])
left, right = st.columns([1, 1], gap="large")
with left:
    st.subheader("Try it on the bundled sample")
    st.caption("Six sources in different registers (clinical notes, abstracts, news, protocols, reviews, tweets) "
               "and three NER-tagged targets (forum posts, news, lab protocols).")
    if sample_loaded:
        st.success("The sample is loaded. Next: compute the similarity matrix.")
        st.page_link(c.SIMILARITY, label="Compute the similarity matrix", icon=":material/grid_on:")
        if st.button("Load the sample again", key="load_sample",
                     help="Adds back sample corpora you removed or renamed"):
            try:
                load_sample(state)
                c.changed(state, "success", f"Loaded {len(state.sources)} sources and {len(state.targets)} targets.")
            except SimcoreError as exc:
                st.error(str(exc))
    else:
        if st.button("Load the sample data", type="primary", key="load_sample"):
            try:
                load_sample(state)
                state.extra["sample_loaded"] = True
                c.changed(state, "success", f"Loaded {len(state.sources)} sources and {len(state.targets)} targets.")
            except SimcoreError as exc:
                st.error(str(exc))
        st.page_link(c.SIMILARITY, label="Then compute the similarity matrix", icon=":material/grid_on:")
with right:
    st.subheader("Or bring your own")
    st.page_link(c.CORPORA, label="Corpora: upload a target sample and your sources", icon=":material/library_books:")
    st.page_link(c.OPEN_RESULTS, label="Open results: a matrix computed with `simcore matrix`", icon=":material/folder_open:")
    st.page_link(c.PREDICTIVENESS, label="Predictiveness: does similarity predict NER F1?", icon=":material/insights:")
    st.page_link(c.AGREEMENT, label="Agreement: do the measures agree?", icon=":material/handshake:")
    st.page_link(c.RANKING, label="Ranking and export", icon=":material/trophy:")
    st.page_link(c.COMPARE, label="Compare two results: what changed between two runs", icon=":material/compare_arrows:")

if state.matrix is not None:
    st.divider()
    st.subheader("The answer")
    try:
        answer = recommendation_frame(recommend(state.matrix, "lm"))
        st.dataframe(answer[["target", "pretrain on", "confidence", "level", "why"]], hide_index=True,
                     width="stretch", column_config={"confidence": st.column_config.ProgressColumn(
                         "confidence", min_value=0.0, max_value=1.0, format="percent")})
        st.caption(f"For language models and BERT-style encoders, from {c.md(state.matrix_label)}. "
                   "For word vectors, and the rankings behind it:")
        st.page_link(c.RANKING, label="Ranking and export", icon=":material/trophy:")
    except SimcoreError as exc:
        st.caption(f"No recommendation for this matrix: {exc}")

st.divider()
st.subheader("Loaded now")
if not state.sources and not state.targets and not state.matrices:
    st.info("Nothing is loaded yet: load the sample above, or add corpora on the Corpora page.")
else:
    cols = st.columns(3)
    cols[0].metric("Sources", len(state.sources))
    cols[1].metric("Targets", len(state.targets))
    cols[2].metric("Similarity matrices", len(state.matrices))
    if state.sources:
        st.write("**Sources:** " + c.md(", ".join(sorted(state.sources))))
    if state.targets:
        st.write("**Targets:** " + c.md(", ".join(sorted(state.targets))))
    if state.matrices:
        st.write("**Similarity matrices:** " + c.md(", ".join(state.matrices)))
