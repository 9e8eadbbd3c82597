"""Cached corpus statistics and previews for the Corpora page (keyed by strings, not by objects)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from simcore.corpora.corpus import Corpus
from simcore.corpora.lang.cut import short_cut
from simcore.corpora.stats import CorpusStats, corpus_statistics, preview
from simcore.matrix.workbench import Workbench

from .resources import get_store

if TYPE_CHECKING:
    import altair as alt


# A cell's key (_key): path, name, format, text field, encoding, mtime, size, store root. Passed
# as one tuple: st.cache_data looks the function's signature up once per positional argument.
Key = tuple[str, str, str | None, str, str | None, float, int, str]


@lru_cache(maxsize=256)
def _corpus(key: Key, language: str | None = None) -> Corpus:
    """The corpus a cell's key names, made once for every cell that asks (its files listed, its
    language read, once); a file changed since has another key."""
    path, name, fmt, text_field, encoding = key[:5]
    return Corpus.from_path(path, name=name, fmt=fmt, text_field=text_field, encoding=encoding,
                            language=language)


@st.cache_data(show_spinner="Counting…", max_entries=200)
def _stats(key: Key, language: str | None = None) -> dict:
    return corpus_statistics(_corpus(key, language), get_store()).as_dict()


@st.cache_data(show_spinner=False, max_entries=200)
def _language(key: Key, language: str | None, cut: str | None = None) -> tuple[str, str]:
    corpus = _corpus(key, language)
    return corpus.language_guess().language, corpus.language_note(cut)


def corpus_language(corpus: Corpus, role: str = "source") -> tuple[str, str]:
    """(code, 'German (de), Latin script, detected ...; words cut by spacy-de') of a loaded corpus;
    a target's note says how its own rows cut it and its sources (characters, rejoined words ...)."""
    key = _key(corpus)
    if role == "target":
        return _language(key, corpus.language, _cut(key, corpus.language))
    return _language(key, corpus.language)


@st.cache_data(show_spinner=False, max_entries=200)
def _cut(key: Key, language: str | None) -> str:
    return Workbench(get_store()).target_cut(_corpus(key, language))


@st.cache_data(show_spinner=False, max_entries=200)
def _segmenter(key: Key, language: str | None) -> str:
    return _corpus(key, language).segmenter().name


def corpus_cut(corpus: Corpus, role: str) -> str:
    """The Corpora table's "cut" cell: how the corpus's text becomes tokens. A source's words are cut
    by its language's segmenter (and cut again as each target asks); a target's own rows decide its
    cut."""
    key = _key(corpus)
    segmenter = _segmenter(key, corpus.language)
    if role != "target":
        return f"words ({segmenter})"
    return f"{short_cut(_cut(key, corpus.language))} ({segmenter})"


def _key(corpus: Corpus) -> Key:
    stat = corpus.path.stat()
    size = stat.st_size if corpus.files == (corpus.path,) else corpus.size_bytes  # one file: 1 stat
    return (str(corpus.path), corpus.name, corpus.fmt, corpus.text_field, corpus.encoding,
            stat.st_mtime, size, str(get_store().root))


def corpus_stats(corpus: Corpus) -> CorpusStats:
    return CorpusStats.from_dict(_stats(_key(corpus), corpus.language))


@st.cache_data(show_spinner=False, max_entries=200)
def _preview(key: Key) -> list[str]:
    return preview(_corpus(key))


def corpus_preview(corpus: Corpus) -> list[str]:
    return _preview(_key(corpus))


def length_chart(stats: CorpusStats) -> alt.Chart | None:
    """Bars from each bin's first to its last length (a wider last bin, the long tail, drawn one bin wide)."""
    import altair as alt  # ~1 s of imports on an idle core: after the page's title is drawn

    edges, counts = stats.length_edges, stats.length_counts
    if not counts:
        return None
    width = edges[1] - edges[0]
    rows = []
    for i, n in enumerate(counts):
        start, stop = edges[i], edges[i + 1]
        tail = i == len(counts) - 1 and stop - start > width
        rows.append({"from": start, "to": start + width if tail else stop, "sentences": n,
                     "lengths": f"{start} or more" if tail else (f"{start}" if stop - start == 1 else f"{start}–{stop - 1}")})
    data = pd.DataFrame(rows)
    return alt.Chart(data).mark_bar().encode(
        x=alt.X("from:Q", title="sentence length (tokens)", bin="binned",
                scale=alt.Scale(domain=[edges[0], int(data["to"].max())])),
        x2="to:Q", y=alt.Y("sentences:Q"), tooltip=["lengths", "sentences"]).properties(height=180)
