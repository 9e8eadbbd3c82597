"""Cached corpus statistics and previews for the Corpora page (keyed by strings, not by objects)."""

from __future__ import annotations

import streamlit as st

from simcore.corpus import Corpus
from simcore.stats import CorpusStats, corpus_statistics, preview

from .common import get_store


@st.cache_data(show_spinner="Counting…", max_entries=200)
def _stats(path: str, name: str, fmt: str | None, text_field: str, encoding: str | None, mtime: float,
           size: int, root: str) -> dict:
    corpus = Corpus.from_path(path, name=name, fmt=fmt, text_field=text_field, encoding=encoding)
    return corpus_statistics(corpus, get_store()).as_dict()


def _key(corpus: Corpus) -> tuple:
    stat = corpus.path.stat()
    return (str(corpus.path), corpus.name, corpus.fmt, corpus.text_field, corpus.encoding, stat.st_mtime,
            corpus.size_bytes, str(get_store().root))


def corpus_stats(corpus: Corpus) -> CorpusStats:
    return CorpusStats.from_dict(_stats(*_key(corpus)))


@st.cache_data(show_spinner=False, max_entries=200)
def _preview(path: str, name: str, fmt: str | None, text_field: str, encoding: str | None, mtime: float,
             size: int, root: str) -> list[str]:
    return preview(Corpus.from_path(path, name=name, fmt=fmt, text_field=text_field, encoding=encoding))


def corpus_preview(corpus: Corpus) -> list[str]:
    return _preview(*_key(corpus))
