"""Home: the answer (on the sample, worked out on arrival), one click to load the sample, what is loaded now."""

import pandas as pd
import streamlit as st

from dashboard import compute, jobs
from dashboard.loading import load_sample
from dashboard.markdown import md
from dashboard.navigation import COMPARE, CORPORA, OPEN_RESULTS, PREDICTIVENESS, PROBE, RANKING, SELECTION, SIMILARITY
from dashboard.page_setup import setup_page
from dashboard.session import get_state
from dashboard.widgets import REFRESH_SECONDS, changed, job_progress
from simcore.utils.errors import SimcoreError

setup_page("Which corpus should I pretrain on?")
state = get_state()


@st.cache_data(show_spinner=False, max_entries=32)
def answer_rows(fingerprint: str, _long: pd.DataFrame) -> list[dict]:
    """The recommendation for language models, per target (cached by the matrix's content fingerprint)."""
    from dashboard.answer_cache import answers
    from dashboard.page_tables import recommendation_frame  # not imported before there is a matrix: a faster first page
    from simcore.answer.recommendation import recommend

    shared = answers(_long, "lm")  # the Ranking page and the audit rank by the same answers
    frame = recommendation_frame(shared if shared is not None else recommend(_long, "lm"))
    return [{"target": r["target"], "pick": r["pretrain on"], "confidence": r["confidence"], "level": r["level"],
             "why": r["why"]} for r in frame.to_dict("records")]


def fingerprint(long: pd.DataFrame) -> str:
    return str(int(pd.util.hash_pandas_object(long[["source", "target", "measure", "value"]], index=False).sum()))


def show_answer(rows: list[dict]) -> None:
    for row in rows:
        confidence = "" if pd.isna(row["confidence"]) else f", confidence {row['confidence']:.0%}"
        st.markdown(f"**{md(row['target'])}**: pretrain on **{md(row['pick'])}** ({row['level']}{confidence})")
        st.caption(md(row["why"]))  # the whole reason, wrapped (a table cell would cut it)


def nav_button(page: str, text: str, icon: str, key: str, primary: bool = False) -> None:
    """A next step that looks like a button and opens its page."""
    if st.button(text, icon=icon, key=key, type="primary" if primary else "secondary", width="stretch"):
        st.switch_page(page)


st.markdown(
    "You have a small **target** sample of the text your named-entity recogniser must handle and several "
    "unlabelled **source** corpora you could pretrain on. Cheap similarity measures between each source and "
    "the target (vocabulary coverage, language-model perplexity, word-vector variance, n-gram divergence) "
    "predict which source helps the NER model most (Dai et al. 2019, 2020) — before you spend days pretraining."
)

task = jobs.running(state, compute.KIND)
if state.matrix is not None:
    st.subheader("The answer")
    try:
        show_answer(answer_rows(fingerprint(state.matrix), state.matrix))
        st.caption(f"For language models and BERT-style encoders, from {md(state.matrix_label)}.")
        steps = st.columns(3)
        with steps[0]:
            nav_button(RANKING, "Rankings, word vectors and downloads", ":material/trophy:", "next_ranking", True)
        with steps[1]:
            nav_button(PREDICTIVENESS, "Does similarity predict NER F1?", ":material/insights:", "next_pred")
        with steps[2]:
            nav_button(SIMILARITY, "Heatmaps, or compute with other options", ":material/grid_on:", "next_sim")
    except SimcoreError as exc:
        st.caption(f"No recommendation for this matrix: {exc}")
elif task is not None:
    st.subheader("The answer")

    def early_answer() -> None:
        """The answer for language models as soon as PPL and JSD are in (final: the other measures do not
        enter it), redrawn while the job runs; until then, a line saying it is being worked out."""
        current = jobs.running(state, compute.KIND)
        early = compute.early_lm_matrix(current) if current is not None else None
        try:
            rows = answer_rows(fingerprint(early), early) if early is not None else None
        except SimcoreError:
            rows = None
        if rows is None:
            st.caption("Working it out in the background; it appears here as soon as the measures that carry it "
                       "are in, and the work goes on if you open other pages.")
            return
        show_answer(rows)
        coming = compute.still_coming(current) if current is not None else []
        st.caption("For language models and BERT-style encoders (PPL and JSD are in: this answer is "
                   "final, the other measures do not enter it)."
                   + (f" Still being computed: {', '.join(coming)}." if coming else ""))

    st.fragment(early_answer, run_every=REFRESH_SECONDS)()
    job_progress(compute.KIND, lambda job: f"{len(job.partial)} similarity values finished.")

sample_loaded = bool(state.extra.get("sample_loaded")) and any(
    loaded.origin == "sample" for loaded in [*state.sources.values(), *state.targets.values()])
left, right = st.columns([1, 1], gap="large")
with left:
    st.subheader("Try it on the bundled sample")
    st.caption("Six sources in different registers (clinical notes, abstracts, news, protocols, reviews, tweets) "
               "and three NER-tagged targets (forum posts, news, lab protocols).")
    if sample_loaded:
        if state.matrix is not None:
            st.success("The sample is loaded; its answer is above.")
        elif task is not None:
            st.info("The sample is loaded; its answer is being worked out above.")
        else:
            st.success("The sample is loaded.")
            if st.button("Work out the answer", type="primary", key="demo_answer", icon=":material/play_arrow:"):
                try:
                    compute.start_demo_answer(state)
                    changed(state)
                except SimcoreError as exc:
                    st.error(str(exc))
        if st.button("Load the sample again", key="load_sample",
                     help="Adds back sample corpora you removed or renamed"):
            try:
                load_sample(state)
                changed(state, "success", f"Loaded {len(state.sources)} sources and {len(state.targets)} targets.")
            except SimcoreError as exc:
                st.error(str(exc))
    else:
        if st.button("Load the sample data", type="primary", key="load_sample"):
            try:
                load_sample(state)
                state.extra["sample_loaded"] = True
                changed(state, "success", f"Loaded {len(state.sources)} sources and {len(state.targets)} targets.")
            except SimcoreError as exc:
                st.error(str(exc))
with right:
    st.subheader("Or bring your own")
    nav_button(CORPORA, "Corpora: upload a target sample and your sources", ":material/library_books:", "go_corpora")
    nav_button(OPEN_RESULTS, "Open results: a matrix from `simcore matrix`, or a workspace",
               ":material/folder_open:", "go_open")
    nav_button(PREDICTIVENESS, "Predictiveness: does similarity predict NER F1?", ":material/insights:", "go_pred")
    nav_button(COMPARE, "Compare two results: what changed between two runs", ":material/compare_arrows:",
               "go_compare")
    nav_button(SELECTION, "Sentence selection: the source sentences most like your target",
               ":material/filter_alt:", "go_selection")
    nav_button(PROBE, "NER probe: train a small tagger on each source's vectors", ":material/science:",
               "go_probe")

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
        st.write("**Sources:** " + md(", ".join(sorted(state.sources))))
    if state.targets:
        st.write("**Targets:** " + md(", ".join(sorted(state.targets))))
    if state.matrices:
        st.write("**Similarity matrices:** " + md(", ".join(state.matrices)))
