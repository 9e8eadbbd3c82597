"""Corpora: add sources and targets (upload or server path), preview, statistics, remove."""

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import common as c
from dashboard.corpus_view import corpus_preview, corpus_stats
from dashboard.loading import FORMAT_CHOICES, UPLOAD_TYPES, add_server_path, add_upload, remove
from dashboard.paths import browse, data_roots
from simcore.errors import SimcoreError

c.setup_page("Corpora", ":material/library_books:")
state = c.get_state()
st.caption("Sources are the unlabelled corpora you could pretrain on; targets are samples of your NER data. "
           "Plain text (one sentence, paragraph or document per line, also .gz/.bz2/.xz), JSONL with a text field, "
           "CSV with a text column, CoNLL/BIO files.")

def corpus_options(prefix: str, roles: list[str]) -> tuple[str, str | None, str]:
    """Role, format and text field, the same three choices for uploads and server paths."""
    cols = st.columns(3)
    role = cols[0].radio("Add as", roles, horizontal=True, key=f"{prefix}_role")
    fmt = cols[1].selectbox("Format", list(FORMAT_CHOICES), key=f"{prefix}_fmt")
    field = cols[2].text_input("Text field / column (JSONL, CSV)", value="text", key=f"{prefix}_field")
    return role, FORMAT_CHOICES[fmt], field


add_tab, path_tab = st.tabs(["Upload files", "Server path"])
with add_tab:
    with st.form("upload_form", clear_on_submit=True):
        files = st.file_uploader(f"Corpus files (up to {st.get_option('server.maxUploadSize')} MB each)",
                                 type=UPLOAD_TYPES, accept_multiple_files=True, key="upload_files")
        role, fmt, field = corpus_options("upload", ["target", "source"])
        submitted = st.form_submit_button("Add uploaded files", type="primary")
    if submitted:
        if not files:
            st.warning("Choose one or more files first.")
        for f in files or []:
            try:
                name = add_upload(state, role, f.name, f.getvalue(), fmt, field)
                st.success(f"Added {c.md(name)} as a {role}.")
            except SimcoreError as exc:
                st.error(str(exc))

with path_tab:
    roots = data_roots()
    if not roots:
        st.info("No data directory is configured on this server (set SIMCORE_DATA_ROOTS).")
    else:
        st.caption("Only inside: " + ", ".join(f"`{r}`" for r in roots))
        with st.form("path_form"):
            picked = st.selectbox("Pick a file or directory", [""] + browse(roots), key="path_pick")
            typed = st.text_input("…or type a path inside a data directory", key="path_text")
            prole, pfmt, pfield = corpus_options("path", ["source", "target"])
            go = st.form_submit_button("Add from the server", type="primary")
        if go:
            try:
                name = add_server_path(state, prole, typed or picked, pfmt, pfield)
                st.success(f"Added {c.md(name)} as a {prole}.")
            except SimcoreError as exc:
                st.error(str(exc))

if not state.sources and not state.targets:
    st.info("No corpora loaded yet. Upload files above, or load the bundled sample on the home page.")
    st.page_link(c.HOME, label="Home: load the sample data", icon=":material/home:")
    st.stop()

for role, bucket in (("target", state.targets), ("source", state.sources)):
    st.subheader(f"{role.capitalize()}s ({len(bucket)})")
    if not bucket:
        st.caption(f"No {role}s yet.")
        continue
    rows = []
    stats = {}
    for name, loaded in sorted(bucket.items()):
        try:
            stats[name] = s = corpus_stats(loaded.corpus)
            rows.append({"name": name, "tokens": s.tokens, "types": s.types, "TTR": round(s.ttr, 3),
                         "sentences": s.sentences, "mean length": round(s.mean_length, 1),
                         "entities": str(sum(s.entities.values())) if s.tagged_sentences else "–", "from": loaded.origin})
        except SimcoreError as exc:
            rows.append({"name": name, "from": loaded.origin, "error": str(exc)})
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    for name, loaded in sorted(bucket.items()):
        with st.expander(f"{name}: preview and sentence lengths"):
            left, right = st.columns([3, 2])
            with left:
                try:
                    for line in corpus_preview(loaded.corpus):
                        st.text(line)
                except SimcoreError as exc:
                    st.error(str(exc))
            s = stats.get(name)
            with right:
                if s is not None and s.length_counts:
                    hist = pd.DataFrame({"length": s.length_edges[:-1], "sentences": s.length_counts})
                    st.altair_chart(alt.Chart(hist).mark_bar().encode(
                        x=alt.X("length:Q", title="sentence length (tokens)", bin="binned"),
                        y=alt.Y("sentences:Q")).properties(height=180), width="stretch")
                if s is not None and s.entities:
                    st.caption("Entity mentions: " + ", ".join(f"{k} {v}" for k, v in s.entities.items()))
                if s is not None and s.top_words:
                    st.caption("Most frequent words: " + ", ".join(w for w, _ in s.top_words[:15]))
            if st.button(f"Remove {name}", key=f"remove_{role}_{name}"):
                remove(state, role, name)
                st.rerun()

st.page_link(c.SIMILARITY, label="Next: compute the similarity matrix", icon=":material/grid_on:")
