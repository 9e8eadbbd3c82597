"""Adding corpora, matrices and NER results to the session's state (no widgets here)."""

from __future__ import annotations

import io

import pandas as pd

from simcore.analysis import to_long
from simcore.corpus import Corpus, display_name, save_upload
from simcore.errors import SimcoreError
from simcore.matrix import corpora_in

from .common import AppState, LoadedCorpus, get_store, get_workbench
from .paths import SAMPLE_DATA, TABLE3, resolve_server_path

ROLES = ("source", "target")
# A compressed upload may not expand past this (decompression bombs); big corpora belong on the server's disk.
UPLOAD_DECOMPRESSED_LIMIT = 500_000_000
UPLOAD_TYPES = ["txt", "text", "tok", "raw", "jsonl", "ndjson", "json", "csv", "conll", "conllu", "bio", "iob",
                "iob2", "bioes", "ner", "tsv", "gz", "bz2", "xz"]
FORMAT_CHOICES = {"detect from the file name": None, "plain text": "text", "JSONL": "jsonl", "CSV": "csv",
                  "CoNLL / BIO": "conll"}


def _bucket(state: AppState, role: str) -> dict[str, LoadedCorpus]:
    if role not in ROLES:
        raise SimcoreError(f"unknown role {role!r}")
    return state.sources if role == "source" else state.targets


def _unique(name: str, taken: dict[str, LoadedCorpus]) -> str:
    if name not in taken:
        return name
    i = 2
    while f"{name} ({i})" in taken:
        i += 1
    return f"{name} ({i})"


def _check(corpus: Corpus) -> None:
    """Read the corpus once (tokenizing it into the store) so that a bad file fails here, with its message."""
    get_workbench().tokenize(corpus)


def add_corpus(state: AppState, role: str, corpus: Corpus, origin: str, replace: bool = False) -> str:
    bucket = _bucket(state, role)
    _check(corpus)
    name = corpus.name if replace else _unique(corpus.name, bucket)
    if name != corpus.name:
        corpus = Corpus.from_path(corpus.path, name=name, fmt=corpus.fmt, text_field=corpus.text_field,
                                  encoding=corpus.encoding, max_decompressed_bytes=corpus.max_decompressed_bytes)
    bucket[name] = LoadedCorpus(corpus, origin)
    return name


def add_upload(state: AppState, role: str, filename: str, data: bytes, fmt: str | None = None,
               text_field: str = "text") -> str:
    """Store uploaded bytes by hash and add them as a corpus named after the (cleaned) file name."""
    if not data:
        raise SimcoreError(f"{display_name(filename)}: the uploaded file is empty")
    path = save_upload(data, filename, get_store())
    corpus = Corpus.from_path(path, name=display_name(filename), fmt=fmt, text_field=text_field or "text",
                              max_decompressed_bytes=UPLOAD_DECOMPRESSED_LIMIT)
    return add_corpus(state, role, corpus, f"upload: {display_name(filename)}")


def add_server_path(state: AppState, role: str, text: str, fmt: str | None = None, text_field: str = "text") -> str:
    path = resolve_server_path(text)
    corpus = Corpus.from_path(path, fmt=fmt, text_field=text_field or "text")
    return add_corpus(state, role, corpus, f"server path: {path}")


def remove(state: AppState, role: str, name: str) -> None:
    _bucket(state, role).pop(name, None)


def load_sample(state: AppState) -> None:
    """The bundled sources and targets (replacing earlier sample corpora of the same names)."""
    for role, folder in (("source", SAMPLE_DATA / "sources"), ("target", SAMPLE_DATA / "targets")):
        for corpus in corpora_in(folder):
            add_corpus(state, role, corpus, "sample", replace=True)


def read_table(data: bytes, name: str) -> pd.DataFrame:
    """A CSV table from uploaded bytes (parsed as text only), or a SimcoreError."""
    if not data.strip():
        raise SimcoreError(f"{name} is empty")
    try:
        return pd.read_csv(io.BytesIO(data))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError) as exc:
        raise SimcoreError(f"{name} is not a readable CSV table ({exc})") from None


def guess_results_columns(table: pd.DataFrame) -> dict[str, str | None]:
    """Which columns hold F1, the baseline and the improvement, guessed from their names."""
    cols = [str(c).strip().lower() for c in table.columns]

    def first(*names: str) -> str | None:
        return next((n for n in names if n in cols), None)

    f1 = first("f1", "lm_f1", "wv_f1") or next((c for c in cols if "f1" in c), None)
    improvement = first("improvement", "delta", "lm_delta" if f1 == "lm_f1" else "", "wv_delta" if f1 == "wv_f1" else "")
    return {"f1": f1, "baseline": first("baseline", "no_pretraining"), "improvement": improvement}


def set_results(state: AppState, table: pd.DataFrame, label: str) -> None:
    table = table.rename(columns={c: str(c).strip().lower() for c in table.columns})
    if not {"target", "source"} <= set(table.columns):
        raise SimcoreError(f"{label}: an NER results table needs target and source columns "
                           f"(it has {', '.join(map(str, table.columns))})")
    state.results = table.reset_index(drop=True)
    state.results_label = label
    state.results_columns = guess_results_columns(table)
    state.extra.pop("results_base", None)
    state.extra["results_version"] = state.extra.get("results_version", 0) + 1


def set_matrix(state: AppState, table: pd.DataFrame, label: str) -> None:
    long = to_long(table)
    if long.empty:
        raise SimcoreError(f"{label}: the table has no rows")
    state.clear_matrix()
    state.matrix = long
    state.matrix_label = label
    state.extra["matrix_raw"] = table
    if "options" in long and long["options"].notna().any():
        state.matrix_options = {"options (first row)": str(long["options"].dropna().iloc[0])}


def load_table3(state: AppState) -> None:
    """Table 3 of Dai et al. (2019): its similarity values as the matrix and its F1 as the results."""
    table = pd.read_csv(TABLE3)
    set_matrix(state, table, "Table 3 of Dai et al. (2019)")
    set_results(state, table, "Table 3 of Dai et al. (2019)")
