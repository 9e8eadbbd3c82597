"""Similarity: choose measures and options, compute the matrix, heatmaps, values, drill-down for one pair."""

import pandas as pd
import streamlit as st

from dashboard import jobs
from dashboard.charts import heatmap, label
from dashboard.compute import KIND, failures, matrix_estimate, partial_matrix, start_matrix
from dashboard.drill import drill_down, pair_flags, views
from dashboard.markdown import md
from dashboard.navigation import CORPORA, HOME, OPEN_RESULTS
from dashboard.page_setup import setup_page
from dashboard.page_tables import flag_summary, flagged_cells, size_notes
from dashboard.resources import get_store
from dashboard.session import get_state
from dashboard.state import Job
from dashboard.widgets import changed, job_progress, keep_choices, pick_matrix, save_choices, table
from simcore.matrix.plan import DEFAULT_MEASURES
from simcore.measures.emb import estimate as emb_estimate
from simcore.measures.lookup import all_measures, get_measure
from simcore.measures.options import MeasureOptions
from simcore.reporting.report import values_with_intervals
from simcore.utils.errors import SimcoreError
from simcore.utils.option_checks import MAX_EMB_SENTENCES, MAX_KL_BUCKETS

setup_page("Similarity", ":material/grid_on:")


@st.cache_data(show_spinner=False, max_entries=64)
def heatmap_of(fingerprint: str, measure: str, _long: pd.DataFrame):
    """A measure's heatmap, built once per matrix content (each new tab of a workspace drew them all again)."""
    return heatmap(_long, measure)

state = get_state()
task = jobs.running(state, KIND)

if not (state.sources and state.targets) and not state.matrices and task is None:
    st.info("Load at least one source and one target first: the bundled sample on the home page, or your own "
            "files on the Corpora page. A matrix computed on the command line opens on the Open results page.")
    st.page_link(HOME, label="Home: load the sample data", icon=":material/home:")
    st.page_link(CORPORA, label="Corpora: add sources and targets", icon=":material/library_books:")
    st.page_link(OPEN_RESULTS, label="Open results: load a matrix file", icon=":material/folder_open:")
    st.stop()

FORM_KEYS = {"f_sources": None, "f_targets": None, "f_measures": list(DEFAULT_MEASURES), "f_samples": 1,
             "f_tokens": 0, "f_lower": True, "f_order": MeasureOptions().ppl_order, "f_per_sentence": False,
             "f_jsd": MeasureOptions().jsd_max_n, "f_wvv": "shared", "f_propn": False, "f_noise": False,
             "f_seed": MeasureOptions().seed, "f_kl": MeasureOptions().kl_buckets,
             "f_emb": MeasureOptions().emb_sentences}



def _options_now() -> MeasureOptions:
    """The measure options as the form's widgets hold them now (the estimate follows every change)."""
    d = MeasureOptions()
    get = st.session_state.get
    return MeasureOptions(ppl_order=int(get("f_order") or d.ppl_order), ppl_per_sentence=bool(get("f_per_sentence")),
                          jsd_max_n=int(get("f_jsd") or d.jsd_max_n), wvv_words=get("f_wvv") or d.wvv_words,
                          seed=int(get("f_seed") or d.seed), kl_buckets=int(get("f_kl") or d.kl_buckets),
                          emb_sentences=int(get("f_emb") or d.emb_sentences),
                          tvcc_pos=("NOUN", "VERB", "ADJ", "PROPN") if get("f_propn") else ("NOUN", "VERB", "ADJ"))


@st.fragment
def compute_form() -> None:
    """The matrix's choices and Compute. A fragment, not a form: every change reruns this part alone, so the
    time estimate follows the widgets as they are now (a form's widgets report only when it is submitted,
    and the estimate showed the last submitted choices)."""
    with st.container(border=True):
        # a row each, chips wrapped: in a column they stayed on one scrolling row (2.5 of 9 sources in view)
        sources = st.multiselect("Sources", sorted(state.sources), key="f_sources", wrap=True)
        targets = st.multiselect("Targets", sorted(state.targets), key="f_targets", wrap=True)
        measures = st.multiselect("Measures", all_measures(),
                                  format_func=lambda m: get_measure(m).label, key="f_measures",
                                  help="; ".join(f"{get_measure(m).label}: {get_measure(m).description}"
                                                 for m in all_measures())
                                  + ". KL and EMB are the newer measures, shown beside the others; they do not "
                                    "carry the recommendation, and EMB needs the optional encoder "
                                    "(scripts/install.sh --encoder)")
        emb_time = emb_estimate(get_store(), len(st.session_state.get("f_sources") or state.sources)
                                + len(st.session_state.get("f_targets") or state.targets),
                                int(st.session_state.get("f_emb") or MeasureOptions().emb_sentences))
        if emb_time.device == "cpu":
            st.caption(f"{emb_time.text(jobs.duration)} (at {st.session_state.get('f_emb') or MeasureOptions().emb_sentences:,} "
                       "sentences per side: fewer under Options go faster; embeddings are stored and reused).",
                       help="EMB embeds sentences of every source and target with a transformer encoder, "
                            "which is slow without a GPU; the other measures take seconds.")
        planned = matrix_estimate(state, Job(
            sources=[n for n in st.session_state.get("f_sources") or [] if n in state.sources],
            targets=[n for n in st.session_state.get("f_targets") or [] if n in state.targets],
            measures=list(st.session_state.get("f_measures") or []),
            options=_options_now().subset(tuple(MeasureOptions.__dataclass_fields__)),
            tokenizer={"lowercase": bool(st.session_state.get("f_lower", True))},
            samples=int(st.session_state.get("f_samples") or 1), sample_tokens=int(st.session_state.get("f_tokens") or 0)
            or None, compute_noise=bool(st.session_state.get("f_noise"))))
        if planned is not None:
            st.caption(f"Time for these choices: {planned[1]}; less for what is stored already.",
                       help="Counted from this machine's recorded pace at each slow step (tokenizing, KenLM, "
                            "skip-gram, tagging, scoring), only for what is not in the store yet; the time left "
                            "in the sidebar starts from it")
        with st.expander("Options"):
            o1, o2, o3 = st.columns(3)
            samples = o1.number_input("Sub-corpora per source", 1, 20, key="f_samples",
                                      help="k random sub-corpora of N tokens each; mean and std are reported")
            sample_tokens = o1.number_input("Tokens per sub-corpus (0 = per measure: the smallest source's "
                                            "size, at least the size at which it is reliable)", 0, 10**10,
                                            step=1000, key="f_tokens")
            lowercase = o1.checkbox("Lower-case tokens", key="f_lower")
            compute_noise = o1.checkbox("Compute noisy measures too", key="f_noise",
                                        help="WVV is noise below 1,000,000 tokens per source and is left out of "
                                             "smaller tables; tick to compute it anyway (it decides nothing there)")
            ppl_order = o2.slider("PPL: n-gram order", 2, 6, key="f_order")
            per_sentence = o2.checkbox("PPL: mean per-sentence perplexity", key="f_per_sentence")
            jsd_n = o2.slider("JSD: n-grams up to", 1, 3, key="f_jsd")
            wvv_words = o3.radio("WVV: words compared", ["shared", "all"], key="f_wvv",
                                 format_func=lambda v: "source ∩ target vocabulary" if v == "shared"
                                 else "all source words", horizontal=True)
            propn = o3.checkbox("TVcC: count proper nouns as content words", key="f_propn")
            seed = o3.number_input("Random seed", 0, 2**31 - 1, key="f_seed")
            kl_buckets = o2.number_input("KL: hashed n-gram buckets", 1, MAX_KL_BUCKETS, key="f_kl",
                                         help="DSIR's 10,000 by default; other counts do not compare with DSIR's")
            emb_sentences = o3.number_input("EMB: sentences embedded per side", 1, MAX_EMB_SENTENCES, key="f_emb")
        submitted = st.button("Compute", type="primary", disabled=task is not None, key="compute",
                              help="Adds a new matrix; the ones you have are kept")
    if submitted:
        save_choices(state, "similarity", FORM_KEYS)
        state.extra["forms"]["similarity_known"] = {"f_sources": list(state.sources), "f_targets": list(state.targets)}
        options = MeasureOptions(ppl_order=int(ppl_order), ppl_per_sentence=per_sentence, jsd_max_n=int(jsd_n),
                                 wvv_words=wvv_words, seed=int(seed), kl_buckets=int(kl_buckets),
                                 emb_sentences=int(emb_sentences),
                                 tvcc_pos=("NOUN", "VERB", "ADJ", "PROPN") if propn else ("NOUN", "VERB", "ADJ"))
        try:
            start_matrix(state, Job(sources=sources, targets=targets, measures=measures,
                                      options=options.subset(tuple(options.__dataclass_fields__)),
                                      tokenizer={"lowercase": lowercase}, samples=int(samples),
                                      sample_tokens=int(sample_tokens) or None, compute_noise=bool(compute_noise)))
            changed(state)
        except SimcoreError as exc:
            st.error(str(exc))
        else:
            st.rerun()  # the whole page: the job's progress, the sidebar


if state.sources and state.targets:
    defaults = dict(FORM_KEYS, f_sources=sorted(state.sources), f_targets=sorted(state.targets))
    # corpora added since the form was last submitted are chosen too (the kept choice predates them)
    forms = state.extra.setdefault("forms", {})
    known = forms.get("similarity_known")
    if known and "similarity" in forms:
        for key, bucket in (("f_sources", state.sources), ("f_targets", state.targets)):
            added = [n for n in sorted(bucket) if n not in known[key]]
            if added:
                forms["similarity"][key] = [*forms["similarity"].get(key, []), *added]
                known[key] = [*known[key], *added]
                st.session_state.pop(key, None)
    keep_choices(state, "similarity", defaults,
                   allowed={"f_sources": state.sources, "f_targets": state.targets, "f_measures": all_measures()})
    compute_form()

if task is not None:
    job_progress(KIND, lambda job: f"{len(job.partial)} values finished. The computation goes on if you open "
                                     "other pages; its progress is in the sidebar.",
                   lambda job: partial_matrix(job)[["source", "target", "measure", "value"]].tail(12))

shown = pick_matrix(state, "similarity")
if shown is None:
    if task is None:
        st.info("Choose the sources, targets and measures above and press **Compute**.")
    st.stop()
long = shown.long
if shown.job is None:
    st.caption("This matrix was opened from a file: it can be explored here but not drilled into.")
elif not (state.sources and state.targets):
    st.caption("The corpora behind this matrix are not loaded, so it cannot be drilled into here.")

st.caption(f"Matrix: {md(shown.name)} ({md(shown.origin)}). Darker cells are more similar, whatever the "
           "measure's direction; the numbers are the measures' own values.")
if shown.job is not None:
    j = shown.job
    st.caption(f"Computed with: PPL order {j.options.get('ppl_order')}, JSD n ≤ {j.options.get('jsd_max_n')}, "
               f"WVV {j.options.get('wvv_words')} words, {j.samples} sub-corpus(es), seed {j.options.get('seed')}, "
               f"{'lower-cased' if j.tokenizer.get('lowercase', True) else 'case kept'}.")
bad = failures(long)
if len(bad):
    st.warning("Some values could not be computed:")
    st.dataframe(bad, hide_index=True, width="stretch")

measures = list(dict.fromkeys(long["measure"]))
similarity = [m for m in measures if (long[long["measure"] == m]["direction"].iloc[0]) != 0]
others = [m for m in measures if m not in similarity]
content = str(int(pd.util.hash_pandas_object(long.astype(str), index=False).sum()))
grid = st.columns(2)
for i, m in enumerate(similarity):
    with grid[i % 2]:
        rows = long[long["measure"] == m]
        if not pd.to_numeric(rows["value"], errors="coerce").notna().any():
            why = next((f for f in rows.get("flag", pd.Series(dtype=object)).dropna() if "not computed" in str(f)),
                       None) or next(iter(rows.get("error", pd.Series(dtype=object)).dropna()), "no values")
            st.markdown(f"**{label(m)}**")
            start = str(why).find(f"{label(m)} not computed")
            st.info(str(why)[start:] if start >= 0 else str(why))
            continue
        st.plotly_chart(heatmap_of(content, m, long), width="stretch", key=f"heat_{m}",
                        config={"displayModeBar": False})
for m in others:
    part = long[long["measure"] == m].groupby("source", as_index=False)["value"].first()
    st.caption(f"{label(m)} of each source (diversity, not a similarity): "
               + ", ".join(f"{r.source} {r.value:.3f}" for r in part.itertuples()))

st.subheader("Values")
table(values_with_intervals(long))
st.caption("Each value with its 95% interval: a bootstrap over the target's sentences (and the spread over "
           "source sub-corpora when there are several). Differences inside the intervals are within noise."
           + (" ⚠: a flagged value (see below)." if flag_summary(long) else ""))
for line in size_notes(long):
    st.caption(line)
flags = flagged_cells(long)
if len(flags):
    st.subheader("Flagged values")
    st.warning(flag_summary(long))
    st.caption("One row per source and measure (a flag holds for every target), grouped by source.")
    st.table(flags.set_index("source"))

st.subheader("Why? One pair in detail")
job = shown.job
if job is None:
    st.caption("The drill-down needs the corpora: compute the matrix here (a loaded matrix file has only the values).")
    st.stop()
pick = st.columns(3)
target_name = pick[0].selectbox("Target", job.targets, key="drill_target")
source_name = pick[1].selectbox("Source", job.sources, key="drill_source")
top = pick[2].slider("Rows", 5, 100, 25, step=5, key="drill_top")
for line in pair_flags(long, source_name, target_name):
    st.caption(f"⚠ {md(line)}")
# Only the open view is worked out (each needs the pair's prepared corpora: seconds on large sources, and it
# waits for a computation running on this server); the others when their tab is picked.
tabs = st.tabs(list(views().values()), key="drill_view", on_change="rerun")
for tab, view in zip(tabs, views()):
    with tab:
        if tab.open is False:
            continue
        if view not in job.measures and view != "tvc":
            st.caption(f"{label(view)} was not computed; include it in the measures to see this.")
            continue
        with st.spinner("Looking…"):
            result = drill_down(state, job, source_name, target_name, view, top)
        if isinstance(result, str):
            st.error(result)
        elif isinstance(result, pd.DataFrame) and result.empty:
            st.caption("Nothing to show for this pair.")
        else:
            st.dataframe(result, hide_index=True, width="stretch")
