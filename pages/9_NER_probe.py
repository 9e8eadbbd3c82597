"""NER probe: train a tagger on your target with each source's word vectors, and see which source helps."""

import streamlit as st

from dashboard import jobs
from dashboard import probe_job as pj
from dashboard.loading import set_results
from dashboard.markdown import md
from dashboard.navigation import CORPORA, HOME, PREDICTIVENESS
from dashboard.page_setup import setup_page
from dashboard.resources import get_store
from dashboard.session import get_state
from dashboard.widgets import changed, job_progress, keep_choices, save_choices
from dashboard.widgets import table as show_table
from simcore.probe.config import ProbeCaps
from simcore.reporting.export import escape_formulas
from simcore.utils.errors import SimcoreError

setup_page("NER probe", ":material/science:")
state = get_state()
task = jobs.running(state, pj.KIND)
st.caption("Trains a tagger on your target's train split without help from any source (the baseline) and with "
           "each source's help (its skip-gram vectors, the ones WVV uses, or a language model trained further on "
           "it), scores entity F1 on the test split, and gives a results table for the Predictiveness page: did "
           "the measures pick the source that helps? Every run is stored, so a probe asked for again reads its "
           "scores back.")

if not state.sources and task is None:
    st.info("No sources loaded yet: load the bundled sample on the home page or add sources on the Corpora page.")
    st.page_link(HOME, label="Home: load the sample data", icon=":material/home:")
    st.page_link(CORPORA, label="Corpora: add sources", icon=":material/library_books:")
    st.stop()

loaded_dirs = pj.loaded_target_dirs(state)
where_options = [pj.LOADED, pj.SERVER, pj.UPLOAD] if loaded_dirs else [pj.SERVER, pj.UPLOAD]
defaults = ProbeCaps()
FORM_KEYS = {"probe_sources": sorted(state.sources), "probe_where": where_options[0], "probe_server": "",
             "probe_up_name": "my_target", "probe_train_n": defaults.train_sentences or 0, "probe_test_n": 0,
             "probe_epochs": defaults.epochs, "probe_seconds": int(defaults.seconds), "probe_seeds": 1,
             "probe_source_tokens": 0, "probe_kind": pj.VECTORS_KIND, "probe_lm_tokens": 100_000,
             "probe_model": "", "probe_max_minutes": 30, **({"probe_loaded": loaded_dirs[0]} if loaded_dirs else {})}
# sources loaded since the form was last run are chosen too (the kept choice predates them)
forms = state.extra.setdefault("forms", {})
added = [n for n in sorted(state.sources) if n not in forms.get("probe_known", state.sources)]
if added and "probe" in forms:
    forms["probe"]["probe_sources"] = [*forms["probe"].get("probe_sources", []), *added]
    st.session_state.pop("probe_sources", None)
forms["probe_known"] = list(state.sources)
keep_choices(state, "probe", FORM_KEYS, allowed={"probe_sources": state.sources, "probe_where": where_options,
                                                   "probe_loaded": loaded_dirs,
                                                   "probe_kind": [pj.VECTORS_KIND, pj.LM_KIND]})

@st.fragment
def probe_form() -> None:
    """The probe's choices, its time and the buttons. A fragment, not a form: every change reruns this part
    alone, so the estimate follows the widgets as they are now, not as they were last submitted."""
    with st.container(border=True):
        kind = st.radio("What to probe", [pj.VECTORS_KIND, pj.LM_KIND], key="probe_kind", horizontal=True,
                        help="language model: each source continues masked-LM training of an encoder on the same "
                             "number of tokens, then a token classifier is fine-tuned (GPU when present; a CPU is "
                             "about 400 times slower, so the run is planned and timed first)")
        left, right = st.columns(2)
        sources = left.multiselect("Sources (their word vectors are probed)", sorted(state.sources), key="probe_sources",
                                   wrap=True)  # every chosen source in view, not a scrolling row
        caps_rows = [left.columns(3), left.columns(3)]
        train_n = caps_rows[0][0].number_input("Train sentences (0 = all)", 0, 10**7, step=500, key="probe_train_n")
        test_n = caps_rows[0][1].number_input("Test sentences (0 = all)", 0, 10**7, step=500, key="probe_test_n")
        epochs = caps_rows[0][2].number_input("Epochs", 1, 1000, key="probe_epochs")
        seconds = caps_rows[1][0].number_input("Seconds per run", 5, 24 * 3600, key="probe_seconds")
        seeds = caps_rows[1][1].number_input("Seeds", 1, 20, key="probe_seeds")
        source_tokens = caps_rows[1][2].number_input("Source tokens (0 = as the matrix)", 0, 10**10, step=100_000,
                                                     key="probe_source_tokens",
                                                     help="the sample each source's vectors are trained on; by default "
                                                          "the size the matrix trains WVV's vectors at")
        lm_row = left.columns(3)
        lm_tokens = lm_row[0].number_input("LM tokens per source", 1, 10**10, step=100_000, key="probe_lm_tokens")
        model_dir = lm_row[1].text_input("Model directory (empty = bundled MiniLM)", key="probe_model")
        max_minutes = lm_row[2].number_input("Refuse plans over (min)", 1, 7 * 24 * 60, key="probe_max_minutes")
        where = right.radio("Target with train and test splits (dev optional)", where_options, key="probe_where")
        loaded = right.selectbox("Loaded target", loaded_dirs, key="probe_loaded") if loaded_dirs else None
        server = right.text_input("Directory on the server", key="probe_server",
                                  help="inside the data folders this app may read; it holds train.conll and test.conll")
        up = right.columns(3)
        train_file = up[0].file_uploader("train", key="probe_up_train")
        dev_file = up[1].file_uploader("dev (optional)", key="probe_up_dev")
        test_file = up[2].file_uploader("test", key="probe_up_test")
        upload_name = right.text_input("Target name (for uploads; match the matrix's target name)", key="probe_up_name")
        small_ok = st.checkbox("Run even with caps this small", key="probe_small_ok",
                               help="Caps under 3 epochs, 30 s per run or 1,000 train sentences make every F1 meaningless")
        long_ok = st.checkbox("Language model: run even if the plan is longer than the limit", key="probe_long_ok")
        submitted = st.button("Run the probe", type="primary", key="probe_run", disabled=task is not None,
                              help="Runs in the background: you can open other pages meanwhile")
        plan_only = st.button("Plan the language-model probe (train nothing)", key="probe_plan",
                              disabled=task is not None)
    if state.extra.get(pj.PLAN):
        st.code(state.extra[pj.PLAN], language=None)
    shown_caps = ProbeCaps(train_sentences=int(st.session_state.get("probe_train_n") or 0) or None,
                           test_sentences=int(st.session_state.get("probe_test_n") or 0) or None,
                           epochs=int(st.session_state.get("probe_epochs") or 1),
                           seconds=float(st.session_state.get("probe_seconds") or 5))
    shown_sources = [n for n in st.session_state.get("probe_sources") or [] if n in state.sources]
    shown_seeds = int(st.session_state.get("probe_seeds") or 1)
    if st.session_state.get("probe_kind") == pj.LM_KIND:
        st.caption("Language model: each chosen source continues masked-LM training of the encoder on “LM tokens per "
                   "source”, then a token classifier is fine-tuned on the target's train split. “Plan the language-model "
                   "probe” times it on this machine first; a plan longer than “Refuse plans over (min)” is refused "
                   "unless its tick is set.")
    else:
        st.caption("With these caps: " + pj.estimate(state, shown_caps, shown_sources, shown_seeds,
                                                     int(st.session_state.get("probe_source_tokens") or 0) or None,
                                                     pj.shown_target(state, st.session_state.get("probe_where"),
                                                                     st.session_state.get("probe_loaded"))
                                                     ).text(jobs.duration)
                   + "; " + pj.time_bound(shown_caps, len(shown_sources), shown_seeds) + " for the training runs.")

    if submitted or plan_only:
        save_choices(state, "probe", FORM_KEYS)
        try:
            pj.check_sources(state, sources)
            uploads = {split: (f.name, f.getvalue()) for split, f in
                       (("train", train_file), ("dev", dev_file), ("test", test_file)) if f is not None}
            target = pj.resolve_target(state, where, loaded=loaded, server=server, uploads=uploads,
                                    upload_name=upload_name, store=get_store())
            caps = ProbeCaps(train_sentences=int(train_n) or None, test_sentences=int(test_n) or None,
                             epochs=int(epochs), seconds=float(seconds))
            weak = pj.weak_caps(caps)
            if kind == pj.LM_KIND or plan_only:
                lm_caps = pj.LMCaps(lm_tokens=int(lm_tokens), train_sentences=int(train_n) or None,
                                    test_sentences=int(test_n) or None)
                pj.start_lm_probe(state, pj.LMProbeRequest(tuple(sources), target, lm_caps, int(seeds),
                                                           model_dir.strip() or None, float(max_minutes), long_ok,
                                                           plan_only))
            elif weak and not small_ok:  # said before the run, not in a column off-screen after it
                raise SimcoreError("these caps would make every F1 meaningless: " + "; ".join(weak) + ". Raise them, "
                                   "or tick “Run even with caps this small” and press Run again")
            else:
                pj.start_probe(state, pj.ProbeRequest(tuple(sources), target, caps, int(seeds),
                                                      int(source_tokens) or None))
            changed(state)
        except SimcoreError as exc:
            st.error(str(exc))
        else:
            st.rerun()  # the whole page: the job's progress, the sidebar



probe_form()

if task is not None:
    job_progress(pj.KIND, lambda job: f"{len(job.partial)} of {job.params.runs} training runs finished (read back or "
                                        "trained). The probe goes on if you open other pages; its progress and Cancel "
                                        "are in the sidebar.",
                   lambda job: pj.runs_table(job).round(2))
else:
    last = state.jobs.get(pj.KIND)
    if last is not None and last.status in (jobs.CANCELLED, jobs.FAILED) and last.partial:
        st.caption(f"The last probe stopped ({last.status}) after these training runs; they are stored, so running "
                   "the probe again reads them back and trains only the rest.")
        st.dataframe(pj.runs_table(last).round(2), hide_index=True)

table = state.extra.get(pj.RESULTS)
if table is None:
    if task is None:
        st.info("Choose the sources, a target with train and test splits, and the caps, then press **Run the probe**.")
    st.stop()

st.subheader("Results")
st.caption(f"{md(state.extra.get(pj.LABEL, ''))}. F1 is entity-level (exact span and type), in points; "
           f"improvement = F1 − baseline (no pretrained vectors). Caps: {md(table['caps'].iloc[0])}")
for message in sorted(set(table["error"].dropna())):
    st.warning(message)
if table["time_capped"].sum() > 0:
    st.warning("Some runs were cut short by the time cap (column time_capped) and trained fewer epochs than the "
               "others: their F1 is not comparable. Raise the seconds per run and run the probe again "
               "(finished runs are read back).")
show_table(table.drop(columns=["caps"]).round(3))
cols = st.columns(2)
cols[0].download_button("Download the results CSV", escape_formulas(table).to_csv(index=False).encode("utf-8"),
                        file_name="probe_results.csv", mime="text/csv", key="probe_download")
if cols[1].button("Use these results on the Predictiveness page", key="probe_use"):
    set_results(state, table, state.extra.get(pj.LABEL, "NER probe"))
    st.switch_page(PREDICTIVENESS)
