"""Corpora: add sources and targets (upload or server path), preview, statistics, remove."""

import pandas as pd
import streamlit as st

from dashboard.corpus_view import (
    corpus_cut,
    corpus_language,
    corpus_preview,
    corpus_stats,
    length_chart,
)
from dashboard.decontaminate_job import start_decontamination
from dashboard.loading import (
    FORMAT_CHOICES,
    UPLOAD_TYPES,
    add_server_path,
    add_upload,
    corpus_choices,
    language_choices,
    remove,
    rename,
    says_little,
    set_language,
    suggest_name,
    upload_hint,
)
from dashboard.markdown import md
from dashboard.navigation import HOME, SIMILARITY
from dashboard.page_setup import setup_page
from dashboard.paths import data_roots, remote_roots
from dashboard.session import get_state
from dashboard.target_job import start_target_work
from dashboard.widgets import changed, table
from simcore.contamination.ngrams import OVERLAP_CHAR_NGRAM, OVERLAP_NGRAM
from simcore.corpora.lang.detect import language_name as language_label
from simcore.corpora.notes import ReadNotes
from simcore.utils.errors import SimcoreError

setup_page("Corpora", ":material/library_books:")
state = get_state()
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


# with state: after adding from the server the page shows its message and stays on the tab (it jumped back)
add_tab, path_tab = st.tabs(["Upload files", "Server path"], key="corpora_add_tab", on_change="rerun")
with add_tab:
    with st.form("upload_form", clear_on_submit=True):
        files = st.file_uploader(f"Corpus files (up to {st.get_option('server.maxUploadSize')} MB each)",
                                 type=UPLOAD_TYPES, accept_multiple_files=True, key="upload_files")
        role, fmt, field = corpus_options("upload", ["target", "source"])
        submitted = st.form_submit_button("Add uploaded files", type="primary", key="add_uploads")
    if submitted:
        if not files:
            st.warning("Choose one or more files first.")
        added = []
        with st.spinner(f"Reading and tokenizing {len(files or [])} file(s)…"):
            for f in files or []:
                try:
                    added.append(name := add_upload(state, role, f.name, f.getvalue(), fmt, field))
                    state.say("success", f"Added {md(name)} as a {role}.")
                except SimcoreError as exc:
                    state.say("error", str(exc))
        if role == "target":
            start_target_work(state, added)  # in the background: Compute then reuses it
        if files:
            changed(state)

with path_tab:
    roots, urls = data_roots(), remote_roots()
    if not roots and not urls:
        st.info("No data directory is configured on this server (set SIMCORE_DATA_ROOTS).")
    else:
        st.caption("Only inside: " + ", ".join(f"`{r}`" for r in [*roots, *urls]))
        with st.form("path_form"):
            picked = st.selectbox("Pick a corpus file or a directory", [""] + corpus_choices(roots), key="path_pick",
                                  help="Only files in a format simcore reads (plain text, JSONL, CSV, CoNLL, "
                                       "also compressed) and directories are listed")
            typed = st.text_input("…or type a path inside a data directory (or a URL inside a remote location)",
                                  key="path_text")
            prole, pfmt, pfield = corpus_options("path", ["source", "target"])
            split = st.radio(
                "A directory becomes",
                ["one corpus (its files together)", "one corpus per file"],
                key="path_split",
                horizontal=True,
            )
            given = st.text_input(
                "Name (optional)",
                key="path_name",
                max_chars=200,
                placeholder="e.g. conll2003 test",
                help="What the pages and the exports call it; left empty, the file's name (with "
                "its folder's when the file's own says little, as test.conll). For one "
                "file, or a directory added as one corpus.",
            )
            go = st.form_submit_button("Add from the server", type="primary", key="add_path")
        if go:
            try:
                with st.spinner(
                    "Reading and tokenizing (the first time a corpus is added takes longest)…"
                ):
                    names = add_server_path(
                        state, prole, typed or picked, pfmt, pfield, per_file=split.endswith("file")
                    )
                if given.strip() and len(names) == 1 and given.strip() != names[0]:
                    try:
                        names = [rename(state, prole, names[0], given.strip())]
                    except SimcoreError as exc:  # added all the same, under its file's name
                        state.say("warning", f"Not named {md(given.strip())}: {md(exc)}.")
                elif given.strip() and len(names) > 1:
                    state.say(
                        "info",
                        f"The name {md(given.strip())} was not used: the directory became "
                        f"{len(names)} corpora, each named after its file (rename them below).",
                    )
                if prole == "target":
                    start_target_work(state, names)  # in the background: Compute then reuses it
                changed(
                    state,
                    "success",
                    f"Added {md(', '.join(names))} as {prole}{'s' if len(names) > 1 else ''}.",
                )
            except SimcoreError as exc:
                st.error(str(exc))

# Uploads named "test", "dev", "data (2)"…: the browser sends no folder, so ask for a name that says what they are.
vague = [(role, name) for role, bucket in (("target", state.targets), ("source", state.sources))
         for name, loaded in bucket.items() if loaded.origin.startswith("upload") and says_little(name)]
if vague:
    with st.form("name_uploads"):
        st.markdown("**Name your uploads.** These file names say little on the pages and in the exports "
                    "(the browser sends no folder name): what is each one?")
        uploads = {(role, name): i for role, bucket in (("target", state.targets), ("source", state.sources))
                   for i, name in enumerate([n for n, lc in bucket.items() if lc.origin.startswith("upload")], 1)}
        for role, name in vague:
            corpus = state.targets[name].corpus if role == "target" else state.sources[name].corpus
            try:
                first = next(iter(corpus_preview(corpus)), None)
            except SimcoreError:
                first = None
            # two uploads both called test.conll: their order, size and first line say which is which
            st.text_input(f"{role} “{name}”", key=f"vague_{role}_{name}", placeholder=suggest_name(role, name))
            st.caption(upload_hint(uploads.get((role, name), 0), corpus.size_bytes, first, quote=md))
        named = st.form_submit_button("Rename", type="primary", key="name_uploads_go")
    if named:
        done = []
        for role, name in vague:
            new = st.session_state.get(f"vague_{role}_{name}", "").strip()
            if new:
                try:
                    done.append(f"{md(name)} → {md(rename(state, role, name, new))}")
                except SimcoreError as exc:
                    st.error(str(exc))
        if done:
            changed(state, "success", "Renamed " + ", ".join(done) + ".")

if not state.sources and not state.targets:
    st.info("No corpora loaded yet. Upload files above, or load the bundled sample on the home page.")
    st.page_link(HOME, label="Home: load the sample data", icon=":material/home:")
    st.stop()

def language_picker(role: str, name: str, corpus) -> None:
    """The corpus's language as read (detected or chosen), and a choice to read it as another."""
    code, note = corpus_language(corpus, role)
    choices = language_choices()
    options = ["detect"] + list(choices)
    chosen = st.selectbox("Language", options, index=options.index(corpus.language) if corpus.language in options else 0,
                          format_func=lambda o: "detect from the text" if o == "detect" else choices[o],
                          key=f"language_{role}_{name}", help="Read as: " + note)
    st.caption(f"Read as {note}.")
    wanted = None if chosen == "detect" else chosen
    if wanted != corpus.language:
        try:
            label = set_language(state, role, name, wanted)
            changed(state, "success", f"{md(name)} is now read as {md(label)}.")
        except SimcoreError as exc:
            st.error(str(exc))


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
            code, _ = corpus_language(loaded.corpus)
            rows.append({"name": name, "language": language_label(code),
                         "cut": corpus_cut(loaded.corpus, role), "tokens": s.tokens, "types": s.types,
                         "TTR": round(s.ttr, 3),
                         "sentences": s.sentences, "mean length": round(s.mean_length, 1),
                         "entities": str(sum(s.entities.values())) if s.tagged_sentences else "–", "from": loaded.origin})
        except SimcoreError as exc:
            rows.append({"name": name, "from": loaded.origin, "error": str(exc)})
    table(pd.DataFrame(rows))
    repaired = {n: ReadNotes.from_dict(s.read_notes) for n, s in stats.items()}
    if any(repaired.values()):
        st.caption("Odd lines tolerated: " + "; ".join(f"{n}: {r.summary()}" for n, r in repaired.items() if r))
    for name, loaded in sorted(bucket.items()):
        # drawn when opened: fourteen previews and length charts drawn closed took most of the page's time
        with st.expander(f"{name}: preview and sentence lengths", key=f"exp_{role}_{name}",
                         on_change="rerun") as details:
            if details.open is False:
                continue
            left, right = st.columns([3, 2])
            with left:
                try:
                    for line in corpus_preview(loaded.corpus):
                        st.text(line)
                except SimcoreError as exc:
                    st.error(str(exc))
            s = stats.get(name)
            with right:
                chart = length_chart(s) if s is not None else None
                if chart is not None:
                    st.altair_chart(chart, width="stretch", key=f"lengths_{role}_{name}")
                if s is not None and s.entities:
                    st.caption("Entity mentions: " + ", ".join(f"{k} {v}" for k, v in s.entities.items()))
                if s is not None and s.top_words:
                    st.caption("Most frequent words: " + ", ".join(w for w, _ in s.top_words[:15]))
            if name in stats:
                language_picker(role, name, loaded.corpus)
            with st.form(f"rename_form_{role}_{name}", border=False):  # Enter in the field renames
                r1, r2 = st.columns([4, 1], vertical_alignment="bottom")
                new_name = r1.text_input("Name", value=name, key=f"name_{role}_{name}")
                renamed = r2.form_submit_button("Rename", key=f"rename_{role}_{name}")
            if renamed:
                try:
                    new = rename(state, role, name, new_name)
                    st.session_state[f"exp_{role}_{new}"] = True  # the renamed corpus's details stay open
                    changed(state, "success", f"Renamed {md(name)} to {md(new)}.")
                except SimcoreError as exc:
                    st.error(str(exc))
            if st.button(f"Remove {name}", key=f"remove_{role}_{name}"):
                remove(state, role, name)
                changed(state, "info", f"Removed {md(name)}.")

if state.sources and state.targets:
    with st.expander("Decontaminate a source: a copy without the units that hold a target's sentences"):
        st.caption(f"Every unit (line, JSONL record) of the source that shares a {OVERLAP_NGRAM}-word n-gram with "
                   f"the target ({OVERLAP_CHAR_NGRAM} characters for a target cut into characters) is left out; "
                   "the rest is kept byte for byte. "
                   "The copy is added as a source named …_clean. Plain text and JSONL sources, compressed or not.")
        with st.form("decontaminate_form", border=False):
            d1, d2, d3 = st.columns([2, 2, 1], vertical_alignment="bottom")
            dirty = d1.selectbox("Source", sorted(state.sources), key="decon_source")
            against = d2.selectbox("Target", sorted(state.targets), key="decon_target")
            test_only = d3.checkbox("test split only", key="decon_test_only",
                                    help="leave out only units overlapping the target's test sentences")
            go_clean = st.form_submit_button("Decontaminate", type="primary", key="decon_go")
        if go_clean:
            try:
                start_decontamination(state, dirty, against, test_only)
                st.info("Decontaminating in the background: the sidebar shows its progress.")
            except SimcoreError as exc:
                st.error(str(exc))

st.page_link(SIMILARITY, label="Next: compute the similarity matrix", icon=":material/grid_on:")
