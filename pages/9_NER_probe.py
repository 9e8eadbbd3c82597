"""NER probe: train a tagger on your target with each source's word vectors, and see which source helps."""

import pandas as pd
import streamlit as st

from dashboard import common as c
from dashboard.loading import set_results
from dashboard.paths import resolve_server_path
from simcore.corpus import display_name, save_upload
from simcore.errors import SimcoreError
from simcore.export import escape_formulas
from simcore.probe import ProbeCaps, TargetSplits, probe, seed_list

c.setup_page("NER probe", ":material/science:")
state = c.get_state()
st.caption("Trains spaCy's NER on your target's train split once without pretrained vectors (the baseline) and "
           "once with each source's skip-gram vectors (the ones WVV uses), scores entity F1 on the test split, and "
           "gives a results table for the Predictiveness page: did the measures pick the source that helps? "
           "Every run is stored, so a probe asked for again reads its scores back.")

if not state.sources:
    st.info("No sources loaded yet: load the bundled sample on the home page or add sources on the Corpora page.")
    st.page_link(c.HOME, label="Home: load the sample data", icon=":material/home:")
    st.page_link(c.CORPORA, label="Corpora: add sources", icon=":material/library_books:")
    st.stop()

LOADED, SERVER, UPLOAD = "a loaded target (a directory of splits)", "a directory on the server", "files I upload"
loaded_dirs = sorted(name for name, t in state.targets.items() if t.corpus.path.is_dir())
defaults = ProbeCaps()

with st.form("probe_form"):
    left, right = st.columns(2)
    sources = left.multiselect("Sources (their word vectors are probed)", sorted(state.sources),
                               default=sorted(state.sources), key="probe_sources")
    where = right.radio("Target with train and test splits (dev optional)",
                        [LOADED, SERVER, UPLOAD] if loaded_dirs else [SERVER, UPLOAD], key="probe_where")
    loaded = right.selectbox("Loaded target", loaded_dirs or ["(none is a directory)"], key="probe_loaded")
    server = right.text_input("Directory on the server", key="probe_server",
                              help="inside the data folders this app may read; it holds train.conll and test.conll")
    up = right.columns(3)
    train_file = up[0].file_uploader("train", key="probe_up_train")
    dev_file = up[1].file_uploader("dev (optional)", key="probe_up_dev")
    test_file = up[2].file_uploader("test", key="probe_up_test")
    upload_name = right.text_input("Target name (for uploads; match the matrix's target name)", "my_target",
                                   key="probe_up_name")
    caps_cols = st.columns(6)
    train_n = caps_cols[0].number_input("Train sentences (0 = all)", 0, 10**7, defaults.train_sentences or 0,
                                        step=500, key="probe_train_n")
    test_n = caps_cols[1].number_input("Test sentences (0 = all)", 0, 10**7, 0, step=500, key="probe_test_n")
    epochs = caps_cols[2].number_input("Epochs", 1, 1000, defaults.epochs, key="probe_epochs")
    seconds = caps_cols[3].number_input("Seconds per run", 5, 24 * 3600, int(defaults.seconds), key="probe_seconds")
    seeds = caps_cols[4].number_input("Seeds", 1, 20, 1, key="probe_seeds")
    source_tokens = caps_cols[5].number_input("Source tokens (0 = as the matrix)", 0, 10**10, 0, step=100_000,
                                              key="probe_source_tokens",
                                              help="the sample each source's vectors are trained on; by default the "
                                                   "size the matrix trains WVV's vectors at")
    submitted = st.form_submit_button("Run the probe", type="primary", key="probe_run")


def _target() -> TargetSplits:
    if where == LOADED:
        if not loaded_dirs:
            raise SimcoreError("no loaded target is a directory of splits; choose a server directory or upload files")
        return TargetSplits.from_directory(state.targets[loaded].corpus.path, name=loaded)
    if where == SERVER:
        return TargetSplits.from_directory(resolve_server_path(server))
    if train_file is None or test_file is None:
        raise SimcoreError("upload at least a train file and a test file")
    saved = {}
    for split, f in (("train", train_file), ("dev", dev_file), ("test", test_file)):
        if f is not None:
            data = f.getvalue()
            if not data.strip():
                raise SimcoreError(f"{display_name(f.name)}: the uploaded {split} file is empty")
            saved[split] = save_upload(data, f.name, c.get_store())
    return TargetSplits(display_name(upload_name or "my_target"), saved["train"], saved["test"], saved.get("dev"))


if submitted:
    try:
        if not sources:
            raise SimcoreError("choose at least one source")
        target = _target()
        caps = ProbeCaps(train_sentences=int(train_n) or None, test_sentences=int(test_n) or None,
                         epochs=int(epochs), seconds=float(seconds))
        bar = st.progress(0.0, text="starting")
        log: list[dict] = []
        live = st.empty()

        def update(message: str, fraction: float) -> None:
            bar.progress(min(1.0, max(0.0, float(fraction))), text=message[:120])

        def on_run(run: dict) -> None:
            log.append({k: run[k] for k in ("target", "source", "seed", "f1", "epochs", "seconds", "stopped_by")})
            live.dataframe(pd.DataFrame(log).round(2), hide_index=True)

        with c.workbench_lock():
            table = probe([state.sources[n].corpus for n in sources], [target], workbench=c.get_workbench(),
                          caps=caps, seeds=seed_list(int(seeds)), source_tokens=int(source_tokens) or None,
                          progress=update, on_run=on_run)
        bar.empty()
        live.empty()
        state.extra["probe_results"] = table
        state.extra["probe_label"] = f"NER probe: {target.name}, {len(sources)} sources, {int(seeds)} seed(s)"
    except SimcoreError as exc:
        st.error(str(exc))

table = state.extra.get("probe_results")
if table is None:
    st.info("Choose the sources, a target with train and test splits, and the caps, then press **Run the probe**.")
    st.stop()

st.subheader("Results")
st.caption(f"{c.md(state.extra.get('probe_label', ''))}. F1 is entity-level (exact span and type), in points; "
           f"improvement = F1 − baseline (no pretrained vectors). Caps: {c.md(table['caps'].iloc[0])}")
for message in sorted(set(table["error"].dropna())):
    st.warning(message)
if table["time_capped"].sum() > 0:
    st.warning("Some runs were cut short by the time cap (column time_capped) and trained fewer epochs than the "
               "others: their F1 is not comparable. Raise the seconds per run and run the probe again "
               "(finished runs are read back).")
st.dataframe(table.drop(columns=["caps"]).round(3), hide_index=True, width="stretch")
cols = st.columns(2)
cols[0].download_button("Download the results CSV", escape_formulas(table).to_csv(index=False).encode("utf-8"),
                        file_name="probe_results.csv", mime="text/csv", key="probe_download")
if cols[1].button("Use these results on the Predictiveness page", key="probe_use"):
    set_results(state, table, state.extra.get("probe_label", "NER probe"))
    st.switch_page(c.PREDICTIVENESS)
