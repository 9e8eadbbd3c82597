"""Sentence selection: keep the pool sentences closest to a target sample, for continued pretraining."""

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import jobs
from dashboard.corpus_view import corpus_stats
from dashboard.markdown import md
from dashboard.navigation import CORPORA, HOME
from dashboard.page_setup import setup_page
from dashboard.paths import resolve_server_path
from dashboard.resources import get_store
from dashboard.selection_chart import clipped_histogram, method_note, short_selection_warning
from dashboard.selection_job import KIND, start_selection
from dashboard.session import get_state
from dashboard.widgets import changed, job_progress, keep_choices, save_choices
from simcore.corpora.corpus import Corpus, display_name, save_upload
from simcore.models.sentence_encoder import INSTALL_HINT, encoder_installed
from simcore.selection.choosing import MAX_MIN_TOKENS, PER_TOKEN_MIN_TOKENS, default_min_tokens, jaccard, kept_indices
from simcore.selection.options import DESCRIPTIONS, METHODS, SelectionOptions
from simcore.selection.view import examples_table, selection_files
from simcore.utils.errors import SimcoreError

setup_page("Sentence selection", ":material/filter_alt:")
state = get_state()
runs: dict = state.extra.setdefault("selection_runs", {})

st.caption("From a large unlabeled pool, keep the sentences closest to your target sample: the data for "
           "continued pretraining before NER fine-tuning (selective pretraining). Choosing a whole source on the "
           "Similarity page is the coarse version of the same question.")

if not state.targets:
    st.info("Nothing to select for yet: load a target sample first (the bundled sample on the home page, or your "
            "own file on the Corpora page). The pool can be a loaded source or a file.")
    st.page_link(HOME, label="Home: load the sample data", icon=":material/home:")
    st.page_link(CORPORA, label="Corpora: add a target and sources", icon=":material/library_books:")
    st.stop()

POOL_UPLOAD, POOL_PATH = "a file I upload", "a file on the server"
FORM_KEYS = {"sel_pool": None, "sel_target": None, "sel_target_tokens": 0, "sel_method": METHODS[0] if METHODS else None,
             "sel_amount": "top K sentences", "sel_top": 100, "sel_percent": 10, "sel_keep_dups": False,
             "sel_pool_sample": 100_000, "sel_order": 3, "sel_labels": "auto", "sel_seed": 13, "sel_path": "",
             "sel_adapt": False, "sel_tagger": "target", "sel_min_tokens": 0}
pool_options = [*sorted(state.sources), POOL_UPLOAD, POOL_PATH]
keep_choices(state, "selection", dict(FORM_KEYS, sel_pool=pool_options[0], sel_target=sorted(state.targets)[0]),
               allowed={"sel_pool": pool_options, "sel_target": state.targets, "sel_method": METHODS})
if state.extra.get("selection_new") in runs:  # a run just finished: show it (the picker kept the old one)
    st.session_state["sel_shown"] = state.extra.pop("selection_new")
task = jobs.running(state, KIND)


def progress_bar():
    bar = st.progress(0.0, text="starting")

    def update(message: str, fraction: float) -> None:
        bar.progress(min(1.0, max(0.0, float(fraction))), text=message[:120])

    return bar, update


pool_choice = st.selectbox("Pool (the large corpus to select from)", pool_options, key="sel_pool")
upload, server_path = None, ""
with st.form("selection_form"):
    left, right = st.columns(2)
    if pool_choice == POOL_UPLOAD:
        upload = left.file_uploader("Pool file", key="sel_upload")
    elif pool_choice == POOL_PATH:
        server_path = left.text_input("Pool path on the server", key="sel_path",
                                      help="inside the data folders this app may read")
    else:
        left.caption(f"Pool: the loaded source {md(pool_choice)}.")
    target_name = right.selectbox("Target sample", sorted(state.targets), key="sel_target")
    target_tokens = right.number_input("Use a sample of the target of this many tokens (0 = all of it)", 0, 10**9,
                                       step=1000, key="sel_target_tokens")
    method = right.selectbox("Method", list(METHODS), key="sel_method", format_func=lambda m: f"{m}: {DESCRIPTIONS[m]}")
    a1, a2, a3 = st.columns(3)
    amount = a1.radio("Keep", ["top K sentences", "a fraction of the pool"], key="sel_amount")
    top = a2.number_input("K", 1, 10**9, key="sel_top")
    percent = a3.slider("Fraction (%)", 1, 100, key="sel_percent")
    with st.expander("Options"):
        o1, o2, o3 = st.columns(3)
        keep_duplicates = o1.checkbox("Allow sentences identical to a target sentence", key="sel_keep_dups",
                                      help="off: pool copies of target sentences are never kept (no test-set leak)")
        pool_sample = o1.number_input("Pool sentences for the pool-side models", 100, 10**7, step=1000,
                                      key="sel_pool_sample")
        order = o2.slider("KenLM order (ppl, xent)", 2, 6, key="sel_order")
        labels = o2.text_input("Entity types counted (entities)", key="sel_labels",
                               help="auto: the types the bundled NER finds more often in the target than in the pool; "
                                    "all; or a comma-separated list such as PERSON,ORG")
        seed = o3.number_input("Random seed", 0, 2**31 - 1, key="sel_seed")
        adapt = o3.checkbox("Adapt the encoder to the target first (encoder)", key="sel_adapt",
                            help="continued masked-LM training on the target text (stored; minutes on a CPU)")
        tagger = o2.selectbox("Tagger (entities)", ["target", "generic"], key="sel_tagger",
                              help="target: trained on the target's own labels (generic when it has none); "
                                   "generic: the English pipeline's OntoNotes types")
        min_tokens = o1.number_input(f"Shortest sentence kept (tokens; 0: {PER_TOKEN_MIN_TOKENS} for ppl and xent, "
                                     "1 for the others)", 0, MAX_MIN_TOKENS, key="sel_min_tokens",
                                     help="sentences with fewer tokens are never kept: under ppl and xent a score "
                                          "per token over a few tokens is extreme, so one-liners would crowd the "
                                          f"top ('Source :'); their default, {PER_TOKEN_MIN_TOKENS}, keeps them out "
                                          "(bench/bench_min_tokens.py); the stored scores are reused")
    submitted = st.form_submit_button("Select", type="primary", key="sel_run", disabled=task is not None)
min_tokens = int(min_tokens) or default_min_tokens(method)

if not encoder_installed():
    st.caption(f"The encoder method needs the transformer encoder: {INSTALL_HINT}.")

if submitted:
    save_choices(state, "selection", FORM_KEYS)
    try:
        if pool_choice == POOL_UPLOAD:
            if upload is None:
                raise SimcoreError("choose a pool file to upload, or pick a loaded source as the pool")
            data = upload.getvalue()
            if not data:
                raise SimcoreError(f"{display_name(upload.name)}: the uploaded file is empty")
            pool = Corpus.from_path(save_upload(data, upload.name, get_store()), name=display_name(upload.name))
        elif pool_choice == POOL_PATH:
            pool = Corpus.from_path(resolve_server_path(server_path))
        else:
            pool = state.sources[pool_choice].corpus
        target = state.targets[target_name].corpus
        options = SelectionOptions(method=method, pool_sample=int(pool_sample), order=int(order), seed=int(seed),
                                   entity_labels=labels or "auto", target_tokens=int(target_tokens) or None,
                                   adapt=bool(adapt), tagger=tagger)
        by_top = amount.startswith("top")
        amount_label = f"top {int(top):,}" if by_top else f"top {percent}%"
        if int(min_tokens) > 1:
            amount_label += f" · {int(min_tokens):,}+ tokens"
        label = f"{method} · {pool.name} → {target.name} · {amount_label}"
        start_selection(state, label=label, pool=pool, target=target.name, options=options,
                        top=int(top) if by_top else None, fraction=None if by_top else percent / 100,
                        keep_duplicates=keep_duplicates, min_tokens=int(min_tokens))
        changed(state)
    except SimcoreError as exc:
        st.error(str(exc))


if task is not None:
    job_progress(KIND, lambda job: "It goes on if you open other pages; its progress is in the sidebar.")

if not runs:
    st.info("Choose the pool, the target and a method above and press **Select**.")
    st.stop()

labels_list = list(runs)
if st.session_state.get("sel_shown") not in labels_list:
    current = state.extra.get("selection_current")
    st.session_state["sel_shown"] = current if current in labels_list else labels_list[-1]
shown = st.selectbox("Selection shown", labels_list, key="sel_shown")
state.extra["selection_current"] = shown
run = runs[shown]
scores, cutoff, keep_dups = run["scores"], run["cutoff"], run["keep_duplicates"]
direction = "higher" if scores.higher_kept else "lower"

m = st.columns(6 if cutoff.min_tokens > 1 else 5)
m[0].metric("Pool sentences", f"{scores.n:,}")
m[1].metric("Kept", f"{cutoff.n_kept:,}")
m[2].metric("Cut-off score", f"{cutoff.score(scores.higher_kept):.4g}", help=f"{direction} scores are kept")
m[3].metric("Target duplicates", f"{cutoff.n_duplicates:,}",
            help="pool sentences that are also in the target: " + ("excluded" if not keep_dups else "allowed"))
if cutoff.min_tokens > 1:
    m[4].metric(f"Under {cutoff.min_tokens:,} tokens", f"{cutoff.n_short:,}",
                help="scored sentences left out for their length")
m[-1].metric("Sentences per second", f"{scores.meta.get('rate', 0):,.0f}")
if cutoff.n_kept < cutoff.k:
    st.warning(f"Asked for {cutoff.k:,} sentences but only {cutoff.n_eligible:,} could be kept.")
details = scores.meta.get("details", {})
if run["method"] == "entities" and details.get("labels"):
    st.caption(md("Entity types counted: " + ", ".join(details["labels"])
                    + (f" (tagger: {details['tagger']})" if details.get("tagger") else "")))
if run["method"] == "encoder" and details.get("encoder"):
    st.caption(md(f"Encoder: {details['encoder']} on {details.get('device', 'cpu')}"))

st.subheader("Score distribution")
hist = clipped_histogram(scores, cutoff, keep_dups)
if len(hist):
    st.caption("The axis spans the 0.5th to the 99th percentile of the scores; the outer bars hold the rest.")
    bars = alt.Chart(hist).mark_bar().encode(
        x=alt.X("low:Q", title=f"{run['method']} score ({direction} kept)", bin="binned",
                scale=alt.Scale(domain=[float(hist["low"].min()), float(hist["high"].max())])), x2="high:Q",
        y=alt.Y("count:Q", title="sentences", stack=True),
        color=alt.Color("kept:N", scale=alt.Scale(domain=["kept", "dropped"], range=["#1f77b4", "#c7c7c7"])),
        tooltip=["range", "kept", "count"])
    rule = alt.Chart(pd.DataFrame({"cut-off": [cutoff.score(scores.higher_kept)]})).mark_rule(
        color="#d62728", strokeDash=[4, 3]).encode(x="cut-off:Q")
    st.altair_chart(bars + rule, width="stretch", key="sel_hist")

st.subheader("Examples")
if "examples" not in run:
    run["examples"] = examples_table(run["pool"], scores, cutoff, keep_dups)
examples = run["examples"]
if "pool_mean" not in run:
    try:
        run["pool_mean"] = corpus_stats(run["pool"]).mean_length
    except SimcoreError:
        run["pool_mean"] = float("nan")
kept_lengths = [len(t.split()) for t in examples[examples["group"] == "best kept"]["text"]]
short = short_selection_warning(kept_lengths, run["pool_mean"], run["method"])
if short:
    st.warning(short)
if method_note(run["method"]):
    st.caption(method_note(run["method"]))
groups = ("best kept", "last kept", "first dropped", "worst")
for tab, group in zip(st.tabs([g.capitalize() for g in groups]), groups):
    shown_columns = ["score", "left_out", "text"] if group in ("first dropped", "worst") else ["score", "text"]
    part = examples[examples["group"] == group][shown_columns].rename(columns={"left_out": "left out as"})
    tab.table(part.assign(score=part["score"].map(lambda v: f"{v:.4g}")).set_index("score"))  # wraps whole sentences

same_pool = [label for label, r in runs.items() if r["pool"].path == run["pool"].path]
if len(same_pool) >= 2:
    st.subheader("Overlap between two selections")
    o1, o2 = st.columns(2)
    first = o1.selectbox("First", same_pool, index=same_pool.index(shown), key="sel_overlap_a")
    others = [label for label in same_pool if label != first]
    second = o2.selectbox("Second", others, key="sel_overlap_b")
    kept = {}
    for label in (first, second):
        r = runs[label]
        if "kept" not in r:
            r["kept"] = kept_indices(r["scores"], r["cutoff"], r["keep_duplicates"])
        kept[label] = r["kept"]
    both = len(set(kept[first].tolist()) & set(kept[second].tolist()))
    st.metric("Jaccard overlap of the kept sentences", f"{jaccard(kept[first], kept[second]):.3f}",
              help=f"{both:,} sentences kept by both; {len(kept[first]):,} and {len(kept[second]):,} kept")
    state.extra["selection_overlap"] = jaccard(kept[first], kept[second])

st.subheader("Download")
if "files" not in run:
    if st.button("Prepare the downloads", key="sel_prepare"):
        try:
            bar, update = progress_bar()
            run["files"] = selection_files(run["pool"], scores, cutoff, keep_dups, get_store(), update)
            bar.empty()
        except SimcoreError as exc:
            st.error(str(exc))
if "files" in run:
    selected, table = run["files"]
    d1, d2 = st.columns(2)
    d1.download_button("Kept sentences (SELECTED.txt.gz)", selected.read_bytes(), file_name="SELECTED.txt.gz",
                       mime="application/gzip", key="sel_dl_text")
    d2.download_button("Scores of every sentence (SCORES.csv)", table.read_bytes(), file_name="SCORES.csv",
                       mime="text/csv", key="sel_dl_csv")
